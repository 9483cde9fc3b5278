"""`vnperf compare` on recorded results (fixture files written here, no
QEMU): the mailing-list table, the test and Holm's correction, matching on
the runs' identities and refusing unlike ones, --ab and --a-where, failed
points, a directory against itself, loss/drops/kick columns, JSON/CSV."""

import csv
import io
import json

import pytest

from vnpy import run_vnperf
from vnperflib.campaign import compare
from vnperflib import exitcodes, result
from vnperflib.report import resultsdir
from vnperflib.analysis import stats

BASE = {"app": "gen", "backend": "dgram", "topology": "host", "machine": "microvm",
        "accel": "tcg", "duration": "2", "qemu": "7.2.11", "host_cpus": "2", "event_idx": "on"}


def summ(*values):
    return stats.summary(values)


def point(params, pps, size, cpu, extra=None, statuses=None):
    """A sweep point; pps, cpu: the repeats' values; extra: {metric: values}."""
    bps = [p * size * 8 for p in pps]
    kb = [p * size / 1024.0 for p in pps]
    s = {"pps": summ(*pps), "bps": summ(*bps), "cpu_pct": summ(*cpu),
         "sd_us_per_kb": summ(*[c / 100.0 * 1e6 / k for c, k in zip(cpu, kb)])}
    for m, vals in (extra or {}).items():
        s[m] = summ(*vals)
    statuses = statuses or [0] * len(pps)
    return {"params": params, "runs": [], "statuses": statuses,
            "why": ["ok" if st == 0 else "runner timeout" for st in statuses],
            "ok": statuses.count(0), "summary": s}


def write_sweep(path, points, axes, fixed):
    path.mkdir()
    for p in points:
        p["identity"] = dict(BASE, **fixed, **p["params"])
    data = {"vnperf_sweep": 2, "axes": axes, "repeat": 5, "fixed": fixed,
            "points": points, "plots": []}
    (path / "results.json").write_text(json.dumps(data))
    return str(path)


def around(v, spread=0.01, n=5):
    """n repeats spread evenly +-spread around v."""
    return [v * (1 + spread * (2 * i / (n - 1) - 1)) for i in range(n)]


@pytest.fixture
def ab(tmp_path):
    """Baseline and patched sweeps over size, five runs per point.
    64: B 20% faster, 1% noise; 512: B 3% faster inside 6% noise;
    1514: B 25% slower. B switched EVENT_IDX off."""
    axes = {"size": ["64", "512", "1514"]}
    a = write_sweep(tmp_path / "a", [
        point({"size": "64"}, around(100e3), 64, around(50)),
        point({"size": "512"}, around(90e3, 0.06), 512, around(60)),
        point({"size": "1514"}, around(80e3), 1514, around(70, 0))], axes, {})
    b = write_sweep(tmp_path / "b", [
        point({"size": "64"}, around(120e3), 64, around(50, 0)),
        point({"size": "512"}, around(93e3, 0.06), 512, around(61)),
        point({"size": "1514"}, around(60e3), 1514, around(70))], axes, {"event_idx": "off"})
    return a, b


def rows_of(stdout):
    """{first cell: cells} of the table lines."""
    return {l.split()[0]: l.split() for l in stdout.splitlines() if l.split()}


def test_unlike_runs_are_refused_in_one_line(ab):
    r = run_vnperf(["compare"] + list(ab))
    assert r.returncode == exitcodes.RUNNER_USAGE and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "vnperf: A and B differ in event_idx (on vs off): not the same experiment; name the "
        "A/B dimension with --ab event_idx (or compare alike runs)"]


