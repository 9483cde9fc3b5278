"""Stream files (docs/streams.md, issue 29) through a booted guest: two
streams at different rates counted per stream exactly by gen and by the
host peer; a tx and an rx stream, each counted exactly by the other side
(over dgram and over the runner's tap), and a file of rx streams only;
a source-IP range whose every address leaves once per cycle (the
frames as QEMU's filter-dump wrote them); IPv6 UDP, TCP and ICMPv6
streams counted per stream by the host peer and the sink; 802.1Q and
QinQ frames over the test's own tap arriving tagged at the VLAN
interfaces of its namespace, or where the kernel has none, at the
runner's tc-bpf end on the tap."""

import json
import os
import shutil
import struct
import subprocess

import pytest

from test_own_tap import in_ns, ip
from vnharness import ROOT, run_vnperf
from vnperflib.backends import vlantc

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tap/netns need root")
EXAMPLES = os.path.join(ROOT, "examples", "streams")
RUN = ["run", "--accel", "tcg", "--quiet", "--json"]
# Two guests over dgram: QEMU's own 208 KiB sockets overflow when a
# guest's QEMU waits for a CPU (a loaded CI lost 3-10 of 5000 paced
# frames between the guests), so the runner's 4 MiB sockets carry them.
G2G = ["--backend", "dgram", "--topology", "guests", "--sock-rcvbuf", "4M"]


def report(r):
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def host_counted_each(rep, names):
    """gen's streams against the host peer's, exact per stream, and the
    report's rows by the file's names: returns gen's streams."""
    sent = rep["guests"][-1]["result"]["streams"]
    host = rep["host"]["peer"]["streams"]
    assert [s["id"] for s in sent] == [s["id"] for s in host] == list(range(len(names))), \
        (sent, host)
    for g, h in zip(sent, host):
        assert g["packets"] == h["packets"] == h["unique"] > 0, (g, h)
        assert h["lost"] == h["dup"] == h["reorder"] == 0, h
    assert [(s["name"], s["received"], s["lost"]) for s in rep["streams"]] == \
        [(n, g["packets"], 0) for n, g in zip(names, sent)]
    return sent


def sink_counted_each(rep):
    """The guest sink's per_stream against gen's streams (the last guest),
    exact, none lost: returns gen's streams and the sink's result."""
    sent = rep["guests"][-1]["result"]["streams"]
    sink = rep["guests"][0]["result"]
    got = {s["stream"]: s for s in sink["per_stream"]}
    assert sorted(got) == [g["id"] for g in sent], sink["per_stream"]
    for g in sent:
        assert (got[g["id"]]["packets"], got[g["id"]]["lost"]) == (g["packets"], 0), (got, g)
    return sent, sink


def test_two_streams_at_two_rates_counted_per_stream_on_both_sides(image):
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "3", "--streams",
                          os.path.join(EXAMPLES, "two-rates.toml")], timeout=180)
    rep = report(r)
    sent = host_counted_each(rep, ("fast", "slow"))
    for g in sent:
        assert (g["rate_unit"], g["mode"]) == ("pps", "continuous")
    # 2000 and 500 pps: four frames of the first to one of the second
    assert abs(sent[0]["packets"] / sent[1]["packets"] - 4) < 0.05, sent
    assert abs(sent[0]["pps"] - 2000) < 20 and abs(sent[1]["pps"] - 500) < 5, sent
    assert rep["host"]["peer"]["sizes"].get("128") == sent[1]["packets"]
    # the report pairs them, by the file's names
    assert [(s["id"], s["name"], s["packets"], s["received"], s["lost"]) for s in rep["streams"]] \
        == [(g["id"], n, g["packets"], g["packets"], 0) for g, n in zip(sent, ("fast", "slow"))]


