"""--pcap over tap (issue 29): a 10,000-frame capture the test writes,
replayed from the guest at its recorded timing and flat out, arrives
exactly: the guest sent each frame once per loop, and the tap in the
runner's namespace received every one of them (its own counters), the
capture's bytes to the byte, with nothing else but lwIP's own frames,
which the guest's driver counted too; on a tap of the test's own, a
socket on the tap sees the capture's frames themselves, byte for byte and
in order. A truncated capture is refused in one line, status 64, before
QEMU starts."""

import json
import os
import subprocess
import time

import pytest

from test_own_tap import TAP, in_ns, userns  # noqa: F401 (userns: a fixture)
from vnharness import PYTHON, run_vnperf
from vnperflib.run import pcap

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tap/netns need root")
N = 10000
GAP_NS = 20000  # 0.2 s recorded


def capture(path):
    """N distinct frames of 60..123 bytes: the host's MAC, an index."""
    fr = []
    for i in range(N):
        size = 60 + i % 64
        fr.append(b"\x02\x00\x00\x00\x00\x01" + b"\x02\x00\x00\x00\x00\x02" + b"\x88\xb5"
                  + i.to_bytes(4, "big") + bytes(size - 18))
    pcap.write(path, fr, [0] + [GAP_NS] * (N - 1))
    return sum(len(f) for f in fr)


def replay(path, *args):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--pcap", path] + list(args), timeout=240)
    assert r.returncode == 0 and r.stdout, (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    return rep, rep["guests"][-1]["result"]


def check_exact(rep, res, loops, nbytes):
    assert res["app"] == "replay" and res["frames"] == N and res["loops"] == loops, res
    assert res["packets"] == N * loops and res["bytes"] == nbytes * loops, res
    host, vtx = rep["host"], res["vnet"]["tx"]
    # the tap got every frame the driver sent, the capture's and lwIP's
    assert host["rx_frames"] == vtx["packets"] and host["rx_bytes"] == vtx["bytes"], (host, vtx)
    lwip = vtx["packets"] - N * loops
    assert 0 <= lwip <= 3, vtx
    assert 0 <= host["rx_bytes"] - nbytes * loops <= 60 * lwip, host
    assert rep["counts"]["agree"] is True, rep["counts"]


@needs_root
def test_capture_at_recorded_timing_arrives_exactly(image, tmp_path):
    path = str(tmp_path / "10k.pcap")
    nbytes = capture(path)
    rep, res = replay(path)
    check_exact(rep, res, 1, nbytes)
    assert res["mode"] == "timed" and res["late"]["frames"] == N, res
    # the recorded 0.2 s, give or take how late the first and the last
    # frame left (a frame goes at its deadline or after it)
    span, late_ns = (N - 1) * GAP_NS, res["late"]["max_us"] * 1000
    assert span - late_ns - 1e3 <= res["sent_span_ns"] <= span + late_ns + 1e3, res


@needs_root
def test_capture_flat_out_twice_arrives_exactly(image, tmp_path):
    path = str(tmp_path / "10k.pcap")
    nbytes = capture(path)
    rep, res = replay(path, "--topspeed", "--loops", "2")
    check_exact(rep, res, 2, nbytes)
    assert res["mode"] == "top" and "late" not in res, res


# Every frame the tap takes from QEMU, into a file (u16 length, bytes),
# from the first (within 60 s) until 2 s without one.
SNIFF = """
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
s.bind((sys.argv[1], 0))
s.settimeout(60.0)
print("ready", flush=True)
got = []
try:
    while True:
        s.settimeout(2.0 if got else 60.0)
        f, addr = s.recvfrom(65536)
        if addr[2] != socket.PACKET_OUTGOING:
            got.append(struct.pack("<H", len(f)) + f)
except socket.timeout:
    pass
open(sys.argv[2], "wb").write(b"".join(got))
"""


def sniffed(path):
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], 0
    while off < len(data):
        n = int.from_bytes(data[off:off + 2], "little")
        out.append(data[off + 2:off + 2 + n])
        off += 2 + n
    return out


@needs_root
def test_capture_arrives_frame_for_frame_on_your_tap(image, tmp_path, userns):  # noqa: F811
    path, got = str(tmp_path / "10k.pcap"), str(tmp_path / "got.bin")
    capture(path)
    want = pcap.read(path, 1514).frames
    sniff = subprocess.Popen(["ip", "netns", "exec", userns, PYTHON, "-c", SNIFF, TAP, got],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert sniff.stdout.readline().strip() == "ready"
        r = in_ns(userns, ["run", "--accel", "tcg", "--quiet", "--json", "--tap", TAP,
                           "--pcap", path, "--topspeed", "--loops", "2"], timeout=240)
        assert r.returncode == 0 and r.stdout, (r.returncode, r.stderr)
        assert sniff.wait(timeout=30) == 0
    finally:
        if sniff.poll() is None:
            sniff.kill()
            sniff.wait()
    frames = sniffed(got)
    # lwIP's own frames (ARP) are not the capture's: EtherType 0x0806
    ours = [f for f in frames if f[12:14] != b"\x08\x06"]
    assert len(frames) - len(ours) <= 3, len(frames) - len(ours)
    assert ours == want + want, (len(ours), len(want))


def test_truncated_capture_refused_before_qemu(tmp_path):
    path = str(tmp_path / "cut.pcap")
    capture(path)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 7)
    r = run_vnperf(["run", "--backend", "tap", "--pcap", path, "--qemu", "/nonexistent"],
                   timeout=60)
    assert r.returncode == 64, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vnperf: --pcap %s: truncated: frame 9999"
                                                   % path), lines
