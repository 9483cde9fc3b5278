"""IPv6 through lwIP (issue 29): iperf over tap both ways (the guest's
client to the host's iperf -V server, the host's iperf -V client to the
guest's server) with both ends' byte counts agreeing and the device
segmenting IPv6 TCP (TSO6, gso_type TCPV6), over slirp's IPv6, and over
passt's IPv6 both ways (passt in the runner's namespace, which gives it its
template); UDP and TCP rr over IPv6 answered by vnperf-rrserver on the
namespace's IPv6 address (tap) and on the ::1 passt maps the guest's
gateway to, and UDP rr
over two queue pairs counted per pair by its IPv6 flow; the config
line's bad ip6= refused with the config exit; a dst_ip6= nobody answers
ended by the network exit in one line."""

import ipaddress
import json
import os
import shutil
import struct

import pytest

import vnharness
from test_mq import MS_KEY, toeplitz
from test_stream import IPERF_FLAGS_WORD
from vnharness import run_vnperf
from vnperflib.backends import netns
from vnperflib.run import passtbin

CONFIG = 2  # kernel/exit.h
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (tap in a namespace)")
# passt runs in a namespace of the runner's (backends/passtns.py), and
# carries lwIP's stream only from 0.0~git20250503 on (make passt)
needs_passt_ns = pytest.mark.skipif(
    os.geteuid() != 0 or passtbin.path() is None or
    passtbin.stream_refusal(passtbin.path(), "old") is not None,
    reason="needs root (passt in a namespace) and a passt that carries the stream: make passt")
needs_tap_iperf = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("iperf") is None,
    reason="needs root (tap in a namespace) and iperf 2 (Debian iperf)")


def run(*argv, timeout=180):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json"] + list(argv), timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    return r, rep, rep["guests"][-1]


def one_session_counted(rep, g, role):
    """One iperf session, ok, more than 1 MB, and the same bytes on both
    ends (the guest client's count has iperf's flags word on top)."""
    res, host = g["result"], rep["host"]["iperf"]
    assert len(res["sessions"]) == 1 and res["sessions"][0]["ok"], res
    assert len(host["streams"]) == 1 and host["bytes"] > 1000000, host
    slack = IPERF_FLAGS_WORD if role == "client" else 0
    assert res["bytes"] - host["bytes"] == slack, (res["bytes"], host["bytes"])
    return res


@needs_tap_iperf
@pytest.mark.parametrize("role", ["client", "server"])
def test_iperf_over_ipv6_tap_both_ways(image, no_leftovers, role):
    r, rep, g = run("--backend", "tap", "--ip6", "--app", "iperf", "--duration", "2", "--",
                    "role=" + role)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    assert "net: ip6 link-local FE80::5054:FF:FE00:1 global FD00:766E::2" in g["console_tail"]
    res = one_session_counted(rep, g, role)
    lw, tx = res["net"]["lwip"], res["vnet"]["tx"]
    assert lw["tso6_mss"] == 1440 and lw["rx_csum_bad"] == 0, lw
    if role == "client":
        # the device cut lwIP's IPv6 segments (HOST_TSO6): none went out
        # as lwIP's IPv6 fragments
        assert tx["gso_frames"] > 100 and tx["offload_refused"] == 0, tx


