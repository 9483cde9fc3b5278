"""The control queue's receive-mode, MAC and VLAN commands (virtio 1.2
s5.1.6.5.1-3; issue 27) against QEMU 7.2 and 10.0's virtio-net over tap,
each reply checked, and what QEMU's receive filter then does: after
MAC_ADDR_SET to a new address with promiscuous mode off, the host's frames
to the NIC's old address are all dropped by QEMU (its receive_filter);
with promiscuous mode on they all arrive. With vlan=5 and promiscuous
mode off QEMU passes tagged frames of VLAN 5 only; without vlan= (no
CTRL_VLAN) every tag. A command whose feature was switched off is one
config-error line (status 2)."""

import json
import os
import subprocess

import pytest

from vnharness import PYTHON, ROOT, VNPERF, run_vnperf
from vnperflib.run import nextroot

N = 200
NEW_MAC = "02:00:00:00:00:99"
QEMUS = ["system", pytest.param("next", marks=pytest.mark.skipif(
    nextroot.stamp() is None, reason="build/next not installed: make next"))]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="tap needs root")


def run_json(qemu, words, timeout=180):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--machine", "q35", "--qemu", qemu, "--app", "sink", "--count", str(N),
                    "--rate", "1000", "--duration", "3", "--"] + words, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


@pytest.mark.parametrize("qemu", QEMUS)
@pytest.mark.parametrize("promisc", [0, 1])
def test_mac_addr_set_and_promisc_through_qemus_filter(image, qemu, promisc):
    r, rep = run_json(qemu, ["mac=" + NEW_MAC, "mac_set=1", "allmulti=1", "vlan=5",
                             "promisc=%d" % promisc])
    g = rep["guests"][-1]
    v = g["result"]["vnet"]
    for f in ("ctrl_rx", "ctrl_mac_addr", "ctrl_vlan"):
        assert f in v["features"], v["features"]
    # PROMISC, ALLMULTI, MAC_ADDR_SET, MAC_TABLE_SET, VLAN_ADD: each answered OK
    assert v["ctrl"] == {"sent": 5, "ok": 5, "err": 0, "bad_reply": 0, "timeouts": 0}, v["ctrl"]
    for what in ("promisc=%d" % promisc, "allmulti=1", "mac_set=1", "vlan=5"):
        assert any(ln.endswith(": %s: OK" % what) for ln in g["console_tail"]), what
    sent = rep["counts"]["host"]["tx_packets"]
    assert sent == N, rep["counts"]["host"]
    # the host addresses the NIC's own MAC: past the filter only when promiscuous
    assert g["result"]["packets"] == (N if promisc else 0), (r.returncode, rep["why"])


def test_command_without_its_feature_is_one_config_error(image):
    r, rep = run_json("system", ["promisc=0", "features=-ctrl_rx"], timeout=120)
    assert r.returncode == 2, r.stderr
    fatal = [ln for ln in rep["guests"][-1]["console_tail"] if ln.startswith("FATAL")]
    assert len(fatal) == 1 and "does not offer VIRTIO_NET_F_CTRL_RX" in fatal[0], fatal


@pytest.mark.parametrize("qemu", QEMUS)
def test_coalescing_where_no_backend_offers_it_is_one_config_error(image, qemu):
    """coal_rx_usecs= reaches the driver's NOTF_COAL commands; neither QEMU
    offers NOTF_COAL or VQ_NOTF_COAL (docs/driver.md), so the run ends in
    the command's one config-error line, nothing sent."""
    r, rep = run_json(qemu, ["coal_rx_usecs=50"], timeout=120)
    assert r.returncode == 2, r.stderr
    g = rep["guests"][-1]
    fatal = [ln for ln in g["console_tail"] if ln.startswith("FATAL")]
    assert len(fatal) == 1 and "coal_rx_frames=0 coal_rx_usecs=50: the device does not offer " \
        "VIRTIO_NET_F_NOTF_COAL or VIRTIO_NET_F_VQ_NOTF_COAL" in fatal[0], fatal


# The VLAN filter's run: the test's own tap on an addressed bridge in a
# namespace of its own (test_own_tap.py's setup), the guest at GUEST_IP;
# vlanframes.py writes the tagged frames onto the tap.
TAP, BR, HOST_IP, GUEST_IP = "vnvtap0", "vnvbr0", "10.9.0.1", "10.9.0.2"
VLAN_FRAMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vlanframes.py")
TAGGED_N = 200
UNTAGGED, VLAN5, VLAN6 = 100, 105, 106  # vlanframes.py's stream ids: STREAM_BASE + VLAN id


