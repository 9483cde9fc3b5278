"""vnperf-peer reflect --rx-if on a tap (issue 27): a frame longer than the
tap's MTU frame is a GSO frame the packet socket sees whole before the
host's stack cuts it (the guest's uso=, VIRTIO_NET_F_HOST_USO). The peer
leaves it to the stack, counted in reflect_gso and in no other count, and
goes on reflecting vnperf's frames; it cannot send it back (the tap's MTU
refuses it: the send failed and the peer stopped). Root: a namespace of
its own with a tap this test writes frames into."""

import json
import os
import signal
import struct
import subprocess
import sys
import time

import pytest

from vnpy import ROOT

PEER = os.path.join(ROOT, "build", "tools", "vnperf-peer")
TAP = "vnpg0"
PL_MAGIC = 0x564e5046


def frame(length, stream):
    """A vnperf IPv4/UDP frame of length bytes (UDP checksum 0: none, RFC
    768), its payload header on stream, sequence number 0."""
    udp_len = length - 14 - 20
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                     bytes([10, 0, 2, 15]), bytes([10, 0, 2, 2]))
    s = sum(struct.unpack("!10H", ip))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
    udp = struct.pack("!HHHH", 9000, 9001, udp_len, 0)
    pl = struct.pack("<QQII", 0, 0, stream, PL_MAGIC)
    eth = bytes.fromhex("020000000002" "525400000001") + b"\x08\x00"
    return eth + ip + udp + pl + bytes(udp_len - 8 - len(pl))


# Run inside the namespace: attaches to the tap, writes the frames once
# the peer is ready, prints the vnperf frames that come back.
WRITER = r"""
import fcntl, json, os, select, struct, sys, time
frames = [bytes.fromhex(h) for h in json.loads(sys.argv[2])]
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", sys.argv[1].encode(), 0x0002 | 0x1000))
print("attached", flush=True)
sys.stdin.readline()
for f in frames:
    os.write(fd, f)
back, end = [], time.monotonic() + 2
while time.monotonic() < end:
    if select.select([fd], [], [], 0.1)[0]:
        f = os.read(fd, 65536)
        if len(f) >= 66 and f[12:14] == b"\x08\x00" and f[23] == 17:
            back.append([len(f), struct.unpack_from("<I", f, 58)[0]])
print(json.dumps(back), flush=True)
"""


def sh(*argv):
    subprocess.run(argv, check=True, capture_output=True)


@pytest.fixture
def netns():
    name = "vnpg%d" % os.getpid()
    sh("ip", "netns", "add", name)
    try:
        sh("ip", "-n", name, "tuntap", "add", "dev", TAP, "mode", "tap")
        sh("ip", "-n", name, "link", "set", TAP, "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="a namespace and a tap need root")
@pytest.mark.skipif(not os.path.exists(PEER), reason="vnperf-peer not built: make all")
def test_reflect_leaves_a_gso_frame_to_the_host_stack(netns, tmp_path):
    big, small = frame(8234, 0x100), frame(1000, 0)
    writer = subprocess.Popen(["ip", "netns", "exec", netns, sys.executable, "-c", WRITER, TAP,
                               json.dumps([big.hex(), small.hex()])],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = tmp_path / "ready"
    peer = subprocess.Popen(["ip", "netns", "exec", netns, PEER, "reflect", "--rx-if", TAP,
                             "--ready-file", str(ready)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "attached"
        deadline = time.monotonic() + 5
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists(), peer.stderr.read() if peer.poll() is not None else "no ready"
        writer.stdin.write("go\n")
        writer.stdin.flush()
        back = json.loads(writer.stdout.readline())
        writer.wait(timeout=5)
        alive = peer.poll() is None
        peer.send_signal(signal.SIGTERM)
        out, err = peer.communicate(timeout=5)
    finally:
        for p in (writer, peer):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert alive, "the peer stopped: %s" % err
    assert back == [[1000, 0]], back
    res = json.loads(out)
    assert res["reflect_gso"] == 1, res
    assert res["errors"]["tx"] == 0, res["errors"]
    assert res["vnperf"] == 1 and res["tx_packets"] == 1, res
    assert "8234" not in res["sizes"], res["sizes"]
