"""--topology pvp|pvvp without QEMU: the guests of a chain, refusals, and
loss located per hop from recorded counters."""

import argparse
import dataclasses

import pytest

from vnpy import run_opts
from vnperflib import backends, result
from vnperflib.run import runner
from vnperflib.topologies import pvp as topology_pvp
from vnperflib.errors import RunnerError


def opts(**kw):
    return run_opts(**dict(dict(topology="pvp", backend="dgram", app="fwd", duration=3,
                                size=60, rate="10k", machine="microvm"), **kw))


def test_roles_of_a_chain():
    assert runner.guest_roles(opts()) == [("fwd1", ["app=fwd", "duration=23", "idle_ms=1000"])]
    two = runner.guest_roles(opts(topology="pvvp", backend="vhost-user", count=500))
    assert [label for label, _ in two] == ["fwd1", "fwd2", "tester"]
    assert two[-1][1] == ["app=gen", "duration=3", "size=60", "rate=10k", "count=500"]


@pytest.mark.parametrize("kw,needle", [
    ({"backend": "tap"}, "--backend tap cannot join guests into a chain"),
    ({"app": "sink"}, "the network function is app=fwd (not --app sink)"),
])
def test_refused_before_anything_starts(kw, needle):
    with pytest.raises(RunnerError) as e:
        backends.make(kw.get("backend", "dgram"), opts(**kw))
    assert needle in e.value.line


def test_chain_backends_wire_two_nics_per_guest():
    be = backends.make("vhost-user", opts(topology="pvvp", backend="vhost-user"))
    be.socks = ["s%d" % i for i in range(6)]
    assert [n.netdev for n in be.nics(0)] == ["vhost-user,chardev=vu1", "vhost-user,chardev=vu2"]
    assert [n.netdev for n in be.nics(1)] == ["vhost-user,chardev=vu3", "vhost-user,chardev=vu4"]
    assert [n.netdev for n in be.nics(2)] == ["vhost-user,chardev=vu0", "vhost-user,chardev=vu5"]
    assert be.guest_config(2) == ["ip=10.0.2.17", "dst_ip=10.0.2.99",
                                  "dst_mac=52:54:00:00:01:01"]
    w = backends.make("dgram", opts(topology="pvvp"))
    w.links = [(1001, 1002), (1003, 1004), (1005, 1006)]
    a, b = w.nics(1)
    # fwd2's a receives on link 1's downstream port, b sends into link 2.
    assert "local.port=1004," in a.netdev and a.netdev.endswith("remote.port=1003")
    assert "local.port=1005," in b.netdev and b.netdev.endswith("remote.port=1006")


def vnet(rx, tx, in_flight=0):
    return {"rx": {"packets": rx}, "tx": {"packets": tx, "in_flight": in_flight}}


def fwd(got, out, dropped=0):
    return {"app": "fwd", "a_to_b": {"packets": out, "tx_dropped": dropped, "to_lwip": 0,
                                     "runts": 0, "rx_full": 3, "rx_bursts": 9, "tx_full": 0,
                                     "tx_in_flight_max": 7},
            "vnet": vnet(got, 1), "vnet1": vnet(0, out)}


def test_wire_pvvp_locates_loss_per_hop():
    rep = {"topology": "pvvp", "guests": [
        {"label": "fwd1", "result": fwd(1000, 990, dropped=10), "boot": {"tsc_hz": 1e9}},
        {"label": "fwd2", "result": fwd(985, 985), "boot": {"tsc_hz": 1e9}}],
        "host": {"chain": {"backend": "wire", "nfwd": 2},
                 "peer_tx": {"packets": 1000, "elapsed_ns": 2e9},
                 "peer_rx": {"packets": 985, "vnperf": 985, "bytes": 985 * 60,
                             "errors": {"sock_drops": 0},
                             "latency": {"count": 985, "p50_us": 12.5, "p99_us": 40.0}},
                 "qemu_socket_drops": {"fwd2 a": 5}}}
    rep = topology_pvp.finish_report(result.RunResult.from_dict(rep))
    c = rep.counts
    assert list(c.hops) == ["peer-tx -> fwd1 a", "fwd1 a -> b", "fwd1 b -> fwd2 a", "fwd2 a -> b",
                         "fwd2 b -> peer-rx"]
    d = c.directions
    assert d["peer-tx -> fwd1 a"].verdict == "agree"
    assert d["fwd1 a -> b"].verdict == "lossy" and "10 dropped on fwd1's full output ring" in \
        d["fwd1 a -> b"].why
    assert d["fwd1 b -> fwd2 a"].verdict == "lossy" and \
        "5 in QEMU's UDP socket buffer (fwd2 a)" in d["fwd1 b -> fwd2 a"].why
    e2e = d["end to end"]
    assert (e2e.sent, e2e.received, e2e.located, e2e.verdict) == (1000, 985, 15,
                                                                              "lossy")
    assert c.agree is False
    m = rep.metrics
    assert m.pps == pytest.approx(492.5) and m.p50_ns == 12500 and m.p99_ns == 40000
    assert rep.waits["fwd1"].startswith("input ring: 3 of 9 bursts full")