def test_every_difference_is_listed(tmp_path):
    axes = {"size": ["64"]}
    a = write_sweep(tmp_path / "a", [point({"size": "64"}, around(1e5), 64, around(50))],
                    axes, {"role": "client"})
    b = write_sweep(tmp_path / "b", [point({"size": "64"}, around(1e5), 64, around(50))],
                    axes, {"role": "server", "qemu": "8.0.0"})
    r = run_vnperf(["compare", a, b, "--ab", "qemu"])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert "role (client vs server)" in r.stderr and "qemu" not in r.stderr.split(":")[1]
    r = run_vnperf(["compare", a, b, "--ab", "qemu,role"])
    assert r.returncode == 0, r.stderr
    assert "  qemu: 7.2.11 -> 8.0.0" in r.stdout and "  role: client -> server" in r.stdout


def test_table_has_changes_test_and_average(ab):
    r = run_vnperf(["compare", "--ab", "event_idx"] + list(ab))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "  event_idx: on -> off" in out
    header = [l for l in out.splitlines() if l.startswith("size")][0].split()
    assert header == ["size", "Gbit/s", "A", "Gbit/s", "B", "BW%", "95%", "CI", "p", "mde%",
                      "BW%", "pps%", "SD%", "CPU%"]
    rows = rows_of(out)
    assert rows["64"][6:8] == ["+20.0", "+20.0"] and rows["1514"][6] == "-25.0"
    # 512: +3.3% inside 6% noise: not significant.
    assert rows["512"][6:8] == ["~+3.3", "~+3.3"]
    lo, hi = (float(x) for x in rows["64"][3].split(".."))
    assert lo < 20.0 < hi and hi - lo < 5
    assert float(rows["64"][4]) < 0.001
    # The average of +20, +3.3 and -25 is no change: its own interval
    # spans 0 and it is marked so.
    lo, hi = (float(x) for x in rows["average"][1].split(".."))
    assert lo < -0.6 < hi and lo < 0 < hi
    assert rows["average"][4:6] == ["~-0.6", "~-0.6"]
    assert "Welch's t-test, Holm-adjusted over the table's" in out


def test_json_and_csv_carry_the_same_numbers(ab):
    args = ["compare", "--ab", "event_idx"] + list(ab)
    j = run_vnperf(args + ["--json"])
    assert j.returncode == 0, j.stderr
    cmp = json.loads(j.stdout)
    assert cmp["key"] == ["size"] and cmp["differences"] == {"event_idx": ["on", "off"]}
    by = {r["params"]["size"]: r["columns"] for r in cmp["rows"]}
    assert [r["params"]["size"] for r in cmp["rows"]] == ["64", "512", "1514"]
    c64 = by["64"]["pps%"]
    assert c64["pct"] == pytest.approx(20.0) and c64["significant"] is True
    assert c64["p"] <= c64["p_adj"] < 0.05 and c64["ci_pct"][0] < 20 < c64["ci_pct"][1]
    assert by["512"]["pps%"]["significant"] is False
    # Every cell's test and the average row's (one per change column).
    assert cmp["tests"] == sum(len(c) for c in by.values()) + 4 and cmp["test"] == "welch"
    c = run_vnperf(args + ["--csv"])
    rows = list(csv.DictReader(io.StringIO(c.stdout)))
    assert [r["size"] for r in rows] == ["64", "512", "1514"]
    assert float(rows[2]["pps_pct"]) == pytest.approx(-25.0)
    assert rows[1]["pps_significant"] == "False" and float(rows[0]["pps_p_adj"]) < 0.05


def test_a_directory_against_itself(ab):
    r = run_vnperf(["compare", ab[0], ab[0]])
    assert r.returncode == 0, r.stderr
    rows = rows_of(r.stdout)
    assert [rows[s][6] for s in ("64", "512", "1514")] == ["~+0.0"] * 3
    assert "A and B record the same parameters" in r.stdout


def test_holm_over_the_table():
    """Three rows whose single p-values are each under alpha but whose
    family is not: nothing is significant."""
    pa = [{"params": {"size": s}, "summary": {"pps": summ(100, 101, 99)}} for s in "123"]
    pb = [{"params": {"size": s}, "summary": {"pps": summ(102.8, 103.8, 101.8)}} for s in "123"]
    cmp = compare.compare(pa, pb)
    cells = [r.columns["pps%"] for r in cmp.rows]
    assert all(c.p < 0.05 for c in cells) and not any(c.significant for c in cells)
    assert all(c.p_adj == pytest.approx(min(1, 3 * c.p)) for c in cells)


