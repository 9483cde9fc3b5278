"""`vnperf report DIR` on recorded results (fixture files written here, no
QEMU): a page for a run, a sweep, an ndr search and a comparison, each
with its sections in reading order (identity, tables, plots, counts,
verdict), every value escaped, nothing fetched and no script; a directory
without results or with broken ones refused in one line, status 64."""

import html.parser
import json
import os
import shutil

import pytest

from test_compare import around, point, write_sweep
import vnpy
from vnpy import run_vnperf
from vnperflib import exitcodes
from vnperflib.report import htmlreport, plots
from vnperflib.analysis import stats

HOSTILE = '<script>alert("x")</script>&<img src=x onerror=alert(1)>'
SECTIONS = [sid for sid, _ in htmlreport.SECTIONS]


class Page(html.parser.HTMLParser):
    """The elements of a page: tags in order, section ids, every
    attribute, the text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.sections, self.attrs, self.text = [], [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        if tag == "section":
            self.sections.append(dict(attrs)["id"])

    def handle_data(self, data):
        self.text.append(data)


def make_page(d):
    r = run_vnperf(["report", str(d)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("report: %s/report.html" % d)
    text = (d / "report.html").read_text()
    return text, Page(text)


def self_contained(text, page):
    """No script, no handler, nothing fetched: no src/href outside the
    page itself."""
    assert "script" not in page.tags and "<script" not in text
    assert not [a for a, _ in page.attrs if a.startswith("on")]
    assert not [v for a, v in page.attrs if a in ("src", "href") and v and not v.startswith("#")]
    assert page.sections == SECTIONS


def run_report(status=0):
    dirs = {"guest->host": {"sent": 61408, "received": 61400, "lost": 8, "loss_pct": 0.013,
                            "verdict": "lossy", "why": "guest->host: 8 lost " + HOSTILE}}
    return {"vnperf_report": 1, "status": status, "status_name": "ok" if status == 0 else
            "runner timeout", "why": "ok" if status == 0 else HOSTILE, "app": "gen",
            "backend": "dgram", "machine": "microvm", "accel": "tcg", "time": "2026-12-02",
            "config": ["app=gen", "size=64"],
            "identity": {"app": "gen", "backend": "dgram", "image": HOSTILE, "size": "64"},
            "metrics": {"pps": 60861.4, "bps": 31161000.0, "packets": 61408.0,
                        "bytes": 3930112.0, "duration_s": 1.0},
            "guests": [{"label": "guest", "result": {"app": "gen", "packets": 61408}}],
            "counts": {"agree": False, "directions": dirs,
                       "host": {"rx_packets": 61400}, "guest": {"tx_packets": 61408}},
            "cpu": {"total_pct": 140.0, "roles": {"vcpu": {"pct": 57.0, "wait_pct": 33.0},
                                                  "main": {"pct": 48.0, "wait_pct": 37.0}}},
            "verdict": {"side": "host", "why": "2.3 threads runnable for 2 CPUs"}}


def test_run_page(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    (d / "run.json").write_text(json.dumps(run_report()))
    text, page = make_page(d)
    self_contained(text, page)
    assert HOSTILE not in text and "&lt;script&gt;alert(&quot;x&quot;)" in text
    body = "".join(page.text)
    # Identity, the headline, both sides' counts, the verdict.
    assert "image" in body and "61408" in body and "61400" in body and "lossy" in body
    assert "host CPU-bound: 2.3 threads runnable for 2 CPUs" in body
    assert page.tags.count("svg") == (1 if plots.available() else 0)


def sweep_dir(tmp_path, name="sw", failed=False):
    pts = [point({"size": "64"}, around(100e3), 64, around(50)),
           point({"size": "512"}, around(90e3, 0.06), 512, around(60),
                 statuses=[0, 0, 0, 0, 65] if failed else None)]
    d = write_sweep(tmp_path / name, pts, {"size": ["64", "512"]}, {"backend": HOSTILE})
    (tmp_path / name / "runs").mkdir()
    res = json.loads((tmp_path / name / "results.json").read_text())
    for i, p in enumerate(res["points"]):
        p["runs"] = ["runs/%03d.json" % (5 * i + k + 1) for k in range(5)]
        for k, run in enumerate(p["runs"]):
            rep = run_report(p["statuses"][k])
            (tmp_path / name / run).write_text(json.dumps(rep))
    res["argv"] = ["tools/vnperf", "sweep", "--size", "64,512"]
    (tmp_path / name / "results.json").write_text(json.dumps(res))
    return tmp_path / name, d


def test_sweep_page(tmp_path):
    d, _ = sweep_dir(tmp_path, failed=True)
    text, page = make_page(d)
    self_contained(text, page)
    assert HOSTILE not in text
    body = "".join(page.text)
    assert "95% CI of the mean" in body and "4/5" in body and "5/5" in body
    # Every run's counts (10 runs, one direction each) and the verdict.
    assert body.count("runs/0") >= 10 and "9 of 10 runs passed; first failure status 65" in body
    if plots.available():
        assert page.tags.count("svg") >= 3
    assert page.tags.count("table") >= 4


def test_sweep_ci_is_the_t_interval_of_the_mean():
    s = stats.summary([9.0, 10.0, 10.0, 11.0])
    mean, lo, hi = htmlreport.mean_ci(s)
    # sd 0.8165, t(0.975, 3) = 3.182: half width 3.182 * 0.8165 / 2.
    assert mean == 10.0 and abs(hi - 10.0 - 1.2991) < 1e-3 and abs(10.0 - lo - 1.2991) < 1e-3
    # One run, or a format 1 summary (no values kept): no interval.
    assert htmlreport.mean_ci(stats.summary([10.0])) is None
    assert htmlreport.mean_ci(dict(s, values=None)) is None


def ndr_results():
    trials = [{"kind": "flat out", "target_pps": None, "achieved_pps": 200000.0, "sent": 200000,
               "received": 150000, "lost": 50000, "loss_pct": 25.0, "passed": False,
               "run": "runs/001.json"},
              {"kind": "verify", "target_pps": 140000, "achieved_pps": 140000.0,
               "sent": 140000, "received": 140000, "lost": 0, "loss_pct": 0.0, "passed": True,
               "run": "runs/002.json"}]
    search = {"status": "ok", "why": "NDR 140k pps " + HOSTILE, "trials": trials,
              "loads": [], "rate_pps": 140000, "mode": "ndr", "verified": True, "latency": []}
    s = {"ndr_pps": {"median": 140000.0, "mean": 140000.0, "sd": 0.0, "n": 1, "min": 140000.0,
                     "max": 140000.0, "values": [140000.0]},
         "trials": {"median": 2.0, "mean": 2.0, "sd": 0.0, "n": 1, "min": 2.0, "max": 2.0,
                    "values": [2.0]}}
    return {"vnperf_sweep": 2, "vnperf_search": 1, "axes": {"size": ["60"]}, "repeat": 1,
            "fixed": {"backend": "dgram"}, "plots": [],
            "search": {"mode": "ndr", "loss_pct": 0.0, "resolution": "50%", "trial_s": 1},
            "points": [{"params": {"size": "60"}, "identity": {"app": "sink", "size": "60"},
                        "runs": ["runs/001.json", "runs/002.json"], "statuses": [0],
                        "why": [search["why"]], "ok": 1, "summary": s,
                        "searches": [search]}]}


def test_ndr_page(tmp_path):
    d = tmp_path / "ndr"
    (d / "runs").mkdir(parents=True)
    (d / "results.json").write_text(json.dumps(ndr_results()))
    (d / "runs" / "001.json").write_text(json.dumps(run_report()))
    text, page = make_page(d)
    self_contained(text, page)
    assert HOSTILE not in text
    body = "".join(page.text)
    assert "NDR pps median" in body and "140.000k" in body and "flat out" in body
    # The trial whose run file is gone says so in the counts.
    assert "runs/002.json: No such file or directory" in body
    assert "1 of 1 searches passed" in body


def test_results_written_before_the_typed_result(tmp_path):
    """The results directory of before result.py (tests/py/fixtures) and
    its run reports read through the typed result make a page."""
    d = tmp_path / "old"
    shutil.copytree(os.path.join(vnpy.ROOT, "tests", "py", "fixtures", "results-2026-12-02"), d)
    text, page = make_page(d)
    self_contained(text, page)
    body = "".join(page.text)
    assert body.count("runs/00") >= 4 and "agree" in body
    old = tmp_path / "run"
    old.mkdir()
    shutil.copy(os.path.join(vnpy.ROOT, "tests", "py", "fixtures", "run-2026-12-02.json"),
                old / "run.json")
    text, page = make_page(old)
    assert "bottleneck" in "".join(page.text)


def test_compare_page(tmp_path):
    a, _ = sweep_dir(tmp_path, "a")
    b, _ = sweep_dir(tmp_path, "b")
    out = tmp_path / "cmp"
    r = run_vnperf(["compare", str(a), str(b), "--out", str(out)])
    assert r.returncode == 0, r.stderr
    text, page = make_page(out)
    self_contained(text, page)
    assert HOSTILE not in text
    body = "".join(page.text)
    assert "BW% 95% CI" in body and "no significant change in" in body
    assert "identity both sides share" in body
    if plots.available():
        assert page.tags.count("svg") == 1


def test_compare_page_marks_significant_cells(tmp_path):
    axes = {"size": ["64"]}
    a = write_sweep(tmp_path / "a", [point({"size": "64"}, around(100e3), 64, around(50))],
                    axes, {})
    b = write_sweep(tmp_path / "b", [point({"size": "64"}, around(120e3), 64, around(50))],
                    axes, {})
    out = tmp_path / "cmp"
    assert run_vnperf(["compare", a, b, "--out", str(out)]).returncode == 0
    text, page = make_page(out)
    assert '<td class="sig">+20.0</td>' in text
    verdict = "".join(page.text).split("Verdict")[-1]
    assert "significant at alpha 0.05 (Holm): all BW% +20.0%" in verdict
    assert "all pps% +20.0%" in verdict


@pytest.mark.parametrize("what,line", [
    ("nothing", "holds no vnperf results"),
    ("not a dir", "is not a directory"),
    ("bad json", "is not JSON"),
    ("points a string", "points is a string, not a list"),
    ("compare format", "is not a comparison this runner writes"),
    ("run not a report", "is neither a vnperf sweep nor"),
    ("unhashable format", "is not a comparison this runner writes"),
    ("trials not a list", "a member is not as vnperf writes it"),
])
def test_bad_directory_is_one_line_and_status_64(tmp_path, what, line):
    d = tmp_path / "d"
    d.mkdir()
    if what == "not a dir":
        d = tmp_path / "file"
        d.write_text("x")
    elif what == "bad json":
        (d / "results.json").write_text("{")
    elif what == "points a string":
        (d / "results.json").write_text(json.dumps({"vnperf_sweep": 2, "points": "x"}))
    elif what == "compare format":
        (d / "compare.json").write_text(json.dumps({"vnperf_compare": 99}))
    elif what == "unhashable format":
        (d / "compare.json").write_text(json.dumps({"vnperf_compare": [3]}))
    elif what == "run not a report":
        (d / "run.json").write_text(json.dumps({"status": 0}))
    elif what == "trials not a list":
        res = ndr_results()
        res["points"][0]["searches"][0]["trials"] = 5
        (d / "results.json").write_text(json.dumps(res))
    r = run_vnperf(["report", str(d)])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1 and line in r.stderr, r.stderr
    assert not (tmp_path / "d" / "report.html").exists()
