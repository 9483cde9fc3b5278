"""The guest's layers depend downward only (HELPERS/house style, issue 14):
boot/ kernel/ <- drivers/virtio/ <- net/ <- apps/. A file includes
headers of its own layer or below, and only the appliance (apps/) and the
stack it configures (net/) read the parsed config line."""

import os
import re
import sys

import pytest

from vnpy import ROOT

RANK = {"boot": 0, "kernel": 0, "drivers": 1, "net": 2, "apps": 3}
THIRD_PARTY = {"lwip", "netif", "arch"}  # lwIP's headers (net/include, its sources)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)
CFG = re.compile(r"\bcfg\b")


def sources(layer):
    for dirpath, _, files in os.walk(os.path.join(ROOT, layer)):
        for f in sorted(files):
            if f.endswith((".c", ".h", ".S")):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    yield os.path.relpath(path, ROOT), fh.read()


def upward_includes(layer):
    bad = []
    for rel, text in sources(layer):
        for top in INCLUDE.findall(text):
            if top in THIRD_PARTY:
                continue
            if top not in RANK:
                bad.append("%s includes an unknown layer %s/" % (rel, top))
            elif RANK[top] > RANK[layer]:
                bad.append("%s includes %s/" % (rel, top))
    return bad


@pytest.mark.parametrize("layer", sorted(RANK))
def test_includes_go_downward_only(layer):
    assert upward_includes(layer) == []


@pytest.mark.parametrize("layer", ["boot", "kernel", "drivers"])
def test_config_read_only_above_the_drivers(layer):
    """The parsed config (the global cfg) belongs to kernel/config.* and
    is read by apps/ and net/; drivers take parameters as arguments."""
    readers = [rel for rel, text in sources(layer)
               if CFG.search(text) and not os.path.basename(rel).startswith("config")]
    assert readers == []


def test_the_check_sees_an_upward_include(tmp_path, monkeypatch):
    """The scan itself: a kernel file including apps/ is reported."""
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "x.c").write_text('#include "kernel/io.h"\n#include "apps/app.h"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    assert upward_includes("kernel") == ["kernel/x.c includes apps/"]
