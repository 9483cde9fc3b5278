"""`vnperf compare A B`: per point, B (patched) relative to A (baseline),
laid out like the virtio/vhost mailing-list tables: one row per size or
session count, BW% pps% SD% CPU% p99% columns, an average row, and the
loss, drops, kicks and backend batch of both sides.

Points pair only when their identities (identity.py) agree except in the
A/B dimensions (--ab, or the keys of --a-where/--b-where); anything else
that differs is refused in one line. A change is significant when the
chosen test (Welch's t-test by default, stats.py) says so after Holm's
correction over every test of the table; `~` marks the rest.

It reads typed points (result.Point, a result.Summary per metric):
resultsdir.load's, or points given as their JSON objects (typed()); it
makes a typed result.Comparison (Rows of Cells), which the table, CSV,
JSON (its to_dict()) and the HTML page read."""

import csv
import difflib
import io
import json
import os

from .. import optypes, result
from ..analysis import stats
from ..errors import usage
from ..report import resultsdir
from ..report.tables import fmt_num, table

# Ratio columns: (B - A) / A in %, tested: the rates a search found (vnperf
# ndr), then BW, pps, TPS. SD is netperf's service demand: host CPU us per
# KB, or per transaction for request/response runs.
RATIOS = (("NDR%", "ndr_pps"), ("PDR%", "pdr_pps"),
          ("BW%", "bps"), ("pps%", "pps"), ("TPS%", "tps"), ("SD%", "sd_us_per_kb"),
          ("SD%", "sd_us_per_tx"), ("CPU%", "cpu_pct"), ("p99%", "p99_ns"))
# Value columns: A's and B's medians side by side. Loss and drops are
# tested too; the driver and backend figures say whether a knob acted.
VALUES = (("loss% A->B", "loss_pct", "%.2f", True),
          ("drops A->B", "tx_dropped", None, True),
          ("kicks/pkt A->B", "kicks_per_packet", "%.3g", False),
          ("supp% A->B", "suppressed_pct", "%.1f", False),
          ("batch A->B", "backend_batch", "%.1f", False))
NOT_SIGNIFICANT = "~"
# A/B dimensions that bring their companions: a build is named by its file
# and told apart by its hash (image) or version (qemu).
AB_COMPANIONS = {"image": ("image_sha",), "qemu": ("qemu_version",)}
# Dimensions whose companion is the content's hash: the same hash is the
# same build whatever the file is called (a version string is not: a
# patched QEMU keeps its version).
CONTENT_IDS = {"image": "image_sha"}
# A change cell whose minimum detectable effect is above this (%) could not
# have seen a change that size: warned under the table.
MDE_WARN_PCT = 10.0
# Runner options whose value a run's identity stores under another name.
OPTION_PARAMS = {"memory": "memory_mb"}


def parse_where(words, side):
    """["event_idx=on"] -> {"event_idx": "on"}."""
    out = {}
    for w in words or ():
        k, eq, v = w.partition("=")
        if not eq or not k:
            raise usage("--%s-where %r: expected KEY=VALUE" % (side, w))
        out[k] = v
    return out


def typed(points):
    """Points as result.Point (a JSON object's made typed)."""
    return [result.Point.from_dict(p) for p in points]


def known_params(points):
    return {k for p in typed(points) for k in p.params}


def param_name(name, known):
    """The stored parameter a name from the command line means: as stored,
    or as the option is spelled (event-idx: event_idx, memory: memory_mb);
    None when neither is known."""
    spelled = name.replace("-", "_")
    return next((n for n in (name, spelled, OPTION_PARAMS.get(spelled)) if n in known), None)


def did_you_mean(name, known):
    """' (did you mean X?)' for the known parameter closest to name."""
    close = difflib.get_close_matches(name.replace("-", "_"), sorted(known), n=1)
    return " (did you mean %s?)" % close[0] if close else ""


def resolve_where(points, where, label):
    """where with its keys as the points store them; a key that names no
    parameter is refused, with the closest one."""
    known = known_params(points)
    out = {}
    for k, v in where.items():
        n = param_name(k, known)
        if n is None:
            raise usage("--%s-where: %s has no parameter %r%s" % (
                label.lower(), label, k, did_you_mean(k, known)))
        out[n] = v
    return out