def test_one_run_a_side_is_not_tested():
    pa = [{"params": {}, "summary": {"pps": summ(100.0)}}]
    pb = [{"params": {}, "summary": {"pps": summ(150.0)}}]
    c = compare.compare(pa, pb).rows[0].columns["pps%"]
    assert c.pct == 50.0 and c.p is None and c.significant is False


def test_a_and_b_from_one_sweep_name_the_ab_dimension(tmp_path):
    axes = {"size": ["64", "512"], "kick_batch": ["1", "32"]}
    d = write_sweep(tmp_path / "s", [
        point({"size": "64", "kick_batch": "1"}, around(50e3), 64, around(30)),
        point({"size": "64", "kick_batch": "32"}, around(80e3), 64, around(30)),
        point({"size": "512", "kick_batch": "1"}, around(60e3), 512, around(30)),
        point({"size": "512", "kick_batch": "32"}, around(90e3), 512, around(30))], axes, {})
    r = run_vnperf(["compare", "--json", d, d, "--a-where", "kick_batch=1",
                    "--b-where", "kick_batch=32"])
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    assert cmp["key"] == ["size"] and cmp["differences"] == {"kick_batch": ["1", "32"]}
    assert [round(row["columns"]["pps%"]["pct"], 1) for row in cmp["rows"]] == [60.0, 50.0]
    assert all(row["columns"]["pps%"]["significant"] for row in cmp["rows"])


def test_two_builds_from_one_sweep_are_paired_by_file_name(tmp_path):
    """A sweep over --image base.elf,patched.elf: --ab image (one sweep as
    both sides) or --a-where image=... pairs the arms, whose hashes differ
    too; the header names the arms by file."""
    axes = {"size": ["64", "512"], "image": ["base.elf", "patched.elf"]}
    pts = []
    for size, pps in (("64", 50e3), ("512", 60e3)):
        for image, sha, gain in (("base.elf", "aaaa", 1.0), ("patched.elf", "bbbb", 1.5)):
            pts.append(point({"size": size, "image": image}, around(pps * gain), int(size),
                             around(30)))
            pts[-1]["sha"] = sha
    d = write_sweep(tmp_path / "s", pts, axes, {})
    data = json.loads((tmp_path / "s" / "results.json").read_text())
    for p in data["points"]:
        p["identity"]["image_sha"] = p.pop("sha")
    (tmp_path / "s" / "results.json").write_text(json.dumps(data))
    for args in (["--ab", "image"], ["--a-where", "image=base.elf", "--b-where",
                                      "image=patched.elf"]):
        r = run_vnperf(["compare", d, d] + args)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[:4] == ["baseline A: %s (image=base.elf)" % d,
                             "patched  B: %s (image=patched.elf)" % d,
                             "  image: base.elf -> patched.elf", "  image_sha: aaaa -> bbbb"]
        cmp = json.loads(run_vnperf(["compare", "--json", d, d] + args).stdout)
        assert cmp["key"] == ["size"]
        assert [round(row["columns"]["pps%"]["pct"], 1) for row in cmp["rows"]] == [50.0, 50.0]
    # Naming only the hash leaves the file names unnamed: refused.
    r = run_vnperf(["compare", d, d, "--a-where", "image_sha=aaaa", "--b-where",
                    "image_sha=bbbb"])
    assert r.returncode == exitcodes.RUNNER_USAGE and "image (base.elf vs patched.elf)" \
        in r.stderr, r.stderr


