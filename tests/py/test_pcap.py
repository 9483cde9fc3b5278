"""--pcap (docs/replay.md): the runner's capture reader on captures the
test writes, good and broken, the blob it hands the guest (the layout of
apps/pcap_blob.h), and every refusal: one line, status 64, before
anything boots."""

import os
import struct

import pytest

from vnpy import run_vnperf
from vnperflib.run import pcap

USAGE = 64


def frames(n, size=64):
    return [bytes([i & 0xff, i >> 8]) + bytes(10) + b"\x08\x00" + bytes(size - 14)
            for i in range(n)]


def test_reads_every_frame_and_gap(tmp_path):
    p = str(tmp_path / "a.pcap")
    fr = frames(4, 60) + [b"\xff" * 1514]
    pcap.write(p, fr, [0, 1000, 2000000, 3000000000, 5000])
    c = pcap.read(p, 1514)
    assert c.frames == fr
    assert c.gaps_ns == [0, 1000, 2000000, 3000000000, 5000]
    assert (c.bytes, c.maxlen, c.span_ns) == (4 * 60 + 1514, 1514, 3002006000)


@pytest.mark.parametrize("order", ["<", ">"])
def test_nanosecond_and_big_endian_captures(tmp_path, order):
    p = str(tmp_path / "ns.pcap")
    pcap.write(p, frames(3), [0, 7, 1000000001], order=order, ns=True)
    assert pcap.read(p, 1514).gaps_ns == [0, 7, 1000000001]


def test_blob_layout(tmp_path):
    """The header and records as apps/pcap_blob.h reads them."""
    gap = (1 << 40) + 3
    cap = pcap.Capture([b"\x01" * 14, b"\x02" * 60], [0, gap], 74, 60, gap)
    b = pcap.blob(cap)
    assert b[:8] == b"VNPCAP\x00\x01"
    assert struct.unpack_from("<IHHQ", b, 8) == (2, 60, 0, 74)
    assert len(b) == pcap.blob_size(cap) == 24 + 2 * 8 + 74
    r1 = 24 + 8 + 14
    assert struct.unpack_from("<H", b, r1)[0] == 60
    assert int.from_bytes(b[r1 + 2:r1 + 8], "little") == gap
    assert b[r1 + 8:] == b"\x02" * 60


def good(tmp_path, n=3):
    p = str(tmp_path / "good.pcap")
    pcap.write(p, frames(n))
    with open(p, "rb") as f:
        return p, bytearray(f.read())


def put(path, data):
    with open(path, "wb") as f:
        f.write(bytes(data))
    return path


# (what is broken, how, the line's words)
BROKEN = [
    ("empty", lambda d: d[:0], "truncated"),
    ("half a header", lambda d: d[:20], "truncated"),
    ("header only", lambda d: d[:24], "no frames"),
    ("record header cut", lambda d: d[:24 + 10], "truncated"),
    ("frame cut", lambda d: d[:-1], "truncated: frame 2 has 63 of its 64"),
    ("bad magic", lambda d: b"\x00\x01\x02\x03" + d[4:], "not a pcap file"),
    ("pcapng", lambda d: b"\x0a\x0d\x0d\x0a" + d[4:], "pcapng"),
    ("version", lambda d: d[:4] + struct.pack("<HH", 2, 3) + d[8:], "version 2.3"),
    ("link type", lambda d: d[:20] + struct.pack("<I", 113) + d[24:], "link type 113"),
    ("fcs bits", lambda d: d[:20] + struct.pack("<I", 1 | 0x14000000) + d[24:],
     "only Ethernet"),
    ("snapped", lambda d: d[:24 + 12] + struct.pack("<I", 100) + d[24 + 16:],
     "captured short"),
    ("incl > orig", lambda d: d[:24 + 12] + struct.pack("<I", 10) + d[24 + 16:],
     "above its length"),
    ("usec >= 1e6", lambda d: d[:24 + 4] + struct.pack("<I", 1000000) + d[24 + 8:],
     "over a second"),
    ("backwards", lambda d: d[:24 + 80 + 4] + struct.pack("<I", 0) + d[24 + 80 + 8:],
     "before frame 0"),
]


