"""The Linux-guest baseline of bench/ (bench/linuxguest.py, docs/bench.md):
one boot of the Debian kernel to its ready line, skipped (with the reason)
when the kernel package cannot be fetched on this machine."""

import os
import sys

import pytest

import vnharness
from vnperflib.run import passtbin

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


@pytest.mark.timeout_s(150)
@pytest.mark.skipif(passtbin.stream_refusal(passtbin.path(), "old")
                    is not None or passtbin.path() is None,
                    reason="needs a passt that carries the stream: run make passt")
def test_linux_guest_serves_a_stream_through_passt(linux_guest):
    """Host to guest over passt: the guest's iperf server speaks first (an
    ARP for the gateway), or passt addresses the host's SYN to the
    broadcast MAC, which Linux's TCP drops (bench_tcp_stream's h2g row)."""
    res = linuxguest.make_run("iperf", "passt", direction="h2g", sessions=1, msg_size=512,
                              duration=2).execute()
    assert res["status"] == 0, "%s\n%s" % (res["why"], "\n".join(res.get("console_tail", [])))
    assert res["streams"] == 1 and res["bytes"] > 0 and res["gbps"] > 0, res
