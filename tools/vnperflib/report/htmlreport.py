"""`vnperf report DIR`: DIR/report.html, one self-contained page (no
network, no script; plots as inline SVG from matplotlib) of the results in
DIR: a run (run.json, `vnperf run --out DIR`), a sweep (results.json), an
RFC 2544 search (results.json of `vnperf ndr`) or a comparison
(compare.json, `vnperf compare A B --out DIR`). Its sections come in the
order a reviewer reads them: what ran (identity), the tables with their
confidence intervals and significance, the plots, the counts of both
sides, the verdict. A results file is outside input: every value on the
page goes through html.escape, and a directory that holds no results or
unreadable ones is refused in one line (status 64)."""

import html
import io
import json
import os

from .. import result
from ..analysis import stats
from ..campaign import compare
from ..errors import RunnerError, usage
from . import plots, report, resultsdir
from .tables import fmt_num

PAGE = "report.html"
RUN_FILE = report.OUT_FILE
COMPARE_FILE = compare.OUT_FILE
COMPARE_FORMATS = (3,)
# Identity pairs per table row: about 45 of them in a short block.
IDENT_ACROSS = 3
# Sections, in reading order: (id, heading).
SECTIONS = (("identity", "What ran"), ("tables", "Results"), ("plots", "Plots"),
            ("counts", "Counts from both sides"), ("verdict", "Verdict"))

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 80em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f0f0f0; } td.k, th.k { text-align: left; }
td.sig { background: #fde2b8; font-weight: bold; }
table.kv td:nth-child(odd) { color: #555; } td.fail { background: #f8c8c8; }
p.note { font-size: 0.85em; color: #444; }
figure { display: inline-block; vertical-align: top; width: 46em; margin: 0 1em 1em 0; }
figure svg { width: 100%; height: auto; } figcaption { font-size: 0.85em; }
.verdict { font-size: 1.05em; }
"""


def esc(v):
    """Any value as escaped HTML text; None as '-'."""
    return html.escape("-" if v is None else str(v), quote=True)


def table(headers, rows, keys=1, cls=None, classes=None):
    """An HTML table: the first keys columns left-aligned (names), the rest
    right; no header row without headers; classes: per row, per cell, an
    optional class (sig, fail)."""
    out = ['<table%s>' % (' class="%s"' % esc(cls) if cls else "")]
    if headers:
        out += ["<thead><tr>"] + ['<th%s>%s</th>' % (' class="k"' if i < keys else "", esc(h))
                                  for i, h in enumerate(headers)] + ["</tr></thead>"]
    out.append("<tbody>")
    for r, row in enumerate(rows):
        marks = classes[r] if classes else [None] * len(row)
        cells = []
        for i, c in enumerate(row):
            names = (["k"] if i < keys else []) + ([marks[i]] if marks[i] else [])
            cells.append('<td%s>%s</td>' % (' class="%s"' % " ".join(names) if names else "",
                                            esc(c)))
        out.append("<tr>%s</tr>" % "".join(cells))
    out.append("</tbody></table>")
    return "".join(out)


def kv(pairs, across=1):
    """Name, value pairs as a table without a header, across pairs a row."""
    pairs = list(pairs)
    rows = [sum(([k, v] for k, v in pairs[i:i + across]), []) for i in
            range(0, len(pairs), across)]
    if rows and len(rows[-1]) < 2 * across:
        rows[-1] += [""] * (2 * across - len(rows[-1]))
    return table(None, rows, keys=2 * across, cls="kv")


def para(text, cls="note"):
    return '<p class="%s">%s</p>' % (cls, esc(text))


def heading(text):
    return "<h3>%s</h3>" % esc(text)


def page(title, subtitle, sections):
    """The whole document: sections {id: html} in SECTIONS order."""
    body = ["<h1>%s</h1>" % esc(title), para(subtitle, "sub")]
    for sid, head in SECTIONS:
        body.append('<section id="%s"><h2>%s</h2>%s</section>' % (sid, esc(head),
                                                                   sections[sid]))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="generator" content="vnperf report"><title>%s</title>'
            '<style>%s</style></head><body>%s</body></html>\n'
            % (esc(title), STYLE, "\n".join(body)))


# ---- plots: matplotlib figures as inline SVG

def svg_of(fig, salt):
    """A figure as an <svg> element: text kept as text (no glyph
    definitions whose ids would repeat across figures), ids salted per
    figure."""
    import matplotlib
    import matplotlib.pyplot as plt
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def figures(make):
    """The plots section: make(plt) -> [(caption, figure)], each as an
    inline SVG; a line when matplotlib is not there or nothing is plotted."""
    if not plots.available():
        return para("no plots: python3-matplotlib is not importable (the tables carry the "
                    "same numbers)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = []
    for i, (caption, fig) in enumerate(make(plt)):
        out.append("<figure>%s<figcaption>%s</figcaption></figure>"
                   % (svg_of(fig, "vnperf-%d" % i), esc(caption)))
    return "".join(out) or para("nothing to plot: no result has a plotted figure")


def sweep_figures(results, metrics):
    """plots.figure of each (metric, y label, scale) some point has,
    against plots.x_axis. results: a result.SweepResult or its JSON object."""
    results = result.SweepResult.from_dict(results)

    def make(plt):
        if not results.points or not results.axes:
            return []
        xaxis = plots.x_axis(results.axes)
        out = []
        for metric, ylabel, scale in metrics:
            lines = plots.series(results, metric, xaxis)
            if lines:
                out.append(("%s by %s" % (ylabel, xaxis),
                            plots.figure(plt, results, xaxis, lines, ylabel, scale)))
        return out
    return figures(make)


# ---- the pieces every kind shares

def common_identity(idents, skip=()):
    """The (key, value) pairs every identity holds alike, sorted; the
    keys in skip (a sweep's axes) left out."""
    if not idents:
        return []
    keys = set(idents[0]).intersection(*idents[1:]) - set(skip)
    return [(k, idents[0][k]) for k in sorted(keys)
            if all(str(i[k]) == str(idents[0][k]) for i in idents)]


def mean_ci(s):
    """(mean, 95% CI low, high) of a summary's values (a result.Summary or
    its JSON object; format 2 keeps them, resultsdir.parse checked them);
    None for fewer than two or none kept."""
    vals = (result.Summary.from_dict(s).values if s else None) or ()
    if len(vals) < 2:
        return None
    m, n = stats.mean(vals), len(vals)
    half = stats.t_quantile(1.0 - stats.CI_LEVEL, n - 1) * stats.variance(vals) ** 0.5 / n ** 0.5
    return m, m - half, m + half


def ci_cells(s, scale=1.0, fmt=None):
    """median, mean, 95% CI and n of a summary (result.Summary) as table
    cells."""
    show = (lambda v: fmt % (v * scale)) if fmt else (lambda v: fmt_num(v * scale))
    if not s:
        return ["-", "-", "-", "0"]
    ci = mean_ci(s)
    return [show(s.median), show(s.mean),
            "%s..%s" % (show(ci[1]), show(ci[2])) if ci else "-", str(s.n)]


def direction_rows(rep, prefix=()):
    """A run's (result.RunResult) count directions: [prefix + (direction,
    sent, received, lost, loss%, verdict, why)]."""
    dirs = (rep.counts.directions if rep.counts else None) or {}
    return [list(prefix) + [name, d.sent, d.received, d.lost, _pct(d.loss_pct),
                            d.verdict, d.why] for name, d in dirs.items()]


DIRECTION_HEAD = ["direction", "sent", "received", "lost", "loss%", "verdict", "why"]


def _pct(v):
    return "%.4f" % v if stats.is_number(v) else v


def bottleneck_text(rep):
    v = rep.verdict
    if v is None or not v.side:
        return None
    side = {"host": "host CPU-bound", "neither": "no bottleneck"}.get(v.side, "%s-bound" % v.side)
    return "%s: %s" % (side, v.why)


def run_status(rep):
    return "%s (%s)%s" % (rep.status, rep.status_name or "", "" if rep.status == 0 else
                          ": %s" % rep.why)


# ---- a run (run.json)

def run_sections(rep):
    """The sections of a run's page (result.RunResult)."""
    ident = rep.identity or {}
    who = [("status", run_status(rep)), ("time", rep.time),
           ("wall s", fmt_num(stats.number(rep.wall_s))),
           ("config", " ".join(map(str, rep.config or ())))]
    sec = {"identity": kv(who) + heading("identity") + kv(sorted(ident.items()), IDENT_ACROSS)}
    m = rep.metrics.as_dict()
    rows = []
    if rep.status == 0 and m.get("packets") is not None and rep.guests:
        rows = report.headline(rep)
    sec["tables"] = (kv(rows) if rows else "") + heading("metrics") + kv(
        [(k, fmt_num(v) if stats.is_number(v) else v) for k, v in sorted(m.items())],
        IDENT_ACROSS) + para(
        "one run: no confidence interval or test (a sweep's --repeat gives both)")
    sec["plots"] = figures(lambda plt: cpu_figure(plt, rep))
    c = rep.counts
    cnt = table(DIRECTION_HEAD, direction_rows(rep)) if c else para("this run has no counts")
    if c and not rep.host_counted:
        cnt += para("guest only: nothing on the host end counted this run's frames; loss "
                    "unknown")
    sec["counts"] = cnt
    verdict = [("status", run_status(rep)), ("bottleneck", bottleneck_text(rep))]
    verdict += [("waited in " + str(k), v) for k, v in (rep.waits or {}).items()]
    sec["verdict"] = kv(verdict)
    return "vnperf run: %s over %s" % (rep.app, rep.backend), sec


def cpu_figure(plt, rep):
    """Host CPU per role: on a CPU, and waiting for one (the run's cpu)."""
    roles = (rep.cpu.roles if rep.cpu else None) or {}
    names = sorted(roles)
    if not names:
        return []
    on = [stats.number(roles[n].pct) or 0.0 for n in names]
    wait = [stats.number(roles[n].wait_pct) or 0.0 for n in names]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(names, on, label="on a CPU")
    ax.bar(names, wait, bottom=on, label="waiting for a CPU", color="C1", alpha=0.6)
    ax.set_ylabel("% of the run")
    ax.set_title("host CPU per role", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return [("host CPU per role, % of the run", fig)]


# ---- a sweep and a search (results.json, a result.SweepResult)

def point_rows(results):
    """Per point: its axis values."""
    names = list(results.axes)
    return names, [[p.params.get(n) for n in names] for p in results.points]


def point_at(names, p):
    """A point as its axes' values name it ("size=64 queues=2")."""
    return " ".join("%s=%s" % (n, p.params.get(n)) for n in names)


def identity_section(results, extra=()):
    names = list(results.axes)
    idents = [p.identity or {} for p in results.points]
    info = [("command", " ".join(map(str, results.argv or ()))),
            ("time", results.time), ("repeat", results.repeat),
            ("order", results.order)] + list(extra)
    info += [("axis " + n, ", ".join(map(str, results.axes[n]))) for n in names]
    info += [("fixed " + k, v) for k, v in sorted((results.fixed or {}).items())]
    common = common_identity([i for i in idents if i], skip=names)
    return kv([(k, v) for k, v in info if v is not None]) + heading(
        "identity every point shares") + (kv(common, IDENT_ACROSS) if common else para(
            "no identity recorded (a sweep written before identities)"))


def runs_counts(results, runs):
    """Every run's both-side counts: (point, run, status, direction...)."""
    names = list(results.axes)
    rows, classes = [], []
    for p in results.points:
        at = point_at(names, p)
        for name in p.runs or ():
            rep = runs.get(name)
            if not isinstance(rep, result.RunResult):
                rows.append([at, name, "-", "-", "-", "-", "-", "-", "-", rep or "missing"])
                classes.append([None] * 9 + ["fail"])
                continue
            got = direction_rows(rep, (at, name, rep.status)) or [
                [at, name, rep.status, "-", "-", "-", "-", "-", "-", rep.why]]
            rows += got
            classes += [[None] * 8 + ["fail" if r[8] not in ("agree", None) else None, None]
                        for r in got]
    if not rows:
        return para("no run reports")
    return table(["point", "run", "status"] + DIRECTION_HEAD, rows, keys=4, classes=classes)


def runs_verdicts(results, runs):
    names = list(results.axes)
    rows = []
    for p in results.points:
        at = point_at(names, p)
        for name in p.runs or ():
            rep = runs.get(name)
            if isinstance(rep, result.RunResult):
                rows.append([at, name, run_status(rep), bottleneck_text(rep)])
    return table(["point", "run", "status", "bottleneck"], rows, keys=2) if rows else ""


def status_line(results):
    st = [s for p in results.points for s in p.statuses or ()]
    bad = [s for s in st if s != 0]
    return "%d of %d %s passed%s" % (len(st) - len(bad), len(st), "runs" if
                                     results.vnperf_search is None else "searches",
                                     "" if not bad else "; first failure status %d" % bad[0])


def sweep_sections(results, runs):
    from ..campaign import sweep
    kind = report.app_kind(results.app)
    cols = sweep.columns(results, kind)
    names, keys = point_rows(results)
    head, lead, scale, fmt = cols[0] if cols else ("-", None, 1.0, None)
    headers = names + ["ok", head + " median", "mean", "95% CI of the mean", "n"] + [
        c[0] + " median" for c in cols[1:]]
    rows = []
    for k, p in zip(keys, results.points):
        s = p.summary or {}
        rows.append(k + ["%d/%d" % (p.ok or 0, len(p.statuses or ()))]
                    + ci_cells(s.get(lead), scale, fmt)
                    + [median_cell(s.get(m), sc, f) for _, m, sc, f in cols[1:]])
    tables = table(headers, rows, keys=len(names)) + para(
        "median and mean over each point's passing runs; 95% CI: Student's t interval of the "
        "mean (none from one run). A sweep tests nothing by itself: compare two of them "
        "(vnperf compare) for significance.")
    note = sweep.guest_only_note(results)
    if note:
        tables += para(note)
    if sweep.AA_AXIS in results.axes:
        tables += aa_section(results)
    metrics = [(m, y, s) for m, y, s, _ in plots.PLOTTED
               if m not in report.MISLEADING.get(kind, ())]
    return "vnperf sweep", {
        "identity": identity_section(results), "tables": tables,
        "plots": sweep_figures(results, metrics), "counts": runs_counts(results, runs),
        "verdict": para(status_line(results), "verdict") + runs_verdicts(results, runs)}


def median_cell(s, scale, fmt):
    """A summary's (result.Summary) median as a table cell."""
    if not s:
        return "-"
    v = s.median * scale
    return fmt % v if fmt else fmt_num(v)


def aa_section(results):
    """The A/A arms of a --aa sweep compared (compare.compare) and the
    calibration the sweep stored."""
    from ..campaign import sweep
    pts = [p.but(params=p.identity or p.params) for p in results.points]
    a = [p for p in pts if p.params.get(sweep.AA_AXIS) == "a"]
    b = [p for p in pts if p.params.get(sweep.AA_AXIS) == "b"]
    out = heading("A/A: arm a against arm b")
    out += compare_table(compare.compare(a, b, ab={sweep.AA_AXIS}))
    cal = (results.aa or {}).get("calibration")
    if isinstance(cal, dict) and stats.is_number(cal.get("table_rate")):
        out += para("calibration over %s random re-splits: whole tables significant in "
                    "%.1f%% (the test promises at most %g%%)"
                    % (cal.get("rounds"), 100 * cal["table_rate"], 100 * stats.ALPHA))
    return out


def search_sections(results, runs):
    from ..campaign import ndr_trial
    spec = results.search or {}
    mode = spec.get("mode") if spec.get("mode") in ("ndr", "pdr") else "ndr"
    names, keys = point_rows(results)
    headers = names + ["ok", "%s pps median" % mode.upper(), "mean", "95% CI of the mean",
                       "n", "Gbit/s", "offered pps", "forwarded pps", "trials", "p50 us",
                       "p99 us", "p99.9 us", "max us"]
    rows = []
    for k, p in zip(keys, results.points):
        s = p.summary or {}
        bps = s.get(mode + "_bps")
        rows.append(k + ["%d/%d" % (p.ok or 0, len(p.statuses or ()))]
                    + ci_cells(s.get(mode + "_pps"))
                    + ["%.3f" % (bps.median / 1e9) if bps else "-"]
                    + [sweep_median(s, m) for m in ("offered_pps", "forwarded_pps",
                                                    "trials")]
                    + [sweep_median(s, m, 1e-3) for m in ("p50_ns", "p99_ns", "p999_ns",
                                                          "max_ns")])
    tables = table(headers, rows, keys=len(names)) + para(
        "the rate found per point over its repeats (95%% CI: Student's t, none from one "
        "search); offered: the sender flat out; forwarded: what arrived of it; latency at "
        "%d%% of the rate found" % ndr_trial.LATENCY_MAIN)
    if spec.get("latency_skipped"):
        tables += para("latency: skipped, %s" % spec["latency_skipped"])
    tables += heading("trials") + trials_table(results)
    info = [("search", "%s, loss allowed %s%%" % (mode.upper(), spec.get("loss_pct"))),
            ("resolution", spec.get("resolution")), ("trial s", spec.get("trial_s")),
            ("topology", spec.get("topology")), ("app", spec.get("app"))]
    return "vnperf %s search" % mode, {
        "identity": identity_section(results, info), "tables": tables,
        "plots": sweep_figures(results, [(mode + "_pps", mode.upper() + " pps", 1.0),
                                         ("p99_ns", "p99 latency, us", 1e-3)]),
        "counts": runs_counts(results, runs), "verdict": search_verdict(results)}


def sweep_median(s, metric, scale=1.0):
    """The median of a point's metric (its summary {metric: result.Summary})
    as a table cell: trials a whole number."""
    if metric not in s:
        return "-"
    v = s[metric].median * scale
    return "%.0f" % v if metric == "trials" else fmt_num(v)


def trials_table(results):
    """Every search's trials (search.py's own objects, read as such)."""
    names = list(results.axes)
    rows, classes = [], []
    for p in results.points:
        for r, srch in enumerate(p.searches or ()):
            for t in srch.get("trials") or ():
                passed = "-" if "passed" not in t else "pass" if t["passed"] else "fail"
                rows.append([p.params.get(n) for n in names] + [
                    r + 1, t.get("kind"), "max" if t.get("target_pps") is None
                    else t["target_pps"], fmt_num(stats.number(t.get("achieved_pps"))),
                    t.get("sent"), t.get("received"), t.get("lost"), _pct(t.get("loss_pct")),
                    passed, t.get("run")])
                classes.append([None] * (len(names) + 8) + ["fail" if passed == "fail"
                                                            else None, None])
    if not rows:
        return para("no trials recorded")
    return table(names + ["#", "trial", "target pps", "sent pps", "sent", "received", "lost",
                          "loss%", "", "run"], rows, keys=len(names) + 2, classes=classes)


def search_verdict(results):
    rows = []
    for p in results.points:
        at = " ".join("%s=%s" % kv for kv in p.params.items())
        for st, why in zip(p.statuses or (), p.why or ()):
            rows.append([at, st, why])
    return para(status_line(results), "verdict") + table(["point", "status", "why"], rows)


# ---- a comparison (compare.json, a result.Comparison)

def compare_table(cmp):
    """compare's table (compare.table_cells) with the cells of
    significant changes marked (their change, p and CI), FAILED rows too,
    and its notes."""
    headers, rows, unit = compare.table_cells(cmp)
    nkey = len(cmp.key or ["point"])
    lead = compare.lead_column(cmp.columns)
    classes = []
    for cells_of, cells in zip([r.columns for r in cmp.rows] + [cmp.average or {}], rows):
        marks = [None] * len(cells)
        main = cells_of.get(lead)
        if main and main.significant:
            marks[nkey + 2:nkey + 4] = ["sig", "sig"]
        for i, col in enumerate(cmp.columns, nkey + 5):
            c = cells_of.get(col)
            if c and c.significant:
                marks[i] = "sig"
        if cells[nkey] == "FAILED":
            marks[nkey] = "fail"
        classes.append(marks)
    return table(headers, rows, keys=nkey, classes=classes) + "".join(
        para(line) for line in compare.notes(cmp, unit))


def compare_sections(cmp):
    sides = cmp.sides or {}
    info = []
    for side, path in (("a", cmp.a), ("b", cmp.b)):
        s = sides.get(side)
        info.append(("%s (%s)" % (side.upper(), "baseline" if side == "a" else "patched"),
                     (s.label if s else None) or path))
    info.append(("A/B dimensions", ", ".join(map(str, cmp.ab or ())) or "-"))
    info += [("differs: " + str(n), "%s -> %s" % tuple(v)) for n, v in
             (cmp.differences or {}).items()]
    ident = kv(info)
    common = common_identity([(sides[s].identity if s in sides else None) or {}
                              for s in ("a", "b")])
    if common:
        ident += heading("identity both sides share") + kv(common, IDENT_ACROSS)
    return "vnperf compare", {
        "identity": ident, "tables": compare_table(cmp),
        "plots": figures(lambda plt: change_figure(plt, cmp)),
        "counts": compare_counts(cmp), "verdict": compare_verdict(cmp)}


def change_figure(plt, cmp):
    """The lead change of every row with its 95% CI: filled where
    significant, hollow where not."""
    col = compare.lead_column(cmp.columns)
    pts = [(compare.row_name(cmp, r), r.columns[col]) for r in cmp.rows
           if col in r.columns and r.columns[col].pct is not None]
    if not pts:
        return []
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(pts) + 1.5))
    for y, (name, c) in enumerate(pts):
        lo, hi = c.ci_pct or (c.pct, c.pct)
        ax.errorbar([c.pct], [y], xerr=[[c.pct - lo], [hi - c.pct]], marker="o",
                    capsize=3, color="C3" if c.significant else "C0",
                    markerfacecolor="C3" if c.significant else "white")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(pts)))
    ax.set_yticklabels([n for n, _ in pts])
    ax.set_xlabel("%s: B against A, %% (95%% CI; filled: significant)" % col)
    ax.set_title("%s by row" % col, fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return [("%s per row, B relative to A, with its 95%% confidence interval" % col, fig)]


def failed_runs(r):
    """A row's failed runs of A and of B (its failed: {side: [why]})."""
    failed = r.failed or {}
    return list(failed.get("a") or ()), list(failed.get("b") or ())


def compare_counts(cmp):
    """The runs behind each row, both sides, and the failed ones."""
    col = compare.lead_column(cmp.columns)
    rows, classes = [], []
    for r in cmp.rows:
        c = r.columns.get(col)
        fa, fb = failed_runs(r)
        rows.append([compare.row_name(cmp, r), c.a_n if c else None, c.b_n if c else None,
                     len(fa), len(fb), "; ".join(fa + fb) or "-"])
        classes.append([None] * 3 + ["fail" if fa else None, "fail" if fb else None, None])
    out = table(["row", "runs A", "runs B", "failed A", "failed B", "why"], rows,
                classes=classes)
    for only, what in ((cmp.only_a, "only in A"), (cmp.only_b, "only in B")):
        if only:
            out += para("rows %s (not compared): %s" % (what, "; ".join(only)))
    return out + para("each run's counts of both sides are in A's and B's own results "
                      "(vnperf report on each)")


def compare_verdict(cmp):
    sig = [(row, col, c) for row, col, c in compare.named_cells(cmp) if c.significant]
    lines = list(cmp.same or ())
    if sig:
        lines.append("%d of %d tested cells significant at alpha %g (Holm): %s" % (
            len(sig), cmp.tests, cmp.alpha, "; ".join(
                "%s %s %s" % (row, col, "%+.1f%%" % c.pct if c.pct is not None
                              else "%s->%s" % (fmt_num(c.a), fmt_num(c.b)))
                for row, col, c in sig)))
    else:
        lines.append("no significant change in %d tested cells at alpha %g (Holm)" % (
            cmp.tests, cmp.alpha))
    failed = sum(1 for r in cmp.rows if any(failed_runs(r)))
    if failed:
        lines.append("%d compared row(s) have failed runs (marked FAILED)" % failed)
    return "".join(para(line, "verdict") for line in lines)


# ---- reading DIR and writing the page

def load(d):
    """(kind, data, runs) of a results directory (parse()); runs {name:
    report, or why it could not be read} of a sweep's or search's runs/.
    Refuses a directory without results in one line (status 64)."""
    if not os.path.isdir(d):
        raise usage("report: %s is not a directory" % d)
    for name in (resultsdir.SUMMARY, RUN_FILE, COMPARE_FILE):
        path = os.path.join(d, name)
        if os.path.exists(path):
            break
    else:
        raise usage("report: %s holds no vnperf results (%s, %s or %s)" % (
            d, resultsdir.SUMMARY, RUN_FILE, COMPARE_FILE))
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise usage("report: cannot read %s: %s" % (path, e.strerror))
    kind, data = parse(text, path)
    return kind, data, read_runs(d, data) if kind in ("sweep", "ndr") else {}


def parse(text, path):
    """(kind, data) of the bytes of a results file, by what it holds: run
    (a `vnperf run --json` report, as a result.RunResult), sweep, ndr (a
    search's results.json, through result.SweepResult) or compare; the
    members compare reads checked as compare checks them
    (resultsdir.parse). One line, status 64, for anything else."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise usage("report: %s is not JSON: %s" % (
            path, "nested too deep" if isinstance(e, RecursionError) else e))
    if isinstance(data, dict) and "vnperf_compare" in data:
        v = data["vnperf_compare"]
        if isinstance(v, bool) or v not in COMPARE_FORMATS:
            raise usage("report: %s is not a comparison this runner writes (vnperf_compare %s)"
                        % (path, ", ".join(map(str, COMPARE_FORMATS))))
        try:
            return "compare", result.Comparison.from_dict(data)
        except (TypeError, AttributeError, ValueError) as e:
            raise usage("report: %s: not a comparison this runner reads: %s" % (path, e))
    if isinstance(data, dict) and "vnperf_report" in data:
        resultsdir.parse(text, path)
        return "run", result.run_from_json(data, path)
    resultsdir.parse(text, path)
    try:
        sweep = result.SweepResult.from_dict(data)   # as result.load reads a directory
    except (TypeError, AttributeError, ValueError) as e:
        raise usage("report: %s: not a results directory this runner reads: %s" % (path, e))
    return ("ndr" if sweep.vnperf_search is not None else "sweep"), sweep


def read_runs(d, results):
    """The run reports a sweep's points name, each a result.RunResult or
    why it is not one (results: a result.SweepResult); a name outside
    DIR/runs/ is not opened."""
    out = {}
    for p in results.points:
        for name in p.runs or ():
            if not isinstance(name, str) or not name.startswith("runs/") or \
                    os.path.basename(name) != name[5:]:
                out[str(name)] = "not a file of runs/"
                continue
            try:
                out[name] = result.load_run(os.path.join(d, name))
            except RunnerError as e:
                out[name] = e.line
    return out


# The members a page reads, where a hand edit can break them: any of these
# from the builder is the file's fault, said in one line.
SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


def build(kind, data, runs, where):
    """The page of loaded results (load()); where names the file in the
    refusal of a member the builder cannot read."""
    make = {"run": lambda: run_sections(data), "sweep": lambda: sweep_sections(data, runs),
            "ndr": lambda: search_sections(data, runs), "compare": lambda: compare_sections(data)}
    try:
        title, sections = make[kind]()
    except SHAPE_ERRORS as e:
        raise usage("report: %s: a member is not as vnperf writes it (%s: %s)" % (
            where, type(e).__name__, str(e)[:80]))
    return page(title, "%s results in %s" % (kind, where), sections)


def main(opts):
    """`vnperf report DIR`: writes DIR/report.html, prints its path."""
    kind, data, runs = load(opts.dir)
    text = build(kind, data, runs, opts.dir)
    path = os.path.join(opts.dir, PAGE)
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    except OSError as e:
        raise usage("report: cannot write %s: %s" % (path, e.strerror))
    print("report: %s (%s)" % (path, kind))
    return 0


def add_arguments(p):
    p.add_argument("dir", metavar="DIR", help="a results directory: of vnperf sweep or ndr "
                   "(results.json), vnperf run --out (run.json) or vnperf compare --out "
                   "(compare.json)")
