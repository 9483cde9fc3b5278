"""app=reneg's TCP stream per set (stream_s=, docs/apps.md reneg; issue
27): over tap, user and passt the backend starts the host's iperf 2
server on iperf's port beside the frames' host end and collects its
streams; elsewhere stream_s= is refused in one line (status 64). Each set
with a stream has a direction of its own in bytes, the guest's
acknowledged bytes against the server's stream of the set (by the set's
local port over tap, in order behind slirp's and passt's NAT),
judged like the sets' frames by `vnperf run`'s counts and conform's
traffic check; conform runs its stream kind as the sets' streams in the
shared reneg boot where the host end reflects and serves them."""

import dataclasses
import re

import pytest

import vnpy  # noqa: F401 (puts tools/ on the path)
from vnperflib import exitcodes, options, result
from vnperflib.analysis import counts, outcome, renegsets
from vnperflib.backends import passt, qemuonly, tap, udphost, wire
from vnperflib.campaign import conform, conform_checks, conform_plan as cp, conform_reneg
from vnperflib.errors import RunnerError
from vnperflib.report import report
from vnperflib.run import iperf, passtbin, peer, support

N = 300
SETS = ("all", "-event_idx", "indirect:off")
ACKED = 1000004      # what the host acknowledged: the payload and iperf's 4-byte flags word


def reneg_opts(backend, *words, **kw):
    return vnpy.run_opts(backend=backend, app="reneg", sets="/".join(SETS), count=N,
                         config=words, **kw)


class FakeIperf:
    """iperf.HostIperf, not started: what the backend asked of it."""

    def __init__(self, session, netns, target, opts, port=None, bind=None, nat=True):
        self.where = (netns, target, port, bind)
        self.nat = nat
        self.role = iperf.config_value(opts.config, "role", "client")
        self.proc = None
        self.started = False
        self.result = {"host_role": "server", "streams": [], "bytes": 0}

    def start(self):
        self.started = True

    def dead(self):
        return None


class FakeProc:
    """peer.Peer and udphost.UdpCount, not started."""

    def __init__(self, *args, **kw):
        self.proc = None
        self.result = {"mode": "udpcount", "streams": []}

    def start(self):
        pass


@pytest.fixture
def fakes(monkeypatch):
    monkeypatch.setattr(iperf, "HostIperf", FakeIperf)
    monkeypatch.setattr(peer, "Peer", FakeProc)
    monkeypatch.setattr(peer, "peer_binary", lambda: "vnperf-peer")
    monkeypatch.setattr(udphost, "UdpCount", FakeProc)


def tap_end(*words):
    be = tap.Tap(reneg_opts("tap", *words))
    be.netns = "vnns-test"
    be.start_host_end(None, "10.0.0.2")
    return be


def test_over_tap_the_host_iperf_server_joins_the_reflecting_peer(fakes):
    be = tap_end("stream_s=1")
    assert be.counter is not None   # the frames' reflector on the tap, as without streams
    assert be.iperf.where == ("vnns-test", "10.0.0.2", iperf.PORT, None) and be.iperf.started
    assert be.iperf.role == "client"   # the guest's: the host's end is the server
    assert be.iperf.nat is False       # the guest's own ports reach the server
    assert tap_end().iperf is None and tap_end("stream_s=0").iperf is None


def test_over_user_and_passt_the_server_listens_on_the_loopback(fakes, monkeypatch):
    be = qemuonly.User(reneg_opts("user", "stream_s=2"))
    be.start(None)
    assert be.echo is not None and be.iperf.where == (None, "127.0.0.1", iperf.PORT, None)
    assert be.iperf.started and be.iperf.nat
    host = be.collect()
    assert host["iperf"] is be.iperf.result and host["peer"] is be.echo.result
    # the frames' port is the echo's, once: the streams go to iperf's own
    assert [w for w in be.guest_config(0) if w.startswith(("dst_port=", "back="))] == [
        "dst_port=%d" % be.ports[0], "back=1"]
    none = qemuonly.User(reneg_opts("user"))
    none.start(None)
    assert none.iperf is None and "iperf" not in none.collect()
    monkeypatch.setattr(passt.Passt, "spawn", lambda self, session, tcp=None, udp=None: None)
    pt = passt.Passt(reneg_opts("passt", "stream_s=1"))
    pt.start(None)
    assert pt.echo is not None
    assert pt.iperf.where == (None, "127.0.0.1", iperf.PORT, "127.0.0.1") and pt.iperf.nat
    assert set(pt.collect()) == {"iperf", "udp", "peer"}
    assert [w for w in pt.guest_config(0) if w.startswith(("dst_port=", "back="))] == [
        "dst_port=%d" % pt.port, "back=1"]


