"""Numbers over repeated runs: median and spread, and whether B differs
from A by more than the run-to-run noise: Welch's t-test (default) or the
Mann-Whitney U test, with Holm's correction over every test of one
comparison. Standard library only."""

import functools
import math

# Significance level of one comparison (a table): with Holm's correction
# the chance that an A/A table shows any significant cell is at most this.
ALPHA = 0.05
# Confidence level of the intervals shown next to a change.
CI_LEVEL = 0.95
# Power of the minimum detectable effect (mde): the change a table would
# call 4 times in 5.
POWER = 0.8
TESTS = ("welch", "mwu")


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


def mean(xs):
    return sum(xs) / len(xs)


def variance(xs):
    """Sample variance (n - 1); 0 for one value."""
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def summary(values):
    """{"median", "min", "max", "mean", "sd", "n", "values"} over the
    numbers in values (None and non-numbers skipped); None when there is
    none. The values are kept: the tests need the samples, not a digest."""
    xs = [float(v) for v in values if is_number(v)]
    if not xs:
        return None
    return {"median": median(xs), "min": min(xs), "max": max(xs), "mean": mean(xs),
            "sd": math.sqrt(variance(xs)), "n": len(xs), "values": xs}


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


# ---- distributions (DLMF 8.17: the regularized incomplete beta function)

