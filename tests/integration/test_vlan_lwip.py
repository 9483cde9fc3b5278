"""lwIP's netif tagged (netif_vlan=, issue 29).

On the wire: a guest's UDP rr client with netif_vlan=100 netif_pcp=3 over
QEMU's dgram netdev, whose datagrams are the guest's Ethernet frames as
sent: the test reads them (every one 802.1Q, TCI PCP 3 VID 100) and
answers each request three times, tagged 200, untagged, then tagged 100:
the guest takes only the last (one transaction each) and counts the
other two (rx_vlan_dropped).

Through the runner: TCP rr between two guests over dgram, both tagged; iperf
and TCP rr over tap, each with both host ends (--vlan-end): the host's
address on a VLAN interface vntap0.100 on the namespace's tap (the kernel
hands it only frames tagged 100: its receive count is the guest's tagged
frames), which needs 802.1Q in the host's kernel, or on the tap itself
with the runner's tc-bpf program untagging and tagging (its count of
frames passed is the guest's tagged frames, none dropped), which needs
clang; both ends count the same bytes. QinQ TCP rr over tap through the
tc-bpf end, every frame both ways in QEMU's dump of the tap netdev
carrying both tags. A kernel without 802.1Q asked for VLAN interfaces is
refused in one line, and so is a backend whose host end cannot be
tagged, before boot."""

import json
import os
import shutil
import socket
import struct
import threading

import pytest

import vnharness
from test_stream import IPERF_FLAGS_WORD
from vnharness import run_vnperf
from test_streams import pcap_frames
from vnperflib import exitcodes
from vnperflib.backends import vlantc
from vnperflib.run import vlan

OK = 0
GUEST_MAC, HOST_MAC = "52:54:00:00:01:00", "02:00:00:00:00:01"
VNET_HDR = 12  # struct virtio_net_hdr_v1 (VIRTIO 1.2 s5.1.6) before each frame of a tap's dump
kernel_vlan = vlan.kernel_refusal()
tc_bpf = vlantc.refusal()
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (tap in a namespace)")
# Each host end over tap (--vlan-end), skipped where this host has not got it.
ENDS = [pytest.param("interface", marks=pytest.mark.skipif(
            kernel_vlan is not None, reason="needs 802.1Q in the kernel: %s" % kernel_vlan)),
        pytest.param("tc-bpf", marks=pytest.mark.skipif(
            tc_bpf is not None, reason="needs the tc-bpf end: %s" % tc_bpf))]
needs_iperf = pytest.mark.skipif(shutil.which("iperf") is None,
                                 reason="needs iperf 2 (Debian iperf)")


def run(*argv, timeout=180):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json"] + list(argv), timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    return r, rep, rep["guests"][-1]


class Reflector(threading.Thread):
    """The far end of the guest's dgram wire: records each frame's first
    tag, answers each UDP request (addresses and ports swapped: both
    checksums stay right) tagged 200, untagged, then tagged 100."""
    TAGS = 1            # the tags on lwIP's frames, recorded
    OUTER = b"\x81\x00"  # the first one's TPID: a request's
    COPIES = (b"\x81\x00\x00\xc8", b"", b"\x81\x00\x00\x64")  # each answer's tags

    def __init__(self, port, guest_port):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.guest = ("127.0.0.1", guest_port)
        self.tags, self.answered, self.stop = [], 0, threading.Event()

    def answer(self, f, l3):
        ip = bytearray(f[l3:])
        ip[12:16], ip[16:20] = f[l3 + 16:l3 + 20], f[l3 + 12:l3 + 16]
        ip[20:22], ip[22:24] = f[l3 + 22:l3 + 24], f[l3 + 20:l3 + 22]
        eth = f[6:12] + f[0:6]
        for tags in self.COPIES:
            self.sock.sendto(eth + tags + b"\x08\x00" + bytes(ip), self.guest)
        self.answered += 1

    def run(self):
        l3 = 14 + 4 * self.TAGS
        while not self.stop.is_set():
            try:
                f = self.sock.recv(2048)
            except socket.timeout:
                continue
            self.tags.append(struct.unpack_from(">" + "HH" * self.TAGS, f, 12))
            if f[12:14] == self.OUTER and f[l3 - 2:l3] == b"\x08\x00" and \
                    f[l3 + 9] == socket.IPPROTO_UDP:
                self.answer(f, l3)


