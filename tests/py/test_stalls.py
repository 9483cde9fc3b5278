"""stalls.py: the guest's vCPU stalls, validated, worded, and held against
the time its RX ring covers, in the PVP hops, the waits lines and the
sink's verdict (issue 16)."""

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import result
from vnperflib.analysis import stalls, verdict
from vnperflib.topologies import pvp as topology_pvp


def stalled(max_us, over=3, stalled_ms=20.0, pause_max_us=0.0, paused_ms=0.0):
    return {"threshold_us": 1000, "max_us": max_us, "max_at_s": 2.5, "over_1ms": over,
            "stalled_ms": stalled_ms, "pause_max_us": pause_max_us, "paused_ms": paused_ms}


def test_text_says_the_longest_stall_and_the_rings_cover():
    st, bad = stalls.read({"stalls": stalled(13012.5)})
    assert bad is None
    assert stalls.text(st, 1024, 400000.0) == \
        "vCPU stalled up to 13.0 ms (3 stalls over 1 ms, the ring covers 2.6 ms at 400k pps)"
    assert stalls.text(dict(st, over_1ms=1)) == "vCPU stalled up to 13.0 ms (1 stall over 1 ms)"
    st, _ = stalls.read({"stalls": stalled(300.0, 0, 0.0, 1932.4, 9.27)})
    assert stalls.text(st) == "vCPU stalled up to 0.3 ms (0 stalls over 1 ms); its own sample " \
        "lines paused it up to 1.9 ms (9.3 ms in all)"


def test_blame_only_when_the_stall_outlasted_the_ring():
    st, _ = stalls.read({"stalls": stalled(13000.0)})
    assert stalls.blame("fwd1 a", st, 1024, 400000.0) == ("host", (
        "fwd1 a's vCPU stalled up to 13.0 ms, longer than its 1024-entry RX ring covers at 400k "
        "pps (2.6 ms): the loss is the host's (it took the vCPU away), not the guest's speed"))
    nothing = (None, "")
    assert stalls.blame("fwd1 a", st, 1024, 50000.0) == nothing  # the ring covers 20.5 ms
    assert stalls.blame("fwd1 a", st, None, 400000.0) == nothing
    assert stalls.blame("fwd1 a", st, 1024, None) == nothing
    assert stalls.blame("fwd1 a", None, 1024, 400000.0) == nothing


def test_blame_the_guests_own_pauses_when_they_outlasted_the_ring():
    st, _ = stalls.read({"stalls": stalled(300.0, 0, 0.0, 3100.0, 9.0)})
    assert stalls.blame("fwd1 a", st, 1024, 400000.0, "forwarder") == ("guest", (
        "fwd1 a's own sample lines paused it up to 3.1 ms, longer than its 1024-entry RX ring "
        "covers at 400k pps (2.6 ms): the loss is its console output (interval_ms=), not the "
        "forwarder's speed"))


@pytest.mark.parametrize("value,needle", [
    ([], "the guest's \"stalls\" is not an object ([]): ignored"),
    ({"max_us": 1.0}, "the guest's stalls.threshold_us is missing: stalls ignored"),
    (dict(stalled(5.0), max_us="13"), "stalls.max_us is '13', not a non-negative number"),
    (dict(stalled(5.0), max_us=-1.0), "stalls.max_us is -1.0, not a non-negative number"),
    (dict(stalled(5.0), max_us=float("nan")), "stalls.max_us is nan"),
    (dict(stalled(5.0), over_1ms=1.5), "stalls.over_1ms is 1.5, not a count"),
    (dict(stalled(5.0), over_1ms=True), "stalls.over_1ms is True, not a count"),
])
def test_garbage_is_one_line_not_a_traceback(value, needle):
    st, bad = stalls.read({"stalls": value})
    assert st is None and needle in bad
    assert needle in stalls.waits_line({"stalls": value})


def test_no_stalls_from_an_older_image_say_nothing():
    assert stalls.read({"app": "fwd"}) == (None, None)
    assert stalls.waits_line({"app": "fwd"}) is None
    assert stalls.waits_line(None) is None


def fwd_result(got, out, st):
    r = {"app": "fwd", "a_to_b": {"packets": out, "tx_dropped": 0, "to_lwip": 0, "runts": 0,
                                  "rx_full": 40, "rx_bursts": 9000, "tx_full": 0,
                                  "tx_in_flight_max": 7},
         "vnet": {"rx": {"packets": got, "size": 1024}, "tx": {"packets": 1}},
         "vnet1": {"rx": {"packets": 0}, "tx": {"packets": out, "in_flight": 0}}}
    if st is not None:
        r["stalls"] = st
    return r


def pvp_rep(st, refused=879):
    sent = 2400000
    got = sent - refused
    return result.RunResult.from_dict({"topology": "pvp", "guests": [
        {"label": "fwd1", "result": fwd_result(got, got, st), "boot": {"tsc_hz": 1e9}}],
        "host": {"chain": {"backend": "vhost-peer", "nfwd": 1},
                 "peer_tx": {"packets": sent, "elapsed_ns": 6e9,
                             "errors": {"ring_full": refused}},
                 "peer_rx": {"packets": got, "vnperf": got, "bytes": got * 60,
                             "errors": {"sock_drops": 0}, "latency": {}}}})


