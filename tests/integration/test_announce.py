"""VIRTIO_NET_F_GUEST_ANNOUNCE (virtio 1.2 s5.1.6.5.4; issue 27): QMP's
announce-self makes QEMU 7.2 and 10.0's virtio-net set ANNOUNCE in its
status; the guest's driver sees it within 200 ms, acknowledges it once
(VIRTIO_NET_CTRL_ANNOUNCE_ACK answered OK, vnet.announces 1) and its stack
sends a gratuitous ARP. The run is gen over user with a second QMP monitor
of the test's own (-qmp through --qemu-arg)."""

import json
import os
import socket
import subprocess
import time

import pytest

from vnharness import VNPERF
from vnperflib.run import nextroot

QEMUS = ["system", pytest.param("next", marks=pytest.mark.skipif(
    nextroot.stamp() is None, reason="build/next not installed: make next"))]


def qmp(sock, *cmds):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    f = s.makefile("rw")
    f.readline()  # greeting
    out = []
    for c in ({"execute": "qmp_capabilities"},) + cmds:
        f.write(json.dumps(c) + "\n")
        f.flush()
        out.append(json.loads(f.readline()))
    s.close()
    return out


@pytest.mark.parametrize("qemu", QEMUS)
def test_announce_self_is_acknowledged_once(image, qemu, tmp_path):
    sock = str(tmp_path / "qmp.sock")
    p = subprocess.Popen([VNPERF, "run", "--accel", "tcg", "--quiet", "--json", "--backend",
                          "user", "--machine", "q35", "--qemu", qemu, "--app", "gen", "--rate",
                          "1000", "--duration", "6", "--qemu-arg=-qmp",
                          "--qemu-arg=unix:%s,server=on,wait=off" % sock],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3)  # the guest's driver is up
        r = qmp(sock, {"execute": "announce-self",
                       "arguments": {"initial": 50, "max": 550, "rounds": 1, "step": 100}})
        assert all("return" in x for x in r), r
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    rep = json.loads(out)
    assert rep["status"] == 0, (rep["why"], err[-2000:])
    v = rep["guests"][-1]["result"]["vnet"]
    assert "guest_announce" in v["features"], v["features"]
    assert v["announces"] == 1, v
    assert v["ctrl"] == {"sent": 1, "ok": 1, "err": 0, "bad_reply": 0, "timeouts": 0}, v["ctrl"]
