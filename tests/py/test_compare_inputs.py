"""`vnperf compare` on hand-edited or damaged results: every member
compare reads is checked when the file loads, so a wrong kind, a number
that is not finite, negative or beyond 64 bits, an unknown format or a
nesting too deep for the JSON decoder is one line and status 64 naming
the member, never a traceback (70) or a table of NaN; a lead rate that is
0 in every run is refused too."""

import json

import pytest

from vnpy import run_vnperf
from vnperflib import exitcodes
from vnperflib.report import resultsdir

IDENTITY = {"app": "gen", "backend": "dgram", "size": "64"}


def sweep(pps=(100.0, 101.0, 99.0)):
    """A valid format 2 results.json of one point."""
    summ = {"median": sorted(pps)[1], "min": min(pps), "max": max(pps),
            "mean": sum(pps) / 3, "sd": 1.0, "n": 3, "values": list(pps)}
    return {"vnperf_sweep": 2, "axes": {"size": ["64"]}, "repeat": 3, "fixed": {},
            "points": [{"params": {"size": "64"}, "identity": dict(IDENTITY),
                        "statuses": [0, 0, 0], "why": ["ok"] * 3, "ok": 3,
                        "summary": {"pps": summ}}], "plots": []}


def report(metrics):
    return {"vnperf_report": 1, "status": 0, "why": "ok", "identity": dict(IDENTITY),
            "metrics": metrics}


def edit(fn):
    d = sweep()
    fn(d)
    return d


def pt(d):
    return d["points"][0]


def setp(key, v):
    return lambda d: pt(d).__setitem__(key, v)


def setvals(v):
    return lambda d: pt(d)["summary"]["pps"].__setitem__("values", v)


CASES = [
    (edit(lambda d: d.__setitem__("points", None)), "points is null, not a list"),
    (edit(lambda d: d.__setitem__("points", "abc")), "points is a string, not a list"),
    (edit(lambda d: d.__setitem__("points", [5, pt(d)])), "points[0] is a number, not an object"),
    (edit(setvals(["100", "101"])), 'summary.pps.values[0] is "100", not a number'),
    (edit(setvals("100")), "summary.pps.values is a string, not a list of numbers"),
    (edit(setvals([])), "summary.pps.values is empty"),
    (edit(setvals([True, 1])), "summary.pps.values[0] is true, not a number"),
    (edit(setvals([float("nan"), 1.0])), "summary.pps.values[0] is nan: not a finite number"),
    (edit(setvals([float("inf")])), "summary.pps.values[0] is inf: not a finite number"),
    (edit(setvals([10 ** 401])), "a 402-digit integer"),
    (edit(setvals([-5.0, 100.0])), "summary.pps.values[0] is -5.0: pps is never negative"),
    (edit(setp("summary", [1])), "points[0].summary is a list, not an object"),
    (edit(lambda d: pt(d)["summary"].__setitem__("pps", 3)), "summary.pps is a number"),
    (edit(setp("statuses", "abc")), "points[0].statuses is a string, not a list of exit"),
    (edit(setp("why", [1])), "points[0].why is a list, not a list of lines"),
    (edit(lambda d: pt(d)["identity"].__setitem__("size", [[64]])),
     "points[0].identity.size is a list, not a value"),
    (edit(lambda d: d.__setitem__("fixed", "x")), "fixed is a string, not an object"),
    (edit(lambda d: d.__setitem__("vnperf_sweep", 3)), "vnperf_sweep 3: not a format this "
     "runner reads (1, 2)"),
    (edit(lambda d: d.__setitem__("vnperf_sweep", "2")), 'vnperf_sweep "2": not a format'),
    (edit(lambda d: d.__setitem__("vnperf_sweep", True)), "vnperf_sweep true: not a format"),
    (dict(report({"pps": 5.0}), vnperf_report=9), "vnperf_report 9: not a format"),
    (report({"pps": float("nan")}), "metrics.pps is nan: not a finite number"),
    (report({"pps": "fast"}), 'metrics.pps is "fast", not a number'),
    (report([1, 2]), "metrics is a list, not an object"),
    (dict(report({"pps": 1.0}), status="0"), "status is a string, not an exit status"),
    (dict(report({"pps": 1.0}), why=["x"]), "why is a list, not a line"),
]


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(p)