@pytest.mark.skipif(shutil.which("iperf") is None, reason="needs iperf 2 (Debian iperf)")
def test_iperf_over_slirps_ipv6(image, no_leftovers):
    """The guest's client to slirp's IPv6 host address, which slirp maps
    to the host's ::1, where iperf -s -V -B ::1 listens."""
    r, rep, g = run("--backend", "user", "--ip6", "--app", "iperf", "--duration", "2", "--",
                    "role=client", timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    assert "net: FD00:766E:2::2 is at 52:56:00:00:00:02" in g["console_tail"]
    res, host = g["result"], rep["host"]["iperf"]
    assert host["bytes"] > 100000 and res["bytes"] - host["bytes"] == IPERF_FLAGS_WORD, (
        res["bytes"], host)


@needs_passt_ns
@pytest.mark.skipif(shutil.which("iperf") is None, reason="needs iperf 2 (Debian iperf)")
@pytest.mark.parametrize("role", ["client", "server"])
def test_iperf_over_passts_ipv6_both_ways(image, no_leftovers, role):
    """The guest's client to passt's gateway fd00:766e:3::2, which passt
    maps to its namespace's ::1 (iperf -s -V -B ::1 there); the host's
    iperf -V client to ::1 on the port passt forwards to the guest's
    server. The guest found the gateway by neighbour discovery: passt
    answered with its own MAC."""
    r, rep, g = run("--backend", "passt", "--ip6", "--app", "iperf", "--duration", "2", "--",
                    "role=" + role, timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    assert "net: ip6 link-local FE80::5054:FF:FE00:1 global FD00:766E:3::15" in \
        g["console_tail"], g["console_tail"][-12:]
    if role == "client":
        assert "net: FD00:766E:3::2 is at 9a:55:9a:55:9a:55" in g["console_tail"]
    one_session_counted(rep, g, role)
    assert rep["identity"]["ip_version"] == "6", rep["identity"]


@needs_passt_ns
@pytest.mark.parametrize("proto,resp", [("udp", 1000), ("tcp", 3000)])
def test_rr_over_passts_ipv6(image, no_leftovers, proto, resp):
    """The guest's client to passt's gateway, answered by vnperf-rrserver
    on the ::1 of passt's namespace. UDP answers fit one frame: passt
    sends each datagram whole, unfragmented (a 3000-byte one is a frame
    over the guest's 1500-byte MTU, which the driver drops: len_errors);
    TCP's are cut to the guest's MSS."""
    r, rep, g = run("--backend", "passt", "--ip6", "--app", "rr", "--duration", "2", "--",
                    "role=client", "proto=" + proto, "sessions=2", "req_size=100",
                    "resp_size=%d" % resp, timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, host = g["result"], rep["host"]["rr"]
    assert res["transactions"] > 50 and res["vnet"]["rx"]["len_errors"] == 0, res
    # passt keeps what the guest has not acknowledged in its socket (it
    # peeks, tcp.c) and exits with QEMU: closing a socket with unread
    # data resets the connection, one error per session at the end
    assert host["io_errors"] <= (2 if proto == "tcp" else 0), host
    assert host["short_msgs"] == 0 and host["refused"] == 0, host
    assert 0 <= host["transactions"] - res["transactions"] <= 2, (host, res)
    d = rep["counts"]["directions"]["rr transactions"]
    assert d["verdict"] == "agree", d


@needs_root
@pytest.mark.parametrize("proto", ["udp", "tcp"])
def test_rr_over_ipv6_tap(image, no_leftovers, proto):
    # 3000-byte answers: IPv6 fragments the guest reassembles (UDP)
    r, rep, g = run("--backend", "tap", "--ip6", "--app", "rr", "--duration", "2", "--",
                    "role=client", "proto=" + proto, "sessions=2", "req_size=100",
                    "resp_size=3000", timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, host = g["result"], rep["host"]["rr"]
    assert res["transactions"] > 50, res
    assert host["io_errors"] == 0 and host["short_msgs"] == 0 and host["refused"] == 0, host
    assert 0 <= host["transactions"] - res["transactions"] <= 2, (host, res)
    d = rep["counts"]["directions"]["rr transactions"]
    assert d["verdict"] == "agree", d


@needs_root
def test_udp_rr_over_ipv6_counts_each_pair_by_its_ipv6_flow(image, no_leftovers):
    """--ip6 --queues 2 (issue 25): the guest's client is lwIP's (IPv6 stays
    there), its requests leave on pair 0 and QEMU's RSS steers each answer
    by the UDPv6 hash of its flow. The host's server counts its answers
    per client port; per pair they are the answers of the ports the
    test's own IPv6 Toeplitz hash puts there and the report's host count
    of that pair, and reached the guest's driver on it (beside a few
    frames of the host kernel's own, which no app counts per pair)."""
    r, rep, g = run("--backend", "tap", "--ip6", "--queues", "2", "--machine", "q35",
                    "--app", "rr", "--count", "400", "--", "role=client", "proto=udp",
                    "sessions=8", timeout=180)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, host = g["result"], rep["host"]
    assert res["vcpus"] == 2 and res["transactions"] == host["rr"]["transactions"], (res, host)
    want = [0, 0]
    for port, answers in host["rr"]["udp_ports"]:
        data = (ipaddress.IPv6Address(netns.HOST_IP6).packed +
                ipaddress.IPv6Address(netns.GUEST_IP6).packed + struct.pack("!HH", 9000, port))
        want[(toeplitz(MS_KEY, data) & 127) % 2] += answers
    assert len(host["rr"]["udp_ports"]) == 8 and min(want) > 0, host["rr"]
    assert sum(want) == res["transactions"], (want, res)
    assert [(q["queue"], q["tx_packets"]) for q in host["queues"]] == list(enumerate(want))
    drv = res["vnet"]["queues"]
    for q in rep["queues"]:
        p = q["queue"]
        assert q["host_tx_packets"] == want[p] and drv[p]["rx_packets"] >= want[p], (q, drv)
    # the rest are the host kernel's own frames (its neighbour
    # advertisement, MLD reports, router solicitations: 5 to 7 in 4 s runs
    # here), which the driver counts on the pair their hash names
    rx = sum(d["rx_packets"] for d in drv)
    assert rx <= host["tx_frames"] and rx - res["transactions"] <= 16, (drv, host)
    # the frame-level count is every pair's, not pair 0's (vnet.rx)
    assert rep["counts"]["directions"]["host->guest frames"]["received"] == rx, rep["counts"]
    # QEMU hashed each answer as the guest's own IPv6 hash does
    h = res["vnet"]["hash_report"]
    assert h["types"] == 0x3f and h["bad_type"] == h["bad_value"] == 0, h
    assert h["ok"] >= res["transactions"], h


@pytest.mark.parametrize("line,words", [
    ("ip6=fd00::1::2", ["ip6=fd00::1::2", "not an IPv6 address"]),
    ("ip6=fe80::1", ["ip6=fe80::1", "link-local"]),
    ("dst_ip6=ff02::1", ["dst_ip6=ff02::1", "multicast"]),
    ("ip6=fd00::2 dst_ip6=fd01::1", ["dst_ip6=", "/64"]),
])
def test_bad_ip6_is_the_config_exit(line, words):
    b = vnharness.boot(line, timeout=30)
    assert b.code == CONFIG, b.console
    err = b.one("error")
    assert err["reason"] == "config_error"
    for w in words:
        assert w in err["message"], err
    assert "ready" not in [m["type"] for m in (l.msg for l in b.lines) if m]


@needs_tap_iperf
def test_a_silent_ipv6_peer_is_the_network_exit(image, no_leftovers):
    # without --ip6 the namespace keeps IPv6 off: nobody answers the
    # guest's neighbour solicitation
    r, rep, g = run("--backend", "tap", "--app", "iperf", "--duration", "2", "--",
                    "role=client", "ip6=fd00:766e::2", "dst_ip6=fd00:766e::1", timeout=120)
    assert r.returncode != 0
    assert "no neighbour advertisement from FD00:766E::1 within 2000 ms" in rep["why"], rep["why"]
    assert g["exit"]["code"] == 9 and g["exit"]["reason"] == "network_error", g["exit"]