@pytest.mark.parametrize("what,cut,needle", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_captures_refused(tmp_path, what, cut, needle):
    p, d = good(tmp_path)
    if what == "backwards":
        d[24 + 4:24 + 8] = struct.pack("<I", 5)   # frame 0 at 5 us, frame 1 at 0
    bad = put(str(tmp_path / "bad.pcap"), cut(bytes(d)))
    with pytest.raises(ValueError) as e:
        pcap.read(bad, 1514)
    line = str(e.value)
    assert needle in line and "\n" not in line, line


def test_frame_sizes_refused(tmp_path):
    p = str(tmp_path / "big.pcap")
    pcap.write(p, frames(2, 1515))
    with pytest.raises(ValueError, match="frame 0 is 1515 bytes"):
        pcap.read(p, 1514)
    pcap.write(p, [bytes(13)])
    with pytest.raises(ValueError, match="frame 0 is 13 bytes"):
        pcap.read(p, 1514)


def test_span_over_the_guests_limit_refused(tmp_path):
    p = str(tmp_path / "long.pcap")
    pcap.write(p, frames(2), [0, (1 << 48) + 1000], ns=True)
    with pytest.raises(ValueError, match="h after the first"):
        pcap.read(p, 1514)


def test_ram_refusal_names_the_memory_needed(tmp_path):
    cap = pcap.Capture(frames(1000), [0] * 1000, 64000, 64, 0)
    assert pcap.ram_refusal(cap, 128) is None
    cap = pcap.Capture([bytes(1514)] * 80000, [0] * 80000, 1514 * 80000, 1514, 0)
    line = pcap.ram_refusal(cap, 128)
    need = (24 + 80000 * (8 + 1514) + (1 << 20) - 1) >> 20
    assert line.endswith("give --memory %d or more" % (pcap.GUEST_RESERVE_MB + need)), line


@pytest.mark.parametrize("args,needle", [
    (["--speed", "2", "--topspeed"], "--speed and --topspeed each set the timing"),
    (["--pps", "1000", "--speed", "2"], "--speed and --pps each set the timing"),
    (["--pps", "1000", "--topspeed"], "--pps and --topspeed each set the timing"),
    (["--speed", "0"], "--speed 0: a multiplier"),
    (["--speed", "1.0000001"], "--speed 1.0000001"),
    (["--speed", "nan"], "--speed nan"),
    (["--speed", "10001"], "--speed 10001"),
    (["--size", "128"], "--size does not apply"),
    (["--rate", "1k"], "--rate does not apply"),
    (["--count", "5"], "--count does not apply"),
    (["--app", "gen"], "not --app gen"),
    (["--loops", "1000001"], "--loops 1000001: at most"),
    (["--memory", "24"], "give --memory 25 or more"),
    (["--backend", "dgram"], "replay over dgram"),
])
def test_runner_refuses_in_one_line(tmp_path, args, needle):
    p, _ = good(tmp_path, 10)
    r = run_vnperf(["run", "--backend", "hub", "--pcap", p] + args, timeout=60)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--speed", "2"], "--speed: replay options need --pcap FILE"),
    (["--loops", "2"], "--loops: replay options need --pcap FILE"),
    (["--pcap", "/nonexistent/x.pcap"], "--pcap /nonexistent/x.pcap: No such file"),
])
def test_runner_refuses_without_a_capture(args, needle):
    r = run_vnperf(["run", "--backend", "hub"] + args, timeout=60)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_malformed_capture_refused_before_boot(tmp_path):
    p, d = good(tmp_path)
    bad = put(str(tmp_path / "cut.pcap"), d[:-5])
    r = run_vnperf(["run", "--backend", "hub", "--pcap", bad, "--qemu", "/nonexistent/qemu"],
                   timeout=60)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert r.stderr.strip() == ("vnperf: --pcap %s: truncated: frame 2 has 59 of its 64 bytes"
                                % bad), r.stderr


def test_identity_names_the_capture(tmp_path):
    from vnperflib import options
    from vnperflib.run import identity
    p, d = good(tmp_path)
    o = options.build(pcap=p, backend="hub", accel="tcg")
    first = identity.of_run(o, identity.app_words(o), "tcg")
    assert first["pcap"].startswith(p + " ") and first["loops"] == "1", first
    put(p, d[:-1] + b"\x01")   # the same file, another frame
    assert identity.of_run(o, identity.app_words(o), "tcg")["pcap"] != first["pcap"]


def test_config_words(tmp_path):
    from vnperflib import options
    from vnperflib.run import identity
    p, _ = good(tmp_path)
    words = lambda **kw: identity.app_words(options.build(pcap=p, backend="hub", **kw))
    assert words() == ["app=replay", "loops=1", "speed=1"]
    assert words(speed="2.5", loops=3) == ["app=replay", "loops=3", "speed=2.5"]
    assert words(topspeed=True) == ["app=replay", "loops=1", "speed=max"]
    assert words(pps=5000) == ["app=replay", "loops=1", "rate=5000"]
