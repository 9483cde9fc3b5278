"""`vnperf ndr` / `sweep --search` without QEMU: option parsing, run reports
turned into trials, and whole searches over a simulated device standing in
for `vnperf run` (every trial recorded, latency trials, compare on the
results)."""

import json
import os

import pytest

from vnpy import run_opts, run_vnperf
from vnperflib.campaign import (compare, ndr_cli, ndr_loop, ndr_render, ndr_trial, ndr_write,
                                 search, sweep)
from vnperflib import exitcodes, result
from vnperflib.report import resultsdir
from vnperflib.errors import RunnerError


@pytest.mark.parametrize("text,pct", [("ndr", 0.0), ("NDR", 0.0), ("pdr=0.5%", 0.5),
                                      ("pdr=2", 2.0)])
def test_search_modes(text, pct):
    assert ndr_cli.parse_search(text) == pct


@pytest.mark.parametrize("fn,text", [
    (ndr_cli.parse_search, "pdr=0"), (ndr_cli.parse_search, "pdr=100%"),
    (ndr_cli.parse_search, "rfc"), (ndr_cli.parse_resolution, "0%"),
    (ndr_cli.parse_resolution, "100%"), (ndr_cli.parse_resolution, "0.5"),
    (ndr_cli.parse_resolution, "x"), (ndr_cli.parse_latency_at, "0,50"),
    (ndr_cli.parse_latency_at, "101"), (ndr_cli.parse_sizes, "64,0"),
    (ndr_cli.parse_sizes, "64,64"), (ndr_cli.parse_sizes, "jumbo")])
def test_bad_search_options(fn, text):
    with pytest.raises(RunnerError) as e:
        fn(text)
    assert e.value.status == exitcodes.RUNNER_USAGE and "\n" not in e.value.line


def test_search_option_values():
    assert ndr_cli.parse_resolution("1%") == (0.01, True)
    assert ndr_cli.parse_resolution("5k") == (5000.0, False)
    assert ndr_cli.parse_latency_at("10,50,90,100") == [10, 50, 90, 100]
    assert ndr_cli.parse_latency_at("none") == []
    assert ndr_cli.parse_sizes(ndr_trial.DEFAULT_SIZES)[0] == ("60", 60)
    assert [ndr_trial.rfc2544_label(s) for s in ("60", "1514", "imix")] == ["64", "1518",
                                                                             "imix"]


def sink_report(sent, got, pps, status=0, why="ok"):
    return {"status": status, "why": why, "guests": [{"result": {"app": "sink"}}],
            "host": {"peer": {"mode": "send", "pps": pps, "packets": sent}},
            "counts": {"directions": {
                "host->guest": {"sent": sent, "received": got, "lost": sent - got,
                                "verdict": "agree" if sent == got else "lossy",
                                "why": "host->guest: ..."},
                "host->guest frames": {"sent": sent, "received": got + 1}}},
            "cpu": {"total_pct": 150.0, "roles": {"vcpu": {"pct": 99.0}, "peer": {"pct": 51.0}}}}


def test_trial_from_a_sink_report():
    t = ndr_trial.trial_from_report(
        result.RunResult.from_dict(sink_report(1000, 990, 2000.0)))
    assert (t["sent"], t["received"], t["counted"]) == (1000, 990, "host->guest")
    assert t["achieved_pps"] == 2000.0 and t["latency"] is None
    assert t["cpu_roles"] == {"vcpu": 99.0, "peer": 51.0}
    assert set(t["hops"]) == {"host->guest", "host->guest frames"}


def test_trial_from_a_pvp_report_with_a_gen_tester():
    rep = {"status": 0, "why": "ok", "host": {},
           "guests": [{"result": {"app": "fwd"}},
                      {"result": {"app": "gen", "rate_achieved": 4990.5, "pps": 4990.5,
                                  "tx_dropped": 3,
                                  "rx": {"packets": 997, "p50_us": 20.0, "p99_us": 80.0,
                                         "p999_us": 90.0, "max_us": 100.0}}}],
           "counts": {"directions": {"end to end": {"sent": 1003, "received": 997}}}}
    t = ndr_trial.trial_from_report(result.RunResult.from_dict(rep))
    # gen's own drops on a full TX ring were offered and never delivered:
    # the counts have them in sent already (counted once, not twice).
    assert (t["sent"], t["received"], t["achieved_pps"]) == (1003, 997, 4990.5)
    assert t["latency"]["p99_us"] == 80.0 and t["latency"]["how"].startswith("round trip")


