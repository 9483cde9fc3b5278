"""`vnperf compare` on recorded results (fixture files written here, no
QEMU): the mailing-list table, significance, average row, JSON/CSV, run
reports, selecting A and B inside one sweep, and mismatched inputs."""

import csv
import io
import json

import pytest

from vnpy import run_vnperf
from vnperflib import compare, exitcodes, resultsdir, stats


def summ(*values):
    return stats.summary(values)


def point(params, pps, size, cpu, p99=None):
    """A sweep point; pps, cpu (and p99): the repeats' values."""
    bps = [p * size * 8 for p in pps]
    kb = [p * size / 1024.0 for p in pps]
    s = {"pps": summ(*pps), "bps": summ(*bps), "cpu_pct": summ(*cpu),
         "sd_us_per_kb": summ(*[c / 100.0 * 1e6 / k for c, k in zip(cpu, kb)])}
    if p99:
        s["p99_ns"] = summ(*p99)
    return {"params": params, "runs": [], "statuses": [0] * len(pps), "why": ["ok"] * len(pps),
            "ok": len(pps), "summary": s}


def write_sweep(path, points, axes, fixed):
    path.mkdir()
    data = {"vnperf_sweep": 1, "axes": axes, "repeat": 3, "fixed": fixed,
            "points": points, "plots": []}
    (path / "results.json").write_text(json.dumps(data))
    return str(path)


@pytest.fixture
def ab(tmp_path):
    """Baseline and patched sweeps over size, three runs per point.
    64: B clearly faster; 512: B inside A's spread; 1514: B clearly slower."""
    axes = {"size": ["64", "512", "1514"]}
    a = write_sweep(tmp_path / "a", [
        point({"size": "64"}, [100e3, 102e3, 98e3], 64, [50, 51, 49]),
        point({"size": "512"}, [90e3, 95e3, 85e3], 512, [60, 62, 58]),
        point({"size": "1514"}, [80e3, 81e3, 79e3], 1514, [70, 70, 70]),
    ], axes, {"backend": "dgram", "event_idx": "on"})
    b = write_sweep(tmp_path / "b", [
        point({"size": "64"}, [120e3, 121e3, 119e3], 64, [50, 50, 50]),
        point({"size": "512"}, [93e3, 96e3, 88e3], 512, [61, 61, 61]),
        point({"size": "1514"}, [60e3, 61e3, 59e3], 1514, [70, 71, 69]),
    ], axes, {"backend": "dgram", "event_idx": "off"})
    return a, b


def rows_of(stdout):
    """{first cell: cells} of the table lines."""
    return {l.split()[0]: l.split() for l in stdout.splitlines() if l.split()}


def test_table_has_percentages_significance_and_average(ab):
    r = run_vnperf(["compare"] + list(ab))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "event_idx: on -> off" in out
    header = [l for l in out.splitlines() if l.startswith("size")][0].split()
    assert header == ["size", "Gbit/s", "A", "Gbit/s", "B", "BW%", "pps%", "SD%", "CPU%"]
    rows = rows_of(out)
    # 64: +20% pps, ranges 98-102k vs 119-121k do not overlap.
    assert rows["64"][3:5] == ["+20.0", "+20.0"]
    # 512: +3.3%, inside the spread.
    assert rows["512"][3:5] == ["~+3.3", "~+3.3"]
    assert rows["1514"][3] == "-25.0"
    # average of +20, +3.33, -25
    assert rows["average"][1:3] == ["-0.6", "-0.6"]
    assert "~ = not significant" in out and "ranges" in out


