"""The guest's layers depend downward only (HELPERS/house style, issue 14):
boot/ kernel/ <- drivers/virtio/ <- net/ <- apps/. A file includes
headers of its own layer or below. The appliance's config (its struct and
key table) belongs to apps/ (issue 30): kernel/ keeps a generic key=value
reader, and the layers below apps/ take what they need as arguments."""

import os
import re
import sys

import pytest

from vnpy import ROOT

RANK = {"boot": 0, "kernel": 0, "drivers": 1, "net": 2, "apps": 3}
THIRD_PARTY = {"lwip", "netif", "arch"}  # lwIP's headers (net/include, its sources)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)
CFG = re.compile(r"\bcfg\b")
KEY_ENTRY = re.compile(r'^\s*(?:[A-Z]+\(|\{)"([a-z0-9_]+)",', re.M)
STRUCT = re.compile(r"struct\s+\w+\s*\{(.*?)\};", re.S)
MEMBER = re.compile(r"\b(\w+)\s*(?:\[[^\]]*\])?\s*[;,]")
LITERAL = re.compile(r'"([a-z0-9_]+)"')
NET_IF_PTR = re.compile(r"struct\s+net_if\s*\*\s*(?:const\s+)?(\w+)")
# A kernel file may name one key's word for its own use (trap.c's "fault"
# exit); the appliance's fields or table name many.
APPLIANCE_MIN = 3


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


@pytest.mark.parametrize("layer", ["boot", "kernel", "drivers", "net"])
def test_config_read_only_by_the_apps(layer):
    """No global cfg below apps/: the apps' mains get the parsed config
    and hand the drivers and the stack their parameters as arguments."""
    readers = [rel for rel, text in sources(layer) if CFG.search(text)]
    assert readers == []


def key_tables():
    """{file: its config keys} for every file with a key table."""
    return {rel: set(KEY_ENTRY.findall(text))
            for layer in RANK for rel, text in sources(layer)
            if "struct cfg_key" in text and KEY_ENTRY.search(text)}


def appliance_in_kernel(keys):
    """kernel/ files with a struct whose members are config keys, or
    that spell config keys as strings (a key table), APPLIANCE_MIN or
    more of them either way."""
    bad = []
    for rel, text in sources("kernel"):
        for body in STRUCT.findall(text):
            fields = set(MEMBER.findall(body)) & keys
            if len(fields) >= APPLIANCE_MIN:
                bad.append("%s: struct with %s" % (rel, ", ".join(sorted(fields))))
        named = set(LITERAL.findall(text)) & keys
        if len(named) >= APPLIANCE_MIN:
            bad.append("%s: keys %s" % (rel, ", ".join(sorted(named))))
    return bad


def test_kernel_holds_no_appliance_config():
    """The key table is apps/'s, and kernel/ neither declares the
    appliance's fields nor names its keys."""
    tables = key_tables()
    assert sorted(tables) == ["apps/app_config_keys.c"]
    keys = set().union(*tables.values())
    assert {"app", "imix", "flows", "role", "proto"} <= keys and len(keys) > 30
    assert appliance_in_kernel(keys) == []


def test_the_check_sees_appliance_fields_in_the_kernel(tmp_path, monkeypatch):
    """The scan itself: a kernel header holding app/imix/role fields, and
    a kernel key table, are reported; one word for the kernel's own use is
    not."""
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "x.h").write_text(
        "struct x {\n    char app[32];\n    char imix[8], flows[8];\n    int role;\n};\n")
    (tmp_path / "kernel" / "y.c").write_text(
        'S("app", app), U("size", size), E("role", role)\n')
    (tmp_path / "kernel" / "z.c").write_text('const char *n = "fault";\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    assert appliance_in_kernel({"app", "imix", "flows", "role", "size", "fault"}) == [
        "kernel/x.h: struct with app, flows, imix, role",
        "kernel/y.c: keys app, role, size",
    ]


def test_the_check_sees_an_upward_include(tmp_path, monkeypatch):
    """The scan itself: a kernel file including apps/ is reported."""
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "x.c").write_text('#include "kernel/io.h"\n#include "apps/app.h"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    assert upward_includes("kernel") == ["kernel/x.c includes apps/"]


def net_if_fields_read(layer="apps"):
    """Uses of a struct net_if's fields (through a name the file declares
    as a struct net_if pointer) outside net/: net.h's accessors are the
    way in."""
    bad = []
    for rel, text in sources(layer):
        for name in sorted(set(NET_IF_PTR.findall(text))):
            for m in re.finditer(r"\b%s->(\w+)" % re.escape(name), text):
                bad.append("%s: %s->%s" % (rel, name, m.group(1)))
    return bad


def test_apps_use_the_net_if_accessors():
    assert net_if_fields_read() == []


def test_the_check_sees_a_net_if_field_read(tmp_path, monkeypatch):
    """The scan itself: a field read through a declared net_if pointer is
    reported, an accessor call and another struct's field are not."""
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "x.c").write_text(
        "static struct { struct net_if *nif; } st;\n"
        "void f(const struct net_if *in, const struct app_config *c)\n"
        "{\n    g(in->dev, net_if_dev(st.nif), st.nif->mac, c->mac);\n}\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    assert net_if_fields_read() == ["apps/x.c: in->dev", "apps/x.c: nif->mac"]
