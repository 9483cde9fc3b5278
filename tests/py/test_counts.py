"""counts.py: both sides' counts merged per direction; loss is always
reported with where it happened, a lossy run is never "agree", and the
receiver's sequence numbers are shown next to it."""

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.analysis import counts, outcome
from vnperflib import exitcodes, result

run = result.RunResult.from_dict
typed = result.Counts.from_dict


def peer_drop(n):
    return [counts.drop("peer", "in the peer's socket buffer", n)]


def test_agree_on_lossless_gen():
    m = counts.merge("gen", {"packets": 1000, "bytes": 64000}, {"rx_packets": 1000,
                                                                 "rx_bytes": 64000}, True)
    assert m.agree and m.directions["guest->host"].verdict == "agree"
    assert "host->guest" not in m.directions


def test_loss_is_located():
    m = counts.merge("gen", {"packets": 1000}, {"rx_packets": 900, "rx_drops": peer_drop(60)})
    d = m.directions["guest->host"]
    assert not m.agree and d.lost == 100 and d.verdict == "lossy"
    assert [(w["at"], w["frames"]) for w in d.where] == [("peer", 60), ("unexplained", 40)]
    assert "60 in the peer's socket buffer" in d.why and "40 in between" in d.why


def test_txfull_drop_is_loss_not_agreement():
    """The guest driver's drops took their sequence numbers: what the app
    made is what was sent; the peer's gaps and its highest number show
    the same loss from the other side (issue: 'counts agree' with 17 M
    frames dropped)."""
    res = {"packets": 164899, "tx_dropped": 28584957, "tx_packets": 164900,
           "vnet": {"tx": {"packets": 164900, "in_flight": 0}}}
    host = {"rx_packets": 164899, "rx_frames": 164900, "rx_drops": peer_drop(0),
            "rx_seq_lost": 28445794,
            "peer": {"streams": [{"id": 0, "first_seq": 0, "max_seq": 28610692}]}}
    m = counts.merge("gen", res, host, lossless=True)
    d = m.directions["guest->host"]
    assert m.agree is False and d.verdict == "lossy"
    assert d.sent == 164899 + 28584957 and d.lost == 28584957
    assert list(d.where) == [counts.drop("driver", "dropped by the guest driver on a full TX "
                                                "ring (txfull=drop)", 28584957)]
    seen = d.receiver
    assert seen["seq_gaps"] + seen["after_last"] == d.lost
    assert "the receiver saw 28445794 sequence gaps and 139163 frames beyond" in d.why
    # The wire carried what the driver put on it: that direction agrees.
    assert m.directions["guest->host frames"].verdict == "agree"
    assert counts.run_loss(typed(m)) == (pytest.approx(100.0 * 28584957 / (164899 + 28584957)),
                                  28584957)


def test_loss_fully_located_is_lossy_not_disagree():
    drops = [counts.drop("qemu_socket", "in QEMU's UDP socket buffer", 10)]
    m = counts.merge("sink", {"packets": 90, "lost": 10}, {"tx_packets": 100,
                                                           "tx_drops": drops}, lossless=True)
    d = m.directions["host->guest"]
    assert d.verdict == "lossy" and d.located == 10 and m.agree is False
    assert d.receiver == {"seq_gaps": 10, "after_last": None}


def test_a_ring_bound_is_clipped_to_the_loss():
    res = {"packets": 95, "rx_packets": 95, "vnet": {"rx": {"size": 256}}}
    m = counts.merge("sink", res, {"tx_packets": 100, "tx_frames": 100,
                                   "sender_outlives_guest": True}, lossless=True)
    d = m.directions["host->guest frames"]
    assert list(d.where) == [counts.drop("ring", "left in the guest's RX ring after the app "
                                              "stopped", 5)]
    assert d.verdict == "lossy"


def test_wire_level_from_driver_counters():
    res = {"packets": 10, "vnet": {"tx": {"packets": 11}, "rx": {"packets": 2}}}
    m = counts.merge("gen", res, {"rx_packets": 10, "rx_frames": 11, "tx_frames": 2}, True)
    assert set(m.directions) == {"guest->host", "guest->host frames", "host->guest frames"}
    assert m.agree is True


def test_without_host_side_is_unknown():
    assert counts.merge("gen", {"packets": 10}, {}).agree is None