def select(points, where, label):
    points = typed(points)
    if not where:
        return points
    out = [p for p in points
           if all(str(p.params.get(k)) == v for k, v in where.items())]
    if not out:
        raise usage("--%s-where %s: no point of %s matches" % (
            label.lower(), ",".join("%s=%s" % kv for kv in where.items()), label))
    return out


def split_arms(points, ab):
    """One sweep as both A and B, --ab naming an axis of two values in it
    (e.g. --image base.elf,patched.elf): the wheres of A (its first value,
    in sweep order) and B (its second); None when no such axis."""
    for n in sorted(ab):
        vals = []
        for p in typed(points):
            v = str(p.params.get(n, "-"))
            if v not in vals:
                vals.append(v)
        if len(vals) == 2:
            return {n: vals[0]}, {n: vals[1]}
    return None


def _values(points, name):
    return {str(p.params.get(name, "-")) for p in points}


def key_names(a, b, by=None):
    """The parameters that tell rows apart: given with --by, else those
    that vary inside A or inside B."""
    names = sorted({k for p in a + b for k in p.params})
    if by:
        common = set.intersection(*[set(p.params) for p in a + b])
        for n in by:
            if n not in common:
                raise usage("--by %s: not a parameter of both A and B%s" % (
                    n, did_you_mean(n, common)))
        return list(by)
    return [n for n in names if len(_values(a, n)) > 1 or len(_values(b, n)) > 1]


def differences(a, b, rows):
    """{param: (A value, B value)} for the parameters, other than the row
    ones, that differ between A and B ("-" where a side lacks it)."""
    a, b = typed(a), typed(b)
    out = {}
    for n in sorted({k for p in a + b for k in p.params} - set(rows)):
        va, vb = _values(a, n), _values(b, n)
        if va != vb:
            out[n] = (", ".join(sorted(va)), ", ".join(sorted(vb)))
    return out


def check_alike(diffs, ab):
    """Refuses to pair points that differ in more than the A/B dimensions."""
    ab = set(ab) | {c for n in ab for c in AB_COMPANIONS.get(n, ())}
    unnamed = [n for n in diffs if n not in ab]
    if unnamed:
        raise usage("A and B differ in %s: not the same experiment; name the A/B dimension "
                    "with --ab %s (or compare alike runs)" % (
                        "; ".join("%s (%s vs %s)" % (n, diffs[n][0], diffs[n][1])
                                  for n in unnamed), ",".join(unnamed)))


def index(points, names, label):
    """The points by their row key (str values, "-" where a point lacks the
    parameter): compare's rows and anything that pairs runs with them."""
    idx = {}
    for p in points:
        k = tuple(str(p.params.get(n, "-")) for n in names)
        if k in idx:
            raise usage("%s has several points for %s: keep one with --%s-where, or name "
                        "the row parameters with --by" % (
                            label, _keytext(names, k) or "the comparison", label.lower()))
        idx[k] = p
    return idx


def _keytext(names, k):
    return " ".join("%s=%s" % nv for nv in zip(names, k))


def _cell(metric, sa, sb, method):
    """One metric of one row (sa, sb: result.Summary): both sides'
    figures, the change, the test (a result.Cell, every member written)."""
    va, vb = list(sa.values or ()), list(sb.values or ())
    res = stats.test(va, vb, method)
    p = ci = se = df = None
    if res is not None:
        p = res["p"]
        if res["ci"] is not None and sa.mean:
            ci = tuple(100.0 * x / abs(sa.mean) for x in res["ci"])
        # The detectable change is Welch's whatever the test (a rank test
        # has no standard error; its own limit is warned apart).
        w = res if method == "welch" else stats.test(va, vb, level=None)
        if sa.mean:
            se, df = 100.0 * w["se"] / abs(sa.mean), w["df"]
    return result.Cell.given(metric=metric, a=sa.median, b=sb.median, a_mean=sa.mean,
                             b_mean=sb.mean, a_n=sa.n, b_n=sb.n,
                             pct=stats.pct_change(sa.mean, sb.mean), p=p, ci_pct=ci,
                             se_pct=se, df=df)


