"""The host peer (build/tools/vnperf-peer, docs/peer.md) on its own, without
QEMU: peers against each other on loopback, and against frames built and
checked here in Python, independently of the C code (RFC 791/768
checksums, the vnperf payload layout)."""

import json
import os
import signal
import socket
import struct
import subprocess
import time

import pytest

import vnharness
from synflood import csum

PEER = vnharness.PEER
MAGIC = 0x564E5046
SHORT_MAX = 65  # frames up to this size carry the 18-byte header, no magic


@pytest.fixture(scope="module", autouse=True)
def peer_binary():
    if not os.access(PEER, os.X_OK):
        subprocess.run(["make", "-s", "-C", vnharness.ROOT, "build/tools/vnperf-peer"],
                       check=True, timeout=120)
    assert os.access(PEER, os.X_OK), "%s was not built" % PEER


# ---- frames built and checked independently of the C code

def build_frame(seq, stream=0, size=100, src_mac=b"\x02\0\0\0\0\x01",
                dst_mac=b"\x52\x54\0\x12\x34\x56", sip="10.0.2.2", dip="10.0.2.15",
                sport=9000, dport=9000):
    """A vnperf UDP/IPv4 frame of size bytes (Ethernet, no FCS)."""
    plen = size - 42
    if plen >= 24:
        payload = struct.pack("<QQII", seq, 0x1234, stream, MAGIC)
    else:
        payload = struct.pack("<QQH", seq, 0x1234, stream)
    payload = (payload + bytes(plen))[:plen]
    s, d = socket.inet_aton(sip), socket.inet_aton(dip)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, 0, 0x4000, 64, 17, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", sport, dport, plen + 8, 0)
    c = csum(s + d + struct.pack("!BBH", 0, 17, plen + 8) + udp + payload) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c)
    return dst_mac + src_mac + b"\x08\x00" + ip + udp + payload


def check_frame(f):
    """Parses a frame the way a strict receiver does; returns its fields."""
    assert f[12:14] == b"\x08\x00"
    ip = f[14:34]
    assert ip[0] == 0x45 and csum(ip) == 0, "bad IPv4 header checksum"
    tot = struct.unpack("!H", ip[2:4])[0]
    assert tot == len(f) - 14 and ip[9] == 17
    sport, dport, ulen, ucsum = struct.unpack("!HHHH", f[34:42])
    assert ulen == tot - 20 and ucsum != 0
    assert csum(ip[12:20] + struct.pack("!BBH", 0, 17, ulen) + f[34:34 + ulen]) == 0, \
        "bad UDP checksum"
    pl = f[42:]
    seq, tsc = struct.unpack("<QQ", pl[:16])
    if len(f) > SHORT_MAX:
        stream, magic = struct.unpack("<II", pl[16:24])
        assert magic == MAGIC
    else:
        stream = struct.unpack("<H", pl[16:18])[0]
    return dict(dst=f[0:6], src=f[6:12], sip=ip[12:16], dip=ip[16:20], sport=sport,
                dport=dport, seq=seq, tsc=tsc, stream=stream)


# ---- running peers

class Peer:
    def __init__(self, tmp_path, mode, *args, local=None, remote=None, name="peer"):
        self.local = local or vnharness.free_udp_port()
        ready = str(tmp_path / ("%s.ready" % name))
        self.argv = [PEER, mode, "--local", "127.0.0.1:%d" % self.local,
                     "--ready-file", ready] + (["--remote", "127.0.0.1:%d" % remote]
                                               if remote else []) + list(args)
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 5
        while not os.path.exists(ready):
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            assert time.monotonic() < deadline, "peer did not bind"
            time.sleep(0.01)
        with open(ready) as f:
            info = json.load(f)
        assert info == {"pid": self.proc.pid, "local": "127.0.0.1:%d" % self.local}

    def result(self, timeout=20, stop=False):
        if stop:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.communicate()
        assert self.proc.returncode == 0, err.decode()
        lines = out.decode().splitlines()
        assert len(lines) == 1, out
        res = json.loads(lines[0])
        assert res["type"] == "peer"
        return res


@pytest.fixture
def peer(tmp_path):
    """Starts peers (bound, ready file checked); kills what is left at the
    end so a failing test leaves nothing behind."""
    started = []

    def start(mode, *args, **kw):
        kw.setdefault("name", "peer%d" % len(started))
        p = Peer(tmp_path, mode, *args, **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.communicate()


def run_send(remote, *args, timeout=30):
    p = subprocess.run([PEER, "send", "--remote", "127.0.0.1:%d" % remote] + list(args),
                       capture_output=True, timeout=timeout)
    assert p.returncode == 0, p.stderr.decode()
    res = json.loads(p.stdout)
    assert res["mode"] == "send"
    return res


def udp_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("127.0.0.1", 0))
    s.settimeout(5)
    return s