def test_a_tx_and_an_rx_stream_counted_exactly_on_both_sides(image):
    """Both ways over dgram (examples/streams/bidir.toml): gen sends "up"
    at 1000 pps to the host peer, the host peer sends "down" at 400 pps
    with a source-port var to gen; each side counts the other's stream,
    every frame, none lost, duplicated or reordered."""
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "3", "--streams",
                          os.path.join(EXAMPLES, "bidir.toml")], timeout=180)
    rep = report(r)
    up, down = rep["guests"][-1]["result"]["streams"]
    assert (up["id"], up["direction"], down["id"], down["direction"]) == (0, "tx", 1, "rx")
    counted = rep["host"]["peer"]["streams"]
    sent = rep["host"]["peer_tx"]["streams"]
    assert [s["id"] for s in counted] == [0] and [s["id"] for s in sent] == [1], (counted, sent)
    assert up["packets"] == counted[0]["packets"] == counted[0]["unique"] >= 2500, (up, counted)
    assert counted[0]["lost"] == counted[0]["dup"] == counted[0]["reorder"] == 0
    got = down["rx"]
    assert got["packets"] == sent[0]["packets"] >= 800, (got, sent)
    assert got["lost"] == got["dup"] == got["reorder"] == 0, got
    assert "p50_us" not in got  # the host's TSC: no latency on the guest's clock
    # 1000 and 400 pps, the host's for 0.5 s less than the guest's 3 s
    assert abs(up["pps"] - 1000) < 10 and 990 <= sent[0]["packets"] <= 1000, (up, sent)
    assert rep["host"]["peer_tx"]["sizes"] == {"128": sent[0]["packets"]}
    assert [(s["id"], s["name"], s["direction"], s["packets"], s["received"], s["lost"])
            for s in rep["streams"]] == [(0, "up", "tx", up["packets"], up["packets"], 0),
                                         (1, "down", "rx", sent[0]["packets"],
                                          sent[0]["packets"], 0)]


def rx_counted_each(rep, names):
    """A file of rx streams only: gen sent nothing and counted every frame
    the host peer sent of each stream, none lost, duplicated or
    reordered; the report's rows by the file's names. Returns the host
    peer's send counts."""
    res = rep["guests"][-1]["result"]
    got = res["streams"]
    sent = rep["host"]["peer_tx"]["streams"]
    assert res["packets"] == 0 and [s["direction"] for s in got] == ["rx"] * len(names), got
    assert [s["id"] for s in got] == [s["id"] for s in sent] == list(range(len(names))), sent
    for g, h in zip(got, sent):
        assert g["rx"]["packets"] == h["packets"] > 0, (g, h)
        assert g["rx"]["lost"] == g["rx"]["dup"] == g["rx"]["reorder"] == 0, g
    assert [(s["name"], s["direction"], s["packets"], s["received"], s["lost"])
            for s in rep["streams"]] == [(n, "rx", h["packets"], h["packets"], 0)
                                         for n, h in zip(names, sent)]
    return sent


def test_a_file_of_rx_streams_only_counted_exactly_by_gen(image):
    """examples/streams/rx-only.toml over dgram: the host peer sends both
    streams (600 and 200 pps, the second with a port var), gen sends
    nothing and counts each exactly."""
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "3", "--streams",
                          os.path.join(EXAMPLES, "rx-only.toml")], timeout=180)
    sent = rx_counted_each(report(r), ("down", "down-ports"))
    # the host's for 0.5 s less than the guest's 3 s
    assert 1490 <= sent[0]["packets"] <= 1500 and 495 <= sent[1]["packets"] <= 500, sent


@needs_root
def test_a_tx_and_an_rx_stream_over_tap_counted_exactly_on_both_sides(image):
    """Both ways over the runner's tap (examples/streams/bidir.toml): the
    host peer in the namespace writes "down" onto the tap and counts "up"
    from it; each side counts the other's stream exactly."""
    r = run_vnperf(RUN + ["--backend", "tap", "--duration", "3", "--streams",
                          os.path.join(EXAMPLES, "bidir.toml")], timeout=180)
    rep = report(r)
    up, down = rep["guests"][-1]["result"]["streams"]
    counted = rep["host"]["peer"]["streams"]
    sent = rep["host"]["peer_tx"]["streams"]
    assert [s["id"] for s in counted] == [0] and [s["id"] for s in sent] == [1], (counted, sent)
    assert up["packets"] == counted[0]["packets"] == counted[0]["unique"] >= 2500, (up, counted)
    assert counted[0]["lost"] == counted[0]["dup"] == counted[0]["reorder"] == 0
    assert down["rx"]["packets"] == sent[0]["packets"] >= 990, (down, sent)
    assert down["rx"]["lost"] == down["rx"]["dup"] == down["rx"]["reorder"] == 0, down
    assert [(s["direction"], s["packets"], s["received"], s["lost"]) for s in rep["streams"]] \
        == [("tx", up["packets"], up["packets"], 0),
            ("rx", sent[0]["packets"], sent[0]["packets"], 0)]


