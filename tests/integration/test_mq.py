"""Multiqueue (issue 25): QEMU's virtio-net-pci with mq=on over a
multiqueue tap (queues=2). The guest negotiates CTRL_VQ and MQ, sets two
queue pairs (VQ_PAIRS_SET) and reports both in the result's "queues";
the tap counts every frame the driver sent. With rss=on (QEMU's software
RSS) the RSS_CONFIG command is accepted too, and with hash=on every hash QEMU
reports is the guest's own (HASH_REPORT). gen sends each of 16 flows on
the pair the test's own Toeplitz hash of its replies names; frames the host
sends arrive on the pair the same hash names, and sink polls both.
queues= above what the device offers is a config error in one line."""

import ipaddress
import os
import socket
import struct
import subprocess
import time

import pytest

import vnharness
from vnharness import guest, qemucmd
from vnperflib.run import peer as vnpeer

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a multiqueue tap needs root")
N = 3000
ADDR = ["ip=" + vnpeer.GUEST_IP, "dst_ip=" + vnpeer.PEER_IP, "dst_mac=" + vnpeer.PEER_MAC]


@pytest.fixture
def mqtap(no_leftovers):
    """A multiqueue tap (vnet_hdr, up, IPv6 off: the kernel sends nothing
    into it) that QEMU opens with queues=2."""
    name = "vnmq%s" % no_leftovers[:8]
    subprocess.run(["ip", "tuntap", "add", "dev", name, "mode", "tap", "multi_queue",
                    "vnet_hdr"], check=True)
    try:
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % name], check=True)
        subprocess.run(["ip", "link", "set", name, "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "link", "del", name])


def tap_rx(name):
    with open("/sys/class/net/%s/statistics/rx_packets" % name) as f:
        return int(f.read())


def boot_mq(tap, cfg, props, smp=1):
    nic = qemucmd.Nic("tap,ifname=%s,script=no,downscript=no,queues=2,vhost=off" % tap,
                      "52:54:00:00:00:01", dict({"mq": "on", "vectors": "6"}, **props))
    spec = qemucmd.GuestSpec(vnharness.IMAGE, machine="q35", memory_mb=128, accel="tcg",
                             config=cfg, nics=[nic], name="vnperf-test",
                             extra=["-smp", str(smp)])
    g = guest.Guest(spec)
    with vnharness.Session() as s:
        g.start(s)
        guest.pump([g], 60)
    return vnharness.Boot(g)


# Microsoft's RSS verification key, the one the guest's RSS_CONFIG sends.
MS_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
                       "6a42b73bbeac01fa")


def toeplitz(key, data):
    """virtio 1.2 s5.1.6.4.3.1: for each set bit of the input, XOR in the
    32 key bits starting at that bit."""
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (kbits - 32 - i)) & 0xffffffff
    return h


def rss_pair(sip, dip, sport, dport, pairs=2):
    """The pair a received IPv4 UDP frame lands on: the hash's low 7 bits
    index the guest's 128-entry table, entry i is pair i mod N."""
    data = (ipaddress.IPv4Address(sip).packed + ipaddress.IPv4Address(dip).packed +
            struct.pack("!HH", sport, dport))
    return (toeplitz(MS_KEY, data) & 127) % pairs


def test_toeplitz_matches_the_published_vector():
    data = (ipaddress.IPv4Address("66.9.149.187").packed +
            ipaddress.IPv4Address("161.142.100.80").packed + struct.pack("!HH", 2794, 1766))
    assert toeplitz(MS_KEY, data) == 0x51ccc178


SO_RCVBUFFORCE = 33  # Linux's; Python's socket module does not name it