def ip(*args):
    subprocess.run(["ip"] + list(args), check=True)


@pytest.fixture
def vlan_ns(no_leftovers):
    """Bridge BR with HOST_IP and tap TAP on it, IPv6 off (the kernel
    sends nothing of its own)."""
    ns = "vnvlan-%s" % no_leftovers
    ip("netns", "add", ns)
    try:
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                        "net.ipv6.conf.all.disable_ipv6=1",
                        "net.ipv6.conf.default.disable_ipv6=1"], check=True)
        ip("-n", ns, "link", "add", BR, "type", "bridge")
        ip("-n", ns, "tuntap", "add", "dev", TAP, "mode", "tap", "vnet_hdr")
        ip("-n", ns, "link", "set", TAP, "master", BR)
        ip("-n", ns, "link", "set", TAP, "up")
        ip("-n", ns, "link", "set", BR, "up")
        ip("-n", ns, "addr", "add", HOST_IP + "/24", "dev", BR)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def run_with_tagged_frames(ns, qemu, words):
    """A sink run on TAP (the runner's host peer sends stream 0 untagged)
    while vlanframes.py sends TAGGED_N frames of each of VLAN 5, VLAN 6 and
    untagged once the guest answers a ping: (report, what it sent)."""
    netns = ["ip", "netns", "exec", ns, PYTHON]
    run = subprocess.Popen(netns + [VNPERF, "run", "--accel", "tcg", "--quiet", "--json",
                                    "--tap", TAP, "--machine", "q35", "--qemu", qemu,
                                    "--app", "sink", "--rate", "100", "--duration", "10", "--",
                                    "ip=" + GUEST_IP, "promisc=0"] + words,
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           stdin=subprocess.DEVNULL)
    send = subprocess.Popen(netns + [VLAN_FRAMES, "--dev", TAP, "--src", HOST_IP,
                                     "--dst", GUEST_IP, "--kinds", "5,6,none",
                                     "--count", str(TAGGED_N), "--wait", "90"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = run.communicate(timeout=150)
        sent, why = send.communicate(timeout=5)
    finally:
        for p in (run, send):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert out, "no report (status %d): %s" % (run.returncode, err)
    assert send.returncode == 0, why
    return json.loads(out), json.loads(sent)


@pytest.mark.parametrize("qemu", QEMUS)
@pytest.mark.parametrize("vlan", [5, None])
def test_vlan_filter_passes_the_added_vlan_only(image, vlan_ns, qemu, vlan):
    """virtio 1.2 s5.1.6.5.3: with CTRL_VLAN negotiated and VLAN 5 added,
    QEMU's receive filter (promiscuous mode off) drops VLAN 6's frames and
    passes VLAN 5's and the untagged ones, each exactly; without vlan=
    the driver does not ask for CTRL_VLAN and every tag passes. The sink
    counts tagged UDP per stream like untagged (pkt_parse)."""
    rep, sent = run_with_tagged_frames(vlan_ns, qemu, ["vlan=%d" % vlan] if vlan else [])
    assert rep["status"] == 0, rep["why"]
    assert sent["tx_dropped"] == 0, sent  # every frame the tap took reached QEMU
    g = rep["guests"][-1]["result"]
    v = g["vnet"]
    assert ("ctrl_vlan" in v["features"]) == (vlan is not None), v["features"]
    ok = 2 if vlan else 1  # promisc=0, vlan=5
    assert v["ctrl"] == {"sent": ok, "ok": ok, "err": 0, "bad_reply": 0, "timeouts": 0}
    got = {s["stream"]: s for s in g["per_stream"]}
    assert got[0]["packets"] == rep["host"]["peer"]["packets"] > 0
    want = {UNTAGGED: TAGGED_N, VLAN5: TAGGED_N, VLAN6: 0 if vlan else TAGGED_N}
    assert {k: got[k]["packets"] if k in got else 0 for k in want} == want, got
    assert all(s["lost"] == s["dup"] == 0 for s in got.values()), got
    assert g["packets"] == g["rx_kinds"]["udp"] == sum(s["packets"] for s in got.values())
    assert g["malformed"] == g["no_header"] == g["bad_stream"] == 0, g