class FakeRuns:
    """Stands in for sweep.run_point_once: a device losing frames above
    step pps; fail_at: the trial that dies (a backend crash)."""

    def __init__(self, step, flat_out=100000.0, fail_at=None):
        self.step, self.flat_out, self.fail_at = step, flat_out, fail_at
        self.rates = []

    def __call__(self, opts, resolver):
        self.rates.append(opts.rate)
        if len(self.rates) == self.fail_at:
            return result.RunResult.from_dict({"status": 68, "why": "testpmd died (status 139)",
                                               "guests": [], "host": {}, "counts": {}})
        pps = self.flat_out if opts.rate == ndr_trial.FLAT_OUT else float(opts.rate)
        sent = int(pps)
        got = sent if pps <= self.step else int(sent * self.step / pps)
        rep = sink_report(sent, got, pps)
        rep["host"]["peer_rx"] = {"latency": {"count": got, "p50_us": pps / 1000.0,
                                              "p99_us": pps / 100.0, "p999_us": 1.0,
                                              "max_us": 2.0}}
        return result.RunResult.from_dict(rep)


def base_opts(**kw):
    return run_opts(**dict(dict(backend="dgram", app="sink", duration=1, image="x",
                                machine="microvm", accel="tcg"), **kw))


def searched(tmp_path, monkeypatch, runs, name="a", latency_at=(10, 50, 100), base=None,
             log=None, **spec):
    monkeypatch.setattr(sweep, "run_point_once", runs)
    axes = {"size": ndr_cli.parse_sizes("60,1514")}
    base = base or base_opts()
    out = ndr_write.Writer(str(tmp_path / name), {"size": ["60", "1514"]}, 1, {},
                            {"mode": "ndr", "latency_at": list(latency_at)})
    status = ndr_loop.run(base, axes, 1, out, None, search.Spec(**spec), list(latency_at),
                            log=log or (lambda line: None))
    out.save()
    return status, out.results


def test_a_whole_search_records_every_trial(tmp_path, monkeypatch):
    runs = FakeRuns(step=31000)
    # The peer counts the frames coming back out of the forwarder (pvp).
    status, res = searched(tmp_path, monkeypatch, runs, resolution=500, relative=False,
                           base=base_opts(topology="pvp", app="fwd"))
    assert status == 0
    p = res["points"][0]
    (s,) = p["searches"]
    assert s["status"] == search.OK and 30500 <= s["rate_pps"] <= 31000
    # Latency at 10% and 50% ran as their own trials; 100% is the
    # verification trial.
    assert [e["pct"] for e in s["latency"]] == [10, 50, 100]
    assert s["latency"][-1]["run"] == s["trials"][-1]["run"]
    assert p["summary"]["ndr_pps"]["median"] == s["rate_pps"]
    assert p["summary"]["ndr_bps"]["median"] == s["rate_pps"] * 60 * 8
    assert p["summary"]["p50_ns"]["median"] == pytest.approx(s["rate_pps"] / 2 / 1000 * 1e3,
                                                             rel=1e-3)
    # Every trial (two points) has its report and a trials.csv row.
    ntrials = sum(len(x["searches"][0]["trials"]) + 2 for x in res["points"])
    assert len(runs.rates) == ntrials
    assert runs.rates[0] == "max" and runs.rates.count("max") == 2
    outdir = str(tmp_path / "a")
    assert len(os.listdir(os.path.join(outdir, "runs"))) == ntrials
    with open(os.path.join(outdir, "trials.csv")) as f:
        assert len(f.read().strip().splitlines()) == 1 + ntrials + 2  # + latency rows of 100%
    with open(os.path.join(outdir, "results.csv")) as f:
        head, row = f.read().strip().splitlines()[:2]
    assert head.split(",")[:5] == ["size", "runs_ok", "runs", "ndr_pps_median", "ndr_pps_min"]
    assert float(row.split(",")[3]) == s["rate_pps"]
    table = ndr_render.render(res)
    assert table.splitlines()[0].split()[:4] == ["size", "rfc2544", "ok", "NDR"]
    assert "trial" in ndr_render.render_trials(res).splitlines()[0]


def test_a_dead_backend_stops_the_search_with_its_reason(tmp_path, monkeypatch):
    status, res = searched(tmp_path, monkeypatch, FakeRuns(step=31000, fail_at=3))
    assert status == 68
    s = res["points"][0]["searches"][0]
    assert s["status"] == search.STOPPED and "testpmd died (status 139)" in s["why"]
    assert res["points"][0]["ok"] == 0 and res["points"][0]["statuses"][0] == 68
    assert "testpmd died" in ndr_render.render(res)