def _row_cell(col, metric, tested, sa, sb, method):
    """_cell as column col shows it: an untested column has no p nor
    interval, a value column (A->B) no change to detect."""
    c = _cell(metric, sa, sb, method)
    if not tested:
        c = c.but(p=None, ci_pct=None)
    if (col, metric) not in RATIOS:
        c = c.but(se_pct=None)
    return c


def _average(rows, cols, sides):
    """The average row: per change column, the mean of the rows' %, with
    the interval and p of stats.mean_change over the rows' runs (none when
    a row has fewer than two runs a side)."""
    out = {}
    for col, metric in cols:
        vals = [r.columns[col].pct for r in rows
                if col in r.columns and r.columns[col].pct is not None]
        res = stats.mean_change([(list(sa[metric].values or ()), list(sb[metric].values or ()))
                                 for sa, sb in sides if metric in sa and metric in sb]) or {}
        out[col] = result.Cell.given(
            metric=metric, pct=stats.mean(vals) if vals else None, p=res.get("p"),
            ci_pct=tuple(res["ci"]) if res else None, se_pct=res.get("se"), df=res.get("df"))
    return out


def _columns(rows_summaries):
    """The columns both sides of some row have; SD per transaction where
    the runs count transactions."""
    has = lambda m: any(m in sa and m in sb for sa, sb in rows_summaries)  # noqa: E731
    sd = "sd_us_per_tx" if has("tps") else "sd_us_per_kb"
    cols = [(c, m, None, True) for c, m in RATIOS
            if has(m) and (c != "SD%" or m == sd)]
    return cols + [v for v in VALUES if has(v[1])]


def _failures(p):
    return ["status %s: %s" % (s, w) for s, w in zip(p.statuses, p.why) if s != 0]


def compare(a, b, by=None, ab=(), method="welch", alpha=stats.ALPHA):
    """The result.Comparison (what --json prints) of points a and b
    (result.Point or their JSON objects)."""
    a, b = typed(a), typed(b)
    names = key_names(a, b, by)
    diffs = differences(a, b, names)
    check_alike(diffs, ab)
    ia, ib = index(a, names, "A"), index(b, names, "B")
    keys = sorted((k for k in ia if k in ib), key=_sortkey)
    if not keys:
        raise usage("A and B share no point (A: %s; B: %s)" % (
            "; ".join(_keytext(names, k) for k in list(ia)[:4]) or "-",
            "; ".join(_keytext(names, k) for k in list(ib)[:4]) or "-"))
    cols = _columns([(ia[k].summary, ib[k].summary) for k in keys])
    _refuse_zero_rates(cols, ia, ib, names, keys)
    rows = [_row(names, k, ia[k], ib[k], cols, method) for k in keys]
    # One row: the average would repeat it.
    average = _average(rows, [(c, m) for c, m, _, _ in cols if (c, m) in RATIOS],
                       [(ia[k].summary, ib[k].summary) for k in keys]) \
        if len(rows) > 1 else {}
    cells, ntests = _adjust(_cells(rows, average), alpha)
    mde_alpha = alpha / max(ntests, 1)
    rows, average = _with_cells(rows, average, _detectable(cells, mde_alpha))
    return result.Comparison.given(
        vnperf_compare=3, key=tuple(names), columns=tuple(c for c, _, _, _ in cols),
        rows=tuple(rows), average=average,
        differences={n: tuple(v) for n, v in diffs.items()}, ab=tuple(sorted(ab)),
        same=tuple(same_ab(a, b, ab, diffs)),
        only_a=tuple(_keytext(names, k) for k in ia if k not in ib),
        only_b=tuple(_keytext(names, k) for k in ib if k not in ia),
        test=method, alpha=alpha, tests=ntests, mde_alpha=mde_alpha, mde_power=stats.POWER)


