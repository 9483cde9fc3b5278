"""The Linux-guest baseline of bench/ (bench/linuxguest.py, docs/bench.md):
one boot of the Debian kernel to its ready line, skipped (with the reason)
when the kernel package cannot be fetched on this machine."""

import os
import sys

import pytest

import vnharness

sys.path.insert(0, os.path.join(vnharness.ROOT, "bench"))

import linuxguest  # noqa: E402


@pytest.fixture(scope="module")
def linux_guest():
    why = linuxguest.ensure_built()
    if why:
        pytest.skip("Linux guest baseline: %s" % why)


@pytest.mark.timeout_s(150)
def test_linux_guest_boots_to_ready(linux_guest):
    res = linuxguest.make_run("ready", "hub", duration=0, timeout=120).execute()
    assert res["status"] == 0, "%s\n%s" % (res["why"], "\n".join(res.get("console_tail", [])))
    assert res["lines"]["boot"]["kernel"] == linuxguest.kernel_release()
    assert res["lines"]["boot"]["cpus"] == "1"
    assert res["lines"]["ready"]["mode"] == "ready"