def refusal(opts):
    with pytest.raises(RunnerError) as e:
        support.check(opts)
    assert e.value.status == exitcodes.RUNNER_USAGE
    assert "\n" not in e.value.line
    return e.value.line


@pytest.mark.parametrize("backend", ["dgram", "socket", "vhost-user"])
def test_a_stream_without_a_host_iperf_end_is_refused_in_one_line(backend):
    line = refusal(reneg_opts(backend, "stream_s=1"))
    assert line.startswith("reneg over %s: stream_s=1: each set's TCP stream needs the "
                           "host's iperf 2 server" % backend), line
    assert support.reneg_refusal(reneg_opts(backend)) is None
    assert support.reneg_refusal(reneg_opts(backend, "stream_s=0")) is None


def test_your_own_tap_and_a_bad_stream_s_are_refused(monkeypatch):
    monkeypatch.setattr(passtbin, "stream_refusal", lambda path, why: None)
    own = support.reneg_refusal(reneg_opts("tap", "stream_s=1", tap="mytap0"))
    assert own.startswith("stream_s=1: each set's TCP stream needs"), own
    assert support.reneg_refusal(reneg_opts("tap", "stream_s=1", bridge="br0")) == own
    for b in wire.RENEG_STREAM:
        assert support.reneg_refusal(reneg_opts(b, "stream_s=60")) is None, b
    for bad in ("61", "x", "-1", ""):
        line = support.reneg_refusal(reneg_opts("tap", "stream_s=" + bad))
        assert line == "stream_s=%s: the seconds of each set's TCP stream, 0..60" % bad, line
    monkeypatch.setattr(passtbin, "stream_refusal", lambda path, why: "too old: " + why[:6])
    assert support.reneg_refusal(reneg_opts("passt", "stream_s=1")) == "too old: Debian"


def guest_result(streams, back=(N, N, N)):
    """The guest's result: each set's frames (counted back) and its TCP
    stream ("tcp": {"bytes", "unacked", "ok"}; None: a set without one)."""
    sets = []
    for k, t in enumerate(SETS):
        s = {"set": t, "stream": k, "packets": N,
             "rx": {"packets": back[k], "unique": back[k], "lost": 0, "dup": 0, "malformed": 0}}
        if streams[k] is not None:
            s["tcp"] = dict({"duration_ns": 10 ** 9, "gbps": 0.008, "ok": True,
                             "unacked": 0}, **streams[k])
        sets.append(s)
    return {"type": "result", "app": "reneg", "packets": 3 * N, "tx_packets": 3 * N,
            "rx_packets": sum(back), "sets": sets}


def host(server_bytes, frames=(N, N, N), ports=None):
    """The host's collect(): the reflecting peer's streams and the iperf
    server's, one a set in order (None: no server result); with ports (the
    client ports of the server's streams) no NAT stood between."""
    pr = {"type": "peer", "mode": "reflect", "packets": sum(frames), "bytes": sum(frames) * 64,
          "vnperf": sum(frames), "lost": 0, "tx_packets": sum(frames),
          "errors": {"sock_drops": 0},
          "streams": [{"id": k, "packets": n} for k, n in enumerate(frames)]}
    out = peer.host_counts(pr)
    if server_bytes is not None:
        out["iperf"] = {"host_role": "server", "bytes": sum(server_bytes),
                        "streams": [{"id": 3 + j, "interval": "0.0-1.0", "bytes": b, "bps": 8 * b,
                                     "client_port": 40000 + j if ports is None else ports[j]}
                                    for j, b in enumerate(server_bytes)],
                        "nat": ports is None}
    return out


def stream_dirs(res, h, lossless=True):
    m = counts.merge("reneg", res, h, lossless=lossless)
    return {k: d for k, d in m.directions.items() if " stream " in k}


