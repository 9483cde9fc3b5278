"""lwIP's netif tagged (netif_vlan=, issue 29).

On the wire: a guest's UDP rr client with netif_vlan=100 netif_pcp=3 over
QEMU's dgram netdev, whose datagrams are the guest's Ethernet frames as
sent: the test reads them (every one 802.1Q, TCI PCP 3 VID 100) and
answers each request three times, tagged 200, untagged, then tagged 100:
the guest takes only the last (one transaction each) and counts the
other two (rx_vlan_dropped).

Through the runner: TCP rr between two guests over dgram, both tagged; iperf
and TCP rr over tap, where the runner puts the host's address on a VLAN
interface vntap0.100 on the namespace's tap (the kernel hands it only
frames tagged 100: its receive count is the guest's tagged frames, and
both ends count the same bytes). Those need 802.1Q in the host's kernel:
where it has none, the run is refused in one line, and so is a backend
whose host end cannot be tagged, before boot."""

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
from vnperflib import exitcodes
from vnperflib.run import vlan

OK = 0
GUEST_MAC, HOST_MAC = "52:54:00:00:01:00", "02:00:00:00:00:01"
kernel_vlan = vlan.kernel_refusal()
needs_tap = pytest.mark.skipif(os.geteuid() != 0 or kernel_vlan is not None,
                               reason="needs root (tap in a namespace) and 802.1Q in the "
                                      "kernel: %s" % kernel_vlan)
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


def tagged(rep, g):
    """The VLAN interface's counts, checked against the guest's and the
    tap's: every frame the guest sent arrived tagged 100."""
    lw, v, host = g["result"]["net"]["lwip"], rep["host"]["vlan"], rep["host"]
    assert lw["vlan"] == 100 and lw["rx_vlan_dropped"] == 0, lw
    assert v["dev"] == "vntap0.100" and v["id"] == 100, v
    # each frame the tap took from QEMU (the guest's, none untagged) is
    # one the VLAN interface received
    assert v["rx_frames"] > 100 and v["rx_frames"] == host["rx_frames"], (v, host)
    assert v["tx_frames"] > 100, v
    return v


@needs_tap
@needs_iperf
def test_iperf_over_a_tagged_tap(image, no_leftovers):
    r, rep, g = run("--backend", "tap", "--app", "iperf", "--duration", "2", "--",
                    "netif_vlan=100")
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, host = g["result"], rep["host"]["iperf"]
    assert len(res["sessions"]) == 1 and res["sessions"][0]["ok"], res
    assert host["bytes"] > 1000000, host
    assert res["bytes"] - host["bytes"] == IPERF_FLAGS_WORD, (res["bytes"], host["bytes"])
    v = tagged(rep, g)
    assert v["rx_bytes"] > host["bytes"], (v, host)
    lw, tx = res["net"]["lwip"], res["vnet"]["tx"]
    # TSO through the tag: the device cut lwIP's large segments
    assert lw["rx_csum_bad"] == 0 and tx["gso_frames"] > 10 and tx["offload_refused"] == 0, (
        lw, tx)


@needs_tap
def test_tcp_rr_over_a_tagged_tap(image, no_leftovers):
    r, rep, g = run("--backend", "tap", "--app", "rr", "--duration", "2", "--",
                    "proto=tcp", "netif_vlan=100", "netif_pcp=3", timeout=120)
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res, hrr = g["result"], rep["host"]["rr"]
    assert res["transactions"] > 50, res
    assert 0 <= hrr["transactions"] - res["transactions"] <= 2, (hrr, res)
    tagged(rep, g)


@pytest.mark.skipif(os.geteuid() != 0 or kernel_vlan is None,
                    reason="for a root runner on a kernel without 802.1Q")
def test_a_kernel_without_vlans_is_said_in_one_line(image):
    r = run_vnperf(["run", "--accel", "tcg", "--backend", "tap", "--app", "iperf", "--",
                    "netif_vlan=100"], timeout=60)
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
