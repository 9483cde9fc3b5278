"""--topology pvp over vhost-user: testpmd io between a gen tester with two
NICs and a forwarding guest, or the DPDK host peer on the forwarder's two
sockets (--tester peer), counted at every hop (pollers on two cores: a low
rate, the counts must be exact, not fast)."""

import json
import os
import shutil

import pytest

from vnharness import BUILD, run_vnperf

needs_testpmd = pytest.mark.skipif(shutil.which("dpdk-testpmd") is None,
                                   reason="no dpdk-testpmd (Debian dpdk-dev)")


def agree(rep, names):
    dirs = rep["counts"]["directions"]
    for n in names:
        assert dirs[n]["verdict"] == "agree", dirs[n]["why"]
        assert dirs[n]["sent"] == dirs[n]["received"] > 0
    return dirs


@needs_testpmd
@pytest.mark.timeout_s(120)
def test_pvp_over_vhost_user_forwards_an_exact_count(image):
    n = 3000
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--topology", "pvp", "--count", str(n), "--rate", "3k", "--duration", "5"],
                   timeout=100)
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    assert r.returncode == 0, rep["why"]
    assert [g["label"] for g in rep["guests"]] == ["fwd1", "tester"]
    hops = rep["counts"]["hops"]
    assert len(hops) == 7 and hops[3] == "fwd1 a -> b"
    dirs = agree(rep, hops + ["end to end"])
    tester = rep["guests"][-1]["result"]
    assert dirs["end to end"]["sent"] == dirs["end to end"]["received"] == n
    assert tester["rx"]["packets"] == n and tester["rx"]["lost"] == 0
    # testpmd forwarded every frame both ways it was asked to.
    ports = rep["host"]["testpmd"]["ports"]
    assert ports["0"]["RX-packets"] == ports["1"]["TX-packets"] == dirs["fwd1 a -> b"]["sent"]
    assert rep["metrics"]["p50_ns"] > 0 and "fwd1" in rep["waits"]
    # The forwarder ended once the tester's frames stopped (idle_ms=), not
    # at its duration cap (the tester's duration + 20 s).
    fwd1, tester = rep["guests"]
    assert fwd1["wall_s"] < tester["wall_s"] + 10


DPDK_PEER = os.path.join(BUILD, "tools", "vnperf-peer-dpdk")


@pytest.mark.skipif(not os.access(DPDK_PEER, os.X_OK),
                    reason="no build/tools/vnperf-peer-dpdk (DPDK headers: libdpdk-dev)")
@pytest.mark.timeout_s(90)
def test_pvp_tester_peer_forwards_an_exact_count(image):
    n = 3000
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--topology", "pvp", "--tester", "peer", "--count", str(n), "--rate", "3k",
                    "--duration", "5", "--nice", "fwd1=-5,backend=-5"], timeout=80)
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    assert r.returncode == 0, rep["why"]
    assert [g["label"] for g in rep["guests"]] == ["fwd1"]
    assert rep["counts"]["hops"] == ["peer-tx -> fwd1 a", "fwd1 a -> b", "fwd1 b -> peer-rx"]
    dirs = agree(rep, rep["counts"]["hops"] + ["end to end"])
    assert dirs["end to end"]["sent"] == dirs["end to end"]["received"] == n
    tx, rx = rep["host"]["peer_tx"], rep["host"]["peer_rx"]
    assert tx["packets"] == n and tx["errors"]["ring_full"] == 0
    assert rx["vnperf"] == n and rx["lost"] == 0 and rx["latency"]["count"] == n
    # The warm-up (--warmup 0.1 by default) went through every hop before
    # the clock started: all of it came back, and the hops above agree
    # with it counted there and not end to end.
    w = tx["warmup"]
    assert w["sent"] > 0 and w["returned"] == w["sent"] - w["ring_full"], w
    assert rep["identity"]["warmup"] == "0.1" and rep["identity"]["max_lag"] == "0.0005"
    assert rep["metrics"]["p50_ns"] > 0 and "fwd1" in rep["waits"]
    assert "peer-dpdk" in rep["cpu"]["roles"] and "testpmd" not in rep["cpu"]["roles"]
    # The forwarder's QEMU and the peer got the priority asked for.
    assert rep["nice"] == {"fwd1": -5, "backend": -5}


@pytest.mark.skipif(not os.access(DPDK_PEER, os.X_OK),
                    reason="no build/tools/vnperf-peer-dpdk (DPDK headers: libdpdk-dev)")
@pytest.mark.timeout_s(90)
def test_pvp_tester_peer_takes_frames_back_while_it_sends(image):
    """Flat out the peer never waits, and a zero-copy forwarder has one set
    of 1024 buffers for its input and output rings: unless the peer takes
    the output back while it sends, the frames it forwarded stay parked and
    its input ring refuses everything after them."""
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--topology", "pvp", "--tester", "peer", "--rate", "max",
                    "--duration", "1", "--nice", "fwd1=-5,backend=-5"], timeout=80)
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    tx, rx = rep["host"]["peer_tx"], rep["host"]["peer_rx"]
    assert tx["errors"]["ring_full"] > 0
    # Far more than the rings hold came back.
    assert rx["vnperf"] > 4 * 1024, (rx["vnperf"], tx["packets"])
    assert rep["counts"]["directions"]["fwd1 a -> b"]["verdict"] == "agree"


@needs_testpmd
@pytest.mark.timeout_s(150)
def test_pvvp_two_queue_pairs_count_each_pair_at_every_hop(image):
    """--topology pvvp --queues 2 (issue 25): every guest of the chain has
    two pairs on two vCPUs and testpmd io keeps a frame on its queue, so
    the tester's pair q feeds pair q of each forwarder: each guest's count
    per pair equals testpmd's per-queue count of the port feeding it, both
    pairs busy. 64 flows (source ports 1000-1063): 16 consecutive ports
    would all hash to one pair (Toeplitz with the Microsoft key is linear:
    the low four bits of the port never flip the bit a 2-entry table
    reads)."""
    n = 2000
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--topology", "pvvp", "--queues", "2", "--count", str(n), "--rate", "2k",
                    "--duration", "5", "--", "flows=sport:1000-1063"], timeout=140)
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    assert r.returncode == 0, rep["why"]
    assert [g["label"] for g in rep["guests"]] == ["fwd1", "fwd2", "tester"]
    dirs = agree(rep, rep["counts"]["hops"] + ["end to end"])
    assert dirs["end to end"]["sent"] == n
    pmd = rep["host"]["testpmd"]["queues"]
    per = {g["label"]: {q["queue"]: q for q in g["result"]["queues"]} for g in rep["guests"]}
    sent = [per["tester"][q]["packets"] for q in (0, 1)]
    assert sum(sent) == n and min(sent) > 0, sent
    for q in (0, 1):
        # testpmd's port 0 takes the tester's pair q on its queue q; port
        # 1 (2) hands it to fwd1 (fwd2) on queue q: each forwarder's a->b
        # of pair q is that count (plus its own announce on pair 0).
        assert pmd["0"][q]["rx_packets"] >= sent[q]
        for fwd, port in (("fwd1", "1"), ("fwd2", "3")):
            assert per[fwd][q]["a_to_b"]["packets"] == pmd[port][q]["tx_packets"], (fwd, q, pmd)
            assert per[fwd][q]["cpu"] == q
        assert pmd["5"][q]["tx_packets"] >= sent[q]