def test_two_guests():
    m = counts.merge_guests("gen", {"packets": 5, "vnet": {"tx": {"packets": 6}}},
                            {"packets": 4, "lost": 1, "vnet": {"rx": {"packets": 5}}},
                            lossless=False,
                            drops=[counts.drop("qemu_socket", "rx socket", 1)])
    d = m.directions["tx guest->rx guest"]
    assert d.lost == 1 and d.located == 1 and d.verdict == "lossy"
    assert d.receiver["seq_gaps"] == 1


def test_lossless_path_with_unexplained_loss_disagrees():
    m = counts.merge("sink", {"packets": 5}, {"tx_packets": 7}, lossless=True)
    assert m.directions["host->guest"].verdict == "disagree"


def test_more_received_than_sent_disagrees():
    m = counts.merge("gen", {"packets": 5}, {"rx_packets": 7})
    assert m.directions["guest->host"].verdict == "disagree"


def test_app_level_is_packets_wire_level_is_tx_rx_members():
    res = {"packets": 3, "tx_packets": 4, "rx_packets": 5, "vnet": {"tx": {"packets": 9}}}
    assert counts.guest_counts("reflect", res)[::2] == (3, 3)
    assert counts.guest_counts("gen", res)[::2] == (3, None)
    assert counts.guest_counts("rr", res)[::2] == (None, None)
    assert counts.vnet_count(res, "tx") == 4 and counts.vnet_count(res, "rx") == 5
    assert counts.vnet_count({"vnet": {"tx": {"packets": 9}}}, "tx") == 9


def test_the_drivers_frames_are_every_pairs_with_several():
    """vnet.tx and vnet.rx are pair 0's (docs/driver.md): with several
    pairs the driver's frames are the pairs' own counts added up. A UDP rr
    client over IPv6 (lwIP's) on two pairs read 'host->guest frames
    disagree: 414 sent, 203 received, 211 lost': pair 0's RX alone."""
    res = {"transactions": 407,
           "vnet": {"tx": {"packets": 412}, "rx": {"packets": 203},
                    "queues": [{"queue": 0, "tx_packets": 412, "rx_packets": 203},
                               {"queue": 1, "tx_packets": 0, "rx_packets": 209}]}}
    assert counts.vnet_count(res, "rx") == 412 and counts.vnet_count(res, "tx") == 412
    m = counts.merge("rr", res, {"rx_frames": 412, "tx_frames": 412}, lossless=True)
    assert m.directions["host->guest frames"].verdict == "agree", m.directions
    # a pair without its count: no total made up of the others
    res["vnet"]["queues"][1] = {"queue": 1}
    assert counts.vnet_count(res, "rx") is None
    # one pair listed: the queue's own counter, as before
    one = {"vnet": {"rx": {"packets": 5}, "queues": [{"queue": 0, "rx_packets": 5}]}}
    assert counts.vnet_count(one, "rx") == 5


def test_frames_left_on_tx_ring_are_located():
    res = {"packets": 100, "tx_packets": 101, "vnet": {"tx": {"in_flight": 30}}}
    m = counts.merge("gen", res, {"rx_packets": 70, "rx_frames": 71}, lossless=True)
    for name in ("guest->host", "guest->host frames"):
        d = m.directions[name]
        assert d.lost == 30 and d.located == 30 and d.verdict == "lossy", d


def test_fwd_locates_forwarder_drops():
    res = {"a_to_b": {"packets": 90, "tx_dropped": 10, "runts": 0}}
    m = counts.merge_fwd(res, {"tx_packets": 100, "rx_packets": 90}, lossless=True)
    assert m.directions["host->guest a"].verdict == "agree"
    assert m.directions["guest b->host"].verdict == "agree"
    e2e = m.directions["end to end"]
    assert e2e.lost == 10 and e2e.located == 10 and e2e.verdict == "lossy"


def test_rr_timeouts_are_lost_messages():
    res = {"transactions": 1000, "timeouts": 3, "sessions": 1}
    m = counts.merge("rr", res, {})
    d = m.directions["rr transactions"]
    assert d.lost == 3 and d.verdict == "lossy" and m.agree is False


