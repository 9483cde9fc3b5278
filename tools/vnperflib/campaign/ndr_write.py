"""The results directory of `vnperf ndr` and `sweep --search`: sweep-shaped
(compare reads it), each search's result under its point, its metrics
summarized per point, every trial's report in runs/ and a row of
trials.csv."""

import csv
import json
import os

from ..analysis import stats
from ..optypes import digits
from ..report import resultsdir
from .ndr_trial import LATENCY_MAIN, best_unverified, num, point_status

SEARCH_METRICS = ("ndr_pps", "pdr_pps", "ndr_bps", "pdr_bps", "unverified_pps", "offered_pps",
                  "forwarded_pps", "trials", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns",
                  "cpu_pct")


def search_metrics(result, size):
    """The point's numbers of one search, for the summary and compare: the
    flat-out trial's offered and forwarded rates and the trials of every
    search; ndr_pps (or pdr_pps), its bit rate (frames without FCS, like
    every vnperf bps) and the latency at 50% of a search that succeeded
    only; a search without a verified rate gives unverified_pps instead (no
    column of compare reads it)."""
    m = {"offered_pps": result.get("offered_pps"), "forwarded_pps": result.get("forwarded_pps"),
         "trials": len(result["trials"])}
    if point_status(result) != 0:
        if not result.get("verified"):
            m["unverified_pps"] = best_unverified(result)
        return {k: v for k, v in m.items() if v is not None}
    rate = result.get("rate_pps")
    if rate is not None:
        key = result["mode"]
        m[key + "_pps"] = float(rate)
        if digits(str(size)):
            m[key + "_bps"] = float(rate) * int(size) * 8
    for e in result.get("latency") or ():
        if e["pct"] == LATENCY_MAIN and e["latency"]:
            for k in ("p50", "p90", "p99", "p999", "max"):
                v = num(e["latency"].get(k + "_us"))
                if v is not None:
                    m[k + "_ns"] = v * 1e3
            if e.get("cpu_pct") is not None:
                m["cpu_pct"] = e["cpu_pct"]
    return {k: v for k, v in m.items() if v is not None}


class Writer(resultsdir.Writer):
    """The sweep's results directory with searches as its runs: each
    trial's report in runs/, every trial a row of trials.csv, each
    search's result in results.json under its point."""

    TRIAL_FIELDS = ("repeat", "kind", "target_pps", "achieved_pps", "rate_error", "missed",
                    "sent", "received", "lost", "loss_pct", "passed", "load", "load_passed",
                    "status", "why", "where", "run")

    def __init__(self, outdir, axes, repeat, fixed, spec_info):
        super().__init__(outdir, axes, repeat, fixed)
        self.results["vnperf_search"] = 1
        self.results["search"] = spec_info
        self.trial_rows = []
        self._metrics = {}

    def save_report(self, res):
        """res: a trial's result.RunResult, written as runs/NNN.json."""
        self._n += 1
        name = "runs/%03d.json" % self._n
        with open(os.path.join(self.outdir, name), "w") as f:
            f.write(res.to_json())
        return name

    def add_search(self, point, repeat, result, size):
        point.setdefault("searches", []).append(result)
        status = point_status(result)
        point["statuses"].append(status)
        point["why"].append(result["why"])
        point["runs"] += [t["run"] for t in result["trials"] if t.get("run")]
        if status == 0:
            point["ok"] += 1
        self._metrics.setdefault(id(point), []).append(search_metrics(result, size))
        point["summary"] = stats.summarize_runs(self._metrics[id(point)])
        for t in result["trials"] + [dict(e, kind="latency %s%%" % e["pct"])
                                     for e in result.get("latency") or ()]:
            row = dict(point["params"], repeat=repeat)
            row.update({k: t.get(k) for k in self.TRIAL_FIELDS if k in t})
            if t.get("load"):
                row["load_passed"] = result["loads"][t["load"] - 1]["passed"]
            self.trial_rows.append(row)

    def save(self):
        """results.json, results.csv (a row per point: the medians, min and
        max of the search metrics) and trials.csv (a row per trial)."""
        path = os.path.join(self.outdir, resultsdir.SUMMARY)
        with open(path + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1, default=str)
        os.replace(path + ".tmp", path)
        names = list(self.results["axes"])
        rows = []
        for p in self.results["points"]:
            row = dict(p["params"], runs_ok=p["ok"], runs=len(p["statuses"]))
            for m, s in p["summary"].items():
                row.update({m + "_median": s["median"], m + "_min": s["min"],
                            m + "_max": s["max"]})
            rows.append(row)
        _csv(os.path.join(self.outdir, "results.csv"), names + ["runs_ok", "runs"] + [
            "%s_%s" % (m, s) for m in SEARCH_METRICS for s in ("median", "min", "max")], rows)
        _csv(os.path.join(self.outdir, "trials.csv"), names + list(self.TRIAL_FIELDS),
             self.trial_rows)


def _csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
