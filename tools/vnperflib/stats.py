"""Median and spread over repeated runs."""


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def summary(values):
    """{"median", "min", "max", "n"} over the numbers in values (None and
    non-numbers skipped); None when there is none."""
    xs = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
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
