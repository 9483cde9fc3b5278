"""A sweep's results directory, and reading results back for compare.

    results.json   axes, fixed parameters, per point: params, identity,
                   run files, statuses and {metric: median/min/max/mean/
                   sd/n/values} over its runs
    results.csv    one row per point: params, runs ok, median/min/max
    runs.csv       one row per run: params, repeat, status, counts agree,
                   bottleneck side, metrics
    runs/NNN.json  each run's full `vnperf run --json` report
    *.png          plots (plots.py), when matplotlib is importable"""

import csv
import json
import os
import sys
import time

from . import stats
from .errors import usage

SUMMARY = "results.json"
# 2: points carry their identity (identity.py) and every repeat's value.
FORMAT = 2

# Format 1 (no identity): the config words that were sweep axes.
CONFIG_PARAMS = ("size", "sessions", "msg_size", "window", "kick_batch", "rx_refill", "ring",
                 "txfull", "rate")

# The metrics written per point, in this order.
METRICS = ("pps", "bps", "packets", "bytes", "loss_pct", "lost", "tx_dropped", "cpu_pct",
           "sd_us_per_packet", "sd_us_per_kb", "sd_us_per_tx", "tps", "p50_ns", "p90_ns",
           "p99_ns", "p999_ns", "kicks_per_packet", "suppressed_pct", "backend_batch",
           "duration_s")


def run_metrics(rep):
    """The metrics of a run report (the runner's, outcome.metrics)."""
    return dict(rep.get("metrics") or {})


def params_from_config(words, backend=None):
    """The point parameters a run's effective config words describe."""
    p = {}
    if backend is not None:
        p["backend"] = backend
    feats = ""
    for w in words or ():
        k, _, v = w.partition("=")
        if k in CONFIG_PARAMS:
            p[k] = v
        elif k == "features":
            feats = v
    p["event_idx"] = "off" if "-event_idx" in feats.split(",") else "on"
    return p


def fixed_params(base, axes):
    """Parameters every point of the sweep shares (not axes): the backend
    and the config words given after --."""
    p = params_from_config(base.config, base.backend)
    if getattr(base, "size", None) is not None:
        p["size"] = str(base.size)
    return {k: v for k, v in p.items() if k not in axes}


class Writer:
    """Builds results.json/csv as the sweep goes, so an interrupted sweep
    still leaves what it measured."""

    def __init__(self, outdir, axes, repeat, fixed):
        self.outdir = outdir
        os.makedirs(os.path.join(outdir, "runs"), exist_ok=True)
        self.results = {"vnperf_sweep": FORMAT, "argv": sys.argv,
                        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "axes": axes, "repeat": repeat, "fixed": fixed,
                        "points": [], "plots": []}
        self.run_rows = []
        self._runs = {}
        self._n = 0

    def add_point(self, params, identity):
        p = {"params": dict(params), "identity": dict(identity), "runs": [], "statuses": [],
             "why": [], "ok": 0, "summary": {}}
        self.results["points"].append(p)
        self._runs[id(p)] = []
        return p

    def add_run(self, point, repeat, rep):
        self._n += 1
        name = "runs/%03d.json" % self._n
        with open(os.path.join(self.outdir, name), "w") as f:
            json.dump(rep, f, indent=1, sort_keys=True, default=str)
        point["runs"].append(name)
        point["statuses"].append(rep["status"])
        point["why"].append(rep.get("why"))
        m = run_metrics(rep)
        if rep["status"] == 0:
            point["ok"] += 1
            self._runs[id(point)].append(m)
            point["summary"] = stats.summarize_runs(self._runs[id(point)])
        row = dict(point["params"], repeat=repeat, status=rep["status"], why=rep.get("why"),
                   run=name, agree=(rep.get("counts") or {}).get("agree"),
                   bottleneck=(rep.get("verdict") or {}).get("side"))
        row.update({k: m.get(k) for k in METRICS if k in m})
        self.run_rows.append(row)

    def set_plots(self, names):
        self.results["plots"] = list(names)

    def save(self):
        path = os.path.join(self.outdir, SUMMARY)
        with open(path + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1)
        os.replace(path + ".tmp", path)
        names = list(self.results["axes"])
        _write_csv(os.path.join(self.outdir, "runs.csv"),
                   names + ["repeat", "status", "why", "run", "agree", "bottleneck"]
                   + list(METRICS), self.run_rows)
        fields = names + ["runs_ok", "runs"]
        for m in METRICS:
            fields += [m + "_median", m + "_min", m + "_max"]
        rows = []
        for p in self.results["points"]:
            row = dict(p["params"], runs_ok=p["ok"], runs=len(p["statuses"]))
            for m, s in p["summary"].items():
                if m in METRICS:
                    row.update({m + "_median": s["median"], m + "_min": s["min"],
                                m + "_max": s["max"]})
            rows.append(row)
        _write_csv(os.path.join(self.outdir, "results.csv"), fields, rows)


def _write_csv(path, fields, rows):
    """Columns that no row fills are left out."""
    used = [f for f in fields if any(r.get(f) is not None for r in rows)]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=used, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def describe_files(results):
    files = "results.json, results.csv, runs.csv, runs/"
    if results["plots"]:
        return files + ", " + ", ".join(results["plots"])
    from . import plots
    if plots.available():
        return files + "; no plot: no point has a pps result"
    return files + "; no plots: python3-matplotlib is not importable"


def load(path):
    """Points from a sweep directory, its results.json, or one `vnperf run
    --json` report: [{"params": identity, "summary": {metric: summary},
    "statuses", "why"}], failed points included (compare reports them).
    Raises a usage error with one clear line."""
    if os.path.isdir(path):
        path = os.path.join(path, SUMMARY)
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise usage("cannot read %s: %s" % (path, e.strerror))
    except ValueError as e:
        raise usage("%s is not JSON: %s" % (path, e))
    if isinstance(data, dict) and data.get("vnperf_sweep"):
        fixed = data.get("fixed") or {}
        pts = [{"params": p.get("identity") or dict(fixed, **p["params"]),
                "summary": p.get("summary") or {}, "statuses": p.get("statuses", []),
                "why": p.get("why", [])} for p in data.get("points", ())]
        if not pts:
            raise usage("%s: this sweep has no point" % path)
        return pts
    if isinstance(data, dict) and data.get("vnperf_report"):
        params = data.get("identity") or params_from_config(data.get("config"),
                                                            data.get("backend"))
        ok = data.get("status") == 0
        return [{"params": params,
                 "summary": stats.summarize_runs([run_metrics(data)]) if ok else {},
                 "statuses": [data.get("status")], "why": [data.get("why")]}]
    raise usage("%s is neither a vnperf sweep nor a `vnperf run --json` report" % path)