def acked(b=ACKED, **kw):
    return dict(kw, bytes=b)


def test_each_set_s_stream_agrees_exactly_with_the_server_s_stream():
    d = stream_dirs(guest_result([acked()] * 3), host([ACKED - 4] * 3))
    assert list(d) == ["set %d (%s) stream guest->host" % (k + 1, t) for k, t in enumerate(SETS)]
    assert {(x.verdict, x.sent, x.received) for x in d.values()} == {
        ("agree", ACKED - 4, ACKED - 4)}
    # and lossy backends are held to the same: TCP hides no loss
    assert {x.verdict for x in stream_dirs(guest_result([acked()] * 3), host([ACKED - 4] * 3),
                                           lossless=False).values()} == {"agree"}


def test_a_short_or_missing_server_stream_disagrees_naming_its_set():
    d = stream_dirs(guest_result([acked()] * 3), host([ACKED - 4, ACKED - 104]),
                    lossless=False)
    short, missing = d["set 2 (-event_idx) stream guest->host"], \
        d["set 3 (indirect:off) stream guest->host"]
    assert (short.verdict, short.lost) == ("disagree", 100), short.why
    assert any(w["at"] == "unexplained" for w in short.where)
    assert (missing.verdict, missing.received, missing.lost) == ("disagree", 0, ACKED - 4)
    more = stream_dirs(guest_result([acked()] * 3), host([ACKED] * 3))
    assert {x.verdict for x in more.values()} == {"disagree"}   # more than the guest sent
    gone = stream_dirs(guest_result([acked()] * 3), host(None))
    assert {(x.verdict, x.received) for x in gone.values()} == {("unknown", None)}


def test_unacknowledged_bytes_may_have_arrived_in_part_located_at_the_guest():
    res = guest_result([acked(unacked=500), acked(unacked=500), acked(unacked=500)])
    d = list(stream_dirs(res, host([ACKED - 4 + 500, ACKED - 4 + 200, ACKED - 14])).values())
    assert (d[0].verdict, d[0].sent, d[0].received) == ("agree", ACKED + 496, ACKED + 496)
    assert (d[1].verdict, d[1].lost, d[1].located) == ("lossy", 300, 300), d[1].why
    assert [w["at"] for w in d[1].where] == ["guest"] and "unacknowledged" in d[1].why
    assert d[2].verdict == "disagree"   # less than was acknowledged


def test_sets_without_a_stream_have_no_stream_direction():
    res = guest_result([None, None, None])
    assert stream_dirs(res, host([])) == {}
    assert renegsets.stream_directions(res, None) == []
    # the second stream-bearing set meets the server's second stream
    res = guest_result([acked(), None, acked(ACKED + 8)])
    d = renegsets.stream_directions(res, host([ACKED - 4, ACKED + 4])["iperf"])
    assert [(n, s, g) for n, s, g, _ in d] == [
        ("set 1 (all) stream guest->host", ACKED - 4, ACKED - 4),
        ("set 3 (indirect:off) stream guest->host", ACKED + 4, ACKED + 4)]


def test_without_a_nat_each_set_meets_the_server_s_stream_of_its_local_port():
    # tap: set 2's stream failed (no connection, nothing at the server);
    # sets 1 and 3 still meet their own streams, whatever their order
    res = guest_result([acked(local_port=49153), acked(0, ok=False, local_port=49154),
                        acked(ACKED + 8, local_port=49155)])
    d = renegsets.stream_directions(res, host([ACKED + 4, ACKED - 4],
                                              ports=[49155, 49153])["iperf"])
    assert [(n, s, g) for n, s, g, _ in d] == [
        ("set 1 (all) stream guest->host", ACKED - 4, ACKED - 4),
        ("set 2 (-event_idx) stream guest->host", 0, 0),
        ("set 3 (indirect:off) stream guest->host", ACKED + 4, ACKED + 4)]
    # behind a NAT the ports are the NAT's: the same streams in order
    nat = renegsets.stream_directions(res, host([ACKED - 4, ACKED + 4])["iperf"])
    assert [(s, g) for _, s, g, _ in nat] == [(ACKED - 4, ACKED - 4), (0, ACKED + 4),
                                              (ACKED + 4, 0)]