def test_vhost_user_pvp_unexplained_loss_disagrees():
    ports = {"0": {"RX-packets": 501}, "1": {"TX-packets": 501}, "2": {"RX-packets": 501},
             "3": {"TX-packets": 501}}
    tester = {"app": "gen", "packets": 500, "tx_dropped": 0, "duration_ns": 1e9,
              "vnet": vnet(0, 501), "vnet1": vnet(490, 0),
              "rx": {"packets": 490, "bytes": 490 * 60, "p50_us": 100.0}}
    rep = {"topology": "pvp", "guests": [{"label": "fwd1", "result": fwd(501, 501)},
                                         {"label": "tester", "result": tester}],
           "host": {"chain": {"backend": "vhost-user", "nfwd": 1},
                    "testpmd": {"ports": ports}}}
    rep = topology_pvp.finish_report(result.RunResult.from_dict(rep))
    d = rep.counts.directions
    assert rep.counts.hops[-1] == "testpmd port 3 -> tester b"
    assert d["testpmd port 3 -> tester b"].verdict == "disagree"
    assert d["end to end"].lost == 10 and d["end to end"].verdict == "disagree"
    assert all(d[h].verdict == "agree" for h in rep.counts.hops[:-1])


def test_tester_peer_over_vhost_user_has_no_tester_guest_and_no_switch():
    o = opts(backend="vhost-user", tester="peer")
    assert topology_pvp.tester(o) == "peer" and topology_pvp.tester(opts()) == "peer"
    assert topology_pvp.tester(opts(backend="vhost-user")) == "gen"
    assert [label for label, _ in runner.guest_roles(o)] == ["fwd1"]
    be = backends.make("vhost-user", o)
    assert be.programs()[0][1].endswith("build/tools/vnperf-peer-dpdk")
    be.socks = ["/t/fwd1-a.sock", "/t/fwd1-b.sock"]
    assert [n.netdev for n in be.nics(0)] == ["vhost-user,chardev=vp0", "vhost-user,chardev=vp1"]
    assert be.qemu_extra(0) == ["-chardev", "socket,id=vp0,path=/t/fwd1-a.sock",
                                "-chardev", "socket,id=vp1,path=/t/fwd1-b.sock"]


@pytest.mark.parametrize("kw,needle", [
    ({"backend": "vhost-user", "tester": "peer", "topology": "pvvp"},
     "--tester peer: the DPDK peer's two vhost-user ports take one forwarder"),
    ({"backend": "socket", "tester": "gen"}, "--tester gen: over --backend socket"),
])
def test_tester_refusals(kw, needle):
    with pytest.raises(RunnerError) as e:
        backends.make(kw["backend"], opts(**kw))
    assert needle in e.value.line


def test_vhost_peer_pvp_locates_the_full_rx_ring_and_times_one_way():
    rep = {"topology": "pvp", "guests": [
        {"label": "fwd1", "result": fwd(980, 980), "boot": {"tsc_hz": 1e9}}],
        "host": {"chain": {"backend": "vhost-peer", "nfwd": 1},
                 "peer_tx": {"mode": "send", "packets": 1000, "elapsed_ns": 2e9,
                             "errors": {"ring_full": 20}},
                 "peer_rx": {"mode": "count", "packets": 980, "vnperf": 980,
                             "bytes": 980 * 60, "errors": {"sock_drops": 0},
                             "latency": {"count": 980, "p50_us": 30.0, "p99_us": 90.0}}}}
    rep = topology_pvp.finish_report(result.RunResult.from_dict(rep))
    c = rep.counts
    assert list(c.hops) == ["peer-tx -> fwd1 a", "fwd1 a -> b", "fwd1 b -> peer-rx"]
    d = c.directions
    first = d["peer-tx -> fwd1 a"]
    assert first.verdict == "lossy" and \
        "20 refused by fwd1 a's full RX ring (peer ring_full)" in first.why
    assert d["fwd1 a -> b"].verdict == d["fwd1 b -> peer-rx"].verdict == "agree"
    e2e = d["end to end"]
    assert (e2e.sent, e2e.received, e2e.located, e2e.verdict) == (1000, 980, 20,
                                                                              "lossy")
    assert c.tester == "peer-tx"
    m = rep.metrics
    assert m.pps == pytest.approx(490.0) and m.p50_ns == 30000 and m.p99_ns == 90000