def test_no_rate_has_its_own_status(tmp_path, monkeypatch):
    status, res = searched(tmp_path, monkeypatch, FakeRuns(step=0.5), floor_pps=1000)
    assert status == exitcodes.RUNNER_NO_RATE
    assert res["points"][0]["searches"][0]["status"] == search.NO_RATE


def test_compare_two_searches(tmp_path, monkeypatch):
    searched(tmp_path, monkeypatch, FakeRuns(step=31000), "a", resolution=500, relative=False)
    searched(tmp_path, monkeypatch, FakeRuns(step=62000), "b", resolution=500, relative=False)
    a = resultsdir.load(str(tmp_path / "a"))
    b = resultsdir.load(str(tmp_path / "b"))
    cmp = compare.compare(a, b)
    assert cmp.key == ("size",) and cmp.columns[0] == "NDR%"
    cell = cmp.rows[0].columns["NDR%"]
    assert 95 < cell.pct < 105
    assert "NDR pps A" in compare.render(cmp)


def test_ndr_refuses_before_booting(tmp_path):
    r = run_vnperf(["ndr", "--backend", "dgram", "--rate", "10k", "--out", str(tmp_path)])
    assert r.returncode == exitcodes.RUNNER_USAGE and "the search chooses the rate" in r.stderr
    r = run_vnperf(["ndr", "--backend", "dgram", "--size", "imix", "--out", str(tmp_path)])
    assert r.returncode == exitcodes.RUNNER_USAGE and "imix needs a gen tester" in r.stderr
    r = run_vnperf(["ndr", "--backend", "vhost-user", "--topology", "pvp", "--tester", "peer",
                    "--size", "imix", "--out", str(tmp_path)])
    assert r.returncode == exitcodes.RUNNER_USAGE and "imix needs a gen tester" in r.stderr
    r = run_vnperf(["sweep", "--search", "pdr=200%", "--size", "60"])
    assert r.returncode == exitcodes.RUNNER_USAGE and "--search 'pdr=200%'" in r.stderr
    assert not os.listdir(str(tmp_path))


def test_the_flat_out_trial_of_a_vhost_user_sink_is_the_fed_peer(monkeypatch):
    """Flat out goes the paced trials' way (peer -> tap -> testpmd io), not
    through testpmd txonly, which reports no rate and would stop the search."""
    from vnperflib.backends import testpmd
    seen = []

    def run(opts, resolver):
        seen.append(testpmd.plan(opts))
        return result.RunResult.from_dict(sink_report(1000, 1000, 1000.0))
    monkeypatch.setattr(sweep, "run_point_once", run)
    trials = ndr_trial.Trials(base_opts(backend="vhost-user", size=60), None,
                               lambda rep: "001.json", lambda line: None)
    trials(None, "max")
    trials(5000, "search")
    assert seen == [("io", True), ("io", True)]


@pytest.mark.parametrize("config,want", [
    ([], ["interval_ms=60000"]),
    (["interval_ms=500", "notify=hybrid"], ["interval_ms=500", "notify=hybrid"])])
def test_trials_print_no_sample_line_unless_asked(monkeypatch, config, want):
    """A sample line costs the guest's vCPU a millisecond of emulated UART
    writes: a trial's guests print none during a trial, unless the user
    chose an interval."""
    seen = []

    def run(opts, resolver):
        seen.append(list(opts.config))
        return result.RunResult.from_dict(sink_report(1000, 1000, 1000.0))
    monkeypatch.setattr(sweep, "run_point_once", run)
    base = base_opts(config=list(config))
    trials = ndr_trial.Trials(base, None, lambda rep: "001.json", lambda line: None)
    trials(None, "max")
    trials(5000, "search")
    assert seen == [want, want] and base.config == tuple(config)


