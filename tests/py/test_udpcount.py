"""The host's UDP count for gen's uso= (tools/vnperflib/run/udpcount.py,
backends/udphost.py): the namespace's Udp counters parsed from
/proc/net/snmp, every datagram waiting counted with its payload size (the
64 distinct sizes kept, the rest as "other"), the script's result line on
SIGTERM with the vnperf streams (app reneg's uso= segments, each set on
its own), and when the tap backend starts it (gen with a uso= word)."""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

import vnpy  # noqa: F401 (tools/ on sys.path)
from vnperflib.backends import udphost
from vnperflib.run import udpcount

SNMP = """Ip: Forwarding DefaultTTL
Ip: 1 64
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 6000 2 0 0 7 0 0 0 0
UdpLite: InDatagrams NoPorts
UdpLite: 0 0
"""


def test_snmp_udp_line(tmp_path):
    p = tmp_path / "snmp"
    p.write_text(SNMP)
    u = udpcount.snmp_udp(str(p))
    assert u["InDatagrams"] == 6000 and u["RcvbufErrors"] == 7 and u["NoPorts"] == 2
    p.write_text("Ip: Forwarding\nIp: 1\n")
    assert udpcount.snmp_udp(str(p)) == {}


def test_count_sizes_and_other():
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = [1400] * 5 + [1192] + list(range(1, 80))
    for n in sent:
        tx.sendto(b"x" * n, rx.getsockname())
    sizes, tally = {}, [0, 0]
    time.sleep(0.1)
    udpcount.count(rx, sizes, tally, {})
    assert tally == [len(sent), sum(sent)]
    assert sizes["1400"] == 5 and sizes["1192"] == 1
    assert len(sizes) == udpcount.MAX_SIZES + 1 and sum(sizes.values()) == len(sent)
    assert sizes["other"] == len(sent) - sum(v for k, v in sizes.items() if k != "other")
    rx.close()
    tx.close()


def script_result(tmp_path, datagrams):
    """The script's result line (no --echo) after datagrams reached it."""
    port = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    port.bind(("127.0.0.1", 0))
    addr = port.getsockname()
    port.close()
    ready = str(tmp_path / "ready")
    p = subprocess.Popen([sys.executable, udphost.SCRIPT, "--bind", "%s:%d" % addr,
                          "--ready-file", ready], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not os.path.exists(ready) and time.monotonic() < deadline:
        time.sleep(0.02)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for d in datagrams:
        tx.sendto(d, addr)
    tx.close()
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=10)
    assert p.returncode == 0
    return json.loads(out.strip().splitlines()[-1])


def test_script_result_line_on_sigterm(tmp_path):
    r = script_result(tmp_path, [b"y" * n for n in (1400, 1400, 1192)])
    assert r["mode"] == "udpcount" and r["datagrams"] == 3 and r["bytes"] == 3992
    assert r["sizes"] == {"1400": 2, "1192": 1} and r["rcvbuf_errors"] >= 0
    assert r["csum_errors"] == 0 and r["streams"] == [] and "echoed" not in r


def test_script_counts_vnperf_streams_without_echo(tmp_path):
    """app reneg's uso= over tap: each segment a stamped datagram, a set's
    on stream 0x100 + its index, with its sizes; datagrams without the
    header on none."""
    def seg(stream, seq, n):
        return struct.pack("<QQII", seq, 0, stream, udpcount.PL_MAGIC).ljust(n, b"z")
    r = script_result(tmp_path, [seg(0x100, 0, 1400), seg(0x100, 1, 1192), seg(0x101, 0, 1400),
                                 b"y" * 100])
    assert r["datagrams"] == 4 and "echoed" not in r
    assert r["streams"] == [{"id": 0x100, "packets": 2, "sizes": {"1400": 1, "1192": 1}},
                            {"id": 0x101, "packets": 1, "sizes": {"1400": 1}}]


def test_bad_bind_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, udphost.SCRIPT, "--bind", "nosuchhost.invalid:9",
                        "--ready-file", str(tmp_path / "r")], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("udpcount: nosuchhost.invalid:9:")


class Opts:
    def __init__(self, app, config):
        self.app, self.config = app, config


def test_started_for_gen_with_a_uso_word():
    assert udphost.wanted(Opts("gen", ("uso=1400",)))
    assert udphost.wanted(Opts("gen", ("uso=0", "dst_port=7000")))
    assert not udphost.wanted(Opts("gen", ("size=64",)))
    assert not udphost.wanted(Opts("sink", ("uso=1400",)))
    assert udphost.dst_port(Opts("gen", ("uso=0", "dst_port=7000"))) == "7000"
    assert udphost.dst_port(Opts("gen", ("uso=0",))) == "9000"
