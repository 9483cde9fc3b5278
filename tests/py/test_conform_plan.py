"""vnperf conform's boots (tools/vnperflib/campaign/conform_plan.py and
conform_reneg.py, issue 27): combinations that differ only in features
share one boot of app reneg per traffic kind and line words, within the
guest's limits; the kinds reneg cannot run and a lone combination boot
fresh; a shared boot that fails has the sets it did not complete rerun
fresh (a fake runner) and the failure recorded; each set is judged by its
own counters and stream."""

import dataclasses

import vnpy  # noqa: F401 (puts tools/ on the path)
from vnperflib import result
from vnperflib.analysis import counts
from vnperflib.run import peer
from vnperflib.campaign import conform, conform_checks, conform_plan as cp, conform_reneg

PEER = ["promisc=0", "allmulti=0"]
COMBOS = [("all", []), ("none", ["features=-mtu,-event_idx", "indirect=off"]),
          ("-mtu", ["features=-mtu"]), ("+mtu", ["features=-event_idx", "indirect=off"]),
          ("ctrl", ["features=-mtu"] + PEER), ("ctrl2", PEER)]


def kinds(n, *extra):
    return [["small", "mtu"] + list(extra)] * n


def test_combinations_that_differ_in_features_share_one_boot_per_kind():
    groups = cp.plan(COMBOS[:4], kinds(4), None)
    assert [(g.id, g.traffic, g.combos, g.sets) for g in groups] == [
        ("r1", "small", (0, 1, 2, 3), ("all", "-mtu,-event_idx,indirect:off", "-mtu",
                                       "-event_idx,indirect:off")),
        ("r2", "mtu", (0, 1, 2, 3), ("all", "-mtu,-event_idx,indirect:off", "-mtu",
                                     "-event_idx,indirect:off"))]


def test_line_words_split_boots_and_a_lone_one_boots_fresh():
    groups = cp.plan(COMBOS[:5], kinds(5), None)
    shared = [g for g in groups if g.sets]
    assert [g.combos for g in shared] == [(0, 1, 2, 3), (0, 1, 2, 3)]
    fresh = [(g.combos, g.traffic, g.why) for g in groups if not g.sets]
    why = "no other combination of its control commands shares a boot with it"
    assert fresh == [((4,), "small", why), ((4,), "mtu", why)]
    groups = cp.plan(COMBOS, kinds(6), None)
    assert [(g.combos, g.sets) for g in groups if g.sets][2:] == [
        ((4, 5), ("-mtu", "all")), ((4, 5), ("-mtu", "all"))]


def test_the_stream_uso_and_a_backend_without_reneg_boot_fresh():
    groups = cp.plan(COMBOS[:2], kinds(2, "stream"), None)
    assert [(g.traffic, g.combos, g.why) for g in groups if not g.sets] == [
        ("stream", (0,), cp.FRESH_KIND["stream"]), ("stream", (1,), cp.FRESH_KIND["stream"])]
    groups = cp.plan(COMBOS[:2], kinds(2), "dgram, socket or tap")
    assert all(not g.sets for g in groups) and len(groups) == 4
    assert groups[0].why == "app reneg: dgram, socket or tap"


def test_a_boot_holds_at_most_eight_sets_and_the_guest_s_characters():
    many = [("c%d" % i, ["features=-mtu"]) for i in range(10)]
    groups = cp.plan(many, [["small"]] * 10, None)
    assert [len(g.sets) for g in groups] == [8, 2]
    long_set = ",".join("-f%03d" % i for i in range(60))   # 359 characters: fits a set
    assert len(long_set) <= cp.SET_TEXT_MAX
    four = [("c%d" % i, ["features=" + long_set]) for i in range(4)]
    groups = cp.plan(four, [["small"]] * 4, None)
    assert [g.combos for g in groups] == [(0, 1), (2, 3)]   # 3 sets pass 1023 characters
    huge = [("big", ["features=" + long_set + ",-x" * 20])] + COMBOS[:2]
    groups = cp.plan(huge, [["small"]] * 3, None)
    assert [(g.combos, bool(g.sets)) for g in groups] == [((1, 2), True), ((0,), False)]


