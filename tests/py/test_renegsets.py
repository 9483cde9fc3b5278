"""app=reneg's counts per feature set (analysis/renegsets.py, docs/apps.md
reneg): each set's frames both ways, guest->host against the host
peer's count of the set's stream and host->guest (the peer reflects each
frame) against the guest's count back, a direction per set and way, so a
loss names its set and its way; the peer reflects for reneg and checks
checksums; the report has a row per set with its driver counters."""

import copy
import dataclasses
import re

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.analysis import counts, outcome, renegsets
from vnperflib.backends import tap, wire
from vnperflib.report import report
from vnperflib.run import peer
from vnperflib import result

N = 4000
SETS = ("all", "-event_idx,-ring_packed", "-mrg_rxbuf,indirect:off")


def set_sample(k, back=N, malformed=0):
    """Set k's sample line as the guest prints it when the set ends: its
    driver counters (vnet_stats_json's shape) once, nowhere else."""
    breaks = {"unavailable": 0, "used_len": 0, "in_order": 0, "device": 0}
    return {"type": "sample", "app": "reneg", "set": k, "packets": N, "bytes": N * 789,
            "vnet": {"tx": {"packets": N, "kicks": 100 + k, "kicks_suppressed": 7,
                            "ring_full": 0, "rule_breaks": dict(breaks)},
                     "rx": {"packets": back + malformed, "kicks": 2, "kicks_suppressed": 60,
                            "len_errors": 0, "bad_hdr": 0, "rule_breaks": dict(breaks)}}}


def guest_result(back=(N, N, N), malformed=(0, 0, 0)):
    """The guest's result as the runner keeps it: each set's driver
    counters from its sample line (renegsets.with_set_counters)."""
    sets = [{"set": t, "stream": k, "ring_format": "packed", "packets": N, "bytes": N * 789,
             "frame_sizes": [64, 1514],
             "rx": {"packets": back[k], "bytes": back[k] * 789, "unique": back[k], "lost": 0,
                    "dup": 0, "reorder": 0, "malformed": malformed[k]}}
            for k, t in enumerate(SETS)]
    total = sum(back) + sum(malformed)
    res = {"type": "result", "app": "reneg", "packets": 3 * N, "bytes": 3 * N * 789,
           "tx_packets": 3 * N, "rx_packets": total, "sets": sets}
    return renegsets.with_set_counters(res, [set_sample(k, back[k], malformed[k])
                                             for k in range(len(SETS))])


def test_each_set_s_driver_counters_come_from_its_sample_line_only():
    res = guest_result()
    assert [s["vnet"]["tx"]["kicks"] for s in res["sets"]] == [100, 101, 102]
    bare = {"app": "reneg", "sets": [{"set": "all"}, {"set": "-mtu"}]}
    got = renegsets.with_set_counters(bare, [set_sample(1), {"app": "reneg", "set": 7},
                                             {"app": "gen", "set": 0}])
    assert got["sets"] == [{"set": "all"}, dict(bare["sets"][1], vnet=set_sample(1)["vnet"])]
    assert "vnet" not in bare["sets"][1]   # the guest's result itself is left alone
    gen = {"app": "gen", "sets": [{}]}
    assert renegsets.with_set_counters(gen, [set_sample(0)]) is gen
    assert renegsets.with_set_counters(None, [set_sample(0)]) is None


def peer_result(streams=(N, N, N)):
    got = [{"id": k, "packets": n, "unique": n, "lost": 0, "dup": 0, "reorder": 0}
           for k, n in enumerate(streams) if n is not None]
    total = sum(s["packets"] for s in got)
    return {"type": "peer", "mode": "reflect", "packets": total, "bytes": total * 789,
            "vnperf": total, "lost": 0, "tx_packets": total, "tx_bytes": total * 789,
            "errors": {"sock_drops": 0}, "streams": got}


def merged(res, pr):
    return counts.merge("reneg", res, peer.host_counts(pr), lossless=True)


def test_each_set_each_way_agrees():
    m = merged(guest_result(), peer_result())
    names = ["set %d (%s) %s" % (k + 1, t, way) for k, t in enumerate(SETS)
             for way in ("guest->host", "host->guest")]
    assert [n for n in m.directions if n.startswith("set ")] == names
    for n in names:
        d = m.directions[n]
        assert (d.verdict, d.sent, d.received) == ("agree", N, N), (n, d.why)
    assert m.directions["guest->host"].verdict == "agree"
    assert m.directions["host->guest frames"].verdict == "agree"
    assert m.agree is True


def test_a_loss_names_its_set_and_its_way():
    m = merged(guest_result(back=(N, N - 10, N)), peer_result(streams=(N, N, N - 5)))
    bad = {n: d for n, d in m.directions.items() if d.verdict != "agree"}
    assert set(bad) >= {"set 2 (-event_idx,-ring_packed) host->guest",
                        "set 3 (-mrg_rxbuf,indirect:off) guest->host"}
    assert not any(n.startswith("set 1 ") for n in bad)
    d = bad["set 2 (-event_idx,-ring_packed) host->guest"]
    assert (d.verdict, d.lost) == ("disagree", 10) and "unexplained" in d.why
    d = bad["set 3 (-mrg_rxbuf,indirect:off) guest->host"]
    assert (d.sent, d.received, d.lost) == (N, N - 5, 5)
    # set 3's frames the peer never got were never sent back either
    d = m.directions["set 3 (-mrg_rxbuf,indirect:off) host->guest"]
    assert (d.sent, d.received, d.verdict) == (N - 5, N, "disagree")
    assert m.agree is False