def test_iperf_csv_names_each_stream_s_client_port():
    text = ("19700101000000,10.0.0.2,49153,10.0.0.1,5001,4,0.0-1.0,1004,8032\n"
            "19700101000000,10.0.0.2,x,10.0.0.1,5001,5,0.0-1.0,8,64\n")
    assert [s["client_port"] for s in iperf.parse_csv_reports(text)] == [49153, None]


GROUP = cp.Group("r1", "small+mtu+stream", (0, 1, 2), SETS)


def reneg_boot(res, h, status=0):
    samples = [{"app": "reneg", "set": k, "packets": N, "vnet": {}} for k in range(3)]
    rep = result.RunResult.from_dict({
        "status": status, "why": "ok" if not status else "iperf: stream failed", "host": h,
        "guests": [{"samples": samples, "result": res, "console_tail": []}]})
    rep = dataclasses.replace(rep, counts=counts.merge("reneg", res, h, True))
    return conform.Boot(GROUP.traffic, "tools/vnperf run X", rep.status, rep.why, rep)


def split_traffic(b):
    done, failure = conform_reneg.split(
        b, GROUP, lambda r: conform.Boot(GROUP.traffic, b.command, 0, "", r), True)
    return done, failure, [conform_checks.judge({"event_idx": True}, {"event_idx"}, [x])[
        "traffic"] for x in done]


def test_conform_judges_each_set_s_stream_in_its_traffic_cell():
    done, failure, cells = split_traffic(reneg_boot(guest_result([acked()] * 3),
                                                    host([ACKED - 4] * 3)))
    assert failure is None and [c["verdict"] for c in cells] == ["pass"] * 3
    assert sorted(done[1].report.counts.directions) == [
        "set 2 (-event_idx) guest->host", "set 2 (-event_idx) host->guest",
        "set 2 (-event_idx) stream guest->host"]
    done, failure, cells = split_traffic(reneg_boot(
        guest_result([acked(), acked(unacked=400), acked()]),
        host([ACKED - 4, ACKED - 4 + 100, ACKED - 54])))
    assert [c["verdict"] for c in cells] == ["pass", "pass", "violation"]
    assert cells[2]["detail"].startswith("small+mtu+stream: set 3 (indirect:off) stream "
                                         "guest->host: %d sent, %d received, 50 lost"
                                         % (ACKED - 4, ACKED - 54)), cells[2]["detail"]


def test_a_set_whose_stream_failed_is_a_traffic_violation_the_others_pass():
    res = guest_result([acked(), acked(5000, ok=False), acked()])
    done, failure, cells = split_traffic(reneg_boot(res, host([ACKED - 4, 4996, ACKED - 4]),
                                                    status=9))
    assert len(done) == 3 and failure["status"] == 9
    assert [c["verdict"] for c in cells] == ["pass", "violation", "pass"]
    assert "the set's TCP stream failed after 5000 bytes acknowledged" in cells[1]["detail"]


def test_a_set_without_its_stream_s_count_is_not_judged_in_the_boot():
    done, failure, _ = split_traffic(reneg_boot(guest_result([acked()] * 3), host(None)))
    assert done == [] and failure["why"].startswith(
        "set 1 (all) stream guest->host: no count"), failure


COMBOS = [("all", []), ("none", ["features=-mtu,-event_idx", "indirect=off"]),
          ("-mtu", ["features=-mtu"]), ("+mtu", ["features=-event_idx", "indirect=off"]),
          ("ctrl", ["features=-mtu", "promisc=0"])]
KINDS = [["small", "mtu", "stream"]] * 5