def refused(r, needle):
    err = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_USAGE, r.stderr[-400:]
    assert len(err) == 1 and needle in err[0], err
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("data,needle", CASES, ids=[c[1][:40] for c in CASES])
def test_a_damaged_results_file_is_one_line_and_64(tmp_path, data, needle):
    a = write(tmp_path, "a.json", sweep())
    refused(run_vnperf(["compare", a, write(tmp_path, "b.json", data)], timeout=30), needle)


@pytest.mark.parametrize("text,needle", [
    ("[" * 100000 + "]" * 100000, "is not JSON: nested too deep"),
    ('{"vnperf_sweep": 2, "points": ' + "[" * 100000, "is not JSON: nested too deep"),
    ('{"vnperf_sweep": 2, "points": [{"params": {}, "summary": {"pps": {"values": [1e400]}}}]}',
     "values[0] is inf"),
], ids=["array", "points", "1e400"])
def test_hostile_json_is_one_line_and_64(tmp_path, text, needle):
    a = write(tmp_path, "a.json", sweep())
    refused(run_vnperf(["compare", a, write(tmp_path, "b.json", text)], timeout=30), needle)


def test_a_rate_zero_in_every_run_is_refused(tmp_path):
    a = write(tmp_path, "a.json", sweep())
    b = write(tmp_path, "b.json", sweep(pps=(0.0, 0.0, 0)))
    refused(run_vnperf(["compare", a, b], timeout=30), "B: pps is 0 in every run (3): nothing to compare")
    r = run_vnperf(["compare", a, write(tmp_path, "c.json", sweep(pps=(0.0, 3.0, 0.0)))],
                   timeout=30)
    assert r.returncode == 0, r.stderr


def test_the_summary_is_recomputed_from_the_values(tmp_path):
    """A hand edit of median/mean cannot disagree with the runs' values."""
    b = sweep(pps=(120.0, 121.0, 119.0))
    pt(b)["summary"]["pps"].update(median=1e9, mean=-3.0, n=99)
    a = write(tmp_path, "a.json", sweep())
    r = run_vnperf(["compare", "--json", a, write(tmp_path, "b.json", b)], timeout=30)
    assert r.returncode == 0, r.stderr
    cell = json.loads(r.stdout)["rows"][0]["columns"]["pps%"]
    assert cell["b"] == 120.0 and cell["b_n"] == 3 and round(cell["pct"]) == 20


def test_format_1_summary_members_are_checked(tmp_path):
    old = {"vnperf_sweep": 1, "axes": {"size": ["64"]}, "fixed": {"backend": "dgram"},
           "points": [{"params": {"size": "64"}, "statuses": [0],
                       "summary": {"pps": {"median": 1.0, "min": 1.0, "max": 1.0, "n": 1,
                                           "mean": "x"}}}]}
    refused(run_vnperf(["compare", write(tmp_path, "a.json", sweep()),
                        write(tmp_path, "b.json", old)], timeout=30),
            'points[0].summary.pps.mean is "x", not a number')


def test_a_control_character_from_the_file_cannot_split_the_line(tmp_path):
    """A key or value from a results file goes into compare's one line:
    its newline and terminal escapes are escaped. Found by
    test_pyfuzz_results."""
    b = sweep()
    pt(b)["identity"]["size"] = "6\n4\x1b[2J"
    a = write(tmp_path, "a.json", sweep())
    refused(run_vnperf(["compare", a, write(tmp_path, "b.json", b)], timeout=30),
            "size (64 vs 6\\x0a4\\x1b[2J)")


def test_identity_recorded_with_empty_features_loads_as_none(tmp_path):
    """A run report from before features said none pairs with today's."""
    rep = {"vnperf_report": 1, "status": 0, "why": "ok", "backend": "dgram",
           "identity": {"app": "gen", "features": "", "event_idx": "off"},
           "metrics": {"pps": 1e5}}
    (tmp_path / "r.json").write_text(json.dumps(rep))
    assert resultsdir.load(str(tmp_path / "r.json"))[0]["params"]["features"] == "none"
