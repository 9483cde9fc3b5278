"""A sweep's results directory, and reading results back for compare.

    results.json   axes, fixed parameters, per point: params, identity,
                   run files, statuses, host_counted (every passing run
                   had a host-side count; absent in results written before
                   2026-12-02) and {metric: median/min/max/mean/sd/n/
                   values} over its runs
    results.csv    one row per point: params, runs ok, host_counted,
                   median/min/max
    runs.csv       one row per run: params, repeat, status, counts agree,
                   host_counted, bottleneck side, metrics
    runs/NNN.json  each run's full `vnperf run --json` report
    *.png          plots (plots.py), when matplotlib is importable"""

import csv
import json
import math
import os
import sys
import time

from ..analysis import stats
from ..errors import usage
from ..run import identity

SUMMARY = "results.json"
# 2: points carry their identity (identity.py) and every repeat's value.
FORMAT = 2

# Format 1 (no identity): the config words that were sweep axes.
CONFIG_PARAMS = ("size", "sessions", "msg_size", "window", "kick_batch", "rx_refill", "ring",
                 "txfull", "rate")

# The metrics written per point, in this order (new ones are added, none
# renamed: a reader of older files finds its columns).
METRICS = ("pps", "bps", "goodput_bps", "packets", "bytes", "loss_pct", "lost", "tx_dropped",
           "cpu_pct", "sd_us_per_packet", "sd_us_per_kb", "sd_us_per_tx", "tps", "p50_ns",
           "p90_ns", "p99_ns", "p999_ns", "kicks_per_packet", "suppressed_pct", "backend_batch",
           "backend_batch_lo", "backend_batch_hi", "duration_s")


def run_metrics(rep):
    """The metrics of a run report's JSON (the runner's, outcome.metrics)."""
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


def app_of(results):
    """The app a sweep's points ran (their identity), None when unknown
    (a format 1 sweep)."""
    apps = {(p.get("identity") or {}).get("app") for p in results["points"]} - {None}
    return apps.pop() if len(apps) == 1 else None


def fixed_params(base, axes):
    """Parameters every point of the sweep shares (not axes): the backend
    and the config words given after --."""
    p = params_from_config(base.config, base.backend)
    if base.size is not None:
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

    def add_run(self, point, repeat, res):
        """res: the run's result.RunResult, written as runs/NNN.json."""
        self._n += 1
        name = "runs/%03d.json" % self._n
        with open(os.path.join(self.outdir, name), "w") as f:
            f.write(res.to_json())
        point["runs"].append(name)
        point["statuses"].append(res.status)
        point["why"].append(res.why)
        m = res.metrics.as_dict()
        counted = res.host_counted
        if res.status == 0:
            point["ok"] += 1
            self._runs[id(point)].append(m)
            point["summary"] = stats.summarize_runs(self._runs[id(point)])
            # False once a passing run had no host-side count: its medians
            # are (partly) the guest's own rates.
            point["host_counted"] = counted and point.get("host_counted", True)
        row = dict(point["params"], repeat=repeat, status=res.status, why=res.why,
                   run=name, agree=res.counts.agree if res.counts else None,
                   host_counted=counted, bottleneck=res.verdict.side if res.verdict else None)
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
                   names + ["repeat", "status", "why", "run", "agree", "host_counted",
                            "bottleneck"] + list(METRICS), self.run_rows)
        fields = names + ["runs_ok", "runs", "host_counted"]
        for m in METRICS:
            fields += [m + "_median", m + "_min", m + "_max"]
        rows = []
        for p in self.results["points"]:
            row = dict(p["params"], runs_ok=p["ok"], runs=len(p["statuses"]),
                       host_counted=p.get("host_counted"))
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


# What compare reads: the formats of results.json and of a run report.
SWEEP_FORMATS = (1, 2)
REPORT_FORMATS = (1,)
# Metrics that may be below 0: a receiver that counted more than was sent.
SIGNED = ("loss_pct", "lost")
# Results hold u64 counts at most; beyond is a hand edit, and would overflow
# the float the statistics take.
NUMBER_MAX = 2 ** 64


def load(path):
    """Points from a sweep directory, its results.json, or one `vnperf run
    --json` report: [{"params": identity, "summary": {metric: summary},
    "statuses", "why"}], failed points included (compare reports them).
    Raises a usage error with one clear line."""
    if os.path.isdir(path):
        path = os.path.join(path, SUMMARY)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise usage("cannot read %s: %s" % (path, e.strerror))
    return parse(text, path)