@needs_root
def test_a_file_of_rx_streams_only_over_tap_counted_exactly_by_gen(image):
    r = run_vnperf(RUN + ["--backend", "tap", "--duration", "3", "--streams",
                          os.path.join(EXAMPLES, "rx-only.toml")], timeout=180)
    sent = rx_counted_each(report(r), ("down", "down-ports"))
    assert 1490 <= sent[0]["packets"] <= 1500 and 495 <= sent[1]["packets"] <= 500, sent


@needs_root
@pytest.mark.parametrize("backend", ["tap", "vhost-net"])
def test_rx_tcp_icmp_and_ipv6_streams_over_tap_counted_exactly_by_gen(image, backend):
    """examples/streams/rx-protocols.toml: the host peer writes TCP, ICMP,
    IPv6 UDP and ICMPv6 streams onto the tap (QEMU's, or vhost-net's),
    gen counts each exactly."""
    if backend == "vhost-net" and not os.path.exists("/dev/vhost-net"):
        pytest.skip("vhost-net: /dev/vhost-net missing on this host")
    r = run_vnperf(RUN + ["--backend", backend, "--duration", "3", "--streams",
                          os.path.join(EXAMPLES, "rx-protocols.toml")], timeout=180)
    sent = rx_counted_each(report(r), ("tcp-down", "ping-down", "udp6-down", "ping6-down"))
    assert [s["packets"] >= n for s, n in zip(sent, (1490, 495, 495, 245))] == [True] * 4, sent


def test_the_config_lines_shorthand_is_one_stream_counted_on_both_sides(image):
    """size=/imix= and rate= on the config line go through the stream
    engine as stream 0: gen's streams, the host peer's and the report's
    row agree exactly, per size too."""
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "2", "--rate", "3000", "--",
                          "imix=64:3,132:1"], timeout=180)
    rep = report(r)
    res = rep["guests"][-1]["result"]
    sent, host = res["streams"], rep["host"]["peer"]["streams"]
    assert [s["id"] for s in sent] == [s["id"] for s in host] == [0], (sent, host)
    g, h = sent[0], host[0]
    assert g["packets"] == h["packets"] == h["unique"] == res["packets"] > 3000, (g, h)
    assert h["lost"] == h["dup"] == h["reorder"] == 0, h
    assert (g["mode"], g["rate_unit"], g["rate_target"]) == ("continuous", "pps", 3000)
    sizes = {str(s["size"]): s["packets"] for s in res["sizes"]}
    got = rep["host"]["peer"]["sizes"]
    # 60 bytes: the guest's ARP request too
    assert got["128"] == sizes["128"] and 0 <= got["60"] - sizes["60"] <= 2, (got, sizes)
    assert sizes["60"] + sizes["128"] == g["packets"] and abs(sizes["60"] - 3 * sizes["128"]) <= 3
    assert [(s["id"], s["packets"], s["received"], s["lost"]) for s in rep["streams"]] \
        == [(0, g["packets"], g["packets"], 0)]


def pcap_frames(path):
    """Every frame of a classic pcap file (QEMU's filter-dump writes one)."""
    with open(path, "rb") as f:
        data = f.read()
    assert struct.unpack_from("<I", data)[0] == 0xa1b2c3d4
    off, out = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack_from("<IIII", data, off)[2]
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


def test_source_ip_range_each_address_once_per_cycle(image, tmp_path):
    dump = str(tmp_path / "tx.pcap")
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "2",
                          "--qemu-arg=-object",
                          "--qemu-arg=filter-dump,id=d0,netdev=n0,queue=rx,file=" + dump,
                          "--streams", os.path.join(EXAMPLES, "udp-src-range.toml")], timeout=180)
    rep = report(r)
    sent = rep["guests"][-1]["result"]["streams"][0]["packets"]
    udp = [f for f in pcap_frames(dump) if f[12:14] == b"\x08\x00" and f[23] == 17]
    assert len(udp) == sent >= 1000, (len(udp), sent)
    base = struct.unpack(">I", bytes([10, 0, 2, 100]))[0]
    for f in udp:
        seq = struct.unpack_from("<Q", f, 42)[0]
        assert struct.unpack_from(">I", f, 26)[0] == base + seq % 10, seq
    seqs = sorted(struct.unpack_from("<Q", f, 42)[0] for f in udp)
    assert seqs == list(range(sent))
    assert rep["host"]["peer"]["streams"][0]["packets"] == sent


