"""`vnperf compare A B`: per point, B (patched) relative to A (baseline) in
percent, laid out like the virtio/vhost mailing-list tables: one row per
size or session count, BW% pps% SD% CPU% p99% columns, an average row.
A change inside the run-to-run noise (stats.significant) is marked `~`."""

import csv
import io
import json

from . import resultsdir, stats
from .errors import usage
from .tables import fmt_num, table

# (column, metric). SD is netperf's service demand: host CPU us per KB.
# Loss is already a percentage: its column shows A's and B's, not a ratio.
COLUMNS = (("NDR%", "ndr_pps"), ("PDR%", "pdr_pps"),
           ("BW%", "bps"), ("pps%", "pps"), ("TPS%", "tps"), ("SD%", "sd_us_per_kb"),
           ("CPU%", "cpu_pct"), ("p99%", "p99_ns"), ("loss% A->B", "loss_pct"))
LOSS = "loss% A->B"

NOT_SIGNIFICANT = "~"


def parse_where(words, side):
    """["event_idx=on"] -> {"event_idx": "on"}."""
    out = {}
    for w in words or ():
        k, eq, v = w.partition("=")
        if not eq or not k:
            raise usage("--%s-where %r: expected KEY=VALUE" % (side, w))
        out[k] = v
    return out


def select(points, where, label):
    if not where:
        return points
    for k in where:
        if not any(k in p["params"] for p in points):
            raise usage("--%s-where: %s has no parameter %r" % (label, label, k))
    out = [p for p in points
           if all(str(p["params"].get(k)) == v for k, v in where.items())]
    if not out:
        raise usage("--%s-where %s: no point of %s matches" % (
            label, ",".join("%s=%s" % kv for kv in where.items()), label))
    return out


def _values(points, name):
    return {str(p["params"].get(name)) for p in points}


def key_names(a, b, by=None):
    """The parameters that tell rows apart: given with --by, else those
    both sides have and that vary inside A or inside B. Parameters constant
    on each side but different between them are what the A/B changes."""
    common = sorted(set.intersection(*[set(p["params"]) for p in a + b]))
    if by:
        for n in by:
            if n not in common:
                raise usage("--by %s: not a parameter of both A and B (they share: %s)"
                            % (n, ", ".join(common) or "none"))
        return list(by)
    return [n for n in common if len(_values(a, n)) > 1 or len(_values(b, n)) > 1]


def differences(a, b):
    """{param: (A value, B value)} for parameters constant on each side
    that differ between A and B ("default" where a side does not set it)."""
    out = {}
    for n in sorted({k for p in a + b for k in p["params"]}):
        va = {str(p["params"].get(n, "default")) for p in a}
        vb = {str(p["params"].get(n, "default")) for p in b}
        if len(va) == 1 and len(vb) == 1 and va != vb:
            out[n] = (va.pop(), vb.pop())
    return out


def _index(points, names, label):
    idx = {}
    for p in points:
        k = tuple(str(p["params"].get(n)) for n in names)
        if k in idx:
            first = idx[k]["params"]
            others = sorted(n for n in p["params"]
                            if n not in names and str(p["params"][n]) != str(first.get(n)))
            raise usage("%s has several points for %s (they differ in %s): keep one with "
                        "--%s-where %s=VALUE, or name the row parameters with --by" % (
                            label, _keytext(names, k) or "the comparison", ", ".join(others),
                            label.lower(), others[0] if others else "KEY"))
        idx[k] = p
    return idx


def _keytext(names, k):
    return " ".join("%s=%s" % nv for nv in zip(names, k))


def compare(a, b, by=None, threshold_pct=stats.DEFAULT_THRESHOLD_PCT):
    """The comparison as a dict (what --json prints)."""
    names = key_names(a, b, by)
    ia, ib = _index(a, names, "A"), _index(b, names, "B")
    keys = [k for k in ia if k in ib]
    if not keys:
        raise usage("A and B share no point (A: %s; B: %s)" % (
            "; ".join(_keytext(names, k) for k in list(ia)[:4]) or "-",
            "; ".join(_keytext(names, k) for k in list(ib)[:4]) or "-"))
    rows = []
    for k in sorted(keys, key=_sortkey):
        sa, sb = ia[k]["summary"], ib[k]["summary"]
        cells = {}
        for col, metric in COLUMNS:
            ma, mb = sa.get(metric), sb.get(metric)
            if ma is None or mb is None:
                continue
            sig, rule = stats.significant(ma, mb, threshold_pct)
            cells[col] = {"metric": metric, "a": ma["median"], "b": mb["median"],
                          "a_min": ma["min"], "a_max": ma["max"], "a_n": ma["n"],
                          "b_min": mb["min"], "b_max": mb["max"], "b_n": mb["n"],
                          "pct": stats.pct_change(ma["median"], mb["median"]),
                          "significant": sig, "rule": rule}
        rows.append({"params": dict(zip(names, k)), "columns": cells})
    cols = [c for c, _ in COLUMNS if any(c in r["columns"] for r in rows)]
    average = {}
    for c in cols:
        vals = [r["columns"][c]["pct"] for r in rows
                if c != LOSS and c in r["columns"] and r["columns"][c]["pct"] is not None]
        average[c] = sum(vals) / len(vals) if vals else None
    return {"vnperf_compare": 1, "key": names, "columns": cols, "rows": rows,
            "average": average, "differences": {n: list(v) for n, v in differences(a, b).items()},
            "threshold_pct": threshold_pct}


def _sortkey(k):
    return [(0, float(x), "") if _isnum(x) else (1, 0.0, x) for x in k]


def _isnum(x):
    try:
        float(x)
        return True
    except ValueError:
        return False