def test_the_stream_kind_joins_the_reneg_boot_where_the_host_end_serves_it():
    groups = cp.plan(COMBOS, KINDS, None, back=True, stream=True)
    assert [(g.id, g.traffic, g.kinds, g.combos, bool(g.sets)) for g in groups] == [
        ("r1", "small+mtu+stream", ("small", "mtu", "stream"), (0, 1, 2, 3), True),
        ("f1", "small+mtu+stream", ("small", "mtu", "stream"), (4,), False)]
    # without the host's stream end (your own --tap) or with --no-stream: as before
    assert [(g.traffic, g.combos) for g in cp.plan(COMBOS[:2], KINDS, None, back=True)] == [
        ("small+mtu", (0, 1)), ("stream", (0,)), ("stream", (1,))]
    assert [g.traffic for g in cp.plan(COMBOS[:2], [["small", "mtu"]] * 2, None, back=True,
                                       stream=True)] == ["small+mtu"]
    # a set too long for the guest: each kind fresh, the stream app iperf's
    huge = cp.plan([("big", ["features=" + ",".join("-f%03d" % i for i in range(80))])],
                   KINDS[:1], None, back=True, stream=True)
    assert [(g.traffic, g.why) for g in huge][2] == ("stream", cp.FRESH_KIND["stream"])


def test_the_group_s_boot_runs_app_reneg_with_each_set_s_stream(monkeypatch):
    base = vnpy.run_opts(backend="tap")
    small = conform.traffics(base, True)[0]
    name, change, words = conform_reneg.reneg_traffic(small, GROUP, N, conform.STREAM_S,
                                                      conform.USO_SEG)
    assert (name, change["app"], change["sets"], words) == (
        "small+mtu+stream", "reneg", "/".join(SETS), ("notify=hybrid", "stream_s=1"))
    assert conform_reneg.reneg_traffic(small, cp.Group("r2", cp.BOTH, (0,), ("all",)), N,
                                       conform.STREAM_S, conform.USO_SEG)[2] == ("notify=hybrid",)
    ran = []

    def fake_boot(cli, base, traffic, words):
        ran.append((traffic[0], traffic[1]["sets"], traffic[2]))
        return reneg_boot(dict(guest_result([acked()] * 3), sets=guest_result(
            [acked()] * 3)["sets"][:1]), host([ACKED - 4]))

    monkeypatch.setattr(conform, "boot", fake_boot)
    b = conform._alone({}, base, True, {"mtu": True}, [], cp.BOTH_STREAM)
    assert ran == [("small+mtu+stream", "all", ("notify=hybrid", "stream_s=1"))]
    assert "set 1 (all) stream guest->host" in b.report.counts.directions


def test_vnperf_run_s_report_shows_each_set_s_stream_and_its_count():
    res = guest_result([acked(), acked(5000, ok=False), acked(unacked=100)])
    h = host([ACKED - 4, 4996, ACKED - 4 + 40])
    rep = result.RunResult.from_dict({
        "status": 9, "status_name": "network error", "why": "iperf", "app": "reneg",
        "backend": "tap", "machine": "q35", "accel": "tcg", "config": ["app=reneg"],
        "guests": [{"label": "guest", "wall_s": 3.0, "ready_s": 0.5, "result": res}],
        "host": h})
    rep = dataclasses.replace(rep, counts=outcome.merged_counts("tap", "reneg", rep.guests, h,
                                                                True))
    rep = dataclasses.replace(rep, metrics=outcome.metrics(rep))
    rows = dict(re.split(r"\s{2,}", line, 1) for line in report.human(rep).splitlines()
                if line.startswith(("set ", "counts set ")))
    assert rows["set 1 (all)"].endswith("; TCP stream %d bytes acknowledged in 1.000 s "
                                        "(0.008 Gbit/s)" % ACKED), rows["set 1 (all)"]
    assert rows["set 2 (-event_idx)"].endswith("(0.008 Gbit/s), failed")
    assert rows["counts set 1 (all) stream guest->host"] == \
        "agree: %d sent, %d received, none lost" % (ACKED - 4, ACKED - 4)
    assert rows["counts set 3 (indirect:off) stream guest->host"].startswith(
        "lossy: %d sent, %d received, 60 lost" % (ACKED + 96, ACKED + 36))


def test_the_default_timeout_holds_every_set_s_stream():
    def timeout(*words, sets="all/-mtu/-event_idx"):
        return options.build(backend="user", app="reneg", sets=sets, count=N,
                             config=words).timeout
    assert timeout() == timeout("stream_s=0") == 60.0
    assert timeout("stream_s=20") == 120.0 and timeout("stream_s=20", sets="all") == 80.0
    assert options.build(backend="user", app="reneg", sets="all", count=N, config=(
        "stream_s=20",), timeout=10).timeout == 10
