"""`vnperf sweep`: the cartesian product of the axes, each point run
--repeat times (each run with its own teardown), summarized as median and
min-max, written to a results directory: results.json, results.csv, one
JSON report per run under runs/, and PNG plots when matplotlib is there."""

import copy
import csv
import itertools
import json
import os
import sys
import time

from . import exitcodes, pinning, plots, report, runner, stats
from .errors import RunnerError, usage
from .proc import Session
from .tables import fmt_num, table

# axis: (how it is applied, parser of one value)
AXES = {
    "size": ("opt", int),
    "kick_batch": ("config", int),
    "rx_refill": ("config", int),
    "ring": ("config", int),
    "txfull": ("config", str),
    "sessions": ("config", int),
    "event_idx": ("opt", lambda v: {"on": True, "off": False}[v]),
    "rate": ("opt", str),
    "backend": ("opt", str),
    "pin": ("opt", pinning.parse),
}


def parse_axis(name, text):
    """"64,128" -> [(label, value)]; pin uses ';' between settings since its
    own values contain commas."""
    how, conv = AXES[name]
    parts = text.split(";") if name == "pin" else text.split(",")
    out = []
    for p in parts:
        p = p.strip()
        if not p:
            raise usage("--%s %r: empty value" % (name.replace("_", "-"), text))
        try:
            out.append((p, conv(p)))
        except (ValueError, KeyError) as e:
            raise usage("--%s: bad value %r%s" % (name.replace("_", "-"), p,
                                                  ": %s" % e if str(e) else ""))
    return out


def points(axes):
    """[{axis: (label, value)}] over the cartesian product, in axis order."""
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def point_opts(base, point):
    o = copy.copy(base)
    o.config = list(base.config)
    for name, (label, value) in point.items():
        how, _ = AXES[name]
        if how == "config":
            o.config.append("%s=%s" % (name, label))
        else:
            setattr(o, name, value)
    return o


def run(base, axes, repeat, outdir, resolver):
    os.makedirs(os.path.join(outdir, "runs"), exist_ok=True)
    pts = points(axes)
    results = {"vnperf_sweep": 1, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "axes": {n: [l for l, _ in v] for n, v in axes.items()}, "repeat": repeat,
               "argv": sys.argv, "points": []}
    csv_rows = []
    total = len(pts) * repeat
    k = 0
    worst = 0
    for pt in pts:
        params = {n: l for n, (l, _) in pt.items()}
        opts = point_opts(base, pt)
        runs, statuses = [], []
        for r in range(repeat):
            k += 1
            desc = " ".join("%s=%s" % kv for kv in params.items())
            runner.log(opts, "sweep %d/%d: %s (repeat %d)" % (k, total, desc, r + 1))
            try:
                with Session() as s:
                    rep = runner.run_one(s, opts, resolver)
            except RunnerError as e:
                if e.status in (exitcodes.RUNNER_USAGE,):
                    raise
                rep = {"status": e.status, "why": e.line, "metrics": {}}
            statuses.append(rep["status"])
            worst = worst or rep["status"]
            name = "%03d.json" % k
            with open(os.path.join(outdir, "runs", name), "w") as f:
                f.write(report.to_json(rep))
            if rep["status"] != 0:
                runner.log(opts, "  failed: %s" % rep.get("why"))
                continue
            runs.append(rep["metrics"])
            row = dict(params, repeat=r + 1, status=rep["status"], run=name)
            row.update(rep["metrics"])
            csv_rows.append(row)
        results["points"].append({"params": params, "statuses": statuses,
                                  "summary": stats.summarize_runs(runs)})
        _write(outdir, results, csv_rows)
    made = plots.plot_sweep(results, outdir)
    results["plots"] = made
    _write(outdir, results, csv_rows)
    return results, worst


def _write(outdir, results, csv_rows):
    tmp = os.path.join(outdir, "results.json.tmp")
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(outdir, "results.json"))
    fields = []
    for r in csv_rows:
        for key in r:
            if key not in fields:
                fields.append(key)
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(csv_rows)


def render(results):
    names = list(results["axes"])
    headers = names + ["ok", "pps", "pps min-max", "Gbit/s", "CPU%", "SD us/pkt"]
    rows = []
    for p in results["points"]:
        s = p["summary"]
        pps, bps = s.get("pps"), s.get("bps")
        cpu, sd = s.get("cpu_pct"), s.get("sd_us_per_packet")
        ok = "%d/%d" % (sum(1 for x in p["statuses"] if x == 0), len(p["statuses"]))
        rows.append([p["params"][n] for n in names] + [
            ok, fmt_num(pps and pps["median"]),
            "%s-%s" % (fmt_num(pps["min"]), fmt_num(pps["max"])) if pps else "-",
            "%.3f" % (bps["median"] / 1e9) if bps else "-",
            "%.0f" % cpu["median"] if cpu else "-",
            "%.3f" % sd["median"] if sd else "-"])
    return table(headers, rows, align=["<"] * len(names) + [">"] * 6)


def add_axis_options(p):
    a = p.add_argument_group("axes (comma-separated values; the sweep is their product)")
    a.add_argument("--size", help="frame sizes, e.g. 64,128,512,1514")
    a.add_argument("--kick-batch", dest="kick_batch")
    a.add_argument("--rx-refill", dest="rx_refill")
    a.add_argument("--ring")
    a.add_argument("--event-idx", dest="event_idx", help="on,off")
    a.add_argument("--txfull", help="wait,drop")
    a.add_argument("--rate")
    a.add_argument("--sessions")
    a.add_argument("--backend", help="e.g. dgram,hub,vhost-user")
    a.add_argument("--pin", help="settings separated by ';', e.g. 'vcpu=0,main=0;vcpu=0,main=1'")
    p.add_argument("--repeat", type=int, default=1, help="runs per point (median, min-max)")
    p.add_argument("--out", default=None, help="results directory (default results/sweep-TIME)")


def axes_from(ns):
    axes = {}
    for name in AXES:
        v = getattr(ns, name, None)
        if v is not None:
            axes[name] = parse_axis(name, v)
    return axes
