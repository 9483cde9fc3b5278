"""Indirect descriptors (issue 27): indirect=on negotiates
VIRTIO_F_INDIRECT_DESC with testpmd's vhost-user (gen, exact counts) and
with QEMU's virtio-net over tap, where the TCP stream's frames of several
pieces go out through indirect tables with every byte counted at both
ends; on a device that does not offer it, indirect=on is one config-error
line and status 2."""

import json
import os
import shutil

import pytest

import vnharness
from vnharness import run_vnperf
from vnperflib.run import peer as vnpeer

N = 20000


def run_json(args, timeout=180):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json"] + args, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    assert r.returncode == 0, (rep["why"], rep["guests"][-1]["console_tail"][-8:])
    return rep, rep["guests"][-1]["result"]


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="no dpdk-testpmd (Debian dpdk-dev)")
def test_gen_over_vhost_user_with_indirect_on(image):
    rep, res = run_json(["--backend", "vhost-user", "--app", "gen", "--count", str(N), "--",
                         "indirect=on"])
    assert "indirect_desc" in res["vnet"]["features"], res["vnet"]["features"]
    d = rep["counts"]["directions"]["guest->host frames"]
    assert d["verdict"] == "agree" and d["sent"] == d["received"] >= N, d
    # gen's frames, and the one ARP frame the driver sent besides
    assert res["packets"] == N and d["sent"] == res["vnet"]["tx"]["packets"] == N + 1, (res, d)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("iperf") is None,
                    reason="needs root (tap in a namespace) and iperf 2 (Debian iperf)")
def test_stream_over_tap_through_indirect_tables(image, no_leftovers):
    rep, res = run_json(["--backend", "tap", "--app", "iperf", "--duration", "2", "--",
                         "role=client", "sessions=1", "indirect=on"])
    tx = res["vnet"]["tx"]
    assert "indirect_desc" in res["vnet"]["features"], res["vnet"]["features"]
    # every frame of several pieces (lwIP's header and payload) took one table
    assert tx["chains"] > 0 and tx["indirect"] == tx["chains"], tx
    # iperf's server skips the client's 4-byte flags word (test_stream.py)
    assert res["bytes"] - rep["host"]["iperf"]["bytes"] == 4, (res["bytes"], rep["host"])
    assert rep["host"]["rx_frames"] >= tx["packets"] - 2, (rep["host"], tx)


def test_indirect_on_without_the_offer_is_a_config_error(image):
    q, p = vnharness.free_udp_ports(2)
    b = vnharness.boot(["app=gen", "count=10", "dst_mac=" + vnpeer.PEER_MAC, "indirect=on"],
                       netdevs=[vnharness.dgram_netdev(q, p)],
                       nic_props={"indirect_desc": "off"})
    assert b.code == 2, b.console
    fatal = [ln for ln in b.console.splitlines() if ln.startswith("FATAL")]
    assert len(fatal) == 1, b.console
    assert "indirect=on: the device does not offer VIRTIO_F_INDIRECT_DESC" in fatal[0], b.console
    assert b.one("error")["reason"] == "config_error", b.console
