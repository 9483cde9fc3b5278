"""`vnperf sweep` without QEMU: axis parsing, the cartesian product, how an
axis reaches a run, plots from a recorded sweep, and bad options (refused
before anything boots)."""

import argparse
import os
import sys

import pytest

from vnpy import run_opts, run_vnperf
from vnperflib import exitcodes, result
from vnperflib.run import identity
from vnperflib.report import plots, resultsdir
from vnperflib.analysis import stats
from vnperflib.campaign import sweep
from vnperflib.errors import RunnerError

R = result.RunResult.from_dict  # a report's JSON object, typed as the runner returns it


def test_axes_in_fixed_order_and_product():
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.kick_batch, ns.size, ns.event_idx = "1,32", "64,512,1514", "on,off"
    axes = sweep.axes_from(ns)
    assert list(axes) == ["size", "kick_batch", "event_idx"]
    pts = sweep.points(axes)
    assert len(pts) == 12
    assert {n: l for n, (l, _) in pts[0].items()} == {"size": "64", "kick_batch": "1",
                                                      "event_idx": "on"}
    assert {n: l for n, (l, _) in pts[1].items()}["event_idx"] == "off"
    assert {n: l for n, (l, _) in pts[-1].items()} == {"size": "1514", "kick_batch": "32",
                                                       "event_idx": "off"}


def test_pin_settings_are_separated_by_semicolons():
    vals = sweep.parse_axis("pin", "vcpu=0,main=0; vcpu=0,main=1")
    assert [l for l, _ in vals] == ["vcpu=0,main=0", "vcpu=0,main=1"]
    assert vals[1][1] == {"vcpu": {0}, "main": {1}}


@pytest.mark.parametrize("name,text,needle", [
    ("size", "64,,128", "empty value"),
    ("size", "64,abc", "bad value 'abc'"),
    ("size", "0", "bad value '0': must be > 0"),
    ("kick_batch", "-1", "must be >= 0"),
    ("event_idx", "on,maybe", "one of on, off"),
    ("txfull", "wait,spin", "one of wait, drop"),
    ("backend", "dgram,nosuch", "bad value 'nosuch'"),
    ("pin", "vcpu=99", "outside"),
    ("size", "64,64", "given twice"),
])
def test_bad_axis_values(name, text, needle):
    with pytest.raises(RunnerError) as e:
        sweep.parse_axis(name, text)
    assert e.value.status == exitcodes.RUNNER_USAGE and needle in e.value.line


def base(**kw):
    return run_opts(**dict(dict(config=["app=gen"], backend="dgram"), **kw))


def test_point_options():
    pt = {"size": ("512", 512), "kick_batch": ("32", 32), "event_idx": ("off", "off"),
          "backend": ("hub", "hub"), "pin": ("vcpu=0", {"vcpu": {0}})}
    o = sweep.point_opts(base(), pt)
    assert o.size == 512 and o.backend == "hub" and o.pin == {"vcpu": {0}}
    assert o.config == ("app=gen", "kick_batch=32", "features=-event_idx")
    # event_idx=on leaves the guest's features alone.
    o = sweep.point_opts(base(), {"event_idx": ("on", "on")})
    assert o.config == ("app=gen",)


def build_ns(**kw):
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.__dict__.update(kw)
    return ns


def test_two_images_and_two_qemus_are_axes_interleaved(tmp_path):
    """--image A,B and --qemu X,Y: A/B axes of the builds, each point's
    options name its image and QEMU, run round by round (A B, B A, ...)."""
    a, b = tmp_path / "a.elf", tmp_path / "b.elf"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    ns = build_ns(size="64", image="%s,%s" % (a, b), qemu="qemu-system-x86_64,/bin/true")
    axes = sweep.axes_from(ns)
    assert list(axes) == ["size", "image", "qemu"]
    assert [l for l, _ in axes["image"]] == [str(a), str(b)]
    pts = sweep.points(axes)
    opts = [sweep.point_opts(base(), pt) for pt in pts]
    assert [(o.image, o.qemu) for o in opts] == [
        (str(a), "qemu-system-x86_64"), (str(a), "/bin/true"),
        (str(b), "qemu-system-x86_64"), (str(b), "/bin/true")]
    two = sweep.points(sweep.axes_from(build_ns(image="%s,%s" % (a, b))))
    order = sweep.schedule(len(two), 3, "interleave", None)
    assert [two[i]["image"][0] for i, _ in order] == [str(a), str(b), str(b), str(a),
                                                      str(a), str(b)]