def test_vhost_peer_pvp_counts_the_warmup_at_the_interfaces_not_end_to_end():
    """The peer's --warmup frames went through every hop before the clock
    started: the forwarder counted them, the trial's counts do not."""
    rep = {"topology": "pvp", "guests": [
        {"label": "fwd1", "result": fwd(1280 - 20, 1280 - 20), "boot": {"tsc_hz": 1e9}}],
        "host": {"chain": {"backend": "vhost-peer", "nfwd": 1},
                 "peer_tx": {"mode": "send", "packets": 1000, "elapsed_ns": 2e9,
                             "errors": {"ring_full": 20},
                             "warmup": {"sent": 300, "ring_full": 20, "returned": 280,
                                        "ns": 120000000}},
                 "peer_rx": {"mode": "count", "packets": 980, "vnperf": 980,
                             "bytes": 980 * 60, "errors": {"sock_drops": 0},
                             "latency": {"count": 980, "p50_us": 30.0}}}}
    rep = topology_pvp.finish_report(result.RunResult.from_dict(rep))
    d = rep.counts.directions
    first = d["peer-tx -> fwd1 a"]
    assert (first.sent, first.received, first.verdict) == (1300, 1260, "lossy")
    assert "40 refused by fwd1 a's full RX ring" in first.why
    last = d["fwd1 b -> peer-rx"]
    assert (last.sent, last.received, last.verdict) == (1260, 1260, "agree")
    e2e = d["end to end"]
    assert (e2e.sent, e2e.received) == (1000, 980)
    assert rep.metrics.packets == 980


def test_vhost_peer_warmup_option():
    o = opts(backend="vhost-user", tester="peer")
    be = backends.make("vhost-user", o)
    be.socks = ["/t/a.sock", "/t/b.sock"]
    args = be.peer_args()
    assert args[args.index("--warmup") + 1] == "0.1"
    assert args[args.index("--max-lag") + 1] == "0.0005"
    assert topology_pvp.peer_knobs(o) == {"warmup": 0.1, "max_lag": 0.0005}
    be.opts = dataclasses.replace(be.opts, warmup=0, max_lag=0)
    assert "--warmup" not in be.peer_args() and "--max-lag" not in be.peer_args()
    be.opts = dataclasses.replace(be.opts, warmup=0.25, max_lag=0.001)
    assert be.peer_args()[-4:] == ["--max-lag", "0.001", "--warmup", "0.25"]
    # Flat out has no schedule to lag behind.
    be.opts = dataclasses.replace(be.opts, rate=None)
    assert "--max-lag" not in be.peer_args()
    # Only the DPDK peer tester has them.
    assert topology_pvp.peer_knobs(opts()) == {}
    assert topology_pvp.peer_knobs(opts(backend="vhost-user")) == {}
    for kw, name in (({"warmup": 0.1}, "--warmup"), ({"max_lag": 0.001}, "--max-lag")):
        with pytest.raises(RunnerError) as e:
            runner.guest_roles(opts(**kw))
        assert name + ": the DPDK peer tester's" in e.value.line


def test_vhost_peer_backend_reads_both_result_lines():
    be = backends.make("vhost-user", opts(backend="vhost-user", tester="peer"))
    be.peer = argparse.Namespace(results=[{"type": "peer", "mode": "send", "packets": 7},
                                          {"type": "peer", "mode": "count", "packets": 6}])
    host = be.collect()
    assert host["chain"] == {"backend": "vhost-peer", "nfwd": 1}
    assert host["peer_tx"]["packets"] == 7 and host["peer_rx"]["packets"] == 6