def rr_client_against(reflector, words):
    """lwIP's UDP rr client, tagged VLAN 100 PCP 3 and words, against a
    reflector class's instance on its dgram wire: its boot, the reflector."""
    q, p = vnharness.free_udp_ports(2)
    ref = reflector(p, q)
    ref.start()
    try:
        b = vnharness.boot(["app=rr", "role=client", "proto=udp", "duration=2", "ip=10.0.0.2",
                            "dst_ip=10.0.0.1", "dst_mac=" + HOST_MAC, "netif_vlan=100",
                            "netif_pcp=3"] + words, netdevs=[vnharness.dgram_netdev(q, p)],
                           timeout=60)
    finally:
        ref.stop.set()
        ref.join()
    return b, ref


def test_lwips_frames_on_the_wire_tagged_and_filtered(image):
    b, ref = rr_client_against(Reflector, [])
    assert b.code == OK, b.console
    assert "net: lwIP's frames tagged VLAN 100 PCP 3 (802.1Q)" in b.console
    # every frame lwIP sent (requests, MLD reports) tagged PCP 3, VID 100
    assert ref.tags and set(ref.tags) == {(0x8100, 3 << 13 | 100)}, set(ref.tags)
    res = b.one("result")
    lw = res["net"]["lwip"]
    assert lw["vlan"] == 100, lw
    tr = res["transactions"]
    assert tr > 20 and 0 <= ref.answered - tr <= 1, (tr, ref.answered)
    # each answer's two wrong copies: dropped and counted, not transactions
    assert 2 * tr <= lw["rx_vlan_dropped"] <= 2 * ref.answered, (lw, tr, ref.answered)


def test_tcp_rr_between_two_tagged_guests(image):
    r, rep, g = run("--topology", "guests", "--backend", "dgram", "--app", "rr", "--duration",
                    "2", "--", "proto=tcp", "netif_vlan=100", timeout=240)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    assert g["result"]["transactions"] > 20, g["result"]
    for guest in rep["guests"]:
        lw = guest["result"]["net"]["lwip"]
        assert lw["vlan"] == 100 and lw["rx_vlan_dropped"] == 0, lw


class QinQReflector(Reflector):
    """The far end for a QinQ guest (netif_svlan=200 outside netif_vlan=100):
    records each frame's two tags, answers each UDP request with another
    service VID (201), with an 802.1Q outer tag instead of 802.1ad, then
    as the guest's own (service 200, VLAN 100)."""
    TAGS = 2
    OUTER = b"\x88\xa8"
    COPIES = tuple(outer + b"\x81\x00\x00\x64" for outer in (
        b"\x88\xa8\x00\xc9", b"\x81\x00\x00\xc8", b"\x88\xa8\x00\xc8"))


def test_qinq_frames_on_the_wire_tagged_and_filtered(image):
    """netif_svlan=200 outside netif_vlan=100 netif_pcp=3: every frame lwIP
    sent carries the 802.1ad tag (TPID 0x88a8, PCP 3, VID 200) and inside
    it the 802.1Q one; of each answer's three copies only the one in
    service VLAN 200 is taken, the other two dropped and counted."""
    b, ref = rr_client_against(QinQReflector, ["netif_svlan=200"])
    assert b.code == OK, b.console
    assert "net: inside service VLAN 200 PCP 3 (802.1ad)" in b.console
    assert ref.tags and set(ref.tags) == {(0x88a8, 3 << 13 | 200, 0x8100, 3 << 13 | 100)}, \
        set(ref.tags)
    lw = b.one("result")["net"]["lwip"]
    tr = b.one("result")["transactions"]
    assert (lw["vlan"], lw["svlan"]) == (100, 200), lw
    assert tr > 20 and 0 <= ref.answered - tr <= 1, (tr, ref.answered)
    assert 2 * tr <= lw["rx_svlan_dropped"] <= 2 * ref.answered, (lw, tr, ref.answered)
    assert lw["rx_vlan_dropped"] == 0, lw


def test_tcp_rr_between_two_qinq_guests(image):
    r, rep, g = run("--topology", "guests", "--backend", "dgram", "--app", "rr", "--duration",
                    "2", "--", "proto=tcp", "netif_vlan=100", "netif_svlan=200", timeout=240)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    assert g["result"]["transactions"] > 20, g["result"]
    for guest in rep["guests"]:
        lw = guest["result"]["net"]["lwip"]
        assert (lw["vlan"], lw["svlan"]) == (100, 200), lw
        assert lw["rx_vlan_dropped"] == lw["rx_svlan_dropped"] == 0, lw