def test_vlan_and_qinq_tags_on_the_wire(image, tmp_path):
    """The tags as sent: 802.1Q 100 on the first stream, 802.1ad 200 outside
    802.1Q 100 on the second, IPv4 behind them with a valid checksum."""
    dump = str(tmp_path / "tx.pcap")
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "2",
                          "--qemu-arg=-object",
                          "--qemu-arg=filter-dump,id=d0,netdev=n0,queue=rx,file=" + dump,
                          "--streams", os.path.join(EXAMPLES, "vlan.toml")], timeout=180)
    sent = report(r)["guests"][-1]["result"]["streams"]
    frames = pcap_frames(dump)
    q = [f for f in frames if f[12:18] == bytes.fromhex("8100" "0064" "0800")]
    qinq = [f for f in frames if f[12:22] == bytes.fromhex("88a8" "00c8" "8100" "0064" "0800")]
    assert len(q) == sent[0]["packets"] >= 1000 and len(q[0]) == 64, (len(q), sent)
    assert len(qinq) == sent[1]["packets"] >= 100 and len(qinq[0]) == 128, (len(qinq), sent)
    assert len(frames) - len(q) - len(qinq) <= 2  # the guest's ARP
    for f, l3 in ((q[0], 18), (qinq[-1], 22)):
        words = struct.unpack(">10H", f[l3:l3 + 20])
        s = sum(words)
        assert (s & 0xffff) + (s >> 16) == 0xffff
        assert struct.unpack_from("<H", f, l3 + 28 + 16)[0] == (0 if f is q[0] else 1)


def test_tagged_streams_counted_per_stream_by_the_host_peer(image):
    """802.1Q and QinQ frames over dgram: the host peer reads behind the
    tags and counts each stream as gen sent it."""
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "2", "--streams",
                          os.path.join(EXAMPLES, "vlan.toml")], timeout=180)
    rep = report(r)
    sent = host_counted_each(rep, ("tagged", "qinq"))


def test_tagged_streams_guest_to_guest_sink_counts_each(image):
    """The guest sink reads behind the tags too: its per_stream packets are
    gen's per stream."""
    r = run_vnperf(RUN + G2G + ["--duration", "2",
                                "--streams", os.path.join(EXAMPLES, "vlan.toml")], timeout=240)
    rep = report(r)
    assert len(sink_counted_each(rep)[0]) == 2


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="no dpdk-testpmd (Debian dpdk-dev)")
def test_tagged_streams_through_testpmd_arrive_tagged_and_counted_per_stream(image):
    """Two guests joined by testpmd (io forwarding over vhost-user): the
    802.1Q and QinQ streams reach the sink, counted per stream, and
    testpmd carried them at their tagged lengths (it neither strips nor
    inserts tags: its bytes are gen's, tags included)."""
    r = run_vnperf(RUN + ["--backend", "vhost-user", "--topology", "guests", "--duration", "2",
                          "--streams", os.path.join(EXAMPLES, "vlan.toml")], timeout=300)
    rep = report(r)
    sent, _ = sink_counted_each(rep)
    assert len(sent) == 2
    # testpmd's port from gen: gen's streams plus the driver's 60-byte
    # ARP frames, byte for byte (64 tagged, 128 QinQ as vlan.toml says)
    tp = rep["host"]["testpmd"]["ports"]
    rx = max(tp.values(), key=lambda p: p["RX-packets"])
    extra = rx["RX-packets"] - sum(g["packets"] for g in sent)
    assert 0 <= extra <= 2, (rx, sent)
    assert rx["RX-bytes"] == sum(g["bytes"] for g in sent) + 60 * extra, (rx, sent)