def capture(tap):
    """A raw socket on the tap: every frame the guest sends."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    s.bind((tap, 0))
    s.setblocking(False)
    return s


def udp_ports_seen(s):
    """Frames by UDP (source, destination) port; any other frame (lwIP's
    ARP) under None."""
    seen = {}
    while True:
        try:
            f = s.recv(2048)
        except BlockingIOError:
            return seen
        udp = len(f) >= 42 and f[12:14] == b"\x08\x00" and f[23] == 17
        ports = struct.unpack("!HH", f[34:38]) if udp else None
        seen[ports] = seen.get(ports, 0) + 1


def udp_frame(sport, dport):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 18, 0, 0, 64, 17, 0,
                     ipaddress.IPv4Address(vnpeer.PEER_IP).packed,
                     ipaddress.IPv4Address(vnpeer.GUEST_IP).packed)
    csum = sum(struct.unpack("!10H", ip))
    csum = (csum & 0xffff) + (csum >> 16)
    csum = (csum & 0xffff) + (csum >> 16)
    ip = ip[:10] + struct.pack("!H", ~csum & 0xffff) + ip[12:]
    udp = struct.pack("!HHHH", sport, dport, 8 + 18, 0) + bytes(18)
    return (bytes.fromhex("525400000001") + bytes.fromhex(vnpeer.PEER_MAC.replace(":", "")) +
            b"\x08\x00" + ip + udp)


def gen_on_two_pairs(tap, props):
    before = tap_rx(tap)
    b = boot_mq(tap, ["app=gen", "size=64", "count=%d" % N, "queues=2"] + ADDR, props)
    assert b.code == 0, b.console
    v = b.one("result")["vnet"]
    assert {"ctrl_vq", "mq"} <= set(v["features"]), v["features"]
    assert v["max_queue_pairs"] == 2 and len(v["queues"]) == 2, v
    assert v["ctrl"]["timeouts"] == 0 and v["ctrl"]["err"] == 0, v["ctrl"]
    q0, q1 = v["queues"]
    # one flow: on the pair its replies' hash names (pair 0 has lwIP's
    # frames too, ARP); the tap has them all
    pair = rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, 9000, 9000)  # the default ports
    assert pair == 1 and q1["tx_packets"] == N and q0["tx_packets"] < 5, v
    assert tap_rx(tap) - before == q0["tx_packets"] + q1["tx_packets"], (tap_rx(tap), before, v)
    assert "queues 2 of 2" in b.console
    return v


@needs_root
def test_two_queue_pairs_over_a_multiqueue_tap(image, mqtap):
    v = gen_on_two_pairs(mqtap, {})
    assert v["ctrl"]["sent"] == v["ctrl"]["ok"] == 1, v["ctrl"]  # VQ_PAIRS_SET
    assert not v["rss"], v


@needs_root
def test_rss_config_accepted(image, mqtap):
    v = gen_on_two_pairs(mqtap, {"rss": "on"})
    assert "rss" in v["features"] and v["rss"], v
    assert v["ctrl"]["sent"] == v["ctrl"]["ok"] == 2, v["ctrl"]  # and RSS_CONFIG


@needs_root
def test_more_queues_than_the_device_has_is_a_config_error(image, mqtap):
    b = boot_mq(mqtap, ["app=gen", "count=10", "queues=3"] + ADDR, {})
    assert b.code == 2, b.console
    fatal = [ln for ln in b.console.splitlines() if ln.startswith("FATAL")]
    assert len(fatal) == 1, b.console
    assert "queues=3: more queue pairs than the device has" in fatal[0], b.console
    assert b.one("error")["reason"] == "config_error", b.console


@needs_root
def test_gen_flows_go_out_on_their_hash_pairs(image, mqtap):
    """16 flows (sport 5000..5003 by dport 9000..9003): each goes out on
    the pair the test's Toeplitz hash of its replies names; per pair, the
    guest's tx_packets are the frames the tap got from that pair's flows,
    and the total is exact."""
    flows = [(sp, dp) for sp in range(5000, 5004) for dp in range(9000, 9004)]
    want = {(sp, dp): rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, dp, sp) for sp, dp in flows}
    assert set(want.values()) == {0, 1}, want  # both pairs carry flows
    cap = capture(mqtap)
    try:
        before = tap_rx(mqtap)
        b = boot_mq(mqtap, ["app=gen", "size=64", "count=%d" % N, "queues=2",
                            "flows=sport:5000-5003,dport:9000-9003"] + ADDR, {"rss": "on"})
        time.sleep(0.2)
        seen = udp_ports_seen(cap)
    finally:
        cap.close()
    assert b.code == 0, b.console
    v = b.one("result")["vnet"]
    assert v["rss"], v
    tx = [q["tx_packets"] for q in v["queues"]]
    assert set(seen) - {None} == set(flows), seen
    want[None] = 0  # lwIP's own frames go out on pair 0
    for q in (0, 1):
        assert tx[q] == sum(n for p, n in seen.items() if want[p] == q), (q, tx, seen, want)
    assert sum(tx) == sum(seen.values()) == tap_rx(mqtap) - before >= N, (tx, seen)


@needs_root
def test_gen_one_instance_per_vcpu_on_its_pair(image, mqtap):
    """-smp 2, vcpus=2, queues=2: CPU i sends on pair i the flows whose
    replies hash there, half of count= each; per pair, gen's own count,
    the driver's and the frames the tap got from that pair's flows are
    the same, and the total is exact."""
    flows = [(sp, dp) for sp in range(5000, 5004) for dp in range(9000, 9004)]
    want = {(sp, dp): rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, dp, sp) for sp, dp in flows}
    cap = capture(mqtap)
    try:
        b = boot_mq(mqtap, ["app=gen", "size=64", "count=%d" % N, "queues=2", "vcpus=2",
                            "flows=sport:5000-5003,dport:9000-9003"] + ADDR, {"rss": "on"},
                    smp=2)
        time.sleep(0.2)
        seen = udp_ports_seen(cap)
    finally:
        cap.close()
    assert b.code == 0, b.console
    assert b.one("smp")["up"] == 2, b.console
    res = b.one("result")
    assert res["vcpus"] == 2 and res["packets"] == N, res
    assert "2 CPUs sending" in b.console
    qs = res["queues"]
    assert [(q["queue"], q["cpu"]) for q in qs] == [(0, 0), (1, 1)], qs
    drv = [q["tx_packets"] for q in res["vnet"]["queues"]]
    for q in qs:
        frames = sum(n for p, n in seen.items() if p is not None and want[p] == q["queue"])
        assert q["packets"] == N // 2 == frames, (q, seen, want)
        assert q["bytes"] == 64 * q["packets"] and q["dropped"] == 0, q
        assert q["flows"] == sum(1 for p in flows if want[p] == q["queue"]), q
        assert q["halts"] == 0 and q["ring_full"] >= 0, q
    assert drv[1] == N // 2 and drv[0] == N // 2 + seen.get(None, 0), (drv, seen)


@needs_root
def test_gen_paced_hybrid_halts_each_cpu_on_its_own_timer(image, mqtap):
    """-smp 2, vcpus=2, queues=2, notify=hybrid, rate=2000: each CPU halts
    between departures on its own local APIC timer (an AP's, set up from
    the boot CPU's calibration: without it the AP's halt never ends) and
    each pair still sends exactly its half in about the paced time."""
    n = 400
    b = boot_mq(mqtap, ["app=gen", "size=64", "count=%d" % n, "queues=2", "vcpus=2",
                        "rate=2000", "notify=hybrid",
                        "flows=sport:5000-5003,dport:9000-9003"] + ADDR, {"rss": "on"}, smp=2)
    assert b.code == 0, b.console
    res = b.one("result")
    assert res["vcpus"] == 2 and res["packets"] == n, res
    assert [(q["queue"], q["cpu"], q["packets"]) for q in res["queues"]] == \
        [(0, 0, n // 2), (1, 1, n // 2)], res["queues"]
    cpus = res["idle"]["cpus"]
    assert [c["cpu"] for c in cpus] == [0, 1], cpus
    # ~200 departures each, most of them after a halt on the CPU's timer
    assert all(c["halts"] > 50 and c["timer_late_ns"] > 0 for c in cpus), cpus
    assert res["vnet"]["tx"]["notify"] == "hybrid", res["vnet"]["tx"]
    assert 0.15e9 < res["duration_ns"] < 0.5e9, res["duration_ns"]


@needs_root
def test_rss_steers_host_flows_to_their_pairs(image, mqtap):
    """The host sends 16 flows (dport 6000..6015) into the tap; QEMU's RSS
    (rss=on) puts each on the pair the test's Toeplitz hash names, and
    sink, polling both pairs, counts each pair's frames exactly."""
    v = host_flows_into_two_pairs(mqtap, {"rss": "on"})
    assert v["hash_report"]["types"] == 0, v["hash_report"]


