"""verdict.py: which side was the bottleneck, and why in words that match
docs/apps.md."""

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import result
from vnperflib.analysis import counts, verdict


def rep(app, sent, roles=None, config=(), directions=None, boot=None, host=None):
    cpu = {"roles": {k: {"pct": v, "cpu_s": 0, "threads": 1} for k, v in (roles or {}).items()}}
    return result.RunResult.from_dict(
        {"app": app, "backend": "dgram", "config": list(config), "cpu": cpu,
         "counts": {"directions": directions or {}}, "host": host or {},
         "guests": [{"result": sent, "boot": boot or {"tsc_hz": 1000000000}}]})


def test_gen_ring_full_is_backend_bound():
    r = rep("gen", {"duration_ns": 10 ** 9, "vnet": {"tx": {"full_wait_cycles": 5 * 10 ** 8}}},
            {"vcpu": 100, "main": 40})
    v = verdict.bottleneck(r)
    assert v.side == "backend" and "50%" in v.why


def test_gen_dropping_on_a_full_ring_is_backend_bound():
    """txfull=drop never waits: the drops, not the waiting time, say the
    ring was full (issue: 'TX ring full only 0.0% of the run')."""
    r = rep("gen", {"duration_ns": 10 ** 9, "packets": 164899, "tx_dropped": 28584957,
                    "vnet": {"tx": {"full_wait_cycles": 0}}}, {"vcpu": 100})
    v = verdict.bottleneck(r)
    assert v.side == "backend" and "99.4% of the frames it made" in v.why


def test_gen_ring_rarely_full_is_guest_bound_and_vcpu_never_counts():
    r = rep("gen", {"duration_ns": 10 ** 9, "vnet": {"tx": {"full_wait_cycles": 10 ** 7}}},
            {"vcpu": 100, "testpmd": 100, "main": 30})
    assert verdict.bottleneck(r).side == "guest"


def test_saturated_backend_thread():
    r = rep("gen", {"duration_ns": 10 ** 9, "vnet": {"tx": {"full_wait_cycles": 0}}},
            {"vcpu": 100, "main": 97})
    assert verdict.bottleneck(r) == result.Verdict(side="backend", why="main at 97% CPU")


def test_paced_gen_is_neither():
    r = rep("gen", {"rate_target": 10000, "rate_achieved": 9990.0, "duration_ns": 10 ** 9})
    assert verdict.bottleneck(r).side == "neither"
    assert verdict.bottleneck(r).why.endswith("of 10000 pps)")


def test_paced_by_bit_rate_says_bits():
    """Issue 13 F2: a bit rate's verdict said pps."""
    r = rep("gen", {"rate_unit": "bps", "rate_target": 10 ** 9, "rate_achieved": 999999000.0,
                    "duration_ns": 10 ** 9})
    assert verdict.bottleneck(r).why == \
        "paced at the requested rate (999999000 of 1000000000 bit/s)"


def socket_loss(n):
    return {"host->guest": {"where": [counts.drop(
        "qemu_socket", "in QEMU's UDP socket buffer (QEMU did not read it in time)", n)]}}


def test_sink_socket_drops_with_an_empty_ring_are_qemu_not_the_guest():
    """docs/apps.md: QEMU's dgram backend reads one datagram per call while
    the guest polls an empty ring: backend-bound, not 'the guest did not
    drain its RX ring'."""
    res = {"vnet": {"rx": {"polls": 1000000, "packets": 50000}}}
    v = verdict.bottleneck(rep("sink", res, {"vcpu": 100}, directions=socket_loss(300)))
    assert v.side == "backend"
    assert v.why.startswith("QEMU's netdev did not read its UDP socket in time: 300 frames")
    assert "empty in at least 95% of its polls" in v.why


def test_sink_socket_drops_with_a_busy_guest_are_guest_bound():
    res = {"vnet": {"rx": {"polls": 10000, "packets": 90000}}}
    v = verdict.bottleneck(rep("sink", res, {"vcpu": 100}, directions=socket_loss(300)))
    assert v.side == "guest" and "9.0 frames each" in v.why


def test_sink_frames_left_in_the_ring_at_teardown_prove_nothing():
    d = {"host->guest frames": {"where": [counts.drop(
        "ring", "left in the guest's RX ring after the app stopped", 256)]}}
    assert verdict.bottleneck(rep("sink", {}, {"vcpu": 100}, directions=d)).side == "unknown"


def test_sink_testpmd_refused_during_the_run_is_guest_bound():
    host = {"ring_full_drops": 9000000, "offered_at_end": 10000000}
    v = verdict.bottleneck(rep("sink", {}, {"vcpu": 100}, host=host))
    assert v.side == "guest" and "(90.0%) in the guest's full RX ring" in v.why
    host = {"ring_full_drops": 10, "offered_at_end": 10000000}
    assert verdict.bottleneck(rep("sink", {}, {"vcpu": 100}, host=host)).side == "unknown"