def test_qemu_brings_its_version():
    a = [{"params": dict(BASE, qemu="/a/qemu", qemu_version="8.0"), "summary": {},
          "statuses": [], "why": []}]
    b = [{"params": dict(BASE, qemu="/b/qemu", qemu_version="8.1"), "summary": {},
          "statuses": [], "why": []}]
    with pytest.raises(Exception) as e:
        compare.check_alike(compare.differences(a, b, []), {"qemu_version"})
    assert "qemu (/a/qemu vs /b/qemu)" in e.value.line
    compare.check_alike(compare.differences(a, b, []), {"qemu"})


def run_report(path, status=0, **extra):
    rep = {"vnperf_report": 1, "status": status, "why": "ok" if status == 0 else "timeout",
           "backend": "dgram", "identity": dict(BASE, size="64", **extra),
           "metrics": {"pps": 1e5, "bps": 1e5 * 64 * 8.0, "loss_pct": 0.0}}
    path.write_text(json.dumps(rep))
    return str(path)


def test_failed_points_are_reported_failed(ab, tmp_path):
    a = run_report(tmp_path / "a.json")
    b = run_report(tmp_path / "b.json", status=65)
    r = run_vnperf(["compare", a, b])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert "FAILED" in r.stdout and "FAILED B all: 1 run(s): status 65: timeout" in r.stdout
    assert r.stderr.strip().splitlines() == [
        "vnperf: compare: 1 compared point(s) have failed runs (marked FAILED)"]
    # One failed repeat of five in a sweep point is reported too.
    axes = {"size": ["64"]}
    c = write_sweep(tmp_path / "c", [point({"size": "64"}, around(1e5, n=4), 64,
                                           around(50, n=4), statuses=[0, 0, 65, 0, 0])],
                    axes, {})
    r = run_vnperf(["compare", c, c])
    assert r.returncode == exitcodes.RUNNER_USAGE and "FAILED A all: 1 run(s)" in r.stdout


def test_loss_drops_and_kick_columns_show_both_sides(tmp_path):
    axes = {"txfull": ["wait", "drop"]}
    extra_a = {"loss_pct": [0.0] * 5, "tx_dropped": [0] * 5, "kicks_per_packet": [0.01] * 5}
    extra_b = {"loss_pct": around(60.0), "tx_dropped": around(3e6),
               "kicks_per_packet": [0.01] * 5}
    d = write_sweep(tmp_path / "s", [
        point({"txfull": "wait"}, around(1e5), 64, around(50), extra_a),
        point({"txfull": "drop"}, around(1e5), 64, around(50), extra_b)], axes, {})
    r = run_vnperf(["compare", d, d, "--a-where", "txfull=wait", "--b-where", "txfull=drop"])
    assert r.returncode == 0, r.stderr
    header = [l for l in r.stdout.splitlines() if l.startswith("point")][0]
    assert "loss% A->B" in header and "drops A->B" in header and "kicks/pkt A->B" in header
    row = rows_of(r.stdout)["all"]
    assert "0.00->60.00" in row and "0->3.000M" in row and "0.01->0.01" in row, r.stdout


def test_rr_rows_are_scaled_by_transactions_and_sd_per_transaction():
    s = {"tps": summ(1000.0, 1010, 990), "bps": summ(8e3, 8.1e3, 7.9e3),
         "sd_us_per_tx": summ(50.0, 51, 49), "sd_us_per_kb": summ(1.0, 1.1, 0.9)}
    t = {"tps": summ(1500.0, 1510, 1490), "bps": summ(12e3, 12.1e3, 11.9e3),
         "sd_us_per_tx": summ(40.0, 41, 39), "sd_us_per_kb": summ(0.6, 0.7, 0.5)}
    cmp = compare.compare([{"params": {}, "summary": s}], [{"params": {}, "summary": t}])
    lines = compare.render(cmp).splitlines()
    header = [l for l in lines if l.startswith("point")][0].split()
    assert header[:5] == ["point", "tps", "A", "tps", "B"] and "TPS%" in header
    assert cmp.columns.count("SD%") == 1
    assert cmp.rows[0].columns["SD%"].metric == "sd_us_per_tx"
    assert "SD = host CPU us per transaction" in "\n".join(lines)