def test_one_image_or_qemu_is_no_axis(tmp_path):
    a = tmp_path / "a.elf"
    a.write_bytes(b"a")
    assert sweep.axes_from(build_ns(size="64", image=str(a), qemu="qemu-system-x86_64")) \
        == {"size": [("64", 64)]}


def test_event_idx_off_joins_existing_features():
    assert sweep.with_feature_off(["features=-mrg_rxbuf", "size=64"], "event_idx") == \
        ["features=-mrg_rxbuf,-event_idx", "size=64"]
    assert sweep.with_feature_off(["features=-event_idx"], "event_idx") == \
        ["features=-event_idx"]


def fake_results(axes, metric_points):
    pts = []
    for params, pps in metric_points:
        s = {"median": pps, "min": pps * 0.9, "max": pps * 1.1, "n": 3}
        bps = {k: v * 512 if k != "n" else v for k, v in s.items()}
        pts.append({"params": params, "statuses": [0, 0, 0], "ok": 3,
                    "summary": {"pps": s, "bps": bps}})
    return {"axes": axes, "points": pts, "fixed": {}}


def test_table_of_medians_and_spread():
    res = fake_results({"size": ["64", "512"], "backend": ["dgram", "hub"]}, [
        ({"size": "64", "backend": "dgram"}, 100e3), ({"size": "64", "backend": "hub"}, 200e3),
        ({"size": "512", "backend": "dgram"}, 90e3), ({"size": "512", "backend": "hub"}, 1.5e6)])
    lines = sweep.render(res).splitlines()
    assert lines[0].split() == ["size", "backend", "ok", "pps", "Gbit/s", "pps", "min-max",
                                "spread"]
    assert lines[2].split() == ["64", "dgram", "3/3", "100.000k", "0.051",
                                "90.000k-110.000k", "20.0%"]
    assert lines[5].split()[:4] == ["512", "hub", "3/3", "1.500M"]


def test_tx_drops_column_only_when_a_point_dropped():
    res = fake_results({"txfull": ["wait", "drop"]}, [({"txfull": "wait"}, 1e5),
                                                      ({"txfull": "drop"}, 2e5)])
    zero = {"median": 0.0, "min": 0.0, "max": 0.0, "n": 3}
    for p in res["points"]:
        p["summary"]["tx_dropped"] = dict(zero)
    assert "TX drops" not in sweep.render(res)
    res["points"][1]["summary"]["tx_dropped"] = dict(zero, median=5e6, max=6e6)
    lines = sweep.render(res).splitlines()
    assert lines[0].split()[:6] == ["txfull", "ok", "pps", "Gbit/s", "TX", "drops"]
    assert lines[2].split()[4] == "0" and lines[3].split()[4] == "5.000M"