def test_sink_paced_without_drops_is_neither():
    assert verdict.bottleneck(rep("sink", {}, {"vcpu": 100}, config=["rate=10k"])).side \
        == "neither"


def chain(directions, rate="400k", guests=None):
    return result.RunResult.from_dict(
        {"app": "fwd", "backend": "vhost-user", "topology": "pvp", "config": [],
         "cpu": {"roles": {}}, "identity": {"rate": rate}, "host": {},
         "counts": {"directions": directions},
         "guests": guests or [{"label": "fwd1", "result": {}}]})


def hop(lost, where, **kw):
    d = {"sent": 1000000, "received": 1000000 - lost, "lost": lost, "where": where,
         "why": "a hop: %d lost" % lost}
    d.update(kw)
    return d


def test_pvp_loss_at_a_forwarders_full_ring_is_the_forwarders():
    full = counts.drop("ring", "refused by fwd1 a's full RX ring (peer ring_full)", 879)
    v = verdict.bottleneck(chain({"peer-tx -> fwd1 a": hop(879, [full]),
                                  "fwd1 a -> b": hop(0, []), "end to end": hop(879, [full])}))
    assert v == result.Verdict(side="guest", why="peer-tx -> fwd1 a: 879 frames refused by "
                               "fwd1 a's full RX ring (peer ring_full): the forwarder did not "
                               "drain it in time")


def test_pvp_loss_while_the_forwarder_stalled_is_the_hosts():
    full = counts.drop("ring", "refused by fwd1 a's full RX ring (peer ring_full)", 12351)
    why = "peer-tx -> fwd1 a: 12351 lost; fwd1 a's vCPU stalled up to 5.2 ms"
    v = verdict.bottleneck(chain({"peer-tx -> fwd1 a": hop(12351, [full], host_stall=True,
                                                           why=why),
                                  "end to end": hop(12351, [full])}))
    assert v == result.Verdict(side="host", why=why)


def test_pvp_the_hop_that_lost_most_decides_and_leftovers_say_nothing():
    left = counts.drop("ring", "left on fwd1 b's TX ring at exit", 500)
    peer = counts.drop("peer", "in peer-rx's socket buffer", 40)
    full = counts.drop("ring", "refused by fwd1 a's full RX ring (peer ring_full)", 30)
    v = verdict.bottleneck(chain({"peer-tx -> fwd1 a": hop(30, [full]),
                                  "fwd1 b -> peer-rx": hop(540, [left, peer])}))
    assert v.side == "backend" and v.why.startswith("fwd1 b -> peer-rx: 40 frames in "
                                                          "peer-rx's socket buffer")
    v = verdict.bottleneck(chain({"fwd1 b -> peer-rx": hop(500, [left])}))
    assert v.side == "unknown" and "none during the run" in v.why


def test_pvp_qemu_socket_loss_reads_the_forwarders_polls():
    sock = counts.drop("qemu_socket", "in QEMU's UDP socket buffer (fwd1 a)", 300)
    fwd = {"label": "fwd1", "result": {"vnet": {"rx": {"polls": 1000000, "packets": 50000}}}}
    v = verdict.bottleneck(chain({"peer -> fwd1 a": hop(300, [sock])}, guests=[fwd]))
    assert v.side == "backend" and "QEMU's netdev did not read" in v.why


def test_pvp_without_loss_is_neither():
    e2e = {"end to end": hop(0, [])}
    assert verdict.bottleneck(chain(e2e)) == result.Verdict(
        side="neither", why="no hop lost a frame; the tester was paced (rate given)")
    assert "the tester sent flat out" in verdict.bottleneck(chain(e2e, rate=None)).why
    assert verdict.bottleneck(chain({})).side == "unknown"


def test_a_sink_qemu_stopped_feeding_is_the_backends():
    """Issue 31, finding 12: QEMU stopped reading its socket after a
    zero-length datagram; the verdict names that, not a slow guest."""
    drops = [counts.drop("qemu_socket", "in QEMU's UDP socket buffer", 24700)]
    c = counts.merge("sink", {"packets": 0, "vnet": {"rx": {"polls": 10 ** 6, "packets": 0}}},
                     {"tx_packets": 25000, "tx_drops": drops}, lossless=True)
    rep = result.RunResult.from_dict({"guests": [{"result": {"packets": 0}}], "app": "sink",
                                      "backend": "dgram", "counts": c.to_dict(), "host": {},
                                      "config": []})
    v = verdict.bottleneck(rep)
    assert v.side == "backend" and "QEMU stopped reading its UDP socket" in v.why