def test_json_and_csv_carry_the_same_numbers(ab):
    j = run_vnperf(["compare", "--json"] + list(ab))
    assert j.returncode == 0, j.stderr
    cmp = json.loads(j.stdout)
    assert cmp["key"] == ["size"] and cmp["differences"] == {"event_idx": ["on", "off"]}
    by = {r["params"]["size"]: r["columns"] for r in cmp["rows"]}
    assert [r["params"]["size"] for r in cmp["rows"]] == ["64", "512", "1514"]
    assert by["64"]["pps%"]["pct"] == pytest.approx(20.0)
    assert by["64"]["pps%"]["significant"] is True and by["64"]["pps%"]["rule"] == "range"
    assert by["512"]["pps%"]["significant"] is False
    assert by["64"]["pps%"]["a"] == 100e3 and by["64"]["pps%"]["b"] == 120e3
    assert cmp["average"]["pps%"] == pytest.approx((20.0 + 100 * 3 / 90 - 25.0) / 3)
    c = run_vnperf(["compare", "--csv"] + list(ab))
    assert c.returncode == 0, c.stderr
    rows = list(csv.DictReader(io.StringIO(c.stdout)))
    assert [r["size"] for r in rows] == ["64", "512", "1514"]
    assert float(rows[2]["pps_pct"]) == pytest.approx(-25.0)
    assert rows[1]["pps_significant"] == "False"


def test_p99_column_only_when_both_sides_have_latency(tmp_path):
    axes = {"sessions": ["1", "4"]}
    a = write_sweep(tmp_path / "a", [
        point({"sessions": "1"}, [10e3], 64, [40], p99=[100e3]),
        point({"sessions": "4"}, [30e3], 64, [80], p99=[200e3])], axes, {})
    b = write_sweep(tmp_path / "b", [
        point({"sessions": "1"}, [11e3], 64, [40], p99=[90e3]),
        point({"sessions": "4"}, [33e3], 64, [80], p99=[150e3])], axes, {})
    r = run_vnperf(["compare", a, b])
    assert r.returncode == 0, r.stderr
    rows = rows_of(r.stdout)
    assert rows["sessions"][-1] == "p99%"
    assert rows["1"][-1] == "-10.0" and rows["4"][-1] == "-25.0"
    # one run per side: the threshold rule, 5% by default, --threshold to change
    assert rows["1"][-2] == "~+0.0"
    assert "one run per side and |change| <= 5%" in r.stdout
    r = run_vnperf(["compare", "--threshold", "12", a, b])
    assert rows_of(r.stdout)["1"][-1] == "~-10.0"


def run_report(path, pps, size, backend="dgram", extra=()):
    rep = {"vnperf_report": 1, "status": 0, "why": "ok", "backend": backend,
           "config": ["app=gen", "duration=2", "size=%d" % size] + list(extra),
           "metrics": {"pps": pps, "bps": pps * size * 8.0, "cpu_pct": 50.0,
                       "sd_us_per_kb": 0.5e6 / (pps * size / 1024.0)}}
    path.write_text(json.dumps(rep))
    return str(path)


def test_two_run_reports(tmp_path):
    a = run_report(tmp_path / "a.json", 100e3, 64)
    b = run_report(tmp_path / "b.json", 110e3, 64, extra=["features=-event_idx"])
    r = run_vnperf(["compare", a, b])
    assert r.returncode == 0, r.stderr
    assert "event_idx: on -> off" in r.stdout
    rows = rows_of(r.stdout)
    assert rows["all"][3:6] == ["+10.0", "+10.0", "-9.1"]
    assert "average" not in rows


def test_sweep_against_run_report_matches_on_size(ab, tmp_path):
    b = run_report(tmp_path / "b.json", 51e3, 1514)
    r = run_vnperf(["compare", "--json", ab[0], b])
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    assert [row["params"] for row in cmp["rows"]] == [{"size": "1514"}]
    assert cmp["rows"][0]["columns"]["pps%"]["pct"] == pytest.approx(-36.25)