def test_a_search_without_a_verified_rate_keeps_its_figures(tmp_path, monkeypatch):
    """The budget ends before the verification: the point stays failed (no
    ndr_pps; compare marks it FAILED) but its table row shows the flat-out
    trial's offered and forwarded rates and the trials it ran, and the
    highest passing rate, unverified."""
    # Flat out, the rate that came through (31k, passes), one resolution
    # above it (fails): the verification would be the fourth trial.
    status, res = searched(tmp_path, monkeypatch, FakeRuns(step=31000), "a", resolution=500,
                           relative=False, max_trials=3)
    assert status == exitcodes.RUNNER_NO_RATE
    p = res["points"][0]
    assert p["searches"][0]["status"] == search.MAX_TRIALS and p["ok"] == 0
    s = p["summary"]
    assert "ndr_pps" not in s and "ndr_bps" not in s and "p50_ns" not in s
    assert (s["offered_pps"]["median"], s["trials"]["median"]) == (100000.0, 3)
    assert s["forwarded_pps"]["median"] == 31000.0
    assert s["unverified_pps"]["median"] == 31000.0
    row = ndr_render.render(res).splitlines()[2].split()
    assert row[:8] == ["60", "64", "0/1", "-", "-", "100.000k", "31.000k", "3"], row
    assert "3 trials without a verified rate; highest passing trial 31.000k pps, not verified" in \
        ndr_render.render(res)
    searched(tmp_path, monkeypatch, FakeRuns(step=31000), "b", resolution=500, relative=False)
    cmp = compare.compare(resultsdir.load(str(tmp_path / "b")),
                          resultsdir.load(str(tmp_path / "a")))
    assert "NDR%" not in cmp.columns
    assert all(r.failed["b"] for r in cmp.rows)
    assert "FAILED" in compare.render(cmp)


def test_the_unverified_rate_stays_below_a_failed_verification():
    def t(target, kind, passed, missed=False):
        return {"target_pps": target, "kind": kind, "passed": passed, "missed": missed}
    result = {"loads": [t(None, "max", False), t(500, "search", True), t(750, "search", True),
                         t(750, "verify", False), t(600, "search", True),
                         t(700, "search", True, missed=True), t(650, "search", False)]}
    assert ndr_trial.best_unverified(result) == 600.0
    assert ndr_trial.best_unverified({"loads": [t(None, "max", False)]}) is None


def test_latency_trials_over_a_sink_are_skipped_before_running(tmp_path, monkeypatch):
    """A sink returns no frame: no latency trial runs (each would be a whole
    run measuring nothing); one line says why, and so does the JSON."""
    runs, lines = FakeRuns(step=31000), []
    status, res = searched(tmp_path, monkeypatch, runs, resolution=500, relative=False,
                           log=lines.append)
    assert status == 0
    why = "the sink returns no frames; use --topology pvp or pvvp"
    assert lines[0] == "latency: skipped, " + why
    assert res["search"]["latency_skipped"] == why
    # Only the search's own trials ran: flat out .. verification.
    assert len(runs.rates) == sum(len(p["searches"][0]["trials"]) for p in res["points"])
    assert all(p["searches"][0]["latency"] == [] for p in res["points"])
    assert "latency: skipped, " + why in ndr_render.render(res)


@pytest.mark.parametrize("kw,skipped", [
    (dict(topology="host", app="sink"), True), (dict(topology="guests", app="gen"), True),
    (dict(topology="pvp", app="fwd"), False), (dict(topology="pvvp", app="fwd"), False)])
def test_which_searches_can_measure_latency(kw, skipped):
    assert (ndr_trial.latency_skip(base_opts(**kw)) is not None) == skipped


class StallingRuns(FakeRuns):
    """FakeRuns whose trials numbered in stalls (1-based) lose one frame
    below the step too: the host stalled the device for a moment."""

    def __init__(self, step, stalls):
        super().__init__(step)
        self.stalls = set(stalls)

    def __call__(self, opts, resolver):
        rep = super().__call__(opts, resolver).to_dict()
        if len(self.rates) in self.stalls:
            d = rep["counts"]["directions"]["host->guest"]
            d["received"] = min(d["received"], d["sent"] - 1)
        return result.RunResult.from_dict(rep)


def test_a_search_of_loads_records_every_trial_and_each_load(tmp_path, monkeypatch):
    """K=3, R=0.5: the trials of each load listed with its number, each load
    with its classification, in results.json, trials.csv and the tables;
    compare reads it like any search."""
    # The first trial at 31k (what came through flat out: a passing load,
    # the second trial) stalls: the load takes its third trial and still
    # passes.
    runs = StallingRuns(step=31000, stalls=[2])
    status, res = searched(tmp_path, monkeypatch, runs, "k3", resolution=500, relative=False,
                           trials_per_load=3, exceed_ratio=0.5, latency_at=())
    assert status == 0
    s = res["points"][0]["searches"][0]
    assert s["status"] == search.OK and 30500 <= s["rate_pps"] <= 31000
    assert (s["trials_per_load"], s["exceed_ratio"]) == (3, 0.5)
    stalled = s["trials"][1]
    assert stalled["passed"] is False
    load = s["loads"][stalled["load"] - 1]
    assert load["passed"] is True and (load["trials"], load["failing"]) == (3, 1)
    assert sum(x["trials"] for x in s["loads"]) == len(s["trials"])
    with open(str(tmp_path / "k3" / "trials.csv")) as f:
        rows = f.read().strip().splitlines()
    head = rows[0].split(",")
    row = dict(zip(head, rows[2].split(",")))
    assert (row["passed"], row["load"], row["load_passed"]) == ("False", str(stalled["load"]),
                                                               "True")
    table = ndr_render.render_trials(res).splitlines()
    assert table[0].split()[-1] == "load"
    assert table[2].split()[-3:] == ["fail", "1", "fail"]
    assert table[3].split()[-3:] == ["fail", "2", "pass"] and stalled["load"] == 2
    res["search"].update(trials_per_load=3, exceed_ratio=0.5)
    assert "each rate a load of up to 3 trials, failed when more than 1.5 of them lost " \
        "frames" in ndr_render.render(res)
    searched(tmp_path, monkeypatch, FakeRuns(step=62000), "b", resolution=500, relative=False,
             latency_at=())
    cmp = compare.compare(resultsdir.load(str(tmp_path / "k3")),
                          resultsdir.load(str(tmp_path / "b")))
    assert 95 < cmp.rows[0].columns["NDR%"].pct < 105   # +100%: 62k over 31k