def _row(names, k, pa, pb, cols, method):
    """The result.Row of key k: a cell per column both points have, the
    failed runs of each."""
    cells = {c: _row_cell(c, m, tested, pa.summary[m], pb.summary[m], method)
             for c, m, _, tested in cols if m in pa.summary and m in pb.summary}
    return result.Row.given(params=dict(zip(names, k)), columns=cells,
                            failed={"a": _failures(pa), "b": _failures(pb)})


def _cells(rows, average):
    """Every cell of the table in order: the rows', then the average's."""
    return [c for r in rows for c in r.columns.values()] + list(average.values())


def _with_cells(rows, average, cells):
    """rows and average with their cells replaced by cells (in _cells'
    order)."""
    it = iter(cells)
    rows = [r.but(columns={col: next(it) for col in r.columns}) for r in rows]
    return rows, {col: next(it) for col in average}


def same_ab(a, b, ab, diffs):
    """Lines for the A/B dimensions A and B do not differ in: such a
    table is an A/A, whatever its average says."""
    companions = {c for n in ab for c in AB_COMPANIONS.get(n, ())}
    out = []
    for n in sorted(set(ab) - companions):
        sha = CONTENT_IDS.get(n)
        if n not in diffs and not any(c in diffs for c in AB_COMPANIONS.get(n, ())):
            out.append("A and B do not differ in %s (%s): this table is an A/A" % (
                n, ", ".join(sorted(_values(a, n)))))
        elif sha and n in diffs and sha not in diffs and _values(a, sha) != {"-"}:
            out.append("A and B are the same build (%s %s on both; %s %s vs %s): this table "
                       "is an A/A" % (sha, ", ".join(sorted(_values(a, sha))), n,
                                      diffs[n][0], diffs[n][1]))
    return out


# The table's lead rate, in render()'s order: what every change is read
# against.
LEAD_METRICS = (("TPS%", "tps"), ("BW%", "bps"), ("NDR%", "ndr_pps"), ("PDR%", "pdr_pps"),
                ("pps%", "pps"))


def _refuse_zero_rates(cols, ia, ib, names, keys):
    """A point whose lead rate is 0 in every run measured nothing: no
    change can be computed against it, so refuse rather than print '-'."""
    have = {c for c, _, _, _ in cols}
    lead = next((m for c, m in LEAD_METRICS if c in have), None)
    for k in keys if lead else ():
        for label, idx in (("A", ia), ("B", ib)):
            s = idx[k].summary.get(lead)
            if s is not None and s.max == 0:
                at = _keytext(names, k)
                raise usage("%s%s: %s is 0 in every run (%d): nothing to compare" % (
                    label, " " + at if at else "", lead, s.n))


def _adjust(cells, alpha):
    """Holm over every test of the table, the average row's included: the
    cells with their adjusted p and whether significant, and the number
    of tests."""
    adj = iter(stats.holm([c.p for c in cells if c.p is not None]))
    out = []
    for c in cells:
        p_adj = next(adj) if c.p is not None else None
        out.append(c.but(p_adj=p_adj, significant=p_adj is not None and p_adj < alpha))
    return out, sum(c.p is not None for c in cells)


def _detectable(cells, level):
    """Each change cell's minimum detectable effect in % (stats.mde) at
    level, the one Holm's first rejection needs (alpha over the table's
    tests), so no cell can be called with less."""
    return [c.but(mde_pct=None if c.se_pct is None else stats.mde(c.se_pct, c.df, level))
            for c in cells]


def _sortkey(k):
    return [(0, float(x), "") if _isnum(x) else (1, 0.0, x) for x in k]


def _isnum(x):
    try:
        float(x)
        return True
    except ValueError:
        return False


def _mark(c, text):
    return text if c.significant else NOT_SIGNIFICANT + text


def _value_cell(c, fmt):
    if c is None:
        return "-"
    show = (lambda v: fmt % v) if fmt else (lambda v: "0" if v == 0 else fmt_num(v))
    return _mark(c, "%s->%s" % (show(c.a), show(c.b))) if c.p is not None \
        else "%s->%s" % (show(c.a), show(c.b))


