"""The tables of a search's results directory: one row per trial of every
search (render_trials), one per point with the rate found (render)."""

from .. import result
from ..analysis import stats
from ..report.tables import fmt_num, table
from . import sweep
from .ndr_trial import LATENCY_MAIN, best_unverified, rfc2544_label


def render_trials(results):
    """One row per trial of every search. results: a result.SweepResult or
    its JSON object (the Writer's)."""
    results = result.SweepResult.from_dict(results)
    names = list(results.axes)
    rows = []
    for p in results.points:
        for r, s in enumerate(p.searches or ()):
            for t in s["trials"]:
                rows.append([p.params[n] for n in names] + [
                    r + 1, t["kind"], "max" if t.get("target_pps") is None else t["target_pps"],
                    fmt_num(t.get("achieved_pps")),
                    "-" if t.get("rate_error") is None else "%+.2f" % (100 * t["rate_error"]),
                    t.get("sent"), t.get("received"), t.get("lost"),
                    "-" if t.get("loss_pct") is None else "%.4f" % t["loss_pct"],
                    "-" if "passed" not in t else "pass" if t["passed"] else "fail",
                    _load_text(s, t)])
    return table(names + ["#", "trial", "target pps", "sent pps", "err%", "sent", "received",
                          "lost", "loss%", "", "load"], rows,
                 align=["<"] * (len(names) + 2) + [">"] * 8 + ["<", "<"])


def _load_text(search_result, t):
    """A trial's load: its number in the search and how it was classified
    ("3 pass"), "-" before it was."""
    load = search_result["loads"][t["load"] - 1] if t.get("load") else None
    if load is None or load["passed"] is None:
        return "-"
    return "%d %s" % (t["load"], "pass" if load["passed"] else "fail")


def render(results):
    """One row per point: the rate found (median of the repeats), its bit
    rate, the flat-out trial's offered and forwarded rates (RFC 2544 s26.3:
    what arrived), trials, latency at 50% and the spread. results: a
    result.SweepResult or its JSON object (the Writer's)."""
    results = result.SweepResult.from_dict(results)
    names = list(results.axes)
    spec = results.search or {}
    mode = spec["mode"]
    rows = []
    for p in results.points:
        s = p.summary or {}
        rate = s.get(mode + "_pps")
        spread = stats.spread_pct(rate.to_dict()) if rate and rate.n > 1 else None
        lat = [_median(s, k, 1e3) for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns")]
        rows.append([p.params[n] for n in names]
                    + ([rfc2544_label(p.params["size"])] if "size" in names else [])
                    + ["%d/%d" % (p.ok, len(p.statuses)), _median(s, mode + "_pps"),
                       "%.3f" % (s[mode + "_bps"].median / 1e9) if mode + "_bps" in s else "-",
                       _median(s, "offered_pps"), _median(s, "forwarded_pps"),
                       "%.0f" % s["trials"].median if "trials" in s else "-"] + lat
                    + ["%.1f%%" % spread if spread is not None else "-"])
    head = names + (["rfc2544"] if "size" in names else []) + [
        "ok", "%s pps" % mode.upper(), "Gbit/s", "offered", "forwarded", "trials", "p50 us",
        "p99 us", "p99.9 us", "max us", "spread"]
    lines = [table(head, rows, align=["<"] * len(names) + [">"] * (len(head) - len(names)))]
    lines.append("offered: the sender's rate flat out; forwarded: what arrived of it, per "
                 "second (RFC 2544 s26.3's forwarding rate); latency at %d%% of the rate found; "
                 "rfc2544: the frame size with the 4-byte FCS the virtual wire does not carry"
                 % LATENCY_MAIN)
    k = spec.get("trials_per_load", 1)
    if k > 1:
        lines.append("each rate a load of up to %d trials, failed when more than %g of them "
                     "lost frames (--trials-per-load, --exceed-ratio)"
                     % (k, spec["exceed_ratio"] * k))
    if spec.get("latency_skipped"):
        lines.append("latency: skipped, %s" % spec["latency_skipped"])
    for p in results.points:
        for w, st, s in zip(p.why, p.statuses, p.searches or ()):
            if st != 0:
                best = None if s.get("verified") else best_unverified(s)
                lines.append("%s: %s%s" % (sweep.describe(p.params), w, "" if best is None
                                           else "; highest passing trial %s pps, not verified"
                                           % fmt_num(best)))
    return "\n".join(lines)


def _median(summary, metric, per=1):
    """A metric's median (a result.Summary), divided by per, in the
    table's number format."""
    return fmt_num(summary[metric].median / per) if metric in summary else "-"