def test_rr_transactions_are_checked_against_the_server():
    """The client's count alone always agreed with itself over TCP (no
    timeouts): the server's answers are the other side. Up to one answer
    per session may be in flight when the client stops (tap, measured:
    52597 completed, the host server answered 52601 for 4 sessions)."""
    res = {"transactions": 52597, "timeouts": 0, "sessions": 4}
    m = counts.merge("rr", res, {"rr": {"transactions": 52601}})
    d = m.directions["rr transactions"]
    assert d.verdict == "agree" and d.server_answered == 52601 and m.agree is True
    assert d.why.endswith("the server answered 52601 (4 more: in flight at the client's stop)")
    for served, why in ((52606, "more than one in flight per session (4 sessions)"),
                        (52590, "fewer than completed")):
        m = counts.merge("rr", res, {"rr": {"transactions": served}})
        d = m.directions["rr transactions"]
        assert d.verdict == "disagree" and m.agree is False and why in d.why, d
    # UDP: a timed-out request whose reply was lost was answered too.
    m = counts.merge("rr", {"transactions": 1000, "timeouts": 3, "sessions": 1},
                     {"rr": {"transactions": 1004}})
    assert "1004 (4 more: in flight at the client's stop, or replies lost)" in \
        m.directions["rr transactions"].why
    # Two guests: the server guest's own count.
    m = counts.merge_guests("rr", res, {"transactions": 52599})
    assert m.directions["rr transactions"].server_answered == 52599


def _to_host(acked, unacked, host_read, streams=2, tap_drops=0):
    res = {"bytes": acked, "unacked": unacked, "sessions": [{}] * streams}
    host = {"iperf": {"bytes": host_read, "host_role": "server"},
            "tx_drops": [counts.drop("backend", "dropped at the tap's queue towards QEMU (tx_dropped)",
                                     tap_drops)]}
    m = counts.merge_iperf(res, host)
    return m, m.directions["guest->host bytes"]


def test_iperf_guest_client_drained_counts_match_but_the_flags_words():
    m, d = _to_host(1000, 0, 992)
    assert d.verdict == "tcp" and m.agree is None and "4-byte flags word" in d.why, d


def test_iperf_guest_client_unacked_at_its_stop_may_have_arrived():
    # A CI run of 128 streams: the tap dropped the host's last ACKs of some
    # streams, the guest's drain gave up, the host had read the data.
    m, d = _to_host(1529398080, 1200000, 1530232688, streams=128, tap_drops=7189)
    assert d.verdict == "tcp" and d.unacked == 1200000, d
    assert "1200000 bytes were still unacknowledged at the guest's stop and 835120 of them " \
           "arrived" in d.why and "7189 frames dropped at the tap" in d.why, d


def test_iperf_guest_client_counts_outside_the_bounds_disagree():
    m, d = _to_host(1000, 0, 900)
    assert d.verdict == "disagree" and m.agree is False and "never delivered" in d.why
    m, d = _to_host(1000, 50, 1051)
    assert d.verdict == "disagree" and "more than the guest sent" in d.why, d


def test_iperf_guest_server_is_tcp_not_loss():
    m = counts.merge_iperf({"bytes": 100}, {"iperf": {"bytes": 104, "host_role": "client"}})
    assert m.agree is None and m.directions["host->guest bytes"].verdict == "tcp"


def test_metrics_carry_loss_drops_and_kicks():
    res = {"packets": 100, "pps": 50.0, "tx_dropped": 25,
           "vnet": {"tx": {"packets": 100, "kicks": 4, "kicks_suppressed": 12}}}
    rep = {"app": "gen", "guests": [{"result": res}], "host": {"backend_batch": 31.5},
           "counts": counts.merge("gen", res, {"rx_packets": 100}).to_dict()}
    m = outcome.metrics(run(rep))
    assert m.loss_pct == pytest.approx(20.0) and m.lost == 25 and m.tx_dropped == 25
    assert m.kicks_per_packet == pytest.approx(0.04) and m.suppressed_pct == 75.0
    assert m.backend_batch == 31.5


def test_rr_server_reports_no_latency():
    res = {"role": "server", "p50_us": 0.0, "p99_us": 0.0, "tps": 10.0, "transactions": 20}
    m = outcome.metrics(run({"app": "rr", "guests": [{"result": res}], "counts": None}))
    assert m.p50_ns is None and m.tps == 10.0