def tagged(rep, g, end, svid=None):
    """The host end's counts, checked against the guest's and the tap's:
    every frame the guest sent arrived tagged 100 (inside svid)."""
    lw, v, host = g["result"]["net"]["lwip"], rep["host"]["vlan"], rep["host"]
    assert lw["vlan"] == 100 and lw["rx_vlan_dropped"] == 0, lw
    assert lw.get("svlan", 0) == (svid or 0) and lw.get("rx_svlan_dropped", 0) == 0, lw
    dev = "vntap0" if end == "tc-bpf" else "vnq%d.100" % svid if svid else "vntap0.100"
    assert (v["host_end"], v["dev"], v["id"], v.get("svid")) == (end, dev, 100, svid), v
    # each frame the tap took from QEMU (the guest's, none untagged) is
    # one the host end received
    assert v["rx_frames"] > 100 and v["rx_frames"] == host["rx_frames"], (v, host)
    assert v["tx_frames"] > 100, v
    if end == "tc-bpf":
        assert v["rx_other_tags"] == v["rx_untagged"] == v["failed"] == 0, v
    return v


@needs_root
@needs_iperf
@pytest.mark.parametrize("end", ENDS)
def test_iperf_over_a_tagged_tap(image, no_leftovers, end):
    r, rep, g = run("--backend", "tap", "--app", "iperf", "--duration", "2", "--vlan-end", end,
                    "--", "netif_vlan=100")
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    assert "tap: netif_vlan=: host end: " in r.stderr, r.stderr
    res, host = g["result"], rep["host"]["iperf"]
    assert len(res["sessions"]) == 1 and res["sessions"][0]["ok"], res
    assert host["bytes"] > 1000000, host
    assert res["bytes"] - host["bytes"] == IPERF_FLAGS_WORD, (res["bytes"], host["bytes"])
    v = tagged(rep, g, end)
    assert v["rx_bytes"] > host["bytes"], (v, host)
    lw, tx = res["net"]["lwip"], res["vnet"]["tx"]
    # TSO through the tag: the device cut lwIP's large segments
    assert lw["rx_csum_bad"] == 0 and tx["gso_frames"] > 10 and tx["offload_refused"] == 0, (
        lw, tx)