def test_rows_only_on_one_side_are_named(tmp_path):
    a = write_sweep(tmp_path / "a", [point({"size": s}, around(1e5), 64, around(50))
                                     for s in ("64", "512")], {"size": ["64", "512"]}, {})
    b = write_sweep(tmp_path / "b", [point({"size": s}, around(1e5), 64, around(50))
                                     for s in ("64", "1514")], {"size": ["64", "1514"]}, {})
    r = run_vnperf(["compare", a, b])
    assert r.returncode == 0, r.stderr
    assert "rows only in A (not compared): size=512" in r.stdout
    assert "rows only in B (not compared): size=1514" in r.stdout


def test_no_common_point_is_one_line(ab, tmp_path):
    b = run_report(tmp_path / "b.json", event_idx="off")
    rep = json.loads((tmp_path / "b.json").read_text())
    rep["identity"]["size"] = "128"
    (tmp_path / "b.json").write_text(json.dumps(rep))
    r = run_vnperf(["compare", "--ab", "event_idx", ab[0], b])
    assert r.returncode == exitcodes.RUNNER_USAGE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "share no point" in lines[0] and "size=128" in lines[0]


@pytest.mark.parametrize("make_b,needle", [
    (lambda p: str(p / "missing.json"), "cannot read"),
    (lambda p: (p / "x.json").write_text("{not json") and str(p / "x.json"), "is not JSON"),
    (lambda p: (p / "y.json").write_text('{"a": 1}') and str(p / "y.json"),
     "neither a vnperf sweep nor"),
])
def test_bad_inputs_one_line(ab, tmp_path, make_b, needle):
    r = run_vnperf(["compare", ab[0], make_b(tmp_path)])
    assert r.returncode == exitcodes.RUNNER_USAGE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--a-where", "size"], "expected KEY=VALUE"),
    (["--a-where", "nope=64"], "A has no parameter 'nope'"),
    (["--b-where", "size=9"], "no point of B matches"),
    (["--by", "nope"], "--by nope: not a parameter of both"),
    (["--alpha", "2"], "between 0 and 1"),
    (["--test", "z"], "invalid choice"),
    (["--json", "--csv"], "not allowed with"),
])
def test_bad_options_one_line(ab, args, needle):
    r = run_vnperf(["compare", "--ab", "event_idx"] + list(ab) + args)
    assert r.returncode == exitcodes.RUNNER_USAGE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_format_1_results_still_load(tmp_path):
    """Sweeps written before runs carried their identity: params are the
    axes and the fixed words."""
    d = tmp_path / "old"
    d.mkdir()
    (d / "results.json").write_text(json.dumps({
        "vnperf_sweep": 1, "axes": {"size": ["64"]}, "fixed": {"backend": "dgram"},
        "points": [{"params": {"size": "64"}, "statuses": [0],
                    "summary": {"pps": {"median": 1.0, "min": 1.0, "max": 1.0, "n": 1,
                                        "mean": 1.0}}}]}))
    pts = resultsdir.load(str(d))
    assert pts[0]["params"] == {"backend": "dgram", "size": "64"}


def test_lead_columns_say_they_are_means():
    """A sweep of 21.92, 22.55, 22.05 Gbit/s shows the median 22.052 in its
    table; compare showed the mean 22.175 under the same name, unlabelled."""
    a = [{"params": {"size": "64"}, "statuses": [0] * 3, "why": ["ok"] * 3,
          "summary": {"bps": stats.summary([21.92e9, 22.55e9, 22.05e9])}}]
    b = [{"params": {"size": "64"}, "statuses": [0] * 3, "why": ["ok"] * 3,
          "summary": {"bps": stats.summary([22.65e9, 23.37e9, 22.39e9])}}]
    text = compare.render(compare.compare(a, b))
    row = [l for l in text.splitlines() if l.startswith("all")][0]
    assert "22.173" in row and "22.052" not in row, text
    assert "Gbit/s A, Gbit/s B: the means of the repeats (the sweep's table shows medians)" \
        in text, text