def test_pvp_hop_blames_the_host_when_the_forwarder_stalled_past_its_ring():
    rep = topology_pvp.finish_report(pvp_rep(stalled(13000.0)))
    hop = rep.counts.directions["peer-tx -> fwd1 a"]
    assert hop.verdict == "lossy" and hop.host_stall is True
    assert hop.why.endswith("879 refused by fwd1 a's full RX ring (peer ring_full); fwd1 a's "
                               "vCPU stalled up to 13.0 ms, longer than its 1024-entry RX ring "
                               "covers at 400k pps (2.6 ms): the loss is the host's (it took "
                               "the vCPU away), not the forwarder's speed")
    assert rep.waits["fwd1"] == (
        "input ring: 40 of 9000 bursts full; output ring: - waited full, 0 bursts refused, at "
        "most 7 frames in flight; vCPU stalled up to 13.0 ms (3 stalls over 1 ms, the ring "
        "covers 2.6 ms at 400k pps)")


def test_pvp_hop_names_the_forwarders_own_pauses():
    rep = topology_pvp.finish_report(pvp_rep(stalled(300.0, 0, 0.0, 3100.0, 9.0)))
    hop = rep.counts.directions["peer-tx -> fwd1 a"]
    assert hop.host_stall is False and "own sample lines paused it up to 3.1 ms" in hop.why


def test_pvp_hop_keeps_the_forwarders_loss_when_its_stalls_were_short():
    rep = topology_pvp.finish_report(pvp_rep(stalled(900.0, over=0, stalled_ms=0.0)))
    hop = rep.counts.directions["peer-tx -> fwd1 a"]
    assert hop.host_stall is None and "stalled" not in hop.why
    assert rep.waits["fwd1"].endswith("vCPU stalled up to 0.9 ms (0 stalls over 1 ms, the "
                                         "ring covers 2.6 ms at 400k pps)")


def test_pvp_without_loss_or_stalls_adds_nothing():
    rep = topology_pvp.finish_report(pvp_rep(stalled(13000.0), refused=0))
    assert rep.counts.directions["peer-tx -> fwd1 a"].verdict == "agree"
    rep = topology_pvp.finish_report(pvp_rep(None))
    assert "stalled" not in rep.waits["fwd1"]
    assert rep.counts.directions["peer-tx -> fwd1 a"].host_stall is None


def test_pvp_with_garbage_stalls_says_so_in_the_waits_line():
    rep = topology_pvp.finish_report(pvp_rep({"max_us": "x"}))
    assert "stalled" not in rep.counts.directions["peer-tx -> fwd1 a"].why
    assert rep.waits["fwd1"].endswith("; the guest's stalls.threshold_us is missing: "
                                         "stalls ignored")


def sink_rep(st, host, backend="vhost-user", where=()):
    res = {"app": "sink", "packets": 990000, "duration_ns": 1e9,
           "vnet": {"rx": {"size": 256, "polls": 10000, "packets": 990000}}, "stalls": st}
    return result.RunResult.from_dict(
        {"app": "sink", "backend": backend, "config": [], "cpu": {"roles": {}},
         "host": host, "guests": [{"label": "vnperf", "result": res}],
         "counts": {"directions": {"host->guest": {"sent": 1000000, "where": list(where)}}}})


def test_sink_ring_full_during_a_long_stall_is_the_hosts():
    host = {"ring_full_drops": 100000, "offered_at_end": 1000000}
    rep = sink_rep(stalled(5000.0), host)
    v = verdict.bottleneck(rep)
    assert v.side == "host"
    assert v.why.endswith("vnperf's vCPU stalled up to 5.0 ms, longer than its 256-entry RX "
                             "ring covers at 1.000M pps (0.3 ms): the loss is the host's (it "
                             "took the vCPU away), not the sink's speed")
    assert stalls.waits(rep) == {"vnperf": "vCPU stalled up to 5.0 ms (3 stalls over 1 ms, the "
                                           "ring covers 0.3 ms at 1.000M pps)"}
    short = verdict.bottleneck(sink_rep(stalled(100.0, over=0), host))
    assert short.side == "guest" and "stalled" not in short.why


def test_sink_socket_overflow_during_a_long_stall_is_the_hosts():
    """Over dgram the full ring shows as QEMU's socket overflowing."""
    rep = sink_rep(stalled(5000.0), {}, "dgram", [
        {"at": "qemu_socket", "what": "in QEMU's UDP socket buffer", "frames": 3000}])
    v = verdict.bottleneck(rep)
    assert v.side == "host" and v.why.startswith("the guest did not drain its RX ring")
    assert "longer than its 256-entry RX ring covers" in v.why


def test_pvvp_over_udp_names_the_stall_behind_a_socket_overflow_only():
    """Over dgram a forwarder's full ring shows as QEMU's socket in front
    of it overflowing; frames left on the upstream TX ring are no inlet
    loss of the next forwarder, whatever it stalled."""
    a = fwd_result(99000, 99000, stalled(13000.0))
    b = fwd_result(98995, 98995, stalled(13000.0))
    a["vnet1"]["tx"]["in_flight"] = 5
    rep = result.RunResult.from_dict({"topology": "pvvp", "guests": [
        {"label": "fwd1", "result": a}, {"label": "fwd2", "result": b}],
        "host": {"chain": {"backend": "wire", "nfwd": 2},
                 "peer_tx": {"packets": 100000, "elapsed_ns": 0.25e9},
                 "peer_rx": {"packets": 98995, "vnperf": 98995, "errors": {}},
                 "qemu_socket_drops": {"fwd1 a": 1000}}})
    d = topology_pvp.finish_report(rep).counts.directions
    assert d["peer-tx -> fwd1 a"].host_stall is True
    assert "fwd1 a's vCPU stalled up to 13.0 ms" in d["peer-tx -> fwd1 a"].why
    assert d["fwd1 b -> fwd2 a"].verdict == "lossy"
    assert d["fwd1 b -> fwd2 a"].host_stall is None
