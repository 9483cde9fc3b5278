"""app reneg's uso= over tap (issue 27): each set that negotiated
HOST_USO sends USO datagrams after its frames, every segment stamped on
stream 0x100 + the set's index (apps/reneg_uso.h), so the host's UDP
socket (run/udpcount.py) counts each set's segments apart. The runner
starts that count beside the host peer that reflects the set's frames;
each set's segments are a direction of their own (exact, or lost where
the socket's full buffer locates it); vnperf conform runs its uso kind as
those sets of the shared reneg boot, judged per set."""

import dataclasses

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import exitcodes, result
from vnperflib.analysis import counts, renegsets
from vnperflib.backends import tap, udphost, wire
from vnperflib.campaign import conform, conform_checks, conform_plan as cp, conform_reneg
from vnperflib.errors import RunnerError
from vnperflib.run import peer, support

SETS = ("all", "-host_uso", "-event_idx")
N = 2000


def uso(k, on=True, n=N):
    """Set k's uso object as the guest writes it (uso=1400: 8192 bytes cut
    into 5 x 1400 + 1192)."""
    return {"gso_size": 1400, "segments_per_datagram": 6, "last_segment": 1192,
            "datagrams": n if on else 0, "segments": 6 * n if on else 0, "stream": 0x100 + k,
            "host_uso": on}


def guest(n=(N, 0, N)):
    sets = [{"set": t, "stream": k, "packets": 2 * N, "uso": uso(k, k != 1, n[k])}
            for k, t in enumerate(SETS)]
    return {"app": "reneg", "packets": 3 * 2 * N, "sets": sets}