def _test_cells(c):
    """The lead change's 95% CI, adjusted p and minimum detectable effect."""
    if c is None:
        return ["-", "-", "-"]
    return ["%+.1f..%+.1f" % tuple(c.ci_pct) if c.ci_pct else "-",
            "%.2g" % c.p_adj if c.p_adj is not None else "-",
            "%.1f" % c.mde_pct if c.mde_pct is not None else "-"]


def _pct_cell(c):
    if c is None or c.pct is None:
        return "-"
    return _mark(c, "%+.1f" % c.pct)


def lead_column(cols):
    """The table's lead change column: requests/response runs move few
    bytes, their scale is transactions/s; searches (vnperf ndr): the rate
    found."""
    return "TPS%" if "TPS%" in cols else "BW%" if "BW%" in cols else \
        "NDR%" if "NDR%" in cols else "PDR%" if "PDR%" in cols else "pps%"


def row_name(cmp, r):
    """A row (result.Row) of cmp (result.Comparison) as its key's values
    name it ("size=64"), "all" without one."""
    return _keytext(cmp.key, [r.params[n] for n in cmp.key]) or "all"


def table_cells(cmp):
    """(headers, rows of cells, unit) of the table render() prints."""
    names = list(cmp.key) or ["point"]
    cols = cmp.columns
    lead = lead_column(cols)
    unit, scale = {"BW%": ("Gbit/s", 1e-9), "TPS%": ("tps", 1.0), "pps%": ("pps", 1.0),
                   "NDR%": ("NDR pps", 1.0), "PDR%": ("PDR pps", 1.0)}[lead]
    headers = names + ["%s A" % unit, "%s B" % unit, lead + " 95% CI", "p", "mde%"] + \
        list(cols)
    out = [_row_cells(cmp, r, lead, scale) for r in cmp.rows]
    average = cmp.average or {}
    if average:
        avg = ["average"] + [""] * (len(names) - 1) + ["", ""] + \
            _test_cells(average.get(lead))
        avg += [_pct_cell(average[c]) if c in average else "" for c in cols]
        out.append(avg)
    return headers, out, unit


def _row_cells(cmp, r, lead, scale):
    """One row of table_cells: its key, both sides' lead rate, the lead
    change's test, a cell per column; FAILED in place of A's rate."""
    fmts = {c: f for c, _, f, _ in VALUES}
    cells = [r.params[n] for n in cmp.key] or ["all"]
    main = r.columns.get(lead)
    for mean in (main.a_mean, main.b_mean) if main else (None, None):
        v = mean * scale if main else None
        cells.append("%.3f" % v if main and lead == "BW%" else fmt_num(v))
    cells += _test_cells(main)
    for c in cmp.columns:
        cell = r.columns.get(c)
        cells.append(_value_cell(cell, fmts[c]) if c in fmts else _pct_cell(cell))
    if r.failed["a"] or r.failed["b"]:
        cells[len(cmp.key or ["point"])] = "FAILED"
    return cells


def render(cmp, label_a="A", label_b="B"):
    headers, out, unit = table_cells(cmp)
    nkey = len(cmp.key or ["point"])
    lines = list(cmp.same) + ["baseline A: %s" % label_a, "patched  B: %s" % label_b]
    for n, (va, vb) in (cmp.differences or {}).items():
        lines.append("  %s: %s -> %s" % (n, va, vb))
    if not cmp.differences:
        lines.append("  (A and B record the same parameters: the A/B is outside what the "
                     "runs record, or A is B)")
    lines.append(table(headers, out, align=["<"] * nkey + [">"] * (len(headers) - nkey)))
    lines += notes(cmp, unit)
    return "\n".join(lines)