def ones_sum(data, s=0):
    data = data + b"\0" * (len(data) & 1)
    s += sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def test_ipv6_frames_on_the_wire(image, tmp_path):
    """The IPv6 example's frames as sent: the addresses of the file, UDP
    checksums right over the IPv6 pseudo header (RFC 8200 s8.1), the flow
    label walking 1..64 with the sequence number."""
    dump = str(tmp_path / "tx.pcap")
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "2",
                          "--qemu-arg=-object",
                          "--qemu-arg=filter-dump,id=d0,netdev=n0,queue=rx,file=" + dump,
                          "--streams", os.path.join(EXAMPLES, "ipv6.toml")], timeout=180)
    sent = report(r)["guests"][-1]["result"]["streams"][0]["packets"]
    six = [f for f in pcap_frames(dump) if f[12:14] == b"\x86\xdd"]
    assert len(six) == sent >= 1000 and len(six[0]) == 128, (len(six), sent)
    src, dst = bytes.fromhex("fd00" + "00" * 13 + "02"), bytes.fromhex("fd00" + "00" * 13 + "01")
    for f in six:
        assert f[22:38] == src and f[38:54] == dst and f[20] == 17
        ulen = struct.unpack_from(">H", f, 58)[0]
        assert ulen == struct.unpack_from(">H", f, 18)[0] == len(f) - 54
        assert ones_sum(f[54:54 + ulen], ones_sum(f[22:54]) + 17 + ulen) == 0xffff
        seq = struct.unpack_from("<Q", f, 62)[0]
        assert struct.unpack_from(">I", f, 14)[0] & 0xfffff == 1 + seq % 64


def test_ipv6_streams_counted_per_stream_on_both_sides(image):
    """examples/streams/ipv6-tcp-icmp.toml over dgram: IPv6 UDP, TCP and
    ICMPv6 streams, each counted exactly per stream by the host peer
    (pkt_parse's IPv6 path: the checksums over the IPv6 pseudo header),
    its flows IPv6's."""
    r = run_vnperf(RUN + ["--backend", "dgram", "--sock-rcvbuf", "4M", "--duration", "2",
                          "--streams", os.path.join(EXAMPLES, "ipv6-tcp-icmp.toml")], timeout=180)
    rep = report(r)
    sent = host_counted_each(rep, ("udp6", "tcp6", "ping6"))
    assert sent[2]["packets"] >= 250, sent
    host = rep["host"]["peer"]
    bad = {k: n for k, n in host["non_vnperf_by"].items() if k.startswith("bad") and n}
    assert not bad, host["non_vnperf_by"]
    flows = {(f["src"], f["dst"]) for f in host["flows"]}
    assert ("fd00::2", "fd00::1") in flows, host["flows"]


def test_ipv6_streams_guest_to_guest_sink_counts_each(image):
    """The guest sink counts IPv6 UDP, TCP and ICMPv6 streams per stream,
    the TCP and ICMPv6 ones stamped, none left to lwIP."""
    r = run_vnperf(RUN + G2G + ["--duration", "2",
                                "--streams", os.path.join(EXAMPLES, "ipv6-tcp-icmp.toml")],
                   timeout=240)
    rep = report(r)
    sent, sink = sink_counted_each(rep)
    assert len(sent) == 3
    assert sink["rx_kinds"]["stamped"] == sent[1]["packets"] + sent[2]["packets"]
    assert sink["rx_kinds"]["ip_other"] == 0


TAP = "vnstap0"