def udp(segs=(6 * N, None, 6 * N), full=0):
    """udpcount's result: each set's frames on its stream (the host's stack
    gets them too), its segments on 0x100 + its index."""
    streams = [{"id": k, "packets": 2 * N, "sizes": {"18": N, "1472": N}} for k in range(3)]
    streams += [{"id": 0x100 + k, "packets": s, "sizes": {"1400": s * 5 // 6, "1192": s // 6}}
                for k, s in enumerate(segs) if s is not None]
    return {"mode": "udpcount", "datagrams": 0, "streams": streams, "rcvbuf_errors": full,
            "csum_errors": 0}


def test_started_for_reneg_with_a_uso_word():
    o = vnpy.run_opts(backend="tap", app="reneg", sets="all", count=10, config=["uso=1400"])
    assert udphost.reneg_uso(o) and not udphost.wanted(o)
    for words in ([], ["uso=0"], ["uso=1400", "uso=00"]):
        assert not udphost.reneg_uso(vnpy.run_opts(backend="tap", app="reneg", sets="all",
                                                   count=10, config=words)), words
    assert not udphost.reneg_uso(vnpy.run_opts(backend="tap", app="gen", config=["uso=1400"]))


def test_each_uso_set_s_segments_against_its_stream():
    dirs = renegsets.uso_directions(guest(), udp())
    assert [(n, s, r) for n, s, r, _ in dirs] == [
        ("set 1 (all) uso guest->host", 6 * N, 6 * N),
        ("set 3 (-event_idx) uso guest->host", 6 * N, 6 * N),
        ("uso guest->host", 12 * N, 12 * N)]
    assert renegsets.uso_directions(guest(), None)[0][2] is None
    assert renegsets.uso_directions({"sets": "garbled"}, udp()) == []
    assert renegsets.uso_directions({"sets": [{"set": "all"}]}, udp()) == []


def test_a_lost_segment_names_its_set_and_the_full_socket_locates_it():
    m = counts.merge("reneg", guest(), {"udp": udp(segs=(6 * N, None, 6 * N - 7), full=7)},
                     lossless=True)
    d = m.directions["set 3 (-event_idx) uso guest->host"]
    assert (d.verdict, d.lost, d.located) == ("lossy", 7, 7), d.why
    assert [w["at"] for w in d.where] == ["peer"] and "RcvbufErrors" in d.why
    assert m.directions["set 1 (all) uso guest->host"].verdict == "agree"
    assert m.directions["uso guest->host"].lost == 7
    # none located: a disagreement on tap's lossless path
    m = counts.merge("reneg", guest(), {"udp": udp(segs=(6 * N - 1, None, 6 * N))},
                     lossless=True)
    d = m.directions["set 1 (all) uso guest->host"]
    assert (d.verdict, d.lost) == ("disagree", 1) and "unexplained" in d.why


def reneg_opts(backend, *words, **kw):
    return vnpy.run_opts(backend=backend, app="reneg", sets="/".join(SETS), count=N,
                         config=words, **kw)


class FakeEnd:
    """peer.Peer and udphost.UdpCount, not started: what the backend asked."""

    def __init__(self, *args, **kw):
        self.args = args
        self.proc = None
        self.started = False

    def start(self):
        self.started = True

    def dead(self):
        return None


def test_over_tap_the_udp_count_joins_the_reflecting_peer(monkeypatch):
    monkeypatch.setattr(peer, "Peer", FakeEnd)
    monkeypatch.setattr(udphost, "UdpCount", FakeEnd)
    monkeypatch.setattr(peer, "peer_binary", lambda: "vnperf-peer")
    for words, counted in ((("uso=1400",), True), (("uso=1400", "dst_port=7000"), True),
                           ((), False), (("uso=0",), False)):
        be = tap.Tap(reneg_opts("tap", *words))
        be.netns = "vnns-test"
        be.start_host_end(None, "10.0.0.2")
        assert be.counter.started and be.counter.args[2] == "reflect"
        assert (be.udp is not None) == counted, words
        if counted:
            # bound where reneg's frames go, in the namespace, before the guest boots
            port = "7000" if "dst_port=7000" in words else "9000"
            assert be.udp.args[1:4] == ("vnns-test", be.dst_ip, port) and be.udp.started
        assert tap.reneg_back(be.opts)
        assert be.healthy() is None


def test_a_uso_no_host_end_counts_is_refused_in_one_line():
    for backend in ("dgram", "user", "vhost-user"):
        with pytest.raises(RunnerError) as e:
            support.check(reneg_opts(backend, "uso=1400"))
        assert e.value.status == exitcodes.RUNNER_USAGE and "\n" not in e.value.line
        assert e.value.line.startswith("reneg over %s: uso=1400: each set's USO segments are "
                                       "counted by a UDP socket the runner starts over tap"
                                       % backend), e.value.line
        assert support.reneg_refusal(reneg_opts(backend, "uso=0")) is None
    assert support.reneg_refusal(reneg_opts("tap", "uso=1400")) is None
    own = support.reneg_refusal(reneg_opts("tap", "uso=1400", tap="mytap0"))
    assert own.startswith("uso=1400: each set's USO segments"), own
    assert wire.RENEG_USO == ("tap",)


# conform: the uso kind joins the shared reneg boot over tap
COMBOS = [("all", []), ("-host_uso", ["features=-host_uso"]), ("-event_idx",
                                                                 ["features=-event_idx"])]
KINDS = [["small", "mtu", "uso", "stream"], ["small", "mtu", "stream"],
         ["small", "mtu", "uso", "stream"]]
USO_BOTH = cp.BOTH_STREAM + "+uso"


def test_the_uso_kind_joins_the_shared_boot_where_the_host_counts_it():
    groups = cp.plan(COMBOS, KINDS, None, back=True, stream=True, uso=True)
    assert [(g.traffic, g.combos, g.sets) for g in groups] == [
        (USO_BOTH, (0, 1, 2), ("all", "-host_uso", "-event_idx"))]
    assert groups[0].kinds == ("small", "mtu", "stream", "uso")
    # where the host does not count reneg's segments: gen's fresh uso boots
    groups = cp.plan(COMBOS, KINDS, None, back=True, stream=True)
    assert [(g.traffic, g.combos) for g in groups] == [
        (cp.BOTH_STREAM, (0, 1, 2)), ("uso", (0,)), ("uso", (2,))]
    assert groups[1].why == cp.FRESH_KIND["uso"]
    # no combination of a boot has the kind: no uso= in it
    groups = cp.plan(COMBOS[1:2] * 2, KINDS[1:2] * 2, None, back=True, stream=True, uso=True)
    assert [g.traffic for g in groups] == [cp.BOTH_STREAM]
    # a lone combination: its one set, its USO datagrams with it
    lone = cp.plan(COMBOS[:1], KINDS[:1], None, back=True, stream=True, uso=True)
    assert [(g.traffic, g.sets) for g in lone] == [(USO_BOTH, ())]
    assert cp.reneg_kind(USO_BOTH) and cp.reneg_kind(cp.BOTH) and not cp.reneg_kind("uso")


def test_the_group_s_boot_asks_each_set_for_uso_datagrams():
    small = conform.traffics(vnpy.run_opts(backend="tap"), True, {"host_uso": True})[0]
    g = cp.Group("r1", USO_BOTH, (0, 1, 2), ("all", "-host_uso", "-event_idx"))
    name, change, words = conform_reneg.reneg_traffic(small, g, N, conform.STREAM_S,
                                                      conform.USO_SEG)
    assert (name, change["app"], change["sets"], change["count"]) == (
        USO_BOTH, "reneg", "all/-host_uso/-event_idx", N)
    assert words == ("notify=hybrid", "stream_s=1", "uso=1400")
    g = cp.Group("r1", cp.BOTH_STREAM, (0, 1), ("all", "-host_uso"))
    assert "uso=1400" not in conform_reneg.reneg_traffic(small, g, N, 1, 1400)[2]


def sample(k):
    q = {"rule_breaks": {"unavailable": 0, "used_len": 0, "in_order": 0, "device": 0},
         "irq_vector": -1, "interrupts": 0, "halts": 0}
    gso = N if k != 1 else 0
    return {"type": "sample", "app": "reneg", "set": k, "packets": 2 * N,
            "vnet": {"features": [], "tx": dict(q, len_mismatch=0, gso_frames=gso),
                     "rx": dict(q, len_errors=0), "config_out_of_range": 0,
                     "ctrl": {"sent": 0}}}


def uso_boot(segs=(6 * N, None, 6 * N), full=0, sizes=None):
    """A shared boot's report over tap: the guest's sets (both ways, no
    loss), the peer's count of their frames, udpcount's of their segments."""
    res = guest()
    for k, s in enumerate(res["sets"]):
        s["rx"] = {"packets": 2 * N, "unique": 2 * N, "lost": 0, "dup": 0, "malformed": 0}
    res.update(type="result", tx_packets=6 * N, rx_packets=6 * N)
    pr = {"type": "peer", "mode": "reflect", "packets": 6 * N, "bytes": 0, "vnperf": 6 * N,
          "lost": 0, "errors": {"sock_drops": 0}, "tx_packets": 6 * N,
          "streams": [{"id": k, "packets": 2 * N, "unique": 2 * N, "lost": 0, "dup": 0}
                      for k in range(3)]}
    host = dict(peer.host_counts(pr), udp=udp(segs, full))
    if sizes is not None:
        host["udp"]["streams"][3]["sizes"] = sizes
    samples = [sample(k) for k in range(3)]
    rep = result.RunResult.from_dict({"status": 0, "why": "ok", "host": host, "guests": [
        {"samples": samples, "result": res, "console_tail": []}]})
    rep = dataclasses.replace(rep, counts=counts.merge("reneg", res, host, lossless=True))
    both = cp.BOTH + "+uso"    # no TCP stream here
    g = cp.Group("r1", both, (0, 1, 2), SETS)
    b = conform.Boot(both, "tools/vnperf run X", 0, "ok", rep)
    return conform_reneg.split(b, g, lambda r: conform.Boot(both, b.command, 0, "", r), True)


def uso_cells(done):
    rows = [{"host_uso": True}, {"host_uso": False}, {"host_uso": True}]
    return [conform_checks.judge(row, {"host_uso"}, [b])["uso"] for row, b in zip(rows, done)]


def test_each_set_s_segments_are_its_uso_cell():
    done, failure = uso_boot()
    assert failure is None and len(done) == 3
    assert list(done[0].report.counts.directions)[-1] == "set 1 (all) uso guest->host"
    assert not any(n.endswith(" uso guest->host") for n in done[1].report.counts.directions)
    assert done[0].report.counts.host["udp"]["sizes"] == {"1400": 5 * N, "1192": N}
    cells = uso_cells(done)
    assert [c["verdict"] for c in cells] == ["pass", "n/a", "pass"], cells
    assert all(conform_checks.judge({}, set(), [b])["traffic"]["verdict"] == "pass"
               for b in done)


def test_a_set_s_segments_lost_or_cut_wrong_are_its_uso_violation():
    done, _ = uso_boot(segs=(6 * N, None, 6 * N - 3))
    cells = uso_cells(done)
    assert [c["verdict"] for c in cells] == ["pass", "n/a", "violation"], cells
    assert "the host's socket got segments" in cells[2]["detail"], cells[2]
    # the traffic check is the frames': the segments are the uso check's
    assert conform_checks.judge({}, set(), [done[2]])["traffic"]["verdict"] == "pass"
    done, _ = uso_boot(sizes={"1400": 4 * N, "1192": N, "1500": N})
    assert [c["verdict"] for c in uso_cells(done)] == ["violation", "n/a", "pass"]


def test_a_set_s_loss_the_full_socket_located_reruns_it_fresh():
    done, failure = uso_boot(segs=(6 * N, None, 6 * N - 3), full=3)
    assert len(done) == 2 and failure is not None
    assert "uso guest->host" in failure["why"] and "flow control" in failure["why"], failure