def rows_points(spreads, n, shift=1.0):
    """A and B of one row per spread: n runs a side around 1e5 pps (B
    times shift), evenly +-spread."""
    mk = lambda f: [{"params": {"size": str(64 * (i + 1))},  # noqa: E731
                     "summary": {"pps": summ(*around(1e5 * f, sp, n))},
                     "statuses": [0] * n, "why": ["ok"] * n} for i, sp in enumerate(spreads)]
    return mk(1.0), mk(shift)


def test_each_row_says_what_change_it_could_have_seen():
    """Two runs a side with 12% spreads: nothing could have been seen
    below 10%, and the table says so under it; five quiet runs: no
    warning. The mde% is Welch's at alpha over the table's tests."""
    a, b = rows_points([0.12, 0.12], 2)
    cmp = compare.compare(a, b)
    cells = [r.columns["pps%"] for r in cmp.rows] + [cmp.average["pps%"]]
    assert cmp.tests == 3 and cmp.mde_alpha == pytest.approx(stats.ALPHA / 3)
    c = cells[0]
    assert c.mde_pct == pytest.approx(stats.mde(c.se_pct, c.df, stats.ALPHA / 3))
    assert all(x.mde_pct > 10 for x in cells)
    text = compare.render(cmp)
    header = [l for l in text.splitlines() if l.startswith("size")][0].split()
    assert header[header.index("p") + 1] == "mde%"
    assert rows_of(text)["64"][5] == "%.1f" % c.mde_pct
    assert ("warning: 3 of 3 change cells could not have seen a change below 10%% (mde%% up to "
            "%.1f: pps%% at " % max(x.mde_pct for x in cells)) in text
    assert "more --repeat or a quieter host" in text
    quiet = compare.render(compare.compare(*rows_points([0.01, 0.01], 5)))
    assert "warning" not in quiet and float(rows_of(quiet)["64"][5]) < 3


def test_mann_whitney_that_cannot_reach_the_level_says_so():
    """4 runs a side: the rank test's smallest p is 2/70, above alpha over
    the table's 3 tests: no change could be called, whatever its size."""
    a, b = rows_points([0.01, 0.01], 4, shift=1.5)
    text = compare.render(compare.compare(a, b, method="mwu"))
    assert "warning: 2 of 2 Mann-Whitney tests cannot give p below 0.029" in text
    assert "~+50.0" in text
    five = compare.render(compare.compare(*rows_points([0.01, 0.01], 5, 1.5), method="mwu"))
    assert "Mann-Whitney tests cannot" not in five


def test_average_row_carries_its_interval_and_significance():
    """The average is tested like a row (the mean of the rows' %, its
    variance from their runs) and joins the table's Holm family: +2.8% on
    three rows whose own tests do not survive Holm is significant as their
    mean; +20, +3.3 and -25 average to no change, marked ~."""
    pa = [{"params": {"size": s}, "summary": {"pps": summ(100, 101, 99)}} for s in "123"]
    pb = [{"params": {"size": s}, "summary": {"pps": summ(102.8, 103.8, 101.8)}} for s in "123"]
    cmp = compare.compare(pa, pb)
    avg = cmp.average["pps%"]
    assert cmp.tests == 4 and avg.pct == pytest.approx(2.8)
    assert avg.significant and avg.ci_pct[0] > 0
    assert not any(r.columns["pps%"].significant for r in cmp.rows)
    # A single row has no average (it would repeat the row).
    assert compare.compare(pa[:1], pb[:1]).average == {}