def test_a_client_that_measured_nothing_shows_no_agreement_and_no_latency():
    """A failed rr client (no transaction, no timeout) printed zeros: no
    "0 sent, 0 received: agree" and no "p50 latency 0.0 us" (issue 11,
    finding 6)."""
    res = {"app": "rr", "role": "client", "transactions": 0, "timeouts": 0, "tps": 0.0,
           "packets": 0, "p50_us": 0.0, "p99_us": 0.0, "p999_us": 0.0, "max_us": 0.0}
    c = counts.merge("rr", res, {"rx_packets": 0, "tx_packets": 0})
    assert c.directions == {} and c.agree is None
    m = outcome.metrics(run({"app": "rr", "guests": [{"result": res}], "counts": c.to_dict()}))
    assert not [k for k in m.as_dict() if k.endswith("_ns")]
    res.update(transactions=10, p50_us=80.0, max_us=0.0)
    assert outcome.metrics(run({"app": "rr", "guests": [{"result": res}],
                                "counts": None})).p50_ns == 80000.0


def stalled_sink(got):
    """A dgram sink after QEMU stopped reading its socket: of 25,000 frames
    the full socket dropped 24,700, the rest waited unread in it."""
    drops = [counts.drop("qemu_socket", "in QEMU's UDP socket buffer", 24700)]
    return counts.merge("sink", {"packets": got, "rx_packets": got, "lost": 0},
                        {"tx_packets": 25000, "tx_frames": 25000, "tx_drops": drops},
                        lossless=True)


@pytest.mark.parametrize("got", [0, 3])
def test_a_sink_qemu_stopped_feeding_is_a_loss_at_its_socket(got):
    """Issue 31, finding 12: one zero-length datagram ends QEMU 7.2's dgram
    receiving; the sink counted nothing and the run was ok."""
    m = stalled_sink(got)
    for name in ("host->guest", "host->guest frames"):
        d = m.directions[name]
        assert d.verdict == "lossy" and d.stalled is True
        assert d.located == d.lost == 25000 - got
        assert list(d.where) == [
            counts.drop("qemu_socket", "in QEMU's UDP socket buffer", 24700),
            counts.drop("qemu_socket", "left unread in QEMU's UDP socket", 300 - got)]
        assert d.why.startswith("%s: QEMU stopped reading its UDP socket" % name)
        assert "zero-length datagram" in d.why and "received %d of 25000" % got in d.why
    assert m.agree is False
    rep = {"guests": [{"status": 0, "problems": [], "guest_code": 0, "label": "guest"}],
           "counts": m.to_dict()}
    status, why = outcome.overall_status(run(rep), None)
    assert status == exitcodes.RUNNER_BACKEND_FAILED and why == counts.stalled(typed(m))
    assert why.startswith("host->guest: QEMU stopped reading its UDP socket")


def test_overload_at_qemus_socket_is_no_stall():
    """A flat-out sink that took a tenth of the peer's frames: QEMU kept
    reading, too slowly; loss, no stall, and the guest's own code stands."""
    drops = [counts.drop("qemu_socket", "in QEMU's UDP socket buffer", 90000)]
    m = counts.merge("sink", {"packets": 10000}, {"tx_packets": 100000, "tx_drops": drops},
                     lossless=True)
    d = m.directions["host->guest"]
    assert d.verdict == "lossy" and d.stalled is None and counts.stalled(typed(m)) is None
    rep = {"guests": [{"status": 0, "problems": [], "guest_code": 0, "label": "guest"}],
           "counts": m.to_dict()}
    assert outcome.overall_status(run(rep), None) == (0, "ok")


def test_no_stall_without_qemus_socket():
    """Nothing received over a backend that is not QEMU's UDP socket (tap
    drops, say) is that backend's loss, not a socket stall."""
    drops = [counts.drop("backend", "tap queue drops", 5000)]
    m = counts.merge("sink", {"packets": 0}, {"tx_packets": 5000, "tx_drops": drops})
    assert m.directions["host->guest"].stalled is None


def test_a_receiver_guest_qemu_stopped_feeding_is_stalled():
    """Two guests over dgram: a zero-length datagram to the receiving
    QEMU's port stops it just the same."""
    drops = outcome.receiver_socket_drops(9800)
    m = counts.merge_guests("gen", {"packets": 10000, "vnet": {"tx": {"packets": 10000}}},
                            {"packets": 0, "vnet": {"rx": {"packets": 0}}}, drops=drops)
    for name in ("tx guest->rx guest", "tx guest->rx guest frames"):
        d = m.directions[name]
        assert d.stalled and d.located == d.lost == 10000, d
        assert [w["frames"] for w in d.where] == [9800, 200]
    assert counts.stalled(typed(m)).startswith("tx guest->rx guest: QEMU stopped reading")