# ---- tests

@pytest.mark.parametrize("size,streams", [(60, 1), (66, 3), (1514, 2), (9014, 1)])
def test_send_n_count_n(peer, size, streams):
    n = 20000
    cnt = peer("count", "--count", str(n), "--idle", "5")
    sent = run_send(cnt.local, "--count", str(n), "--size", str(size),
                    "--streams", str(streams), "--rate", "200k")
    res = cnt.result()
    assert sent["packets"] == n and sent["bytes"] == n * size
    assert sent["sizes"] == {str(size): n}
    assert res["stop"] == "count"
    assert res["packets"] == n and res["bytes"] == n * size and res["vnperf"] == n
    assert res["non_vnperf"] == 0 and res["sizes"] == {str(size): n}
    assert (res["lost"], res["dup"], res["reorder"]) == (0, 0, 0)
    assert [s["id"] for s in res["streams"]] == list(range(streams))
    assert sum(s["packets"] for s in res["streams"]) == n
    for s in res["streams"]:
        assert s["first_seq"] == 0 and s["max_seq"] == s["packets"] - 1
    assert res["errors"]["sock_drops"] == 0 and res["errors"]["rx"] == 0
    assert res["pps"] > 0 and res["duration_ns"] > 0


@pytest.mark.parametrize("size", [60, 64, 66, 1514])
def test_send_builds_valid_frames(size):
    rx = udp_socket()
    try:
        run_send(rx.getsockname()[1], "--count", "40", "--size", str(size), "--streams", "2",
                 "--stream", "7", "--src-mac", "02:aa:bb:cc:dd:ee",
                 "--dst-mac", "52:54:00:00:00:09", "--src-ip", "192.168.7.1",
                 "--dst-ip", "192.168.7.2", "--src-port", "1234", "--dst-port", "4321")
        frames = [check_frame(rx.recv(65536)) for _ in range(40)]
    finally:
        rx.close()
    for i, fr in enumerate(frames):
        assert fr["dst"] == bytes.fromhex("525400000009")
        assert fr["src"] == bytes.fromhex("02aabbccddee")
        assert fr["sip"] == socket.inet_aton("192.168.7.1")
        assert fr["dip"] == socket.inet_aton("192.168.7.2")
        assert (fr["sport"], fr["dport"]) == (1234, 4321)
        assert (fr["stream"], fr["seq"]) == (7 + i % 2, i // 2)


def test_count_loss_dup_reorder(peer):
    cnt = peer("count", "--idle", "0.5")
    tx = udp_socket()
    try:
        # stream 1: 4 lost, 2 duplicated, 3 reordered; stream 2 clean
        for seq in [0, 1, 3, 2, 2, 5, 6]:
            tx.sendto(build_frame(seq, stream=1), ("127.0.0.1", cnt.local))
        for seq in range(3):
            tx.sendto(build_frame(seq, stream=2, size=60), ("127.0.0.1", cnt.local))
        tx.sendto(b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(46), ("127.0.0.1", cnt.local))
        tx.sendto(b"\x01\x02\x03", ("127.0.0.1", cnt.local))
        res = cnt.result()
    finally:
        tx.close()
    assert res["stop"] == "idle"
    assert res["packets"] == 12 and res["vnperf"] == 10 and res["non_vnperf"] == 2
    assert res["non_vnperf_by"]["arp"] == 1 and res["non_vnperf_by"]["bad_len"] == 1
    s1, s2 = res["streams"]
    assert (s1["id"], s1["packets"], s1["unique"], s1["max_seq"]) == (1, 7, 6, 6)
    assert (s1["lost"], s1["dup"], s1["reorder"]) == (1, 1, 1)
    assert (s2["id"], s2["packets"], s2["lost"]) == (2, 3, 0)
    assert res["sizes"] == {"3": 1, "60": 4, "100": 7}


def test_count_two_senders_of_one_stream(peer):
    """Issue 13 F3: two senders of 0..1999 on stream 3, the second 1500
    frames behind: old duplicates outside the window were counted as new
    (unique 2976 of 2000, lost 2^64 - 976)."""
    cnt = peer("count", "--idle", "1")
    tx = udp_socket()
    try:
        for t in range(3500):
            for seq in ([t] if t < 2000 else []) + ([t - 1500] if t >= 1500 else []):
                tx.sendto(build_frame(seq, stream=3), ("127.0.0.1", cnt.local))
            if t % 200 == 0:
                time.sleep(0.01)  # the loopback socket buffer holds a few hundred
        res = cnt.result()
    finally:
        tx.close()
    (s,) = res["streams"]
    assert s["packets"] == 4000, s
    assert s["unique"] <= 2000 and s["unique"] + s["lost"] == 2000, s
    assert s["unique"] + s["dup"] + s["stale"] == 4000, s
    assert res["lost"] == s["lost"] and res["stale"] == s["stale"] > 0, res


def test_count_top_of_the_sequence_space(peer):
    """Issue 13 F3: seq 2^64-1 wrapped the tracker's next number to 0."""
    cnt = peer("count", "--idle", "0.5")
    tx = udp_socket()
    try:
        for seq in [2**64 - 3, 2**64 - 1, 2**64 - 2, 2**64 - 1]:
            tx.sendto(build_frame(seq, stream=1), ("127.0.0.1", cnt.local))
        res = cnt.result()
    finally:
        tx.close()
    (s,) = res["streams"]
    assert (s["unique"], s["dup"], s["lost"], s["max_seq"]) == (3, 1, 0, 2**64 - 1), s


def test_reflect_swaps_and_keeps_checksums(peer):
    sock = udp_socket()
    try:
        port = sock.getsockname()[1]
        ref = peer("reflect", "--count", "5", remote=port)
        for seq in range(4):
            sock.sendto(build_frame(seq, stream=3, size=128), ("127.0.0.1", ref.local))
        sock.sendto(b"\x01" * 8, ("127.0.0.1", ref.local))  # runt: dropped
        back = [check_frame(sock.recv(65536)) for _ in range(4)]
        res = ref.result()
    finally:
        sock.close()
    for seq, fr in enumerate(back):
        assert fr["dst"] == b"\x02\0\0\0\0\x01" and fr["src"] == b"\x52\x54\0\x12\x34\x56"
        assert fr["sip"] == socket.inet_aton("10.0.2.15")
        assert fr["dip"] == socket.inet_aton("10.0.2.2")
        assert (fr["seq"], fr["stream"]) == (seq, 3)
    assert res["packets"] == 5 and res["tx_packets"] == 4 and res["tx_bytes"] == 4 * 128
    assert res["errors"]["reflect_runts"] == 1 and res["stop"] == "count"


def test_reflect_volume(peer):
    # The reflector is connected to one address (QEMU's), which both sends
    # to it and gets the frames back; here that is one Python socket.
    n, chunk = 20000, 200
    sock = udp_socket()
    try:
        ref = peer("reflect", "--idle", "2", remote=sock.getsockname()[1])
        frames = [build_frame(i, size=256) for i in range(chunk)]
        got = 0
        for _ in range(n // chunk):
            for f in frames:
                sock.sendto(f, ("127.0.0.1", ref.local))
            for _ in range(chunk):
                got += len(sock.recv(65536)) == 256
        res = ref.result(stop=True)
    finally:
        sock.close()
    assert got == n
    assert res["packets"] == n and res["tx_packets"] == n and res["vnperf"] == n
    assert res["tx_bytes"] == n * 256 and res["errors"]["sock_drops"] == 0


# spoiled frame -> the kind the counter (with --verify-csum) files it under
MALFORMED = {
    "truncated": {"bad_len": 10},
    "bad-ip-len": {"bad_len": 10},
    "bad-udp-len": {"bad_len": 10},
    "bad-csum": {"bad_csum": 10},
    "runt": {"bad_len": 10},
}


@pytest.mark.parametrize("mode", sorted(MALFORMED) + ["garbage"])
def test_malformed(peer, mode):
    cnt = peer("count", "--count", "10", "--idle", "2", "--verify-csum")
    sent = run_send(cnt.local, "--count", "10", "--size", "200", "--malformed", mode)
    res = cnt.result()
    assert sent["packets"] == 10 and sent["malformed"] == mode
    assert res["packets"] == 10 and res["vnperf"] == 0 and res["non_vnperf"] == 10
    if mode == "runt":
        assert res["sizes"] == {str(1 + i): 1 for i in range(10)}
    if mode == "garbage":
        assert res["non_vnperf_by"]["other"] == 0 and res["non_vnperf_by"]["arp"] == 0
    else:
        assert {k: v for k, v in res["non_vnperf_by"].items() if v} == MALFORMED[mode]


def test_sigterm_prints_result(peer):
    cnt = peer("count")
    tx = udp_socket()
    try:
        tx.sendto(build_frame(0), ("127.0.0.1", cnt.local))
        time.sleep(0.2)
        res = cnt.result(stop=True)
    finally:
        tx.close()
    assert res["stop"] == "signal" and res["packets"] == 1 and res["vnperf"] == 1


def test_duration_stops_sender_and_counter(peer):
    cnt = peer("count", "--duration", "0.5")
    t0 = time.monotonic()
    sent = run_send(cnt.local, "--duration", "0.3", "--rate", "10k")
    res = cnt.result()
    assert time.monotonic() - t0 < 3
    assert sent["stop"] == "duration" and res["stop"] == "duration"
    assert 2000 <= sent["packets"] <= 3200 and res["packets"] == sent["packets"]


def test_count_latency_of_the_hosts_own_stamps(peer):
    cnt = peer("count", "--count", "2000", "--latency")
    sent = run_send(cnt.local, "--count", "2000", "--rate", "20k")
    res = cnt.result()
    lat = res["latency"]
    assert sent["packets"] == res["vnperf"] == lat["count"] == 2000 and lat["future"] == 0
    # Loopback on one host: microseconds to milliseconds, never seconds.
    assert 0 < lat["min_us"] <= lat["p50_us"] <= lat["p99_us"] <= lat["max_us"] < 1e6
    assert 1e8 < lat["tsc_hz"] < 1e10
    plain = peer("count", "--count", "10")
    run_send(plain.local, "--count", "10")
    assert "latency" not in plain.result()


def test_send_to_nobody_counts_refusals():
    port = vnharness.free_udp_port()
    res = run_send(port, "--count", "1000", "--rate", "100k")
    assert res["packets"] == 1000 and res["errors"]["refused"] > 0


@pytest.mark.parametrize("args", [
    [],
    ["bogus"],
    ["count"],
    ["send"],
    ["reflect", "--local", "127.0.0.1:1"],
    ["count", "--local", "127.0.0.1:99999"],
    ["count", "--local", "127.0.0.1:5000", "--size", "100"],
    ["send", "--remote", "127.0.0.1:5000", "--size", "59"],
    ["send", "--remote", "127.0.0.1:5000", "--size", "9015"],
    ["send", "--remote", "127.0.0.1:5000", "--idle", "1"],
    ["send", "--remote", "127.0.0.1:5000", "--malformed", "nope"],
    ["send", "--remote", "127.0.0.1:5000", "--dst-mac", "52:54:00:12:34"],
    ["send", "--remote", "127.0.0.1:5000", "--dst-ip", "10.0.2"],
    ["send", "--remote", "127.0.0.1:5000", "--rate", "0"],
    ["send", "--remote", "127.0.0.1:5000", "--duration", "-1"],
    ["send", "--remote", "127.0.0.1:5000", "--batch", "257"],
    ["send", "--remote", "127.0.0.1:5000", "--stream", "4294967295", "--streams", "2"],
    ["count", "--local", "127.0.0.1:5000", "--count"],
    ["count", "--local", "127.0.0.1:5000", "stray"],
])
def test_bad_options_one_line_exit_2(args):
    p = subprocess.run([PEER] + args, capture_output=True, timeout=10)
    assert p.returncode == 2
    assert p.stdout == b""
    lines = p.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vnperf-peer: ")


def test_bind_failure_is_runtime_error():
    s = udp_socket()
    try:
        p = subprocess.run([PEER, "count", "--local", "127.0.0.1:%d" % s.getsockname()[1]],
                           capture_output=True, timeout=10)
    finally:
        s.close()
    assert p.returncode == 1 and p.stdout == b""
    assert "bind" in p.stderr.decode() and "in use" in p.stderr.decode()


def test_help():
    p = subprocess.run([PEER, "--help"], capture_output=True, timeout=10)
    assert p.returncode == 0
    for word in ("count", "send", "reflect", "--ready-file", "--malformed", "--rate"):
        assert word.encode() in p.stdout


@pytest.mark.parametrize("mode", ["send", "count"])
def test_result_not_written_fails_the_run(mode):
    """Issue 31 F13: a result line that cannot be written (a full disk:
    /dev/full gives ENOSPC on every write) is status 4 and one line naming
    the errno; it exited 0 with nothing written."""
    args = ["--count", "5"] if mode == "send" else ["--local", "127.0.0.1:0", "--duration",
                                                     "0.2"]
    with open("/dev/full", "wb") as full:
        r = subprocess.run([PEER, mode, "--remote", "127.0.0.1:9"] + args, stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=20)
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == [
        "vnperf-peer: result not written to stdout: No space left on device"], r.stderr


def test_result_written_exits_0():
    r = subprocess.run([PEER, "send", "--remote", "127.0.0.1:9", "--count", "5"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=20)
    assert r.returncode == 0 and json.loads(r.stdout)["packets"] == 5, r.stderr