def _pct_cell(c):
    if c is None:
        return "-"
    if c["metric"] == "loss_pct":
        s = "%.2f->%.2f" % (c["a"], c["b"])
    elif c["pct"] is None:
        return "-"
    else:
        s = "%+.1f" % c["pct"]
    return s if c["significant"] else NOT_SIGNIFICANT + s


def render(cmp, label_a="A", label_b="B"):
    names = cmp["key"] or ["point"]
    cols = cmp["columns"]
    # Request/response runs move few bytes: their scale is transactions/s.
    # Searches (vnperf ndr): the rate found.
    base_metric = "tps" if "TPS%" in cols else "bps" if "BW%" in cols else \
        "ndr_pps" if "NDR%" in cols else "pdr_pps" if "PDR%" in cols else "pps"
    unit, scale = {"bps": ("Gbit/s", 1e-9), "tps": ("tps", 1.0), "pps": ("pps", 1.0),
                   "ndr_pps": ("NDR pps", 1.0), "pdr_pps": ("PDR pps", 1.0)}[base_metric]
    col_of = {m: c for c, m in COLUMNS}
    headers = list(names) + ["%s %s" % (unit, "A"), "%s %s" % (unit, "B")] + cols
    out = []
    for r in cmp["rows"]:
        cells = [r["params"][n] for n in cmp["key"]] or ["all"]
        main = r["columns"].get(col_of[base_metric])
        for side in ("a", "b"):
            v = main[side] * scale if main else None
            cells.append("%.3f" % v if main and base_metric == "bps" else fmt_num(v))
        cells += [_pct_cell(r["columns"].get(c)) for c in cols]
        out.append(cells)
    if len(cmp["rows"]) > 1:
        avg = ["average"] + [""] * (len(names) - 1) + ["", ""]
        avg += ["-" if cmp["average"][c] is None else "%+.1f" % cmp["average"][c] for c in cols]
        out.append(avg)
    lines = ["baseline A: %s" % label_a, "patched  B: %s" % label_b]
    for n, (va, vb) in cmp["differences"].items():
        lines.append("  %s: %s -> %s" % (n, va, vb))
    lines.append(table(headers, out, align=["<"] * len(names)
                       + [">"] * (len(headers) - len(names))))
    lines.append(_legend(cmp))
    return "\n".join(lines)


def _legend(cmp):
    rules = {c["rule"] for r in cmp["rows"] for c in r["columns"].values()}
    why = []
    if "range" in rules:
        why.append("the min-max ranges of A's and B's repeats overlap")
    if "threshold" in rules:
        why.append("one run per side and |change| <= %g%%" % cmp["threshold_pct"])
    return ("%% = (B - A) / A of the medians. SD = host CPU us per KB (lower is better). "
            "%s = not significant: %s.%s" % (
                NOT_SIGNIFICANT, "; or ".join(why),
                " loss% A->B: the medians of A and B (loss between the two sides' counts)."
                if LOSS in cmp["columns"] else ""))


CSV_FIELDS = ("a", "b", "pct", "significant")


def to_csv(cmp):
    metrics = [m for c, m in COLUMNS if c in cmp["columns"]]
    fields = list(cmp["key"]) + ["%s_%s" % (m, f) for m in metrics for f in CSV_FIELDS]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields)
    w.writeheader()
    for r in cmp["rows"]:
        row = dict(r["params"])
        for c in r["columns"].values():
            row.update({"%s_%s" % (c["metric"], f): c[f] for f in CSV_FIELDS})
        w.writerow(row)
    return buf.getvalue()


def to_json(cmp):
    return json.dumps(cmp, indent=1, sort_keys=True)


def add_arguments(p):
    p.add_argument("a", metavar="A", help="baseline: a sweep directory, its results.json, or a "
                   "`vnperf run --json` report")
    p.add_argument("b", metavar="B", help="patched, same forms")
    p.add_argument("--by", default=None, help="row parameters, comma-separated (default: "
                   "those that vary inside A or B, e.g. size)")
    p.add_argument("--a-where", action="append", default=[], metavar="KEY=VALUE",
                   dest="a_where", help="use only A's points with this parameter value "
                   "(e.g. A and B from one sweep: --a-where event_idx=on --b-where event_idx=off)")
    p.add_argument("--b-where", action="append", default=[], metavar="KEY=VALUE",
                   dest="b_where", help="the same for B")
    p.add_argument("--threshold", type=float, default=stats.DEFAULT_THRESHOLD_PCT,
                   metavar="PCT", help="with one run per side, changes up to PCT%% are not "
                   "significant (default %(default)s)")
    f = p.add_mutually_exclusive_group()
    f.add_argument("--json", action="store_true", help="print the comparison as JSON")
    f.add_argument("--csv", action="store_true", help="print the comparison as CSV")


def main(opts):
    """`vnperf compare`: returns the exit status."""
    if opts.threshold < 0:
        raise usage("--threshold %g: must be >= 0" % opts.threshold)
    a = select(resultsdir.load(opts.a), parse_where(opts.a_where, "a"), "A")
    b = select(resultsdir.load(opts.b), parse_where(opts.b_where, "b"), "B")
    by = [n.strip() for n in opts.by.split(",") if n.strip()] if opts.by else None
    cmp = compare(a, b, by, opts.threshold)
    if opts.json:
        cmp.update({"a": opts.a, "b": opts.b})
        print(to_json(cmp))
    elif opts.csv:
        print(to_csv(cmp), end="")
    else:
        print(render(cmp, _label(opts.a, opts.a_where), _label(opts.b, opts.b_where)))
    return 0


def _label(path, where):
    return path + (" (%s)" % ", ".join(where) if where else "")