@pytest.fixture
def vlanns(no_leftovers):
    """A namespace with the test's own tap, an 802.1Q interface for VLAN
    100 on it and an 802.1ad one for 200 with 802.1Q 100 inside (QinQ)."""
    ns = "vnstreams-%s" % no_leftovers
    ip("netns", "add", ns)
    try:
        for k in ("all", "default"):
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                            "net.ipv6.conf.%s.disable_ipv6=1" % k], check=True)
        ip("-n", ns, "tuntap", "add", "dev", TAP, "mode", "tap", "vnet_hdr")
        if subprocess.run(["ip", "-n", ns, "link", "add", "link", TAP, "name", "v100", "type",
                           "vlan", "id", "100"], stderr=subprocess.PIPE).returncode:
            pytest.skip("this kernel has no VLAN interfaces (8021q); "
                        "test_vlan_and_qinq_tags_on_the_wire checks the frames")
        ip("-n", ns, "link", "add", "link", TAP, "name", "q200", "type", "vlan", "proto",
           "802.1ad", "id", "200")
        ip("-n", ns, "link", "add", "link", "q200", "name", "q200.100", "type", "vlan", "id",
           "100")
        for dev in (TAP, "v100", "q200", "q200.100"):
            ip("-n", ns, "link", "set", dev, "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def rx(ns, dev):
    out = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show", dev],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(out)[0]["stats64"]["rx"]["packets"]


@needs_root
def test_vlan_and_qinq_frames_arrive_tagged_at_vlan_interfaces(image, vlanns):
    before = {d: rx(vlanns, d) for d in ("v100", "q200.100")}
    r = in_ns(vlanns, RUN + ["--tap", TAP, "--duration", "2", "--streams",
                             os.path.join(EXAMPLES, "vlan.toml")], timeout=180)
    sent = report(r)["guests"][-1]["result"]["streams"]
    assert sent[0]["packets"] >= 1000 and sent[1]["packets"] >= 100, sent
    assert rx(vlanns, "v100") - before["v100"] == sent[0]["packets"]
    assert rx(vlanns, "q200.100") - before["q200.100"] == sent[1]["packets"]


@pytest.fixture
def tcbpfns(no_leftovers, tmp_path):
    """A namespace with the test's own tap, the runner's tc-bpf end for
    802.1ad 200 outside 802.1Q 100 (QinQ) on it."""
    ns = "vnstreams-%s" % no_leftovers
    ip("netns", "add", ns)
    try:
        ip("-n", ns, "tuntap", "add", "dev", TAP, "mode", "tap", "vnet_hdr")
        vlantc.attach(ns, TAP, vlantc.build(str(tmp_path), 100, 200))
        ip("-n", ns, "link", "set", TAP, "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns])


@needs_root
@pytest.mark.skipif(vlantc.refusal() is not None, reason="needs the tc-bpf end: %s"
                    % vlantc.refusal())
def test_vlan_and_qinq_frames_arrive_tagged_at_the_tc_bpf_end(image, tcbpfns):
    """Every QinQ frame passes the program (its two tags as the end's),
    every 802.1Q-100 frame is one it drops as another tag; untagged only
    the guest's ARP."""
    r = in_ns(tcbpfns, RUN + ["--tap", TAP, "--duration", "2", "--streams",
                              os.path.join(EXAMPLES, "vlan.toml")], timeout=180)
    sent = report(r)["guests"][-1]["result"]["streams"]
    assert sent[0]["packets"] >= 1000 and sent[1]["packets"] >= 100, sent
    c = vlantc.counts(tcbpfns, TAP)
    assert c["rx_passed"]["frames"] == sent[1]["packets"], (c, sent)
    assert c["rx_other"]["frames"] == sent[0]["packets"], (c, sent)
    assert c["rx_untagged"]["frames"] <= 2 and c["failed"]["frames"] == 0, c
    # the stack's bytes of a passed frame: its 128 less the two tags
    assert c["rx_passed"]["bytes"] == 120 * sent[1]["packets"], c


def test_two_streams_guest_to_guest_sink_counts_each(image):
    """gen -> sink over dgram: the sink's per_stream packets are gen's per
    stream, none lost."""
    r = run_vnperf(RUN + G2G + ["--duration", "3",
                                "--streams", os.path.join(EXAMPLES, "two-rates.toml")], timeout=240)
    rep = report(r)
    sent, sink = sink_counted_each(rep)
    assert sink["app"] == "sink" and len(sent) == 2


def check_udp4(f):
    """An untagged IPv4 UDP frame's header and UDP checksums (RFC 1071)."""
    assert ones_sum(f[14:34]) == 0xffff
    ulen = struct.unpack_from(">H", f, 38)[0]
    s = ones_sum(f[26:34] + struct.pack(">HH", 17, ulen) + f[34:34 + ulen])
    assert s == 0xffff


@pytest.mark.parametrize("frames", [
    ["--size", "64"],
    ["--streams", os.path.join(ROOT, "bench", "streams", "four-var.toml")],
])
def test_unpaced_streams_frames_exactly_as_counted(image, tmp_path, frames):
    """Unpaced streams of one size (the shorthand's one, a file's four with
    a port var each) go through the engine's per-stream loops: every frame
    on the wire has its stream's next sequence number, its var's value for
    it and both checksums right, and gen's counts are the wire's."""
    dump = str(tmp_path / "tx.pcap")
    r = run_vnperf(RUN + ["--backend", "dgram", "--count", "4001",
                          "--qemu-arg=-object",
                          "--qemu-arg=filter-dump,id=d0,netdev=n0,queue=rx,file=" + dump]
                   + frames, timeout=180)
    sent = report(r)["guests"][-1]["result"]["streams"]
    udp = [f for f in pcap_frames(dump) if f[12:14] == b"\x08\x00" and f[23] == 17]
    assert len(udp) == sum(s["packets"] for s in sent) == 4001, (len(udp), sent)
    seqs = {}
    for f in udp:
        assert len(f) == 64
        check_udp4(f)
        sid = struct.unpack_from("<H", f, 58)[0]
        seq = struct.unpack_from("<Q", f, 42)[0]
        seqs.setdefault(sid, []).append(seq)
        if len(sent) == 4:
            # s0, s2: src_port, s1, s3: dst_port, each 1024..65535 in turn
            port = struct.unpack_from(">H", f, 34 + 2 * (sid % 2))[0]
            assert port == 1024 + seq % 64512, (sid, seq, port)
    assert sorted(seqs) == [s["id"] for s in sent]
    for s in sent:
        assert seqs[s["id"]] == list(range(s["packets"])), s
    if len(sent) == 4:
        # in turn: the counts differ by at most one
        assert max(s["packets"] for s in sent) - min(s["packets"] for s in sent) <= 1


def test_tcp_and_icmp_streams_counted_per_stream_on_both_sides(image, tmp_path):
    """examples/streams/tcp-icmp.toml over dgram: every TCP segment and
    ICMP echo request as sent has its checksum right (TCP's over the
    pseudo header, RFC 9293 s3.1; ICMP's over the message, RFC 792), its
    sequence field the stamp's, and the host peer counts each stream as
    gen sent it."""
    dump = str(tmp_path / "tx.pcap")
    r = run_vnperf(RUN + ["--backend", "dgram", "--duration", "2",
                          "--qemu-arg=-object",
                          "--qemu-arg=filter-dump,id=d0,netdev=n0,queue=rx,file=" + dump,
                          "--streams", os.path.join(EXAMPLES, "tcp-icmp.toml")], timeout=180)
    rep = report(r)
    sent = host_counted_each(rep, ("tcp", "ping"))
    ip4 = [f for f in pcap_frames(dump) if f[12:14] == b"\x08\x00"]
    tcp = [f for f in ip4 if f[23] == 6]
    icmp = [f for f in ip4 if f[23] == 1]
    assert len(tcp) == sent[0]["packets"] >= 1000 and len(icmp) == sent[1]["packets"] >= 250
    for f in tcp:
        assert len(f) == 128 and ones_sum(f[14:34]) == 0xffff
        assert ones_sum(f[34:], ones_sum(f[26:34]) + 6 + len(f) - 34) == 0xffff
        seq = struct.unpack_from("<Q", f, 54)[0]
        assert struct.unpack_from(">HHI", f, 34) == (40000 + seq % 100, 5001, seq)
        assert f[46:48] == b"\x50\x18"  # 20 bytes, ACK|PSH
    for f in icmp:
        assert len(f) == 66 and ones_sum(f[14:34]) == 0xffff and ones_sum(f[34:]) == 0xffff
        seq = struct.unpack_from("<Q", f, 42)[0]
        assert struct.unpack_from(">BBxxHH", f, 34) == (8, 0, 1, seq & 0xffff)
        assert struct.unpack_from("<II", f, 58) == (1, 0x564e5046)  # stream 1, the magic


def test_tcp_and_icmp_streams_guest_to_guest_sink_counts_each(image):
    """The guest sink counts TCP and ICMP streams' frames per stream (the
    stamp after their headers) and leaves none to lwIP (no echo reply, no
    reset)."""
    r = run_vnperf(RUN + G2G + ["--duration", "2",
                                "--streams", os.path.join(EXAMPLES, "tcp-icmp.toml")], timeout=240)
    rep = report(r)
    sent, sink = sink_counted_each(rep)
    assert len(sent) == 2
    assert sink["rx_kinds"]["stamped"] == sum(g["packets"] for g in sent)
    assert sink["rx_kinds"]["ip_other"] == 0