def test_roles_of_a_two_pair_chain_give_every_guest_the_pairs():
    roles = runner.guest_roles(opts(backend="vhost-user", queues=2, vcpus=2, count=100))
    assert [w[-2:] for _, w in roles[:1]] == [["queues=2", "vcpus=2"]]
    assert roles[-1][1][:4] == ["app=gen", "duration=3", "queues=2", "vcpus=2"]
    be = backends.make("vhost-user", opts(backend="vhost-user", queues=2, vcpus=2))
    assert [n.netdev for n in be.nics(0)] == ["vhost-user,chardev=vu1,queues=2",
                                              "vhost-user,chardev=vu2,queues=2"]


def pairs_vnet(rx, tx):
    """A driver's counts with one entry per pair (rx[q], tx[q]); its rx/tx
    objects are pair 0's, as the guest writes them."""
    v = vnet(rx[0], tx[0])
    v["queues"] = [{"queue": q, "rx_packets": rx[q], "tx_packets": tx[q]} for q in range(2)]
    return v


def pair_fwd(a2b):
    def d(n):
        return {"packets": n, "tx_dropped": 0, "to_lwip": 0, "runts": 0, "not_ours": 0}
    r = fwd(sum(a2b), sum(a2b))
    r.update(vnet=pairs_vnet(a2b, [1, 0]), vnet1=pairs_vnet([0, 0], a2b),
             queues=[{"queue": q, "a_to_b": d(a2b[q])} for q in range(2)])
    return r


def pmd_queues(per_port):
    """{port: queue_counts rows} from {port: ([rx per queue], [tx per queue])}."""
    return {str(p): [{"queue": q, "rx_packets": rx[q], "tx_packets": tx[q], "tx_dropped": 0}
                     for q in range(2)] for p, (rx, tx) in per_port.items()}


def two_pair_rep(into_fwd_b):
    """A two-pair chain: 301 frames on pair 0 (one ARP), 300 on pair 1;
    testpmd took into_fwd_b[q] from fwd1 b's pair q."""
    tester = {"app": "gen", "packets": 600, "tx_dropped": 0, "duration_ns": 1e9,
              "vnet": pairs_vnet([0, 0], [301, 300]), "vnet1": pairs_vnet(into_fwd_b, [0, 0]),
              "rx": {"packets": 600, "bytes": 600 * 60, "p50_us": 100.0}}
    ports = {"0": {"RX-packets": 601}, "1": {"TX-packets": 601},
             "2": {"RX-packets": sum(into_fwd_b)}, "3": {"TX-packets": sum(into_fwd_b)}}
    q = pmd_queues({0: ([301, 300], [0, 0]), 1: ([1, 0], [301, 300]),
                        2: (into_fwd_b, [0, 0]), 3: ([0, 0], into_fwd_b)})
    return {"topology": "pvp", "guests": [{"label": "fwd1", "result": pair_fwd([301, 300])},
                                          {"label": "tester", "result": tester}],
            "host": {"chain": {"backend": "vhost-user", "nfwd": 1},
                     "testpmd": {"ports": ports, "queues": q}}}


def test_two_pair_chain_judges_each_pair_at_every_hop():
    rep = topology_pvp.finish_report(result.RunResult.from_dict(two_pair_rep([301, 300])))
    c = rep.counts
    # the totals are every pair's (the driver's rx/tx objects are pair 0's)
    assert c.directions["testpmd port 1 -> fwd1 a"].received == 601
    assert c.directions["fwd1 a -> b"].verdict == "agree"
    assert sorted(c.pairs) == sorted(
        "%s, pair %d" % (h, q) for q in (0, 1) for h in (
            "tester a -> testpmd port 0", "testpmd port 1 -> fwd1 a", "fwd1 a -> b",
            "fwd1 b -> testpmd port 2", "testpmd port 3 -> tester b"))
    assert c.pairs["fwd1 a -> b, pair 1"].sent == 300
    assert all(d.verdict == "agree" for d in c.pairs.values()) and c.agree is True
    # the JSON keeps them
    assert result.RunResult.from_dict(rep.to_dict()).counts.pairs == c.pairs


def test_two_pair_chain_names_the_pair_that_lost():
    # testpmd took 5 fewer from fwd1 b's pair 1 than the driver says it sent
    rep = topology_pvp.finish_report(result.RunResult.from_dict(two_pair_rep([301, 295])))
    p = rep.counts.pairs
    assert p["fwd1 b -> testpmd port 2, pair 1"].verdict == "disagree"
    assert p["fwd1 b -> testpmd port 2, pair 1"].lost == 5
    assert p["fwd1 b -> testpmd port 2, pair 0"].verdict == "agree"
    assert rep.counts.agree is False
