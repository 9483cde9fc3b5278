"""vnperf run --queues 2 (issue 25): the runner wires -smp 2, mq=on with
vectors=6, a multi_queue tap in its namespace with queues=2 and the guest's
queues=2 vcpus=2 itself; gen sends from each CPU on its pair. The report's
per-queue list is exact: each CPU's count on its pair, the flows on each
pair those the test's own Toeplitz hash names, the driver's frames per pair
adding up to what the tap's own counter received, and the host peer's count
of gen's frames on the tap, by flow, meeting gen's own on each pair."""

import json
import os

import pytest

from test_mq import rss_pair
from vnharness import run_vnperf
from vnperflib.backends import netns

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tap/netns need root")
N = 4000
SPORTS, DPORTS = range(5000, 5004), range(9000, 9004)


@needs_root
def test_gen_over_a_two_queue_tap_counts_each_pair_exactly(image):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--queues", "2", "--machine", "q35", "--app", "gen", "--count", str(N),
                    "--", "flows=sport:5000-5003,dport:9000-9003"], timeout=180)
    assert r.returncode == 0 and r.stdout, (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    g = rep["guests"][-1]
    assert "-smp" in g["argv"] and g["argv"][g["argv"].index("-smp") + 1] == "2", g["argv"]
    dev = [a for a in g["argv"] if a.startswith("virtio-net-pci")][0]
    assert ",mq=on" in dev and ",vectors=6" in dev, dev
    assert ",queues=2" in [a for a in g["argv"] if a.startswith("tap,")][0], g["argv"]
    res = g["result"]
    assert res["vcpus"] == 2 and res["packets"] == N, res
    qs = rep["queues"]
    assert [(q["queue"], q["cpu"], q["packets"]) for q in qs] == [(0, 0, N // 2), (1, 1, N // 2)]
    # replies come back on the pair the hash of the swapped flow names
    want = [0, 0]
    for sp in SPORTS:
        for dp in DPORTS:
            want[rss_pair(netns.HOST_IP, netns.GUEST_IP, dp, sp)] += 1
    assert [q["flows"] for q in res["queues"]] == want, (res["queues"], want)
    # the driver sent the app's frames on each pair, lwIP's (ARP) on pair 0
    assert qs[1]["tx_packets"] == N // 2, qs
    lwip = qs[0]["tx_packets"] - N // 2
    assert 0 <= lwip <= 3, qs
    # the tap's own counter: every frame of both pairs, none more
    assert rep["host"]["rx_frames"] == qs[0]["tx_packets"] + qs[1]["tx_packets"] == N + lwip
    # the host peer on the tap saw those frames too, gen's by flow: each
    # flow's on the pair gen sent it on, so per pair both sides agree
    peer = rep["host"]["peer"]
    assert peer["packets"] == rep["host"]["rx_frames"] and peer["vnperf"] == N, peer
    assert sorted((f["sport"], f["dport"]) for f in peer["flows"]) == \
        [(sp, dp) for sp in SPORTS for dp in DPORTS] and peer["flows_overflow"] == 0, peer
    assert [(h["queue"], h["rx_packets"]) for h in rep["host"]["queues"]] == \
        [(0, N // 2), (1, N // 2)], rep["host"]["queues"]
    for q in qs:
        assert q["host_rx_packets"] == q["packets"] == N // 2, q
        assert q["agree"] is True and q["why"] is None, q
    assert rep["counts"]["directions"]["guest->host"]["verdict"] == "agree", rep["counts"]
    assert rep["counts"]["agree"] is True, rep["counts"]


def test_gen_over_vhost_user_two_queues_both_sides_count_each_pair_exactly(image):
    """--queues 2 over vhost-user: testpmd polls both RX queues of its
    vhost port (--rxq 2) and counts each in its own forwarding stream; per
    pair, the frames the guest's driver sent are exactly the frames
    testpmd received on that queue, and the report says they agree."""
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--queues", "2", "--machine", "q35", "--app", "gen", "--count", str(N),
                    "--", "flows=sport:5000-5003,dport:9000-9003"], timeout=180)
    assert r.returncode == 0 and r.stdout, (r.returncode, r.stderr)
    assert "vhost-user: no rss=on,hash=on" in r.stderr, r.stderr
    rep = json.loads(r.stdout)
    qs = rep["queues"]
    assert [(q["queue"], q["packets"]) for q in qs] == [(0, N // 2), (1, N // 2)], qs
    host = rep["host"]["queues"]
    assert [h["queue"] for h in host] == [0, 1], host
    for q, h in zip(qs, host):
        # each way, per pair: what one side sent the other received
        assert q["tx_packets"] == h["rx_packets"] == q["host_rx_packets"], (q, h)
        assert q["rx_packets"] == h["tx_packets"] == 0, (q, h)
        assert q["agree"] is True and q["why"] is None, q
    assert qs[1]["tx_packets"] == N // 2 and 0 <= qs[0]["tx_packets"] - N // 2 <= 3, qs
    assert rep["host"]["rx_frames"] == sum(q["tx_packets"] for q in qs), rep["host"]
    assert rep["counts"]["agree"] is True, rep["counts"]


@needs_root
def test_sink_over_a_two_queue_tap_the_peers_flow_counted_on_its_pair(image):
    """--queues 2, sink fed by the host peer: its one flow (source port
    netns.SENDER_PORT) lands on the pair the runner's own Toeplitz map
    names; per pair, the peer's frames there are the sink's count there
    (the other pair: none either side), and the report says they agree."""
    from vnperflib.analysis import rss
    n = 1000
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--queues", "2", "--machine", "q35", "--app", "sink", "--count", str(n),
                    "--rate", "2000", "--", "notify=poll"], timeout=180)
    assert r.returncode == 0 and r.stdout, (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    q = rss.flow_queue(netns.HOST_IP, netns.GUEST_IP, netns.SENDER_PORT, netns.GUEST_PORT, 2)
    qs = rep["queues"]
    assert [(p["queue"], p["host_tx_packets"], p["packets"]) for p in qs] == \
        [(i, n if i == q else 0, n if i == q else 0) for i in (0, 1)], qs
    assert all(p["agree"] is True for p in qs), qs
    h = rep["guests"][-1]["result"]["vnet"]["hash_report"]
    assert h["types"] == 0x3f and h["bad_type"] == h["bad_value"] == 0, h