def test_a_and_b_from_one_sweep(tmp_path):
    axes = {"size": ["64", "512"], "kick_batch": ["1", "32"]}
    d = write_sweep(tmp_path / "s", [
        point({"size": "64", "kick_batch": "1"}, [50e3], 64, [30]),
        point({"size": "64", "kick_batch": "32"}, [80e3], 64, [30]),
        point({"size": "512", "kick_batch": "1"}, [60e3], 512, [30]),
        point({"size": "512", "kick_batch": "32"}, [90e3], 512, [30])], axes, {})
    r = run_vnperf(["compare", "--json", d, d, "--a-where", "kick_batch=1",
                    "--b-where", "kick_batch=32"])
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    assert cmp["key"] == ["size"] and cmp["differences"] == {"kick_batch": ["1", "32"]}
    assert [round(row["columns"]["pps%"]["pct"], 1) for row in cmp["rows"]] == [60.0, 50.0]
    # Without selecting, B's kick_batch values collapse onto one size row.
    r = run_vnperf(["compare", d, run_report(tmp_path / "r.json", 1e3, 64)])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "vnperf: A has several points for size=64 (they differ in kick_batch): keep one with "
        "--a-where kick_batch=VALUE, or name the row parameters with --by"]


def test_no_common_point_is_one_line_and_usage_status(ab, tmp_path):
    b = run_report(tmp_path / "b.json", 1e3, 128)
    r = run_vnperf(["compare", ab[0], b])
    assert r.returncode == exitcodes.RUNNER_USAGE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "share no point" in lines[0] and "size=128" in lines[0]


@pytest.mark.parametrize("make_b,needle", [
    (lambda p: str(p / "missing.json"), "cannot read"),
    (lambda p: (p / "x.json").write_text("{not json") and str(p / "x.json"), "is not JSON"),
    (lambda p: (p / "y.json").write_text('{"a": 1}') and str(p / "y.json"),
     "neither a vnperf sweep nor"),
    (lambda p: (p / "f.json").write_text(json.dumps(
        {"vnperf_report": 1, "status": 65, "why": "runner timeout"})) and str(p / "f.json"),
     "that run failed (status 65"),
])
def test_bad_inputs_one_line(ab, tmp_path, make_b, needle):
    r = run_vnperf(["compare", ab[0], make_b(tmp_path)])
    assert r.returncode == exitcodes.RUNNER_USAGE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--a-where", "size"], "expected KEY=VALUE"),
    (["--a-where", "ring=64"], "A has no parameter 'ring'"),
    (["--b-where", "size=9"], "no point of B matches"),
    (["--by", "ring"], "--by ring: not a parameter of both"),
    (["--threshold", "-1"], "must be >= 0"),
    (["--json", "--csv"], "not allowed with"),
])
def test_bad_options_one_line(ab, args, needle):
    r = run_vnperf(["compare"] + list(ab) + args)
    assert r.returncode == exitcodes.RUNNER_USAGE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_sweep_without_successful_point_is_refused(tmp_path):
    p = point({"size": "64"}, [1.0], 64, [1])
    p.update(summary={}, ok=0, statuses=[65])
    d = write_sweep(tmp_path / "s", [p], {"size": ["64"]}, {})
    r = run_vnperf(["compare", d, d])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert "no point of this sweep has a successful run" in r.stderr


def test_significance_rules():
    a, b = summ(10, 12), summ(11, 13)
    assert stats.significant(a, b) == (False, "range")
    assert stats.significant(a, summ(12.5, 14)) == (True, "range")
    # One side repeated: B's single value inside A's range.
    assert stats.significant(summ(10, 12), summ(11))[0] is False
    assert stats.significant(summ(100), summ(104)) == (False, "threshold")
    assert stats.significant(summ(100), summ(106)) == (True, "threshold")
    assert stats.significant(summ(100), summ(104), threshold_pct=3) == (True, "threshold")
    assert stats.significant(summ(0), summ(0)) == (False, "threshold")