def _beta_cf(a, b, x):
    """Continued fraction of I_x(a, b) (DLMF 8.17.22), modified Lentz."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges fast on the side of the mean.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p_two_sided, df):
    """t > 0 with P(|T| >= t) = p_two_sided (bisection: monotone in t)."""
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > p_two_sided:
        hi *= 2.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > p_two_sided:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def normal_two_sided_p(z):
    return math.erfc(abs(z) / math.sqrt(2.0))


# ---- the tests: {"p", "ci": (lo, hi) of mean(b) - mean(a) or None}

def welch(a, b, level=CI_LEVEL):
    """Welch's unequal-variance t-test of mean(b) - mean(a); needs two
    samples per side. Constant samples: p 1 when the means are equal, else
    0 (the difference is exact). level None: no interval (its quantile
    search is most of the cost)."""
    na, nb = len(a), len(b)
    return t_parts(mean(b) - mean(a), [(variance(a) / na, na), (variance(b) / nb, nb)], level)


def t_parts(diff, parts, level=CI_LEVEL):
    """The t-test of an estimate made of independent parts, each given as
    (its share of the estimate's variance, the runs behind it): Welch's
    test for two, degrees of freedom by Welch-Satterthwaite.
    {"p", "ci", "df", "se"}; se 0: the estimate is exact."""
    se2 = sum(v for v, _ in parts)
    if se2 == 0.0:
        return {"p": 1.0 if diff == 0 else 0.0, "ci": (diff, diff), "df": None, "se": 0.0}
    df = se2 * se2 / sum(v * v / (n - 1) for v, n in parts)
    se = math.sqrt(se2)
    p = t_two_sided_p(diff / se, df)
    if level is None:
        return {"p": p, "ci": None, "df": df, "se": se}
    half = t_quantile(1.0 - level, df) * se
    return {"p": p, "ci": (diff - half, diff + half), "df": df, "se": se}


def mean_change(pairs, level=CI_LEVEL):
    """The mean over rows of the % change from mean(a) to mean(b), pairs
    [(a, b)] of two or more values a side, tested as one t: the rows' runs
    are independent, so its variance is the sum of theirs (A's mean taken
    as exact, as in a row's interval). {"pct", "p", "ci", "df", "se"} in
    %; None when a row has fewer than two values a side or a zero A."""
    if not pairs or any(len(a) < 2 or len(b) < 2 or mean(a) == 0 for a, b in pairs):
        return None
    diff, parts = 0.0, []
    for a, b in pairs:
        w = 100.0 / (len(pairs) * abs(mean(a)))
        diff += w * (mean(b) - mean(a))
        parts += [(w * w * variance(a) / len(a), len(a)), (w * w * variance(b) / len(b), len(b))]
    return dict(t_parts(diff, parts, level), pct=diff)


def mde(se, df, alpha, power=POWER):
    """The minimum detectable effect: the true difference that Welch's
    test at level alpha (two-sided) calls significant with this power,
    given the standard error and degrees of freedom of a measured one:
    (t_{1-alpha/2} + t_{power}) * se, the usual sample-size formula (the
    noncentral t read as a shifted one; docs/runner-compare.md, "Statistics", has
    the power it really gives)."""
    if se == 0.0:
        return 0.0
    return (t_quantile(alpha, df) + t_quantile(2.0 * (1.0 - power), df)) * se


@functools.lru_cache(maxsize=64)
def _u_counts(na, nb):
    """Number of orderings of na A's and nb B's by U (pairs with the B
    above the A): the exact null distribution of Mann-Whitney U without
    ties. The largest value is an A (U as without it) or a B (above all i
    A's): f(i, j, u) = f(i - 1, j, u) + f(i, j - 1, u - i)."""
    prev = [[1] for _ in range(nb + 1)]
    for i in range(1, na + 1):
        cur = [[1]]
        for j in range(1, nb + 1):
            a_top, b_top = prev[j], cur[j - 1]
            row = [0] * max(len(a_top), len(b_top) + i)
            for u, c in enumerate(a_top):
                row[u] += c
            for u, c in enumerate(b_top):
                row[u + i] += c
            cur.append(row)
        prev = cur
    return prev[nb]


def mann_whitney(a, b):
    """Mann-Whitney U test (two-sided): exact without ties for small
    samples, else the normal approximation with tie and continuity
    corrections. CI: none (a rank test)."""
    na, nb = len(a), len(b)
    u = sum(1.0 if y > x else 0.5 if y == x else 0.0 for x in a for y in b)
    pooled = sorted(a + b)
    ties = len(set(pooled)) < len(pooled)
    if not ties and na * nb <= 400:
        # B above A counts u from the top and the bottom: a shift can go
        # either way.
        counts = _u_counts(na, nb)
        total = float(sum(counts))
        lo = sum(counts[:int(u) + 1]) / total
        hi = sum(counts[int(u):]) / total
        return {"p": min(1.0, 2.0 * min(lo, hi)), "ci": None, "u": u}
    n = na + nb
    tie_term = 0.0
    for v in set(pooled):
        t = pooled.count(v)
        tie_term += t ** 3 - t
    var = na * nb / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return {"p": 1.0, "ci": None, "u": u}
    z = (abs(u - na * nb / 2.0) - 0.5) / math.sqrt(var)
    return {"p": normal_two_sided_p(max(0.0, z)), "ci": None, "u": u}


def mwu_floor(na, nb):
    """The smallest p Mann-Whitney's exact test can give (complete
    separation of na and nb values): 2 / C(na + nb, na)."""
    return min(1.0, 2.0 / math.comb(na + nb, na))


def test(a, b, method="welch", level=CI_LEVEL):
    """The chosen test on two samples; None with fewer than two values on
    either side (no spread to judge by). level None: the p-value only."""
    if len(a) < 2 or len(b) < 2:
        return None
    if method == "mwu":
        return mann_whitney(list(a), list(b))
    return welch(list(a), list(b), level)


def wilson(k, n, z=1.96):
    """Wilson's score interval (95% for z = 1.96) of a rate of k in n:
    (lo, hi); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / float(n)
    d = 1.0 + z * z / n
    mid = (p + z * z / (2.0 * n)) / d
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / d
    return max(0.0, mid - half), min(1.0, mid + half)


def holm(pvalues):
    """Holm's step-down adjustment: the adjusted p-values, in order (a
    family-wise error rate of at most alpha under any dependence)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adj = [None] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adj[i] = running
    return adj