def test_plots_from_a_recorded_sweep(tmp_path):
    res = fake_results({"size": ["64", "512", "1514"], "kick_batch": ["1", "32"]}, [
        ({"size": s, "kick_batch": k}, float(i + 1) * 1e4)
        for i, (s, k) in enumerate([(s, k) for s in ("64", "512", "1514") for k in ("1", "32")])])
    made = plots.plot_sweep(res, str(tmp_path))
    if not plots.available():
        assert made == [] and os.listdir(tmp_path) == []
        return
    assert made == ["pps_vs_size.png", "gbps_vs_size.png"]
    for name in made:
        with open(tmp_path / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_no_plots_and_a_note(tmp_path, monkeypatch):
    # None in sys.modules makes `import matplotlib` raise ImportError.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert not plots.available()
    res = fake_results({"size": ["64", "512"]}, [({"size": "64"}, 1e5), ({"size": "512"}, 2e5)])
    assert plots.plot_sweep(res, str(tmp_path)) == [] and os.listdir(tmp_path) == []
    res["plots"] = []
    assert resultsdir.describe_files(res).endswith(
        "no plots: python3-matplotlib is not importable")


def test_plot_against_a_non_numeric_axis(tmp_path):
    res = fake_results({"backend": ["dgram", "hub"]}, [({"backend": "dgram"}, 1e5),
                                                       ({"backend": "hub"}, 2e5)])
    assert plots.x_axis(res["axes"]) == "backend"
    made = plots.plot_sweep(res, str(tmp_path))
    assert made == (["pps_vs_backend.png", "gbps_vs_backend.png"] if plots.available() else [])


@pytest.mark.parametrize("args,needle", [
    ([], "sweep: no axis given"),
    (["--size", "64,x"], "--size: bad value 'x'"),
    (["--size", "64", "--repeat", "0"], "--repeat: '0': a whole number > 0"),
    (["--backend", "warp"], "--backend: bad value 'warp'"),
    (["--size", "64", "--", "kick_batch"], "config word 'kick_batch' is not key=value"),
    (["--kick-batch", "1,2", "--", "kick_batch=4"], "kick_batch is both an axis and a config"),
    (["--backend", "hub", "--size", "64", "--image", "/nonexistent.elf"],
     "image /nonexistent.elf not found"),
    (["--size", "64", "--image", "%(elf)s,/nonexistent.elf"],
     "image /nonexistent.elf not found"),
    (["--size", "64", "--qemu", "qemu-system-x86_64,%(elf)s"],
     "--qemu: bad value '%(elf)s': not an executable QEMU binary"),
    (["--size", "64", "--qemu", "/nonexistent/qemu"],
     "--qemu: bad value '/nonexistent/qemu': not an executable"),
    (["--size", "64", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_sweep_options_one_line_before_any_boot(args, needle, tmp_path):
    elf = tmp_path / "a.elf"
    elf.write_bytes(b"\x7fELF")
    args = [a % {"elf": elf} for a in args]
    needle = needle % {"elf": elf}
    r = run_vnperf(["sweep", "--accel", "tcg", "--out", str(tmp_path / "o")] + args)
    assert r.returncode == exitcodes.RUNNER_USAGE, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not os.path.exists(tmp_path / "o")


def test_missing_backend_stops_the_sweep_before_any_boot(tmp_path):
    if os.path.exists("/dev/vhost-net"):
        pytest.skip("this host has /dev/vhost-net")
    r = run_vnperf(["sweep", "--accel", "tcg", "--backend", "hub,vhost-net",
                    "--out", str(tmp_path / "o")])
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "/dev/vhost-net missing" in lines[0]
    assert not os.path.exists(tmp_path / "o")


class FakeAxes:
    """Records what draw() asks matplotlib for."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *a, **kw: self.calls.append((name, a, kw))


def drawn(axes, metric="pps", scale=1.0):
    res = fake_results(axes, [({n: v for n, v in zip(axes, combo)}, 1e5 * (i + 1))
                              for i, combo in enumerate(sweep.itertools.product(
                                  *axes.values()))])
    xaxis = plots.x_axis(res["axes"])
    ax = FakeAxes()
    plots.draw(ax, plots.series(res, metric, xaxis), res["axes"][xaxis],
               all(plots._isnum(v) for v in res["axes"][xaxis]), scale)
    return {name: [(a, kw) for n, a, kw in ax.calls if n == name]
            for name in ("bar", "errorbar", "set_xticks", "set_xticklabels")}


def test_category_axes_are_bars_not_lines():
    d = drawn({"backend": ["dgram", "hub", "tap"]})
    assert d["errorbar"] == [] and len(d["bar"]) == 1
    assert d["set_xticks"][0][0][0] == [0, 1, 2]
    assert d["set_xticklabels"][0][0][0] == ["dgram", "hub", "tap"]


def test_numeric_axes_tick_at_their_values():
    d = drawn({"sessions": ["1", "2", "4", "8"], "backend": ["tap"]})
    assert d["bar"] == [] and len(d["errorbar"]) == 1
    assert d["set_xticks"][0][0][0] == [1.0, 2.0, 4.0, 8.0]


def plotted_axes(res, tmp_path, monkeypatch):
    """{file name: matplotlib Axes} of plot_sweep's figures (Agg), read
    from the objects it saves, not from pixels."""
    if not plots.available():
        pytest.skip("no python3-matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    saved = {}
    monkeypatch.setattr(Figure, "savefig",
                        lambda fig, path, **kw: saved.setdefault(os.path.basename(path),
                                                                 fig.axes[0]))
    assert sorted(plots.plot_sweep(res, str(tmp_path))) == sorted(saved)
    return saved


@pytest.mark.parametrize("axis,values,scale", [
    ("pmd_burst", ["32", "64", "128", "256"], "log"),
    ("sessions", ["1", "2", "4", "8"], "log"),
    ("size", ["64", "512", "1514"], "linear"),
    ("backend", ["dgram", "hub"], "linear"),
])
def test_every_plot_has_a_title_says_what_its_error_bars_are_and_log2_for_powers_of_two(
        tmp_path, monkeypatch, axis, values, scale):
    """Issue 26: plots without titles, without saying what the error bars
    are, pmd_burst on a linear axis."""
    res = fake_results({axis: values}, [({axis: v}, 1e5 * (i + 1)) for i, v in enumerate(values)])
    res["fixed"] = {"app": "gen", "backend": "vhost-user"} if axis != "backend" else {"app": "gen"}
    saved = plotted_axes(res, tmp_path, monkeypatch)
    assert sorted(saved) == ["gbps_vs_%s.png" % axis, "pps_vs_%s.png" % axis]
    ax = saved["pps_vs_%s.png" % axis]
    assert ax.get_title().splitlines()[0] == "packets/s by " + axis
    assert "app=gen" in ax.get_title()
    assert ax.get_ylabel() == "packets/s\nmedian; error bars: min..max of 3 runs"
    assert saved["gbps_vs_%s.png" % axis].get_title().startswith(
        "Gbit/s (frames w/o FCS) by " + axis)
    assert ax.get_xscale() == scale
    assert ax.get_xlabel() == axis + (" (log2 scale)" if scale == "log" else "")
    assert [t.get_text() for t in ax.get_xticklabels()] == values


def test_error_bars_over_unequal_repeats_say_the_range():
    pts = {"": [("1", result.Summary(n=3), False), ("2", result.Summary(n=5), True)]}
    assert plots.runs_text(pts) == "3-5 runs"
    assert plots.runs_text({"": [("1", result.Summary(n=1), False)]}) == "1 run"


def test_p99_is_plotted_in_microseconds_and_named_so():
    stems = {m: (label, scale, stem) for m, label, scale, stem in plots.PLOTTED}
    assert stems["p99_ns"] == ("p99 latency, us", 1e-3, "p99_us")


def test_interleaved_order_reverses_every_other_round():
    order = sweep.schedule(2, 4, "interleave", None)
    assert [i for i, _ in order] == [0, 1, 1, 0, 0, 1, 1, 0]
    assert [r for _, r in order] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert sweep.schedule(2, 2, "sequential", None) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    rnd = sweep.schedule(3, 5, "random", sweep.random.Random(1))
    assert sorted(rnd) == sorted(sweep.schedule(3, 5, "sequential", None))
    assert [r for _, r in rnd] == sorted(r for _, r in rnd)


def test_aa_adds_two_identical_arms_last():
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.size, ns.aa = "64,1514", True
    axes = sweep.axes_from(ns)
    assert list(axes) == ["size", "aa"] and [l for l, _ in axes["aa"]] == ["a", "b"]
    o = sweep.point_opts(base(), {"size": ("64", 64), "aa": ("b", "b")})
    assert o.config == ("app=gen",) and o.size == 64


def aa_results(shift=1.0, noise=0.02, seed=2):
    """A --aa sweep over two sizes: arm b = arm a * shift, both noisy."""
    rng = sweep.random.Random(seed)
    pts = []
    for size in ("64", "1514"):
        for arm in ("a", "b"):
            vals = [1e6 * (shift if arm == "b" else 1.0) * rng.gauss(1, noise) for _ in range(5)]
            ident = {"size": size, "aa": arm, "backend": "hub"}
            pts.append({"params": {"size": size, "aa": arm}, "identity": ident,
                        "statuses": [0] * 5, "why": ["ok"] * 5, "ok": 5,
                        "summary": {"pps": stats.summary(vals)}})
    return {"axes": {"size": ["64", "1514"], "aa": ["a", "b"]}, "points": pts}


def test_aa_report_and_calibration():
    text, cmp, cal = sweep.aa_report(aa_results())
    assert not any(c.significant for r in cmp.rows for c in r.columns.values())
    assert "A/A: 0 of 3 tested cells significant" in text
    assert cal["cells"] == 2 and cal["rounds"] == sweep.AA_ROUNDS
    # Random re-splits of identical runs: near what the test promises.
    assert cal["cell_rate"] <= 0.12 and cal["table_rate"] <= 0.12
    # The same report on a real 10% difference calls it.
    _, cmp, _ = sweep.aa_report(aa_results(shift=1.1))
    assert all(r.columns["pps%"].significant for r in cmp.rows)


def test_aa_over_backends_whose_identities_differ_in_their_fields():
    """An A/A over tap and vhost-user: only vhost-user's identity names
    testpmd, so tap's row reads "-" there (a KeyError and a traceback
    before the calibration took compare's own row keys)."""
    res = aa_results()
    for p in res["points"]:
        vu = p["params"]["size"] == "1514"
        p["identity"]["backend"] = "vhost-user" if vu else "tap"
        if vu:
            p["identity"]["testpmd"] = "22.11"
    text, cmp, cal = sweep.aa_report(res)
    assert cal["cells"] == 2 and "A/A: 0 of 3 tested cells significant" in text


# The interleaved A/A of docs/runner-compare.md ("Statistics": iperf over tap,
# sessions 1 and 8, 5 runs an arm), as measured: Gbit/s, pps, SD, CPU.
AA_TAP = {
    ("1", "a"): ([644.84, 615.20, 582.57, 660.36, 742.17], [76287, 72755, 68128, 76076, 87612],
                 [23.019, 24.986, 26.665, 21.543, 20.487], [162.44, 168.44, 170.88, 155.33, 166.81]),
    ("1", "b"): ([663.58, 572.80, 622.91, 732.46, 737.07], [79271, 66944, 73901, 86858, 87663],
                 [22.729, 27.116, 24.889, 21.155, 20.900], [165.71, 170.11, 170.11, 168.93, 169.02]),
    ("8", "a"): ([736.87, 746.72, 835.89, 750.81, 830.46], [81480, 83462, 94297, 85443, 91864],
                 [19.885, 20.848, 17.877, 20.789, 16.625], [160.64, 170.13, 162.11, 171.19, 150.95]),
    ("8", "b"): ([784.04, 706.12, 793.22, 855.64, 804.68], [87352, 80455, 88000, 93948, 91483],
                 [18.806, 22.667, 18.120, 17.607, 16.875], [161.65, 174.94, 157.55, 164.75, 149.12]),
}


def aa_tap_results():
    pts = []
    for (sessions, arm), cols in sorted(AA_TAP.items()):
        ident = {"sessions": sessions, "aa": arm, "backend": "tap", "app": "iperf"}
        summ = {m: stats.summary([v * (1e6 if m == "bps" else 1) for v in vals])
                for m, vals in zip(("bps", "pps", "sd_us_per_kb", "cpu_pct"), cols)}
        pts.append({"params": {"sessions": sessions, "aa": arm}, "identity": ident,
                    "statuses": [0] * 5, "why": ["ok"] * 5, "ok": 5, "summary": summ})
    return {"axes": {"sessions": ["1", "8"], "aa": ["a", "b"]}, "points": pts}


def test_aa_calibration_of_a_measured_table_keeps_its_promise():
    """The calibration once re-split every cell on its own, as if BW and
    pps of one run were independent: on these runs 8.3% of re-split tables
    showed a significant cell (95% CI 7.6..9.1, 5000 rounds), above the 5%
    that Holm promises. Runs re-split whole keep the promise."""
    text, cmp, cal = sweep.aa_report(aa_tap_results())
    # 8 cells and the average row's 4.
    assert cmp.tests == 12 and cal["cells"] == 8 and cal["rounds"] == 5000
    assert cal["table_ci"][0] <= stats.ALPHA, cal
    assert cal["cell_ci"][0] <= stats.ALPHA <= cal["cell_ci"][1] + 0.01, cal
    assert "whole tables in %.1f%% (95%% CI %.1f..%.1f" % (
        100 * cal["table_rate"], 100 * cal["table_ci"][0], 100 * cal["table_ci"][1]) in text


def test_aa_says_what_it_could_have_seen():
    """docs/runner-compare.md's interleaved A/A (5 runs an arm): 0 significant
    cells, but none of its BW cells could have seen a change below 20%."""
    text, cmp, _ = sweep.aa_report(aa_tap_results(), rounds=10)
    assert "A/A: 0 of 12 tested cells significant (expected: none; at most 5% of A/A tables " \
        "show one); the smallest changes they could have seen (mde%): 8.6..33.9%." in text
    assert "warning: 11 of 12 change cells could not have seen a change below 10% (mde% up " \
        "to 33.9: SD% at sessions=1): more --repeat or a quieter host" in text
    assert [round(r.columns["BW%"].mde_pct, 1) for r in cmp.rows] == [31.3, 20.3]


def test_aa_resplit_keeps_the_metrics_of_a_run_together():
    """Two metrics of the same runs (the second twice the first) are dealt
    into the same arms: every round gives them one p-value."""
    rng = sweep.random.Random(4)
    va, vb = [1.0, 2.0, 3.0, 5.0, 8.0], [1.5, 2.5, 4.0, 6.0, 9.0]
    rows = [[("pps%", va, vb), ("BW%", [2 * x for x in va], [2 * x for x in vb])]]
    for _ in range(50):
        p1, p2 = sweep.resplit(rows, rng, "welch")
        assert abs(p1 - p2) < 1e-9


def test_msg_size_and_sessions_reach_the_guest_config():
    """netperf's -m and sessions as sweep axes of app=iperf; compare reads
    msg_size= back as a parameter of the point."""
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.sessions, ns.msg_size = "1,8", "512,16384"
    pts = sweep.points(sweep.axes_from(ns))
    assert len(pts) == 4
    o = sweep.point_opts(base(config=["app=iperf"], backend="tap"), pts[-1])
    assert o.config == ("app=iperf", "sessions=8", "msg_size=16384")
    assert resultsdir.params_from_config(o.config, "tap")["msg_size"] == "16384"
    with pytest.raises(RunnerError):
        sweep.parse_axis("msg_size", "0")


def test_window_reaches_the_guest_config():
    """iperf -w / netperf -S as a sweep axis: the guest server's window=;
    leaving it out and giving the default name the same run."""
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.window = "65536,4194304"
    pts = sweep.points(sweep.axes_from(ns))
    assert len(pts) == 2
    o = sweep.point_opts(base(config=["app=iperf", "role=server"], backend="tap"), pts[0])
    assert o.config == ("app=iperf", "role=server", "window=65536")
    assert resultsdir.params_from_config(o.config, "tap")["window"] == "65536"
    assert (identity.guest_params(["app=iperf", "window=262144"]) ==
            identity.guest_params(["app=iperf"]))
    with pytest.raises(RunnerError):
        sweep.parse_axis("window", "0")


def test_the_kvm_fallback_is_probed_and_said_once_per_sweep(tmp_path):
    """--accel auto over an unusable KVM: the sweep probes once and says
    why it uses TCG once, not before every run (issue 26). The stand-in
    QEMU dies as a PVM host's KVM does and runs selftest under TCG."""
    console = tmp_path / "console"
    console.write_text("\n".join([
        '@vnperf {"type":"boot","boot_path":"pvh","tsc_hz":2600000000,"tsc_method":"pit",'
        '"acpi":true,"ram_bytes":133823488,"arena_free_bytes":1000}',
        '@vnperf {"type":"config","source":"fw_cfg","line":"app=selftest"}',
        '@vnperf {"type":"ready","app":"selftest","t_ns":27682293}',
        '@vnperf {"type":"result","app":"selftest","ok":true,"packets":0,"bytes":0,"pps":0,'
        '"bps":0,"duration_ns":1000}',
        '@vnperf {"type":"exit","code":0,"reason":"ok"}']) + "\n")
    probes = tmp_path / "probes"
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\ncase \"$*\" in *'-accel kvm'*) echo probe >> '%s'; "
                    "echo 'KVM internal error. Suberror: 1' >&2; exit 1;; esac\n"
                    "cat '%s'\nexit 1\n" % (probes, console))
    qemu.chmod(0o755)
    elf = tmp_path / "a.elf"
    elf.write_bytes(b"\x7fELF")
    r = run_vnperf(["sweep", "--accel", "auto", "--backend", "none", "--app", "selftest",
                    "--repeat", "3", "--qemu", str(qemu), "--image", str(elf),
                    "--out", str(tmp_path / "o")], timeout=120)
    assert r.returncode == 0, r.stderr
    said = [l for l in r.stderr.splitlines() if "accel tcg:" in l]
    assert len(said) == 1, r.stderr
    # No probe at all without a usable /dev/kvm.
    assert not probes.exists() or len(probes.read_text().splitlines()) == 1


def run_report(backend, pps, counted):
    """A passing run's report: over hub and user nothing on the host end
    counts (no direction in the merged counts), over dgram the peer does."""
    dirs = {"guest->host": {"sent": 10, "received": 10, "verdict": "agree"}} if counted else {}
    return {"status": 0, "why": "ok", "backend": backend,
            "metrics": {"pps": pps, "bps": pps * 1514 * 8, "loss_pct": 0.0} if counted
            else {"pps": pps, "bps": pps * 1514 * 8},
            "counts": {"guest": {"tx_packets": 10}, "host": {}, "directions": dirs,
                       "agree": True if counted else None}}


def guest_only_sweep(tmp_path):
    """A sweep of dgram (counted on the host) and hub, user (guest only):
    the 1500-MTU walk-through, where hub's 12.6 Gbit/s led the table."""
    w = resultsdir.Writer(str(tmp_path), axes={"backend": ["dgram", "hub", "user"]}, repeat=2,
                          fixed={"size": "1514"})
    for backend, pps in (("dgram", 150e3), ("hub", 1.04e6), ("user", 620e3)):
        p = w.add_point({"backend": backend}, {"backend": backend, "size": "1514"})
        for r in (1, 2):
            w.add_run(p, r, R(run_report(backend, pps * (1 + 0.01 * r), backend == "dgram")))
    w.save()
    return w


def test_guest_only_points_are_marked_in_the_table_and_the_csvs(tmp_path):
    """hub and user have no host-side count: their pps and Gbit/s are the
    guest's own and carry a mark and a footnote naming them; results.json,
    results.csv and runs.csv say host_counted per point and run. A results
    directory without host_counted (written before) loads and shows none."""
    w = guest_only_sweep(tmp_path)
    assert [p["host_counted"] for p in w.results["points"]] == [True, False, False]
    lines = sweep.render(w.results).splitlines()
    assert lines[0].split()[:4] == ["backend", "ok", "pps", "Gbit/s"]
    dgram, hub, user = (lines[i].split() for i in (2, 3, 4))
    assert dgram[2:5] == ["152.250k", "1.844", "0.00"], dgram
    assert hub[2:5] == ["1.056M*", "12.785*", "-"], hub
    assert user[2:5] == ["629.300k*", "7.622*", "-"], user
    assert lines[5].startswith("* guest only (hub, user): nothing on the host end counted")
    assert "loss -" in lines[5] and len(lines) == 6
    with open(tmp_path / "results.csv") as f:
        rows = list(sweep.resultsdir.csv.DictReader(f))
    assert [r["host_counted"] for r in rows] == ["True", "False", "False"]
    with open(tmp_path / "runs.csv") as f:
        runs = list(sweep.resultsdir.csv.DictReader(f))
    assert [r["host_counted"] for r in runs] == ["True", "True", "False", "False", "False",
                                                 "False"]
    assert len(resultsdir.load(str(tmp_path))) == 3
    for p in w.results["points"]:
        del p["host_counted"]
    assert "*" not in sweep.render(w.results)
    with open(tmp_path / "results.json", "w") as f:
        sweep.resultsdir.json.dump(w.results, f)
    assert [p["summary"]["pps"]["n"] for p in resultsdir.load(str(tmp_path))] == [2, 2, 2]


def test_a_point_is_host_counted_only_when_every_passing_run_was(tmp_path):
    w = resultsdir.Writer(str(tmp_path), axes={"backend": ["user"]}, repeat=3, fixed={})
    p = w.add_point({"backend": "user"}, {"backend": "user"})
    w.add_run(p, 1, R(run_report("user", 1e5, True)))
    assert p["host_counted"] is True
    w.add_run(p, 2, result.RunResult.failed(65, "died"))
    assert p["host_counted"] is True
    w.add_run(p, 3, R(run_report("user", 1e5, False)))
    assert p["host_counted"] is False
    assert sweep.run_outcome(R(run_report("user", 1e5, False))) == "100.000k pps (guest only)"
    assert sweep.run_outcome(R(run_report("dgram", 1e5, True))) == "100.000k pps"


def test_guest_only_points_are_drawn_apart(tmp_path):
    """Bars over a category axis: the guest-only ones hatched and hollow;
    lines over a numeric axis: hollow markers on the guest-only points;
    only the rates (pps, Gbit/s), not the host's CPU."""
    w = guest_only_sweep(tmp_path)
    res = w.results
    ax = FakeAxes()
    assert plots.draw(ax, plots.series(res, "pps", "backend"), res["axes"]["backend"], False,
                      1.0) is True
    bars = [(a, kw) for n, a, kw in ax.calls if n == "bar"]
    assert len(bars) == 2
    (xs, ys), kw = bars[0]
    assert kw["hatch"] is None and len(xs) == 1 and kw["label"] is None
    (xs, ys), kw = bars[1]
    assert kw["hatch"] == plots.HATCH and kw["color"] == plots.HOLLOW and len(xs) == 2
    for p in res["points"]:
        p["summary"]["cpu_pct"] = stats.summary([150.0])
    assert plots.draw(FakeAxes(), plots.series(res, "cpu_pct", "backend"),
                      res["axes"]["backend"], False, 1.0) is False
    # A numeric axis: the sizes of hub, one of them guest only.
    num = {"axes": {"size": ["64", "1514"]}, "points": [
        {"params": {"size": "64"}, "summary": res["points"][0]["summary"], "host_counted": True},
        {"params": {"size": "1514"}, "summary": res["points"][1]["summary"],
         "host_counted": False}]}
    ax = FakeAxes()
    assert plots.draw(ax, plots.series(num, "bps", "size"), ["64", "1514"], True, 1e-9) is True
    (a, kw), = [(a, kw) for n, a, kw in ax.calls if n == "plot"]
    assert a[0] == [1514.0] and kw["markerfacecolor"] == plots.HOLLOW
    made = plots.plot_sweep(res, str(tmp_path))
    if plots.available():
        assert "pps_vs_backend.png" in made
        assert plots.guest_only_handle(False).get_label() == plots.GUEST_ONLY_LABEL
        assert plots.guest_only_handle(True).get_markerfacecolor() == plots.HOLLOW


def summ(v):
    return {"median": v, "min": v * 0.9, "max": v * 1.1, "n": 3}


def app_results(app, summary, axes=("sessions",)):
    pts = [{"params": {a: "1" for a in axes}, "identity": {"app": app}, "statuses": [0, 0, 0],
            "ok": 3, "summary": summary}]
    return {"axes": {a: ["1"] for a in axes}, "points": pts}


def test_table_leads_with_each_apps_own_measure():
    """Issue 26: every sweep table led with pps and Gbit/s, for iperf its
    frames both ways and for rr Gbit/s 0.001 and 16870 us/KB. Now iperf
    leads with its goodput (the receiver's count), rr with transactions/s
    and latency, the frame apps with pps and Gbit/s of frames without FCS."""
    common = {"pps": summ(880e3), "bps": summ(17.3e9), "cpu_pct": summ(150.0),
              "sd_us_per_kb": summ(0.5)}
    lines = sweep.render(app_results("iperf", dict(common, goodput_bps=summ(17.2e9)))
                         ).splitlines()
    assert lines[0].split() == ["sessions", "ok", "goodput", "Gbit/s", "CPU%", "SD", "us/KB",
                                "goodput", "Gbit/s", "min-max", "spread"]
    assert lines[2].split() == ["1", "3/3", "17.200", "150", "0.50", "15.480-18.920", "20.0%"]
    rr = {"pps": summ(20e3), "bps": summ(160e3), "tps": summ(10e3), "p50_ns": summ(80e3),
          "p99_ns": summ(120e3), "sd_us_per_kb": summ(16870.0), "sd_us_per_tx": summ(100.0)}
    lines = sweep.render(app_results("rr", rr)).splitlines()
    assert lines[0].split() == ["sessions", "ok", "tps", "p50", "us", "p99", "us", "SD", "us/tx",
                                "tps", "min-max", "spread"]
    assert lines[2].split()[2:5] == ["10.000k", "80.0", "120.0"]
    lines = sweep.render(app_results("gen", {"pps": summ(1e6), "bps": summ(512e6)})).splitlines()
    assert lines[0].split()[2:6] == ["pps", "Gbit/s", "w/o", "FCS"]
    assert sweep.lead_figure({"goodput_bps": 17.2e9, "pps": 9e5}, "iperf") == (
        "17.200 goodput Gbit/s")
    assert sweep.lead_figure({"tps": 1e4, "pps": 2e4}, "rr") == "10.000k tps"
    assert sweep.lead_figure({"pps": 1e6}, "gen") == "1.000M pps"


def test_batch_column_shows_the_range_testpmd_leaves():
    """Issue 26: with --pmd-burst 32 and 256 testpmd's whole-percent burst
    shares did not pin the frames per burst and the batch column was
    empty; it now shows the bounds (the report's and the JSON's)."""
    res = app_results("gen", {"pps": summ(1e6), "backend_batch_lo": summ(16.5),
                              "backend_batch_hi": summ(32.0)}, axes=("pmd_burst",))
    lines = sweep.render(res).splitlines()
    assert lines[0].split()[3] == "batch" and lines[2].split()[3] == "16.5..32"
    res["points"][0]["summary"]["backend_batch"] = summ(31.5)
    assert sweep.render(res).splitlines()[2].split()[3] == "31.5"


def test_plots_leave_out_what_misleads_for_the_app(tmp_path):
    """Issue 26: an rr sweep plotted Gbit/s and us/KB of its one-byte
    messages, an iperf sweep the pps of its frames both ways; now each
    plots its own measure (rr transactions/s, iperf goodput) and not those."""
    if not plots.available():
        pytest.skip("no matplotlib")
    res = fake_results({"sessions": ["1", "2"]}, [({"sessions": "1"}, 1e4),
                                                  ({"sessions": "2"}, 2e4)])
    for p in res["points"]:
        p["identity"] = {"app": "rr"}
        p["summary"].update(tps=p["summary"]["pps"], sd_us_per_kb=p["summary"]["pps"])
    assert plots.plot_sweep(res, str(tmp_path)) == ["tps_vs_sessions.png"]
    for p in res["points"]:
        p["identity"] = {"app": "iperf"}
        del p["summary"]["tps"]
        p["summary"]["goodput_bps"] = p["summary"]["bps"]
    assert plots.plot_sweep(res, str(tmp_path)) == ["goodput_gbps_vs_sessions.png",
                                                   "sd_us_per_kb_vs_sessions.png"]