def notes(cmp, unit):
    """The lines under the table: what its cells mean, warnings, rows
    left out, failed runs."""
    test = {"welch": "Welch's t-test", "mwu": "Mann-Whitney U"}[cmp.test]
    lines = ["%s A, %s B: the means of the repeats (the sweep's table shows medians); %% = "
             "(B - A) / A of those means; 95%% CI: that change's confidence "
             "interval (Welch); p: %s, Holm-adjusted over the table's %d tests. %s = not "
             "significant (adjusted p >= %g, or fewer than 2 runs on a side: no test). "
             "A->B: the medians of A and B. mde%%: the smallest true change Welch's test "
             "calls with %g%% power at p < %.2g (alpha over the tests: Holm's first step), "
             "with that row's repeats and spread. average: the mean of the rows' %%, its CI "
             "and p from the rows' runs, tested with the rest." % (
                 unit, unit, test, cmp.tests, NOT_SIGNIFICANT, cmp.alpha,
                 100 * cmp.mde_power, cmp.mde_alpha)]
    lines += _mde_warnings(cmp)
    if "SD%" in cmp.columns:
        lines.append("SD = host CPU us per %s (lower is better)." % (
            "transaction" if "TPS%" in cmp.columns else "KB"))
    for only, what in ((cmp.only_a, "only in A"), (cmp.only_b, "only in B")):
        if only:
            lines.append("rows %s (not compared): %s" % (what, "; ".join(only)))
    for r in cmp.rows:
        for side in ("a", "b"):
            if r.failed[side]:
                lines.append("FAILED %s %s: %d run(s): %s" % (
                    side.upper(), row_name(cmp, r), len(r.failed[side]), r.failed[side][0]))
    return lines


def named_cells(cmp):
    """(row, column, result.Cell) for every cell of the table, the average
    row's included."""
    cells = [(row_name(cmp, r), col, c) for r in cmp.rows for col, c in r.columns.items()]
    return cells + [("average", col, c) for col, c in (cmp.average or {}).items()]


def _mde_warnings(cmp):
    """A warning when a change cell could not have seen a change of
    MDE_WARN_PCT, and when Mann-Whitney cannot reach the level at all."""
    cells = named_cells(cmp)
    known = [x for x in cells if x[2].mde_pct is not None]
    blind = [x for x in known if x[2].mde_pct > MDE_WARN_PCT]
    lines = []
    if blind:
        at, col, worst = max(blind, key=lambda x: x[2].mde_pct)
        lines.append("warning: %d of %d change cells could not have seen a change below %g%% "
                     "(mde%% up to %.1f: %s at %s): more --repeat or a quieter host" % (
                         len(blind), len(known), MDE_WARN_PCT, worst.mde_pct, col, at))
    if cmp.test == "mwu":
        # The average row's cells have no run counts: no floor of their own.
        floors = [stats.mwu_floor(c.a_n, c.b_n) for _, _, c in cells
                  if c.p is not None and c.a_n is not None]
        stuck = [f for f in floors if f >= cmp.mde_alpha]
        if stuck:
            lines.append("warning: %d of %d Mann-Whitney tests cannot give p below %.2g with "
                         "their runs, above the %.2g a first rejection needs: no change could "
                         "be significant there: more --repeat or --test welch" % (
                             len(stuck), len(floors), min(stuck), cmp.mde_alpha))
    return lines


CSV_FIELDS = ("a", "b", "pct", "p", "p_adj", "significant", "mde_pct")


def to_csv(cmp):
    metrics = []
    for r in cmp.rows:
        for c in r.columns.values():
            if c.metric not in metrics:
                metrics.append(c.metric)
    fields = list(cmp.key) + ["%s_%s" % (m, f) for m in metrics for f in CSV_FIELDS]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields)
    w.writeheader()
    for r in cmp.rows:
        row = dict(r.params)
        for c in r.columns.values():
            row.update({"%s_%s" % (c.metric, f): getattr(c, f) for f in CSV_FIELDS})
        w.writerow(row)
    return buf.getvalue()


def to_json(cmp):
    """cmp (result.Comparison) as --json prints it and compare.json holds
    it."""
    return json.dumps(cmp.to_dict(), indent=1, sort_keys=True)