class FakeRunner:
    """Boots that never start QEMU: a shared boot completes `completes`
    sets, then fails when told to."""

    def __init__(self, completes=None):
        self.completes = completes
        self.fresh = []

    def run_fresh(self, i, kind):
        self.fresh.append((i, kind))
        return "fresh-%d-%s" % (i, kind)

    def run_reneg(self, g):
        n = len(g.sets) if self.completes is None else self.completes
        done = ["%s-set%d" % (g.id, k) for k in range(n)]
        if self.completes is None:
            return done, None
        return done, {"status": 4, "why": "vnet: device did not finish its reset"}


def test_every_set_completed_is_marked_one_boot():
    groups = cp.plan(COMBOS[:3], kinds(3), None)
    f = FakeRunner()
    boots, failures = cp.execute(groups, f.run_fresh, f.run_reneg)
    assert failures == [] and f.fresh == []
    b, mark = boots[(1, "mtu")]
    assert b == "r2-set1"
    assert mark == {"boot": "one boot", "id": "r2", "set": 2,
                    "sets": ["all", "-mtu,-event_idx,indirect:off", "-mtu"]}


def test_a_failed_boot_reruns_the_sets_it_did_not_complete_fresh():
    groups = cp.plan(COMBOS[:4], kinds(4), None)
    f = FakeRunner(completes=1)
    boots, failures = cp.execute(groups, f.run_fresh, f.run_reneg)
    assert f.fresh == [(i, k) for k in ("small", "mtu") for i in (1, 2, 3)]
    assert boots[(0, "small")][1]["boot"] == "one boot"
    assert boots[(2, "small")] == ("fresh-2-small", {
        "boot": "fresh boot", "why": "rerun: one boot r1 failed before its set"})
    assert [(x["boot"], x["traffic"], x["completed"], x["status"], x["why"]) for x in failures] == [
        ("r1", "small", 1, 4, "vnet: device did not finish its reset"),
        ("r2", "mtu", 1, 4, "vnet: device did not finish its reset")]


def test_one_boot_runs_both_kinds_where_the_host_peer_reflects():
    """dgram, socket: each set sends its small frames, then the MTU's,
    both ways, so one boot holds both kinds; a lone combination's two
    kinds are one fresh boot too (app reneg, its one set), and so is the
    rerun of a set a shared boot did not complete; a set too long for the
    guest boots fresh per kind."""
    groups = cp.plan(COMBOS[:4], kinds(4, "stream"), None, back=True)
    assert [(g.id, g.traffic, g.kinds, g.combos) for g in groups if g.sets] == [
        ("r1", cp.BOTH, ("small", "mtu"), (0, 1, 2, 3))]
    assert [(g.traffic, g.combos) for g in groups if not g.sets] == [
        ("stream", (i,)) for i in range(4)]
    lone = cp.plan(COMBOS[4:5], kinds(1), None, back=True)
    assert [(g.traffic, g.kinds, bool(g.sets)) for g in lone] == [
        (cp.BOTH, ("small", "mtu"), False)]
    huge = cp.plan([("big", ["features=" + ",".join("-f%03d" % i for i in range(80))])],
                   kinds(1), None, back=True)
    assert [g.traffic for g in huge] == ["small", "mtu"]
    f = FakeRunner(completes=1)
    boots, failures = cp.execute(groups[:1], f.run_fresh, f.run_reneg)
    assert f.fresh == [(i, cp.BOTH) for i in (1, 2, 3)]
    assert list(boots) == [(i, cp.BOTH) for i in range(4)]
    assert [(x["boot"], x["traffic"], x["completed"]) for x in failures] == [("r1", cp.BOTH, 1)]


N = 4000
SETS3 = ("all", "-mtu", "-event_idx")


def sample(k, interrupts=1):
    q = {"rule_breaks": {"unavailable": 0, "used_len": 0, "in_order": 0, "device": 0},
         "irq_vector": 48, "irq_shared": False, "interrupts": interrupts, "halts": 0}
    vnet = {"features": [], "tx": dict(q, len_mismatch=0), "rx": dict(q, len_errors=0),
            "config_out_of_range": 0, "ctrl": {"sent": 0}}
    return {"type": "sample", "app": "reneg", "set": k, "packets": N, "bytes": N * 789,
            "vnet": vnet}


