"""The tc-bpf host end of netif_vlan= / netif_svlan= (backends/vlantc.py,
issue 29) on a tap with no guest behind it: the test writes frames onto
the tap as QEMU would (vlantapio.py) and reads what the namespace's stack
delivered, and the frame the stack's answer became on the way out. Of
frames tagged as the run (802.1Q VID 100; QinQ: 802.1ad 200 outside
802.1Q 100) only those reach a socket on the tap's address; another VID,
TPID, inner tag or none at all is dropped and counted by kind in the
program's map; the stack's datagram leaves with the run's tags and PCP.
The programs and their maps go with the namespace."""

import json
import os
import subprocess
import sys
import time

import pytest

from test_own_tap import ip
from vnharness import ROOT
from vnperflib.backends import bpfmap, vlantc

HERE = os.path.dirname(os.path.abspath(__file__))
DEV, HOST, GUEST, GUEST_MAC = "vntc0", "10.0.0.1", "10.0.0.2", "52:54:00:00:00:01"
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or vlantc.refusal() is not None,
                                reason="needs root (a tap in a namespace) and the tc-bpf end: "
                                       "%s" % vlantc.refusal())
# Every kind of frame, by name: its tags, outer first (vlantapio.py --kind).
KINDS = {"q100": "8100/100", "q100p5": "8100/100/5", "q101": "8100/101", "ad100": "88a8/100",
         "none": "", "qinq": "88a8/200+8100/100", "qinq_s201": "88a8/201+8100/100",
         "qinq_c101": "88a8/200+8100/101", "qinq_q": "8100/200+8100/100"}


@pytest.fixture
def tcns(no_leftovers, tmp_path):
    """A namespace with a tap addressed as the host end, the guest's
    neighbour entry static; the program attached by the test."""
    ns = "vnvlantc-%s" % no_leftovers
    ip("netns", "add", ns)
    try:
        ip("-n", ns, "tuntap", "add", "dev", DEV, "mode", "tap")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def exchange(ns, tags, tmp_path):
    """The program built for tags on the namespace's tap; every kind
    written onto it: (delivered kinds, the answer's frame, counts)."""
    vlantc.attach(ns, DEV, vlantc.build(str(tmp_path), *tags))
    ip("-n", ns, "addr", "add", HOST + "/24", "dev", DEV)
    ip("-n", ns, "link", "set", DEV, "up")
    ip("-n", ns, "neigh", "replace", GUEST, "lladdr", GUEST_MAC, "dev", DEV, "nud", "permanent")
    argv = ["ip", "netns", "exec", ns, sys.executable, os.path.join(HERE, "vlantapio.py"),
            "--dev", DEV, "--host", HOST, "--guest", GUEST, "--guest-mac", GUEST_MAC]
    for name, tag in KINDS.items():
        argv += ["--kind", "%s=%s" % (name, tag)]
    out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True, timeout=30,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=HERE)).stdout
    got = json.loads(out)
    return sorted(got["delivered"]), bytes.fromhex(got["frame"] or ""), vlantc.counts(ns, DEV)


def test_vlan_100_passes_its_own_and_tags_the_stacks(tcns, tmp_path):
    got, frame, c = exchange(tcns, (100, None, None), tmp_path)
    # any PCP is the VLAN's; QinQ frames' outer 802.1ad tag is not 802.1Q
    assert got == ["q100", "q100p5"], got
    assert frame[12:18] == bytes.fromhex("8100" "0064" "0800"), frame[:18].hex()
    assert c["rx_passed"]["frames"] == 2 and c["rx_untagged"]["frames"] == 1, c
    assert c["rx_other"]["frames"] == len(KINDS) - 3 and c["failed"]["frames"] == 0, c
    assert c["tx_tagged"]["frames"] >= 1, c


def test_qinq_200_100_passes_its_own_and_tags_the_stacks_with_pcp(tcns, tmp_path):
    got, frame, c = exchange(tcns, (100, 200, 5), tmp_path)
    assert got == ["qinq"], got
    # 802.1ad PCP 5 VID 200 outside 802.1Q PCP 5 VID 100 (IEEE 802.1Q-2018 s6.9)
    assert frame[12:22] == bytes.fromhex("88a8" "a0c8" "8100" "a064" "0800"), frame[:22].hex()
    assert c["rx_passed"]["frames"] == 1 and c["rx_untagged"]["frames"] == 1, c
    assert c["rx_other"]["frames"] == len(KINDS) - 2 and c["failed"]["frames"] == 0, c


def test_the_programs_go_with_the_namespace(tcns, tmp_path):
    vlantc.attach(tcns, DEV, vlantc.build(str(tmp_path), 100))
    ids = [vlantc.prog_id(tcns, DEV, hook) for hook, _ in vlantc.SECTIONS]
    assert all(bpfmap.array_values(i, vlantc.MAP) for i in ids), ids
    subprocess.run(["ip", "netns", "del", tcns], check=True)
    # the kernel frees a deleted namespace's devices in a work queue
    end, left = time.monotonic() + 10, ids
    while left and time.monotonic() < end:
        time.sleep(0.1)
        left = [i for i in ids if alive(i)]
    assert not left, "programs left after the namespace: %s" % left


def alive(prog_id):
    try:
        bpfmap.array_values(prog_id, vlantc.MAP)
        return True
    except OSError:
        return False
