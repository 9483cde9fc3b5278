"""vnperf conform's boots (tools/vnperflib/campaign/conform_plan.py and
conform_reneg.py, issue 27): combinations that differ only in features
share one boot of app reneg per traffic kind and line words, within the
guest's limits; the kinds reneg cannot run and a lone combination boot
fresh; a shared boot that fails has the sets it did not complete rerun
fresh (a fake runner) and the failure recorded; each set is judged by its
own counters and stream."""

import vnpy  # noqa: F401 (puts tools/ on the path)
from vnperflib import result
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


def sample(k, interrupts=1):
    q = {"rule_breaks": {"unavailable": 0, "used_len": 0, "in_order": 0, "device": 0},
         "irq_vector": 48, "irq_shared": False, "interrupts": interrupts, "halts": 0}
    vnet = {"features": [], "tx": dict(q, len_mismatch=0), "rx": dict(q, len_errors=0),
            "config_out_of_range": 0, "ctrl": {"sent": 0}}
    return {"type": "sample", "app": "reneg", "set": k, "packets": 100, "bytes": 6000,
            "vnet": vnet}


def reneg_report(samples, streams, status=0, why="ok"):
    return result.RunResult.from_dict({
        "status": status, "why": why, "host": {"peer": {"streams": streams}},
        "counts": {"directions": {"guest->host": {"verdict": "agree"}}},
        "guests": [{"samples": samples, "result": {}, "console_tail": ["vnet: set 3 broke"]}]})


def stream(k, unique=100, lost=0):
    return {"id": k, "packets": unique, "unique": unique, "lost": lost, "dup": 0}


GROUP = cp.Group("r1", "small", (0, 1, 2), ("all", "-mtu", "-event_idx"))


def split(rep):
    b = conform.Boot("small", "tools/vnperf run X", rep.status, rep.why, rep)
    return conform_reneg.split(b, GROUP, lambda r: conform.Boot("small", b.command, 0, "", r))


def test_a_set_whose_stream_was_not_counted_exactly_ends_the_boot():
    done, failure = split(reneg_report([sample(0), sample(1), sample(2)],
                                       [stream(0), stream(1, unique=97, lost=3), stream(2)]))
    assert len(done) == 1
    assert failure == {"status": 0, "why": "set 2 (-mtu): 100 sent, the host peer counted 97 "
                                           "unique, 3 lost, 0 duplicated"}


def test_a_guest_that_ended_early_completes_the_sets_it_sampled():
    done, failure = split(reneg_report([sample(0)], [stream(0)], status=4, why="device error"))
    assert len(done) == 1 and failure == {"status": 4, "why": "device error"}
    done, failure = split(reneg_report([sample(k) for k in range(3)],
                                       [stream(k) for k in range(3)]))
    assert len(done) == 3 and failure is None


def test_each_set_is_judged_by_its_own_counters():
    # set 2's device interrupted though no halt armed (s2.7.7.2); sets 1 and 3 did not
    done, _ = split(reneg_report([sample(0), sample(1, interrupts=5), sample(2)],
                                 [stream(k) for k in range(3)]))
    cells = [conform_checks.judge({"event_idx": True}, {"event_idx"}, [b]) for b in done]
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
