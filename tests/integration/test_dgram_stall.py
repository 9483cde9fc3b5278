"""QEMU 7.2's dgram netdev (its socket,udp= netdev too) takes a
zero-length datagram for the end of a connection and stops reading its
socket for the rest of the run (docs/runner-run.md): a sink then counts
nothing while the peer sends. The runner must locate that loss at QEMU's
socket and never call the run ok (issue 31, finding 12)."""

import json
import re
import socket
import subprocess
import time

import pytest

import vnharness
from vnharness import PYTHON, VNPERF, exitcodes

# QEMU's receiving port in its -netdev (backends/wire.py: dgram, socket).
PORT = re.compile(r"-netdev (?:dgram,\S*local\.port=|socket,udp=\S+,localaddr=127\.0\.0\.1:)"
                  r"(\d+)")


def qemu_port(tag, deadline):
    """QEMU's dgram port, from this test's QEMU command line, once QEMU has
    bound it (a datagram sent earlier would be refused, not read)."""
    while time.monotonic() < deadline:
        for pid in vnharness.tagged_pids(tag):
            m = PORT.search(vnharness.proc_cmdline(pid))
            if m and udp_bound(int(m.group(1))):
                return int(m.group(1))
        time.sleep(0.005)
    raise AssertionError("no QEMU with a bound dgram port came up")


def udp_bound(port):
    with open("/proc/net/udp") as f:
        return any(line.split()[1] == "0100007F:%04X" % port for line in list(f)[1:])


@pytest.mark.parametrize("backend", ["dgram", "socket"])
def test_zero_length_datagram_stall_is_a_located_loss(image, peer, no_leftovers, backend):
    run = subprocess.Popen([PYTHON, VNPERF, "run", "--accel", "tcg", "--quiet", "--json",
                            "--backend", backend, "--app", "sink", "--rate", "5k",
                            "--duration", "6"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           stdin=subprocess.DEVNULL)
    try:
        port = qemu_port(no_leftovers, time.monotonic() + 30)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"", ("127.0.0.1", port))
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
        run.wait()
    rep = json.loads(out)
    assert PORT.search(" ".join(rep["guests"][0]["argv"])).group(1) == str(port)
    d = rep["counts"]["directions"]["host->guest"]
    assert d["sent"] > 20000 and d["received"] * 100 < d["sent"], d["why"]
    # Every frame the guest did not get lies at QEMU's socket: dropped by
    # the full buffer or left unread in it.
    assert d["verdict"] == "lossy" and d["stalled"] and d["located"] == d["lost"]
    assert {w["at"] for w in d["where"]} == {"qemu_socket"}, d["where"]
    assert run.returncode == rep["status"] == exitcodes.RUNNER_BACKEND_FAILED, err
    assert rep["counts"]["agree"] is False
    assert "QEMU stopped reading its UDP socket" in rep["why"]
    assert "zero-length datagram" in rep["why"]
    assert err.strip().splitlines()[-1:] and "zero-length datagram" in err, err