def image_sweep(tmp_path, shas):
    """A sweep over --image base.elf,patched.elf (sizes 64, 512) whose
    images hash to shas (base, patched)."""
    axes = {"size": ["64", "512"], "image": ["base.elf", "patched.elf"]}
    pts = []
    for size in ("64", "512"):
        for image, gain in (("base.elf", 1.0), ("patched.elf", 1.2)):
            pts.append(point({"size": size, "image": image}, around(5e4 * gain, 0.1),
                             int(size), around(30)))
    d = write_sweep(tmp_path / "s", pts, axes, {})
    data = json.loads((tmp_path / "s" / "results.json").read_text())
    for p in data["points"]:
        p["identity"]["image_sha"] = shas[p["identity"]["image"] == "patched.elf"]
    (tmp_path / "s" / "results.json").write_text(json.dumps(data))
    return d


def test_one_build_under_two_names_is_said_at_the_top(tmp_path):
    d = image_sweep(tmp_path, ("abcd", "abcd"))
    r = run_vnperf(["compare", d, d, "--ab", "image"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == (
        "A and B are the same build (image_sha abcd on both; image base.elf vs patched.elf): "
        "this table is an A/A")
    assert json.loads(run_vnperf(["compare", "--json", d, d, "--ab", "image"]).stdout)[
        "same"] == [r.stdout.splitlines()[0]]
    (tmp_path / "x").mkdir()
    d2 = image_sweep(tmp_path / "x", ("abcd", "ef01"))
    r = run_vnperf(["compare", d2, d2, "--ab", "image"])
    assert r.returncode == 0 and r.stdout.startswith("baseline A:"), r.stdout


def test_an_ab_dimension_that_does_not_differ_is_said():
    a, b = rows_points([0.01, 0.01], 5)
    for side in (a, b):
        for p in side:
            p["params"]["event_idx"] = "on"
    cmp = compare.compare(a, b, ab={"event_idx"})
    assert cmp.same == ("A and B do not differ in event_idx (on): this table is an A/A",)
    assert compare.render(cmp).splitlines()[0] == cmp.same[0]


def test_where_takes_the_option_spelling_and_suggests_the_name(tmp_path):
    """--a-where event-idx=on (as the sweep's --event-idx is spelled) is
    the parameter event_idx; a name close to one is answered with it."""
    axes = {"size": ["64"], "event_idx": ["on", "off"]}
    d = write_sweep(tmp_path / "s", [
        point({"size": "64", "event_idx": "on"}, around(5e4), 64, around(30)),
        point({"size": "64", "event_idx": "off"}, around(6e4), 64, around(30))], axes, {})
    r = run_vnperf(["compare", "--json", d, d, "--a-where", "event-idx=on",
                    "--b-where", "event-idx=off"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["differences"] == {"event_idx": ["on", "off"]}
    r = run_vnperf(["compare", d, d, "--a-where", "evnt_idx=on", "--b-where", "event_idx=off"])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.strip().splitlines() == [
        "vnperf: --a-where: A has no parameter 'evnt_idx' (did you mean event_idx?)"]
    assert compare.param_name("memory", {"memory_mb"}) == "memory_mb"
    assert compare.param_name("event-idx", {"event_idx"}) == "event_idx"
    assert compare.param_name("nope", {"event_idx"}) is None


def test_compare_returns_the_typed_comparison():
    """compare() makes a result.Comparison of Rows and Cells (issue 30), which
    every reader takes; its JSON read back renders the same table and
    writes the same bytes (a saved comparison, compare --out)."""
    a, b = rows_points([0.01, 0.01], 5, shift=1.2)
    cmp = compare.compare(a, b)
    assert isinstance(cmp, result.Comparison)
    assert all(isinstance(r, result.Row) for r in cmp.rows)
    assert all(isinstance(c, result.Cell) for _, _, c in compare.named_cells(cmp))
    saved = result.Comparison.from_dict(json.loads(compare.to_json(cmp)))
    assert compare.to_json(saved) == compare.to_json(cmp)
    assert compare.render(saved) == compare.render(cmp)
    assert compare.to_csv(saved) == compare.to_csv(cmp)