def reneg_report(samples, streams=(N, N, N), back=(N, N, N), malformed=(0, 0, 0), status=0,
                 why="ok", result_too=True, sock_drops=0, texts=SETS3):
    """A reneg boot's report as the runner makes it: the guest's samples
    and result (back None: one way, no rx), the host peer's streams (it
    reflects each frame it counted), both sides' counts merged."""
    sets = [{"set": t, "stream": k, "packets": N} for k, t in enumerate(texts)]
    for k, s in enumerate(sets):
        if back is not None:
            s["rx"] = {"packets": back[k], "unique": back[k], "lost": 0, "dup": 0,
                       "malformed": malformed[k]}
    res = {"type": "result", "app": "reneg", "packets": len(texts) * N,
           "tx_packets": len(texts) * N,
           "rx_packets": sum(back or ()), "sets": sets,
           "vnet": samples[-1]["vnet"] if samples else None} if result_too else None
    got = [{"id": k, "packets": n, "unique": n, "lost": 0, "dup": 0} for k, n in enumerate(streams)]
    pr = {"type": "peer", "mode": "reflect" if back else "count", "packets": sum(streams),
          "bytes": sum(streams) * 789,
          "vnperf": sum(streams), "lost": 0, "errors": {"sock_drops": sock_drops},
          "streams": got}
    if back is not None:
        pr["tx_packets"] = sum(streams)
    host = peer.host_counts(pr)
    rep = result.RunResult.from_dict({
        "status": status, "why": why, "host": host,
        "guests": [{"samples": samples, "result": res, "console_tail": ["vnet: set 3 broke"]}]})
    return dataclasses.replace(rep, counts=counts.merge("reneg", res, host) if res else None)


GROUP = cp.Group("r1", cp.BOTH, (0, 1, 2), SETS3)


def split(rep, back=True):
    b = conform.Boot(cp.BOTH, "tools/vnperf run X", rep.status, rep.why, rep)
    return conform_reneg.split(b, GROUP, lambda r: conform.Boot(cp.BOTH, b.command, 0, "", r),
                               back)


def judged(done):
    return [conform_checks.judge({"event_idx": True}, {"event_idx"}, [b]) for b in done]


def test_each_set_is_counted_both_ways():
    done, failure = split(reneg_report([sample(k) for k in range(3)]))
    assert failure is None and len(done) == 3
    assert list(done[1].report.counts.directions) == ["set 2 (-mtu) guest->host",
                                                      "set 2 (-mtu) host->guest"]
    assert [c["traffic"]["verdict"] for c in judged(done)] == ["pass"] * 3


def test_a_set_whose_frames_back_were_lost_is_a_finding_naming_its_set_and_way():
    done, failure = split(reneg_report([sample(k) for k in range(3)], back=(N, N - 7, N)))
    assert failure is None and len(done) == 3
    cells = judged(done)
    assert [c["traffic"]["verdict"] for c in cells] == ["pass", "violation", "pass"]
    detail = cells[1]["traffic"]["detail"]
    assert detail.startswith("small+mtu: set 2 (-mtu) host->guest: %d sent, %d received, 7 "
                             "lost" % (N, N - 7)), detail
    assert "guest->host" not in detail
    assert cells[1]["traffic"]["command"] == "tools/vnperf run X"


def test_a_set_s_frames_lost_on_the_way_out_or_malformed_back_are_findings_too():
    done, _ = split(reneg_report([sample(k) for k in range(3)], streams=(N, N, N - 2),
                                 back=(N, N, N - 2)))
    detail = judged(done)[2]["traffic"]["detail"]
    assert "set 3 (-event_idx) guest->host: %d sent, %d received, 2 lost" % (N, N - 2) in detail
    done, _ = split(reneg_report([sample(k) for k in range(3)], back=(N - 3, N, N),
                                 malformed=(3, 0, 0)))
    assert "3 malformed frames reached the guest" in judged(done)[0]["traffic"]["detail"]


