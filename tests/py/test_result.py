"""result.py: the typed result (issue 30). A results directory and a run
report written by the runner before the types (fixtures/, made by
`vnperf sweep --backend dgram --app gen --count 2000 --size 64,128 --repeat 2`
and `vnperf run --backend dgram --app gen --count 2000 --json` on
2026-12-02) load as typed results; their JSON comes back with the same keys
(and schema_version); the table, the CSV, the sweep's writer and compare
work from them."""

import json
import os

import pytest

from vnpy import ROOT, run_vnperf
from vnperflib.campaign import compare, sweep
from vnperflib import exitcodes, result
from vnperflib.report import report, resultsdir
from vnperflib.errors import RunnerError

FIXTURES = os.path.join(ROOT, "tests", "py", "fixtures")
SWEEP = os.path.join(FIXTURES, "results-2026-12-02")
RUN = os.path.join(FIXTURES, "run-2026-12-02.json")


def old_json(path):
    with open(path) as f:
        return json.load(f)


def test_an_old_run_report_loads_typed_and_writes_back_its_keys():
    res = result.load(RUN)
    assert isinstance(res, result.RunResult)
    assert (res.status, res.app, res.backend, res.topology) == (0, "gen", "dgram", "host")
    assert res.metrics.packets == 2000 and res.metrics.pps > 0
    assert isinstance(res.guests[0], result.GuestReport) and res.guests[0].label == "guest"
    assert res.sender_result["app"] == "gen"
    assert isinstance(res.counts.directions["guest->host"], result.Direction)
    assert res.counts.directions["guest->host"].verdict == "agree" and res.host_counted
    assert res.cpu.roles["vcpu"].pct > 0 and res.verdict.side in ("host", "guest", "backend")
    assert res.config_value("count") == "2000"
    old = old_json(RUN)
    assert "schema_version" not in old
    new = json.loads(res.to_json())
    assert new.pop("schema_version") == result.SCHEMA_VERSION
    assert new == old


def test_an_old_results_directory_loads_with_its_points_and_runs():
    sw = result.load(SWEEP)
    assert isinstance(sw, result.SweepResult)
    assert dict(sw.axes) == {"backend": ["dgram"], "size": ["64", "128"]}
    assert [p.params["size"] for p in sw.points] == ["64", "128"]
    p = sw.points[0]
    assert p.statuses == (0, 0) and p.ok == 2 and p.host_counted is True
    assert isinstance(p.summary["pps"], result.Summary) and p.summary["pps"].n == 2
    runs = [sw.run(p, i) for i in range(2)]
    assert sorted(r.metrics.pps for r in runs) == sorted(p.summary["pps"].values)
    assert all(r.config_value("size") == "64" for r in runs)
    assert sw.to_dict() == old_json(os.path.join(SWEEP, "results.json"))
    assert result.load(os.path.join(SWEEP, "results.json")).points == sw.points
    for name in sorted(os.listdir(os.path.join(SWEEP, "runs"))):
        path = os.path.join(SWEEP, "runs", name)
        d = result.load(path).to_dict()
        assert d.pop("schema_version") == result.SCHEMA_VERSION and d == old_json(path)


def test_table_and_csv_read_the_typed_result():
    res = result.load(RUN)
    text = report.human(res)
    assert "counts guest->host" in text and "bottleneck" in text
    assert text.splitlines()[0].split()[1:3] == ["0", "(ok)"]
    row = report.csv_row(res)
    assert (row["status"], row["app"], row["packets"], row["agree"]) == (0, "gen", 2000, True)
    assert row["bottleneck"] == res.verdict.side and row["pps"] == res.metrics.pps
    sw = result.load(SWEEP)
    assert report.csv_row(sw.run(sw.points[1]))["size"] == "128"


def test_the_writer_writes_a_result_as_the_runner_did(tmp_path):
    """runs/NNN.json of a typed result is the old file plus schema_version."""
    res = result.load(RUN)
    w = resultsdir.Writer(str(tmp_path), axes={"size": ["64"]}, repeat=1, fixed={})
    p = w.add_point({"size": "64"}, res.identity)
    w.add_run(p, 1, res)
    w.add_run(p, 2, result.RunResult.failed(exitcodes.RUNNER_TIMEOUT, "QEMU killed"))
    w.save()
    written = old_json(str(tmp_path / "runs" / "001.json"))
    assert written.pop("schema_version") == 1 and written == old_json(RUN)
    failed = old_json(str(tmp_path / "runs" / "002.json"))
    assert failed == {"vnperf_report": 1, "schema_version": 1, "metrics": {}, "status": 65,
                      "why": "QEMU killed", "status_name": "runner timeout (QEMU killed)"}
    sw = result.load(str(tmp_path))
    assert sw.points[0].statuses == (0, 65) and sw.points[0].summary["pps"].n == 1


def test_compare_reads_the_old_directory_and_report():
    """compare of today's files: the fixture's two sizes as A and B, and a
    report against itself."""
    r = run_vnperf(["compare", SWEEP, SWEEP, "--a-where", "size=64", "--b-where", "size=128",
                    "--ab", "size", "--json"])
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    (row,) = cmp["rows"]
    sw = result.load(SWEEP)
    assert row["columns"]["pps%"]["a"] == sw.points[0].summary["pps"].median
    assert row["columns"]["pps%"]["b"] == sw.points[1].summary["pps"].median
    r = run_vnperf(["compare", RUN, RUN])
    assert r.returncode == 0 and "+0.0" in r.stdout, r.stderr


@pytest.mark.parametrize("text, why", [
    ('{"vnperf_report": 2}', "vnperf_report 2: not a format this runner reads"),
    ('{"vnperf_report": 1, "schema_version": 9}', "schema_version 9: not one this runner"),
    ('{"vnperf_report": 1, "guests": 3}', "not a run report this runner reads"),
    ('[1]', "is not a `vnperf run --json` report"),
    ('{', "is not JSON"),
])
def test_load_refuses_in_one_line(tmp_path, text, why):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(RunnerError) as e:
        result.load(str(path))
    assert e.value.status == exitcodes.RUNNER_USAGE and why in e.value.line
    assert "\n" not in e.value.line


def test_compare_and_the_sweep_table_read_typed_points():
    """compare and the sweep's table take the typed points of a results
    directory (and, as before, their JSON objects)."""
    sw = result.load(SWEEP)
    a, b = sw.points
    cmp = compare.compare([a], [b], ab={"size"})
    cell = cmp.rows[0].columns["pps%"]
    assert (cell.a, cell.b) == (a.summary["pps"].median, b.summary["pps"].median)
    assert cmp == compare.compare([a.to_dict()], [b.to_dict()], ab={"size"})
    text = sweep.render(sw)
    assert text == sweep.render(old_json(os.path.join(SWEEP, "results.json")))
    row = text.splitlines()[2].split()
    assert row[:3] == ["dgram", "64", "2/2"] and sw.app == "gen"
