"""`vnperf compare A B`: per point, B relative to A in percent, laid out
like the virtio/vhost mailing-list tables (rows: sizes or sessions; columns
pps%, BW%, SD%, CPU%, p99%). A difference inside the run-to-run spread
(the larger min-max range of A and B) is shown in parentheses: not
significant."""

import json
import os

from . import stats
from .errors import usage
from .tables import fmt_num, table

# (column, metric, what a rise means)
COLUMNS = (("pps%", "pps"), ("BW%", "bps"), ("SD%", "sd_us_per_packet"),
           ("CPU%", "cpu_pct"), ("p99%", "p99_ns"))


def load(path):
    """Points from a sweep directory/results.json or one run report:
    [{"params": {...}, "summary": {metric: summary}}]."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise usage("compare: cannot read %s: %s" % (path, e.strerror))
    except ValueError as e:
        raise usage("compare: %s is not JSON: %s" % (path, e))
    if isinstance(data, dict) and data.get("vnperf_sweep"):
        return data["points"]
    if isinstance(data, dict) and data.get("vnperf_report"):
        params = {"backend": data.get("backend")}
        for w in data.get("config", ()):
            k, _, v = w.partition("=")
            if k in ("size", "sessions"):
                params[k] = v
        return [{"params": params, "summary": stats.summarize_runs([data.get("metrics", {})])}]
    raise usage("compare: %s is neither a vnperf sweep nor a run report" % path)


def pct(a, b):
    if a is None or b is None or a == 0:
        return None
    return 100.0 * (b - a) / a


def significant(sa, sb):
    """False when the medians differ by no more than the larger spread."""
    spread = max(sa["max"] - sa["min"], sb["max"] - sb["min"])
    return abs(sb["median"] - sa["median"]) > spread


def key_of(params, names):
    return tuple(str(params.get(n)) for n in names)


def compare(points_a, points_b):
    """Rows matched on the parameters that vary (in either file); returns
    (key names, rows) with rows = [(key, {column: (pct, significant)},
    a summary, b summary)]."""
    allp = [p["params"] for p in points_a + points_b]
    names = sorted({k for p in allp for k in p})
    varying = [n for n in names if len({str(p.get(n)) for p in allp}) > 1]
    names = varying or names[:1]
    b_by_key = {key_of(p["params"], names): p for p in points_b}
    rows = []
    for pa in points_a:
        k = key_of(pa["params"], names)
        pb = b_by_key.get(k)
        if pb is None:
            continue
        cols = {}
        for col, metric in COLUMNS:
            sa, sb = pa["summary"].get(metric), pb["summary"].get(metric)
            if sa is None or sb is None:
                cols[col] = None
                continue
            cols[col] = (pct(sa["median"], sb["median"]), significant(sa, sb))
        rows.append((k, cols, pa["summary"], pb["summary"]))
    return names, rows


def _sortkey(k):
    return [(0, float(x)) if _isnum(x) else (1, x) for x in k]


def _isnum(x):
    try:
        float(x)
        return True
    except ValueError:
        return False


def render(names, rows, label_a="A", label_b="B"):
    if not rows:
        return "no common points to compare"
    headers = list(names) + ["pps %s" % label_a, "pps %s" % label_b] + [c for c, _ in COLUMNS]
    out = []
    for k, cols, sa, sb in sorted(rows, key=lambda r: _sortkey(r[0])):
        cells = list(k)
        cells.append(fmt_num((sa.get("pps") or {}).get("median")))
        cells.append(fmt_num((sb.get("pps") or {}).get("median")))
        for c, _ in COLUMNS:
            v = cols.get(c)
            if v is None or v[0] is None:
                cells.append("-")
            else:
                s = "%+.1f%%" % v[0]
                cells.append(s if v[1] else "(%s)" % s)
        out.append(cells)
    n = max([s.get("pps", {}).get("n", 1) for _, _, sa, sb in rows for s in (sa, sb)] or [1])
    note = ("(x): inside the run-to-run spread, not significant" if n > 1 else
            "one run per point: no spread known, every difference shown as significant")
    return table(headers, out, align=["<"] * len(names) + [">"] * (len(headers) - len(names))) \
        + "\n" + note + "\nSD = host CPU us per packet (lower is better); % = B relative to A"