@pytest.mark.parametrize("args,line", [
    (["--trials-per-load", "0"], "--trials-per-load 0: at least 1"),
    (["--exceed-ratio", "1"], "--exceed-ratio 1: a share of a load's trials, 0 <= R < 1"),
    (["--exceed-ratio", "-0.5"], "--exceed-ratio -0.5: a share"),
    (["--exceed-ratio", "nan"], "--exceed-ratio: 'nan' is not a number (finite)"),
    (["--trials-per-load", "two"], "--trials-per-load: invalid int value")])
def test_bad_load_options_are_refused_before_booting(tmp_path, args, line):
    r = run_vnperf(["ndr", "--backend", "dgram", "--size", "60", "--out", str(tmp_path / "o")]
                   + args)
    assert r.returncode == exitcodes.RUNNER_USAGE, r.stderr
    assert line in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not os.path.exists(str(tmp_path / "o"))


def pvp_flat_out(trial_runs, pps=1482000.0, sent=1489440, got=61407):
    """The flat-out trial of the PVP walk-through: the tester held 1.482M
    pps, 61,407 of its 1,489,440 frames came back (95.9% lost)."""
    def runs(opts, resolver):
        trial_runs.append(opts.rate)
        if opts.rate == ndr_trial.FLAT_OUT:
            return result.RunResult.from_dict(sink_report(sent, got, pps))
        n = int(float(opts.rate))
        return result.RunResult.from_dict(sink_report(n, n if n <= 60000 else n // 2,
                                                      float(opts.rate)))
    return runs


def test_flat_out_shows_the_offered_and_the_forwarded_rate(tmp_path, monkeypatch):
    """RFC 2544 s26.3: the forwarding rate is what arrives. The point's row
    names the flat-out trial's offered rate (what the tester sent) and its
    forwarded rate (what came through) apart, and so does the JSON."""
    trial_runs = []
    status, res = searched(tmp_path, monkeypatch, pvp_flat_out(trial_runs), latency_at=(),
                           resolution=0.05, base=base_opts(topology="pvp", app="fwd"))
    assert status == 0 and trial_runs[0] == ndr_trial.FLAT_OUT
    s = res["points"][0]["searches"][0]
    fwd = 1482000.0 * 61407 / 1489440
    assert s["offered_pps"] == 1482000.0 and s["forwarded_pps"] == pytest.approx(fwd)
    summ = res["points"][0]["summary"]
    assert summ["offered_pps"]["median"] == 1482000.0
    assert summ["forwarded_pps"]["median"] == pytest.approx(fwd)
    lines = ndr_render.render(res).splitlines()
    head = lines[0].split()
    assert head[3:8] == ["NDR", "pps", "Gbit/s", "offered", "forwarded"], head
    row = lines[2].split()
    assert row[5:7] == ["1.482M", "61.100k"], row
    assert "forwarded: what arrived of it" in ndr_render.render(res)
    with open(os.path.join(str(tmp_path / "a"), "results.csv")) as f:
        head, row = f.read().strip().splitlines()[:2]
    cols = dict(zip(head.split(","), row.split(",")))
    assert float(cols["offered_pps_median"]) == 1482000.0
    assert float(cols["forwarded_pps_median"]) == pytest.approx(fwd)
    with open(os.path.join(str(tmp_path / "a"), "results.json")) as f:
        saved = json.load(f)["points"][0]["searches"][0]
    assert "max_pps" not in saved and saved["offered_pps"] == 1482000.0
