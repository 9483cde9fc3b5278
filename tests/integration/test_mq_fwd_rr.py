"""Issue 25, fwd and the UDP rr client one instance per vCPU: -smp 2,
queues=2 vcpus=2, through the runner (--queues 2), on q35 and microvm.

fwd in PVP over vhost-user: testpmd io (--rxq/--txq 2) between a gen
tester's two NICs and the forwarder's; testpmd's stream of queue q goes to
queue q of the partner port, so the tester's pair q is the forwarder's pair
q both ways. CPU i forwards pair i; per pair, the tester's frames, the
forwarder's a->b count, its drivers' counts and testpmd's per-queue counts
are the same number, and the total is exact.

UDP rr client over a two-queue tap with QEMU's RSS: session i sends from
port 49152 + i; its answers land on the pair the test's own Toeplitz hash
of the answer's fields names, and that pair's CPU counts them: each pair's
transactions are count/16 per session the hash puts there; the host's
server counts its answers per client port, which the runner maps to the
same pairs."""

import json
import os
import shutil

import pytest

from test_mq import rss_pair
from vnharness import run_vnperf
from vnperflib.backends import netns

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tap/netns need root")
needs_testpmd = pytest.mark.skipif(shutil.which("dpdk-testpmd") is None,
                                   reason="no dpdk-testpmd (Debian dpdk-dev)")
N = 2000
SESSIONS, BASE, RR_PORT = 16, 49152, 9000


def pair(rows, q):
    return next(r for r in rows if r["queue"] == q)


@needs_testpmd
@pytest.mark.timeout_s(200)
@pytest.mark.parametrize("machine", ["q35", "microvm"])
def test_pvp_fwd_forwards_each_pair_on_its_cpu(image, machine):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--topology", "pvp", "--queues", "2", "--machine", machine,
                    "--count", str(N), "--rate", "2k", "--duration", "5",
                    "--", "flows=sport:5000-5003,dport:9000-9003"], timeout=180)
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    assert r.returncode == 0, rep.get("why")
    fwd, tester = (g["result"] for g in rep["guests"])
    for g in rep["guests"]:
        assert "-smp" in g["argv"] and g["argv"][g["argv"].index("-smp") + 1] == "2"
        assert all(",queues=2" in a for a in g["argv"] if a.startswith("vhost-user,"))
    assert fwd["vcpus"] == tester["vcpus"] == 2
    assert [(q["queue"], q["cpu"]) for q in fwd["queues"]] == [(0, 0), (1, 1)], fwd["queues"]
    # the tester sends half the frames on each pair (4 flows on each)
    assert [(q["queue"], q["packets"]) for q in tester["queues"]] == [(0, N // 2), (1, N // 2)]
    ports = rep["host"]["testpmd"]["queues"]
    tq = tester["vnet"]["queues"]
    for q in (0, 1):
        a2b = pair(fwd["queues"], q)["a_to_b"]
        # the tester's lwIP frames (gratuitous ARP) leave on its pair 0 too
        lwip = pair(tq, q)["tx_packets"] - N // 2
        assert 0 <= lwip <= (3 if q == 0 else 0), tq
        assert a2b["packets"] == N // 2 + lwip, (q, a2b)
        assert a2b["tx_dropped"] == a2b["not_ours"] == a2b["runts"] == 0, a2b
        rx_a = pair(fwd["vnet"]["queues"], q)["rx_packets"]
        tx_b = pair(fwd["vnet1"]["queues"], q)["tx_packets"]
        # testpmd's own per-queue counts: into fwd a's pair q, out of fwd b's
        assert pair(ports["1"], q)["tx_packets"] == rx_a == a2b["packets"], (q, ports)
        assert pair(ports["2"], q)["rx_packets"] == tx_b == a2b["packets"], (q, ports)
        assert pair(ports["0"], q)["rx_packets"] == pair(tq, q)["tx_packets"], (q, ports)
        # and back into the tester's b on the same pair
        assert pair(tester["vnet1"]["queues"], q)["rx_packets"] == a2b["packets"]
    assert fwd["a_to_b"]["packets"] == sum(pair(fwd["queues"], q)["a_to_b"]["packets"]
                                           for q in (0, 1))
    c = rep["counts"]
    assert c["agree"] is True, c
    assert len(c["pairs"]) == 2 * 5 and all(d["verdict"] == "agree" for d in c["pairs"].values())
    e2e = c["directions"]["end to end"]
    assert e2e["sent"] == e2e["received"] == N
    assert tester["rx"]["packets"] == N and tester["rx"]["lost"] == 0


@needs_root
@pytest.mark.timeout_s(200)
@pytest.mark.parametrize("machine", ["q35", "microvm"])
def test_udp_rr_client_counts_each_pair_on_its_cpu(image, machine):
    """On q35 with notify=hybrid (MSI-X reaches each vCPU): CPU i also halts
    between answers on pair i, whose RX interrupts wake it there alone."""
    n = 800
    hybrid = ["notify=hybrid"] if machine == "q35" else []
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--queues", "2", "--machine", machine, "--app", "rr", "--count", str(n),
                    "--", "role=client", "proto=udp", "sessions=%d" % SESSIONS] + hybrid,
                   timeout=180)
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    assert r.returncode == 0, rep.get("why")
    res = rep["guests"][-1]["result"]
    assert res["vcpus"] == 2 and res["transactions"] == n, res
    assert res["wrong_queue"] == res["not_ours"] == 0, res
    want = [0, 0]
    for i in range(SESSIONS):
        # the answer's fields: from the host's server to the session's port
        want[rss_pair(netns.HOST_IP, netns.GUEST_IP, RR_PORT, BASE + i)] += n // SESSIONS
    assert min(want) > 0, want
    qs = res["queues"]
    assert [(q["queue"], q["cpu"]) for q in qs] == [(0, 0), (1, 1)], qs
    drv = res["vnet"]["queues"]
    for q in qs:
        p = q["queue"]
        assert q["transactions"] == q["packets"] == want[p], (q, want)
        # every request left on the pair its answers come back on
        assert q["requests"] == want[p] + q["timeouts"] - q["unsent"], q
        assert q["answers"] == want[p] + q["late"], q
        assert drv[p]["rx_packets"] >= q["answers"], (drv, q)
    assert drv[1]["tx_packets"] == qs[1]["requests"], (drv, qs)
    if hybrid:
        for p, q in enumerate(drv):
            assert q["rx_notify"] == "hybrid" and q["rx_halts"] > 0, q
            assert q["rx_interrupts"] > 0 and q["rx_irq_cpu"] == p, q
        cpus = res["idle"]["cpus"]
        assert [c["cpu"] for c in cpus] == [0, 1] and all(c["halts"] > 0 for c in cpus), cpus
    # the host's server answered every request that reached it, and per
    # pair (its answers by client port, through the runner's own hash) the
    # answers to that pair's sessions
    assert rep["host"]["rr"]["transactions"] == sum(q["requests"] for q in qs)
    for q, h in zip(qs, rep["queues"]):
        assert h["queue"] == q["queue"] and h["host_tx_packets"] == q["requests"], (q, h)
        assert h["agree"] is (q["requests"] == q["transactions"]), h