def parse(text, path):
    """load()'s points from the bytes of a results.json or report; every
    member compare reads is checked (one usage line naming it)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        why = "nested too deep" if isinstance(e, RecursionError) else str(e)
        raise usage("%s is not JSON: %s" % (path, why))
    if isinstance(data, dict) and "vnperf_sweep" in data:
        _format(path, data, "vnperf_sweep", SWEEP_FORMATS)
        fixed = _params(path, "fixed", data.get("fixed") or {})
        points = data.get("points")
        if not isinstance(points, list):
            raise usage("%s: points is %s, not a list" % (path, _kind(points)))
        pts = [_point(path, i, p, fixed) for i, p in enumerate(points)]
        if not pts:
            raise usage("%s: this sweep has no point" % path)
        return pts
    if isinstance(data, dict) and "vnperf_report" in data:
        _format(path, data, "vnperf_report", REPORT_FORMATS)
        if data.get("identity"):
            params = identity.recorded(_params(path, "identity", data["identity"]))
        else:
            config = data.get("config") or []
            if not isinstance(config, list) or not all(isinstance(w, str) for w in config):
                raise usage("%s: config is %s, not a list of words" % (path, _kind(config)))
            backend = data.get("backend")
            if backend is not None and not isinstance(backend, str):
                raise usage("%s: backend is %s, not a string" % (path, _kind(backend)))
            params = params_from_config(config, backend)
        st, why = data.get("status"), data.get("why")
        if not isinstance(st, int) or isinstance(st, bool):
            raise usage("%s: status is %s, not an exit status" % (path, _kind(st)))
        if why is not None and not isinstance(why, str):
            raise usage("%s: why is %s, not a line" % (path, _kind(why)))
        status, why = [st], [why]
        metrics = data.get("metrics") or {}
        if not isinstance(metrics, dict):
            raise usage("%s: metrics is %s, not an object" % (path, _kind(metrics)))
        for k, v in metrics.items():
            if v is not None:
                _value(path, "metrics.%s" % k, k, v)
        ok = status[0] == 0
        return [{"params": params,
                 "summary": stats.summarize_runs([run_metrics(data)]) if ok else {},
                 "statuses": status, "why": why}]
    raise usage("%s is neither a vnperf sweep nor a `vnperf run --json` report" % path)


def _kind(v):
    return {dict: "an object", list: "a list", str: "a string", bool: "a bool",
            type(None): "null"}.get(type(v), "a number")


def _format(path, data, key, known):
    v = data[key]
    if isinstance(v, bool) or v not in known:
        raise usage("%s: %s %s: not a format this runner reads (%s)" % (
            path, key, json.dumps(v)[:40], ", ".join(map(str, known))))


def _params(path, where, p):
    """A point's parameters: an object of strings, numbers, bools or null."""
    if not isinstance(p, dict):
        raise usage("%s: %s is %s, not an object" % (path, where, _kind(p)))
    for k, v in p.items():
        if isinstance(v, (dict, list)):
            raise usage("%s: %s.%s is %s, not a value" % (path, where, k, _kind(v)))
        if isinstance(v, float) and not math.isfinite(v):
            raise usage("%s: %s.%s is %s" % (path, where, k, v))
    return p


def _statuses(path, where, v):
    if not isinstance(v, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                          for s in v):
        raise usage("%s: %s is %s, not a list of exit statuses" % (path, where, _kind(v)))
    return v


def _whys(path, where, v):
    if not isinstance(v, list) or not all(w is None or isinstance(w, str) for w in v):
        raise usage("%s: %s is %s, not a list of lines" % (path, where, _kind(v)))
    return v


def _value(path, where, metric, v):
    """A metric's value: a finite number (not a bool) in the counts' range,
    >= 0 unless the metric is SIGNED."""
    if not stats.is_number(v):
        raise usage("%s: %s is %s, not a number" % (path, where, json.dumps(v)[:40]))
    if abs(v) > NUMBER_MAX or not math.isfinite(v):
        raise usage("%s: %s is %s: not a finite number within 2^64" % (
            path, where, v if isinstance(v, float) else "a %d-digit integer" % len(str(v))))
    if v < 0 and metric not in SIGNED:
        raise usage("%s: %s is %s: %s is never negative" % (path, where, v, metric))
    return v


def _summary(path, where, metric, s):
    """A metric's summary, recomputed from its values (format 2) so a hand
    edit cannot make median and values disagree; format 1 has no values."""
    if not isinstance(s, dict):
        raise usage("%s: %s is %s, not an object" % (path, where, _kind(s)))
    if "values" in s:
        vals = s["values"]
        if not isinstance(vals, list) or not vals:
            raise usage("%s: %s.values is %s, not a list of numbers" % (
                path, where, _kind(vals) if vals != [] else "empty"))
        for i, v in enumerate(vals):
            _value(path, "%s.values[%d]" % (where, i), metric, v)
        return stats.summary(vals)
    out = {}
    for k in ("median", "min", "max", "mean"):
        out[k] = _value(path, "%s.%s" % (where, k), metric, s.get(k))
    n = s.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise usage("%s: %s.n is %s, not a count of runs" % (path, where, json.dumps(n)[:40]))
    out["n"] = n
    out["sd"] = _value(path, "%s.sd" % where, metric, s["sd"]) if "sd" in s else 0.0
    return out


def _point(path, i, p, fixed):
    where = "points[%d]" % i
    if not isinstance(p, dict):
        raise usage("%s: %s is %s, not an object" % (path, where, _kind(p)))
    if p.get("identity"):
        params = identity.recorded(_params(path, where + ".identity", p["identity"]))
    else:
        params = dict(fixed, **_params(path, where + ".params", p.get("params")))
    summary = p.get("summary") or {}
    if not isinstance(summary, dict):
        raise usage("%s: %s.summary is %s, not an object" % (path, where, _kind(summary)))
    summary = {m: _summary(path, "%s.summary.%s" % (where, m), m, s)
               for m, s in summary.items()}
    return {"params": params, "summary": summary,
            "statuses": _statuses(path, where + ".statuses", p.get("statuses", [])),
            "why": _whys(path, where + ".why", p.get("why", []))}