@needs_root
def test_hash_reports_checked(image, mqtap):
    """hash=on (VIRTIO_NET_F_HASH_REPORT, QEMU's software hash): the guest
    negotiates it with the 20-byte header, RSS still steers each flow to
    the pair the test's hash names, and every frame's reported hash is the
    one the guest computed from the frame: all ok, none wrong or missing."""
    v = host_flows_into_two_pairs(mqtap, {"rss": "on", "hash": "on"})
    assert "hash_report" in v["features"] and v["hdr_len"] == 20, v
    h = v["hash_report"]
    assert h["types"] == 0x3f, h
    assert h["ok"] == sum(q["rx_packets"] for q in v["queues"]) == 192, (h, v["queues"])
    assert h["none"] == h["skipped"] == h["bad_type"] == h["bad_value"] == 0, h
    assert all(q["hash_bad_type"] == q["hash_bad_value"] == 0 for q in v["queues"]), v


def host_flows_into_two_pairs(mqtap, props):
    per, dports = 12, range(6000, 6016)  # 192 frames: within one RX ring
    want = [0, 0]
    for p in dports:
        want[rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, 7000, p)] += per
    assert min(want) > 0, want
    frames = [udp_frame(7000, p) for p in dports] * per
    out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    out.bind((mqtap, 0))
    sent = []

    def on_line(g, line):
        # after RSS_CONFIG: the line follows the control commands
        if not sent and "queues 2 of 2, rss" in line.text:
            for f in frames:
                out.send(f)
            sent.append(len(frames))

    nic = qemucmd.Nic("tap,ifname=%s,script=no,downscript=no,queues=2,vhost=off" % mqtap,
                      "52:54:00:00:00:01", dict({"mq": "on", "vectors": "6"}, **props))
    spec = qemucmd.GuestSpec(vnharness.IMAGE, machine="q35", memory_mb=128, accel="tcg",
                             config=["app=sink", "count=%d" % len(frames), "duration=30",
                                     "queues=2"] + ADDR, nics=[nic], name="vnperf-test")
    g = guest.Guest(spec)
    try:
        with vnharness.Session() as s:
            g.start(s)
            guest.pump([g], 60, on_line=on_line)
    finally:
        out.close()
    b = vnharness.Boot(g)
    assert b.code == 0 and sent, b.console
    v = b.one("result")["vnet"]
    assert v["rss"], v
    rx = [q["rx_packets"] for q in v["queues"]]
    assert rx == want, (rx, want)
    return v