def test_stats_summary_median_and_spread():
    assert stats.median([3, 1, 2]) == 2 and stats.median([4, 1, 3, 2]) == 2.5
    s = stats.summary([3, None, "x", True, 1, 2])
    assert s == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    assert stats.spread_pct(s) == 100.0
    assert stats.summary([None]) is None
    assert stats.pct_change(0, 5) is None and stats.pct_change(50, 75) == 50.0


def test_params_of_a_run_report():
    p = resultsdir.params_from_config(["app=gen", "size=512", "kick_batch=32",
                                       "features=-mrg_rxbuf,-event_idx"], "hub")
    assert p == {"backend": "hub", "size": "512", "kick_batch": "32", "event_idx": "off"}


def test_render_orders_rows_numerically():
    pa = [{"params": {"size": s}, "summary": {"pps": summ(100.0)}} for s in ("1514", "64", "512")]
    pb = [{"params": {"size": s}, "summary": {"pps": summ(110.0)}} for s in ("512", "64", "1514")]
    cmp = compare.compare(pa, pb)
    assert [r["params"]["size"] for r in cmp["rows"]] == ["64", "512", "1514"]
    text = compare.render(cmp)
    assert text.splitlines()[2].split()[:3] == ["size", "pps", "A"]


def lossy_report(path, sent, received, dropped):
    """A `vnperf run --json` report of a guest->host run with loss."""
    rep = {"vnperf_report": 1, "status": 0, "why": "ok", "backend": "dgram",
           "config": ["app=gen", "size=64"] + (["txfull=drop"] if dropped else []),
           "metrics": {"pps": received / 2.0, "bps": received * 64 * 4.0},
           "counts": {"directions": {
               "guest->host": {"sent": sent, "received": received,
                               "loss_pct": 100.0 * (sent - received) / sent},
               "guest->host frames": {"loss_pct": 50.0}}},
           "guests": [{"result": {"tx_dropped": dropped}}]}
    path.write_text(json.dumps(rep))
    return str(path)


def test_loss_column_shows_both_sides(tmp_path):
    a = lossy_report(tmp_path / "a.json", 1000, 1000, 0)
    b = lossy_report(tmp_path / "b.json", 1000, 900, 77)
    assert resultsdir.run_metrics(json.loads((tmp_path / "b.json").read_text())) == {
        "pps": 450.0, "bps": 900 * 64 * 4.0, "loss_pct": 10.0, "tx_dropped": 77}
    wire_only = {"counts": {"directions": {"host->guest frames": {"loss_pct": 2.5},
                                           "guest->host frames": {"loss_pct": 0.5}}}}
    assert resultsdir.run_metrics(wire_only) == {"loss_pct": 2.5}
    assert resultsdir.run_metrics({"counts": None, "guests": [{"result": None}]}) == {}
    r = run_vnperf(["compare", a, b])
    assert r.returncode == 0, r.stderr
    rows = rows_of(r.stdout)
    assert "  txfull: default -> drop" in r.stdout.splitlines()
    assert rows["point"] == ["point", "Gbit/s", "A", "Gbit/s", "B", "BW%", "pps%", "loss%",
                             "A->B"]
    assert rows["all"][-1] == "0.00->10.00"
    j = json.loads(run_vnperf(["compare", "--json", a, b]).stdout)
    cell = j["rows"][0]["columns"]["loss% A->B"]
    assert (cell["a"], cell["b"], cell["significant"]) == (0.0, 10.0, True)


def test_rr_rows_are_scaled_by_transactions():
    pa = [{"params": {"sessions": "1"}, "summary": {"tps": summ(1000.0), "bps": summ(8e3)}}]
    pb = [{"params": {"sessions": "1"}, "summary": {"tps": summ(1500.0), "bps": summ(12e3)}}]
    lines = compare.render(compare.compare(pa, pb)).splitlines()
    assert lines[2].split() == ["point", "tps", "A", "tps", "B", "BW%", "TPS%"]
    assert lines[4].split() == ["all", "1.000k", "1.500k", "+50.0", "+50.0"]