def test_a_set_s_loss_the_host_located_reruns_it_fresh():
    done, failure = split(reneg_report([sample(k) for k in range(3)], streams=(N, N - 5, N),
                                       back=(N, N - 5, N), sock_drops=5))
    assert len(done) == 1
    assert failure["why"].startswith("set 2 (-mtu) guest->host: %d sent, %d received; the "
                                     "boot's guest->host lost 5 frames at the host" % (N, N - 5))


def test_one_way_sets_are_judged_one_way():
    """Where the peer only counts (your own --tap): a set's guest->host alone."""
    done, failure = split(reneg_report([sample(k) for k in range(3)], back=None), back=False)
    assert failure is None
    assert list(done[0].report.counts.directions) == ["set 1 (all) guest->host"]
    done, failure = split(reneg_report([sample(k) for k in range(3)], back=None), back=True)
    assert done == [] and failure["why"] == "set 1 (all) host->guest: no count (the guest's " \
        "result or the host peer's missing)"


def test_a_guest_that_ended_before_its_result_completes_no_set():
    """Each set's frames back are in the guest's result: without it no set
    is judged here, and the boot's end is the failure."""
    done, failure = split(reneg_report([sample(0)], status=4, why="device error",
                                       result_too=False))
    assert done == [] and failure == {"status": 4, "why": "device error"}
    done, failure = split(reneg_report([sample(0), sample(1)], why=""))
    assert len(done) == 2 and failure == {"status": 0, "why": "the guest ended after 2 of 3 sets"}


def test_a_lone_combination_s_fresh_boot_is_its_one_set_both_ways(monkeypatch):
    """Its small and mtu frames in one boot of app reneg, the combination
    its one set; judged by the set's view, or where the set did not
    complete (loss the host located) by the boot's own directions."""
    ran = []

    def fake_boot(rep):
        def run(cli, base, traffic, words):
            ran.append((traffic[0], traffic[1]["app"], traffic[1]["sets"], list(words)))
            return conform.Boot(traffic[0], "tools/vnperf run X", rep.status, rep.why, rep)
        return run

    base = vnpy.run_opts(backend="dgram")
    row = {"mtu": False}
    one = dict(texts=("-mtu",), streams=(N,), back=(N,), malformed=(0,))
    monkeypatch.setattr(conform, "boot", fake_boot(reneg_report([sample(0)], **one)))
    b = conform._alone({}, base, False, row, ["features=-mtu"])
    assert ran == [(cp.BOTH, "reneg", "-mtu", ["features=-mtu"])]
    assert (b.traffic, list(b.report.counts.directions)) == (
        cp.BOTH, ["set 1 (-mtu) guest->host", "set 1 (-mtu) host->guest"])
    one.update(streams=(N - 5,), back=(N - 5,))
    monkeypatch.setattr(conform, "boot", fake_boot(reneg_report([sample(0)], sock_drops=5,
                                                                **one)))
    b = conform._alone({}, base, False, row, ["features=-mtu"])
    assert not any(k.startswith("set ") for k in b.report.counts.directions)
    cell = conform_checks.judge(row, {"mtu"}, [b])["traffic"]
    assert cell["verdict"] == "pass", cell   # flow control at the host: no finding


def test_each_set_is_judged_by_its_own_counters():
    # set 2's device interrupted though no halt armed (s2.7.7.2); sets 1 and 3 did not
    done, _ = split(reneg_report([sample(0), sample(1, interrupts=5), sample(2)]))
    cells = judged(done)
    assert [c["suppression"]["verdict"] for c in cells] == ["pass", "violation", "pass"]
    assert [c["traffic"]["verdict"] for c in cells] == ["pass"] * 3
    assert [c["reset"]["verdict"] for c in cells] == ["pass"] * 3   # another set's console
    assert cells[1]["suppression"]["command"] == "tools/vnperf run X"


def test_set_text():
    assert cp.set_text([]) == "all"
    assert cp.set_text(["features=-a,-b", "indirect=on"]) == "-a,-b,indirect:on"
    assert cp.set_text(["features=-a", "promisc=0"]) == "-a"
    assert cp.line_words(["features=-a", "promisc=0", "indirect=off", "vlan=5"]) == (
        "promisc=0", "vlan=5")
