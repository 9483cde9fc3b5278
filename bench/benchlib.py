"""What the side-by-side benchmarks share: running `tools/vnperf run --json`
(the vnperf side, through the runner's command line so the figures are the
runner's own), repeats interleaved A B A B, medians with their spread, and
the table with the ratio column (docs/bench.md)."""

import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VNPERF = os.path.join(ROOT, "tools", "vnperf")
PYTHON = "/usr/bin/python3"


def vnperf_run(args, timeout):
    """One `vnperf run --json --quiet ARGS`: the runner's report, or a
    report with status and why when it printed none."""
    argv = [PYTHON, VNPERF, "run", "--json", "--quiet"] + list(args)
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"status": 124, "why": "vnperf run did not end within %ds" % timeout}
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        err = [line for line in p.stderr.strip().splitlines() if line.strip()]
        return {"status": p.returncode or 70,
                "why": err[-1] if err else "vnperf run printed no report"}
    rep.setdefault("status", p.returncode)
    return rep


def cpu_roles(rep):
    """{role: CPU%} of a vnperf report or a linuxguest result."""
    if "cpu_pct" in rep and isinstance(rep["cpu_pct"], dict):
        return dict(rep["cpu_pct"])
    cpu = rep.get("cpu") or {}
    return {k: v["pct"] for k, v in cpu.get("roles", {}).items()}


def cpu_seconds(rep):
    cpu = rep.get("cpu") or {}
    return cpu.get("total_cpu_s")


def sd_us_per_kb(rep, nbytes):
    """Host CPU microseconds per KB moved (netperf's service demand)."""
    secs = cpu_seconds(rep)
    if not secs or not nbytes:
        return None
    return secs * 1e6 / (nbytes / 1024.0)


class Series:
    """Repeats of one figure: median, min, max, spread (max-min over the
    median, in %)."""

    def __init__(self):
        self.values = []
        self.failures = []

    def add(self, value, why=None):
        if value is None:
            self.failures.append(why or "no figure")
        else:
            self.values.append(float(value))

    def median(self):
        return statistics.median(self.values) if self.values else None

    def spread_pct(self):
        m = self.median()
        if not m:
            return None
        return 100.0 * (max(self.values) - min(self.values)) / m

    def summary(self):
        return {"median": self.median(), "min": min(self.values) if self.values else None,
                "max": max(self.values) if self.values else None, "n": len(self.values),
                "spread_pct": self.spread_pct(), "failures": self.failures}


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, unit=""):
    if v is None:
        return "-"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return "%.3g%s%s" % (v / div, suf, unit)
    return "%.3g%s" % (v, unit)


def cell(series, show=fmt):
    """'median ±spread%' (spread only with repeats), FAIL when every run
    failed."""
    m = series.median()
    if m is None:
        return "FAIL" if series.failures else "-"
    s = series.spread_pct()
    return show(m) + (" ±%.0f%%" % s if s is not None and len(series.values) > 1 else "")


def interleave(points, sides, repeat, label):
    """Runs every point repeat times, the sides in turn (A B A B: the
    host's drift hits both alike). sides: [(name, fn(point) -> figures
    dict, or {"why": line})]. Returns {point: {side: {figure: Series}}}
    and, per point, the pairwise ratios of the first figure of each side
    run in the same repeat ({point: {figure: Series}})."""
    out = {}
    pairs = {}
    for point in points:
        per = out.setdefault(point, {name: {} for name, _ in sides})
        pr = pairs.setdefault(point, {})
        for r in range(repeat):
            got = []
            for name, fn in sides:
                progress("%s %s (%s, %d/%d)" % (label, label_of(point), name, r + 1, repeat))
                fig = fn(point)
                got.append(fig)
                for k, v in fig.items():
                    if k != "why" and v is not None:
                        per[name].setdefault(k, Series()).add(v)
                if "why" in fig:
                    per[name].setdefault("_runs", Series()).add(None, fig["why"])
            a, b = got[0], got[-1]
            for k in a:
                if k != "why" and isinstance(a.get(k), (int, float)) and \
                        isinstance(b.get(k), (int, float)):
                    pr.setdefault(k, Series()).add(ratio(a[k], b[k]))
    return out, pairs