def add_arguments(p):
    p.add_argument("a", metavar="A", help="baseline: a sweep directory, its results.json, or a "
                   "`vnperf run --json` report")
    p.add_argument("b", metavar="B", help="patched, same forms")
    p.add_argument("--by", default=None, help="row parameters, comma-separated (default: "
                   "those that vary inside A or B, e.g. size)")
    p.add_argument("--ab", default=None, metavar="KEY,...", help="the parameters A and B may "
                   "differ in (the A/B dimension, e.g. qemu or txfull); any other difference "
                   "is refused")
    p.add_argument("--a-where", action="append", default=[], metavar="KEY=VALUE",
                   dest="a_where", help="use only A's points with this parameter value "
                   "(e.g. A and B from one sweep: --a-where event_idx=on --b-where event_idx=off)")
    p.add_argument("--b-where", action="append", default=[], metavar="KEY=VALUE",
                   dest="b_where", help="the same for B")
    p.add_argument("--test", choices=stats.TESTS, default="welch",
                   help="welch: Welch's t-test (default); mwu: Mann-Whitney U")
    p.add_argument("--alpha", type=optypes.finite_float, default=stats.ALPHA,
                   help="significance level of the table (default %(default)s)")
    p.add_argument("--out", type=optypes.out_dir, default=None, metavar="DIR",
                   help="also write the comparison to DIR/compare.json (vnperf report DIR "
                   "makes its page)")
    f = p.add_mutually_exclusive_group()
    f.add_argument("--json", action="store_true", help="print the comparison as JSON")
    f.add_argument("--csv", action="store_true", help="print the comparison as CSV")


def main(opts):
    """`vnperf compare`: returns the exit status (64 when a compared point
    has a failed run)."""
    if not 0 < opts.alpha < 1:
        raise usage("--alpha %g: must be between 0 and 1" % opts.alpha)
    wa, wb = parse_where(opts.a_where, "a"), parse_where(opts.b_where, "b")
    pa, pb = typed(resultsdir.load(opts.a)), typed(resultsdir.load(opts.b))
    wa, wb = resolve_where(pa, wa, "A"), resolve_where(pb, wb, "B")
    known = known_params(pa + pb)
    ab = set(_names(opts.ab, known))
    if ab and not wa and not wb and os.path.realpath(opts.a) == os.path.realpath(opts.b):
        wa, wb = split_arms(pa, ab) or (wa, wb)
    a = select(pa, wa, "A")
    b = select(pb, wb, "B")
    by = _names(opts.by, known) or None
    ab |= set(wa) | set(wb)
    cmp = compare(a, b, by, ab, opts.test, opts.alpha)
    if opts.out:
        save(opts.out, cmp.but(a=opts.a, b=opts.b, sides={
            "a": result.Side.given(label=_label(opts.a, wa), identity=shared_params(a)),
            "b": result.Side.given(label=_label(opts.b, wb), identity=shared_params(b))}))
    if opts.json:
        print(to_json(cmp.but(a=opts.a, b=opts.b)))
    elif opts.csv:
        print(to_csv(cmp), end="")
    else:
        print(render(cmp, _label(opts.a, wa), _label(opts.b, wb)))
    failed = [r for r in cmp.rows if r.failed["a"] or r.failed["b"]]
    if failed:
        raise usage("compare: %d compared point(s) have failed runs (marked FAILED)"
                    % len(failed))
    return 0


OUT_FILE = "compare.json"


def shared_params(points):
    """The parameters every point of a side holds with one value: what
    its runs were, the row parameters aside."""
    first = points[0].params
    return {k: v for k, v in sorted(first.items())
            if all(str(p.params.get(k)) == str(v) for p in points)}


def save(outdir, cmp):
    """DIR/compare.json: the comparison (a result.Comparison: what --json
    prints, both paths, labels and identities)."""
    path = os.path.join(outdir, OUT_FILE)
    try:
        os.makedirs(outdir, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(to_json(cmp) + "\n")
        os.replace(path + ".tmp", path)
    except OSError as e:
        raise usage("compare: cannot write %s: %s" % (path, e.strerror))


def _names(text, known):
    """A comma list of parameter names (--ab, --by), each as the points
    store it where a spelling of it is known."""
    return [param_name(n, known) or n for n in (n.strip() for n in (text or "").split(",")) if n]


def _label(path, where):
    return path + (" (%s)" % ", ".join("%s=%s" % kv for kv in where.items()) if where else "")
