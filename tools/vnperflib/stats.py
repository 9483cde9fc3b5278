"""Numbers over repeated runs: median, min-max spread, % change, and
whether a change is bigger than the run-to-run noise."""

# With one run per side there is no spread to judge a change by: changes
# smaller than this (in % of the baseline) are called not significant.
# Run-to-run noise of short TCG runs on a loaded 2-core host is a few %.
DEFAULT_THRESHOLD_PCT = 5.0


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number(v):
    """v as a float when it is a number (not a bool), else None."""
    return float(v) if is_number(v) else None


def summary(values):
    """{"median", "min", "max", "n"} over the numbers in values (None and
    non-numbers skipped); None when there is none."""
    xs = [float(v) for v in values if is_number(v)]
    if not xs:
        return None
    return {"median": median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def summarize_runs(metric_dicts):
    """{metric: summary} over a list of per-run metric dicts."""
    keys = sorted({k for m in metric_dicts for k in m})
    out = {}
    for k in keys:
        s = summary([m.get(k) for m in metric_dicts])
        if s is not None:
            out[k] = s
    return out


def spread_pct(s):
    """Min-max range in % of the median (None for a zero median)."""
    if not s["median"]:
        return None
    return 100.0 * (s["max"] - s["min"]) / abs(s["median"])


def pct_change(a, b):
    """b relative to a in %; None when a is 0 or either is missing."""
    if a is None or b is None or a == 0:
        return None
    return 100.0 * (b - a) / abs(a)


def significant(sa, sb, threshold_pct=DEFAULT_THRESHOLD_PCT):
    """(significant, rule). With repeats on either side: the change is real
    only when the min-max ranges of A and B do not overlap. With one run on
    each side: only when the medians differ by more than threshold_pct."""
    if sa["n"] > 1 or sb["n"] > 1:
        overlap = sa["min"] <= sb["max"] and sb["min"] <= sa["max"]
        return not overlap, "range"
    d = pct_change(sa["median"], sb["median"])
    if d is None:
        return sa["median"] != sb["median"], "threshold"
    return abs(d) > threshold_pct, "threshold"