def test_malformed_frames_back_are_located_at_the_guest():
    m = merged(guest_result(back=(N, N, N - 4), malformed=(0, 0, 4)), peer_result())
    d = m.directions["set 3 (-mrg_rxbuf,indirect:off) host->guest"]
    assert (d.verdict, d.lost, d.located) == ("lossy", 4, 4)
    assert [(w["at"], w["frames"]) for w in d.where] == [("guest", 4)]
    assert "malformed" in d.why


def test_a_set_the_peer_never_saw_was_received_nowhere():
    d = merged(guest_result(), peer_result(streams=(N, None, N))).directions
    assert (d["set 2 (-event_idx,-ring_packed) guest->host"].received,
            d["set 2 (-event_idx,-ring_packed) host->guest"].sent) == (0, 0)
    assert renegsets.directions(guest_result(), None)[0][2] is None
    assert renegsets.directions({"sets": "garbled"}, peer_result()) == []


def test_one_way_sets_have_one_direction_each():
    """Without back=1 (where the peer only counts) a set has no rx and
    only its guest->host direction."""
    res = guest_result()
    for s in res["sets"]:
        del s["rx"]
    names = [name for name, _, _, _ in renegsets.directions(res, peer_result())]
    assert names == ["set %d (%s) guest->host" % (k + 1, t) for k, t in enumerate(SETS)]


def test_the_peer_reflects_reneg_and_its_vnperf_frames_are_counted():
    assert peer.mode_for_app("reneg") == "reflect"
    be = wire.Dgram(vnpy.run_opts(backend="dgram", app="reneg", sets="all", count=10))
    be.ports = [(1, 2)]
    assert "back=1" in be.guest_config(0)
    assert be._peer_args("reflect") == ["--verify-csum"]
    gen = wire.Dgram(vnpy.run_opts(backend="dgram", app="gen"))
    gen.ports = [(1, 2)]
    assert not any(w.startswith("back=") for w in gen.guest_config(0))
    host = peer.host_counts(peer_result())
    assert (host["rx_packets"], host["rx_frames"], host["tx_frames"]) == (3 * N, 3 * N, 3 * N)
    rr = dict(peer_result(streams=()), vnperf=0, packets=10, tx_packets=10)
    assert "rx_packets" not in peer.host_counts(rr)


def test_over_tap_the_peer_reflects_reneg_onto_the_tap():
    """The namespace's tap: the peer that counts reneg's streams on the
    tap (--rx-if) sends each frame back, so the guest gets back=1; not
    where it counts nothing (IPv6, your own tap) nor for gen."""
    assert tap.reneg_back(vnpy.run_opts(backend="tap", app="reneg", sets="all", count=10))
    assert not tap.reneg_back(vnpy.run_opts(backend="tap", app="gen"))
    assert not tap.reneg_back(vnpy.run_opts(backend="tap", app="reneg", sets="all", count=10,
                                            tap="mytap0"))
    assert "tap" in wire.RENEG_BACK


def test_report_rows_per_set():
    res = guest_result(back=(N, N - 3, N))
    rep = result.RunResult.from_dict({
        "status": 0, "status_name": "ok", "why": "ok", "app": "reneg", "backend": "dgram",
        "machine": "q35", "accel": "tcg", "config": ["app=reneg"],
        "guests": [{"label": "guest", "wall_s": 3.0, "ready_s": 0.5, "result": res}],
        "host": peer.host_counts(peer_result())})
    rep = dataclasses.replace(rep, counts=outcome.merged_counts(
        "dgram", "reneg", rep.guests, peer.host_counts(peer_result()), True))
    rep = dataclasses.replace(rep, metrics=outcome.metrics(rep))
    rows = dict(re.split(r"\s{2,}", line, 1) for line in report.human(rep).splitlines()
                if line.startswith(("set ", "counts set ")))
    assert rows["set 2 (-event_idx,-ring_packed)"] == (
        "packed ring, frames of 64 and 1514 B; driver tx 101 kicks (7 suppressed), 0 ring "
        "full; rx 2 kicks (60 suppressed), 0 length errors, 0 bad headers; 0 rule breaks")
    assert rows["counts set 2 (-event_idx,-ring_packed) host->guest"].startswith(
        "disagree: %d sent, %d received, 3 lost" % (N, N - 3))
    assert rows["counts set 1 (all) guest->host"] == "agree: %d sent, %d received, none lost" % (
        N, N)
    garbled = copy.deepcopy(res)
    garbled["sets"][0] = {"set": "all"}
    assert report.reneg_lines(garbled)[0] == ("set 1 (all)", (
        "- ring, frames of - B; driver tx - kicks (- suppressed), - ring full; rx - kicks "
        "(- suppressed), - length errors, - bad headers; - rule breaks"))