@needs_root
@pytest.mark.parametrize("end", ENDS)
def test_tcp_rr_over_a_tagged_tap(image, no_leftovers, end):
    r, rep, g = run("--backend", "tap", "--app", "rr", "--duration", "2", "--vlan-end", end,
                    "--", "proto=tcp", "netif_vlan=100", "netif_pcp=3", timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, hrr = g["result"], rep["host"]["rr"]
    assert res["transactions"] > 50, res
    assert 0 <= hrr["transactions"] - res["transactions"] <= 2, (hrr, res)
    tagged(rep, g, end)


@needs_root
@pytest.mark.parametrize("end", ENDS)
def test_qinq_tcp_rr_over_a_tap(image, no_leftovers, end, tmp_path):
    """netif_svlan=200 outside netif_vlan=100 netif_pcp=3 against the
    host's stack: QEMU's dump of the tap netdev holds the guest's frames
    and the host's (each after its virtio-net header), every one 802.1ad
    PCP 3 VID 200 outside 802.1Q VID 100 (PCP 3 both ways with the tc-bpf end, which tags the host's
    frames with the guest's priority), none untagged."""
    dump = str(tmp_path / "tap.pcap")
    r, rep, g = run("--backend", "tap", "--app", "rr", "--duration", "2", "--vlan-end", end,
                    "--qemu-arg=-object",
                    "--qemu-arg=filter-dump,id=d0,netdev=n0,queue=all,file=" + dump,
                    "--", "proto=tcp", "netif_vlan=100", "netif_svlan=200", "netif_pcp=3",
                    timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, hrr = g["result"], rep["host"]["rr"]
    assert res["transactions"] > 50, res
    assert 0 <= hrr["transactions"] - res["transactions"] <= 2, (hrr, res)
    v = tagged(rep, g, end, svid=200)
    guest = ("88a8", "60c8", "8100", "6064")
    host = guest if end == "tc-bpf" else ("88a8", "00c8", "8100", "0064")
    # the tap's netdev takes virtio-net headers: QEMU's dump keeps them
    frames = [f[VNET_HDR:] for f in pcap_frames(dump)]
    tags = [(f[12:14].hex(), f[14:16].hex(), f[16:18].hex(), f[18:20].hex()) for f in frames]
    assert set(tags) <= {guest, host} and guest in tags, set(tags)
    # both ways: the guest's frames (the host end's rx) and the host's (its tx)
    assert len(frames) == v["rx_frames"] + v["tx_frames"], (len(frames), v)


@needs_root
@needs_iperf
@pytest.mark.parametrize("end", ENDS)
def test_qinq_iperf_over_a_tap_with_tso(image, no_leftovers, end):
    """netif_svlan=200 outside netif_vlan=100: lwIP's MTU is 1496 (MSS
    1456) while the host asks for 1460; TSO stays on (net_off_send_mss)
    and the host's kernel takes the device's large frames with both tags
    (docs/lwip.md, "QinQ"): every byte arrives, none dropped."""
    r, rep, g = run("--backend", "tap", "--app", "iperf", "--duration", "2", "--vlan-end", end,
                    "--", "netif_vlan=100", "netif_svlan=200")
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, host = g["result"], rep["host"]["iperf"]
    assert len(res["sessions"]) == 1 and res["sessions"][0]["ok"], res
    assert host["bytes"] > 1000000, host
    assert res["bytes"] - host["bytes"] == IPERF_FLAGS_WORD, (res["bytes"], host["bytes"])
    v = tagged(rep, g, end, svid=200)
    lw, tx = res["net"]["lwip"], res["vnet"]["tx"]
    assert lw["tso_mss"] == 1456 and tx["offload_refused"] == 0, (lw, tx)
    # the host end sees the inner tag in the frame: at most 1518 bytes a
    # frame without TSO (1513 on average before); TSO's are up to 64 KiB
    assert v["rx_bytes"] > 10 * 1518 * v["rx_frames"], v
    assert tx["gso_frames"] > 10 and tx["gso_bytes"] > 10 * 1518 * tx["gso_frames"], tx


@needs_root
@needs_iperf
@pytest.mark.parametrize("end", ENDS)
@pytest.mark.parametrize("off", ["-guest_tso4,-guest_tso6", "-mrg_rxbuf"])
def test_qinq_iperf_to_a_guest_server(image, no_leftovers, end, off):
    """The host's iperf client to the guest with netif_svlan=200 outside
    netif_vlan=100, the guest taking no large frames: the host's
    MTU-sized segments come in 1522-byte frames, which the driver's
    receive buffers hold (docs/lwip.md, "QinQ"; over mergeable buffers
    they were counted in len_errors and dropped, without them QEMU
    dropped them: the session stalled). Every byte the host sent is
    read, none dropped."""
    r, rep, g = run("--backend", "tap", "--app", "iperf", "--duration", "2", "--vlan-end", end,
                    "--", "role=server", "netif_vlan=100", "netif_svlan=200", "features=" + off)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, host = g["result"], rep["host"]["iperf"]
    assert len(res["sessions"]) == 1 and res["sessions"][0]["ok"], res
    assert host["bytes"] > 1000000 and res["bytes"] == host["bytes"], (res["bytes"], host)
    tagged(rep, g, end, svid=200)
    rx, feats = res["vnet"]["rx"], res["vnet"]["features"]
    assert rx["len_errors"] == 0 and res["net"]["lwip"]["rx_dropped"] == 0, rx
    assert "guest_tso4" not in feats and ("mrg_rxbuf" in feats) == (off != "-mrg_rxbuf"), feats
    # 1460-byte segments: 1522-byte frames, every one in the guest's count
    assert rx["packets"] > 1000 and rx["gso_frames"] == 0, rx


@pytest.mark.skipif(os.geteuid() != 0 or kernel_vlan is None,
                    reason="for a root runner on a kernel without 802.1Q")
def test_a_kernel_without_vlans_asked_for_interfaces_is_said_in_one_line(image):
    r = run_vnperf(["run", "--accel", "tcg", "--backend", "tap", "--app", "iperf",
                    "--vlan-end", "interface", "--", "netif_vlan=100"], timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING and len(lines) == 1, (
        r.returncode, r.stderr)
    assert "tap: netif_vlan=: this host's kernel has no 802.1Q VLAN interfaces" in lines[0]


def test_an_untaggable_host_end_is_refused_before_boot(image):
    r = run_vnperf(["run", "--accel", "tcg", "--backend", "user", "--app", "iperf", "--",
                    "netif_vlan=100"], timeout=30)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_USAGE and len(lines) == 1, (r.returncode, r.stderr)
    assert "netif_vlan=100: the host end of user cannot match the tag" in lines[0], lines
