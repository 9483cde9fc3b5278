"""The control queue's receive-mode, MAC and VLAN commands (virtio 1.2
s5.1.6.5.1-3; issue 27) against QEMU 7.2 and 10.0's virtio-net over tap,
each reply checked, and what QEMU's receive filter then does: after
MAC_ADDR_SET to a new address with promiscuous mode off, the host's frames
to the NIC's old address are all dropped by QEMU (its receive_filter);
with promiscuous mode on they all arrive. A command whose feature was
switched off is one config-error line (status 2)."""

import json
import os

import pytest

from vnharness import run_vnperf
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