def report_json(bench, keys, points, sides, res, pairs):
    """interleave()'s results as one JSON object: per point (its fields
    named by keys), each side's figures and the back-to-back ratios."""
    out = []
    for p in points:
        row = dict(zip(keys, p))
        for name, _ in sides:
            row[name] = {k: v.summary() for k, v in res[p][name].items()}
        row["ratio"] = {k: v.summary() for k, v in pairs[p].items()}
        out.append(row)
    return {"bench": bench, "sides": [n for n, _ in sides], "points": out}


def pick(per_side, key):
    """The Series of one figure of one side, with the reasons of the runs
    of that side that failed."""
    s = Series()
    s.values = list(per_side[key].values) if key in per_side else []
    s.failures = list(per_side.get("_runs", Series()).failures)
    return s


def cpu_figures(rep, roles=("vcpu", "main", "peer", "iperf", "testpmd", "passt")):
    """Per-role CPU% as flat figures cpu_<role>, and the total."""
    out = {}
    got = cpu_roles(rep)
    for r in roles:
        if r in got:
            out["cpu_" + r] = got[r]
    if got:
        out["cpu_total"] = sum(got.values())
    return out


def thread_figures(rep, roles):
    """Each thread's CPU% in the roles as flat figures thread:ROLE:NAME,
    from the runner's accounting (its report's or a linuxguest result's
    cpu.per_thread, by role, name and thread id): NAME is the thread's
    own ("CPU 0/TCG", "rte-worker-1"), numbered #2, #3 when several of
    a role share it."""
    out = {}
    for t in (rep.get("cpu") or {}).get("per_thread") or []:
        if t["role"] not in roles:
            continue
        key = "thread:%s:%s" % (t["role"], t["name"])
        n = 2
        while key in out:
            key = "thread:%s:%s#%d" % (t["role"], t["name"], n)
            n += 1
        out[key] = t["pct"]
    return out


def threads_cell(per_side, roles, always=(), floor=1.0):
    """'NAME %, ...': each thread's median CPU% (thread_figures), in the
    roles' order then by name; a thread under floor% left out unless its
    role is in always; QEMU's main loop named main. '-' when none."""
    rows = []
    for key, series in per_side.items():
        if not key.startswith("thread:"):
            continue
        _, role, name = key.split(":", 2)
        m = series.median()
        if role in roles and m is not None and (m >= floor or role in always):
            rows.append((roles.index(role), "main" if role == "main" else name, m))
    return ", ".join("%s %.0f" % (name, m) for _, name, m in sorted(rows)) or "-"


def cpu_cell(per_side, roles=("vcpu", "main", "peer", "iperf")):
    """'vcpu/main/peer' medians in % ('-' for a role the side lacks)."""
    parts = []
    for r in roles:
        m = per_side.get("cpu_" + r, Series()).median()
        parts.append("-" if m is None else "%.0f" % m)
    return "/".join(parts)


def label_of(point):
    return " ".join(str(p) for p in point)


def ratio_cell(a, b):
    r = ratio(a, b)
    return "-" if r is None else "%.2fx" % r


def range_cell(series):
    """min-max of a Series ('-' when empty)."""
    if not series.values:
        return "-"
    return "%.2f-%.2f" % (min(series.values), max(series.values))


def print_table(header, rows, left=2, out=None):
    """The first `left` columns left-aligned, the rest right-aligned; to
    out (sys.stdout as it is at the call)."""
    out = out or sys.stdout
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(r):
        return "  ".join(("%-*s" if i < left else "%*s") % (w, str(v))
                         for i, (w, v) in enumerate(zip(widths, r)))
    print(line(header), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print(line(r), file=out, flush=True)


def failures(points):
    """One line per failed run: 'label: why' (each why once)."""
    seen = []
    for label, series in points:
        for why in series.failures:
            line = "%s: %s" % (label, why)
            if line not in seen:
                seen.append(line)
    return seen


def progress(line):
    print(line, file=sys.stderr, flush=True)
