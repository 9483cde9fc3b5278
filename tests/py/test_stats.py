"""stats.py on synthetic samples: the distributions against reference
values, the tests' false-positive rate on A/A noise (what they promise),
their power on a real 10% change, Holm's correction over a table."""

import math
import random

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.analysis import stats

# Reference values: Student's t (two-sided p, quantiles) as printed in any
# table, and Welch's test on a small textbook sample (scipy.stats.ttest_ind
# with equal_var=False gives p = 0.16470, df = 4.0836).


@pytest.mark.parametrize("t,df,p", [(2.0, 5, 0.10194), (2.5706, 5, 0.05), (1.9623, 1000, 0.05),
                                    (12.706, 1, 0.05), (0.0, 3, 1.0)])
def test_t_distribution(t, df, p):
    assert stats.t_two_sided_p(t, df) == pytest.approx(p, abs=2e-4)
    if p < 1:
        assert stats.t_quantile(p, df) == pytest.approx(t, rel=1e-3)


def test_welch_reference():
    r = stats.welch([1, 2, 3, 4], [2, 4, 6, 9])
    assert r["p"] == pytest.approx(0.16470, abs=1e-4)
    assert r["df"] == pytest.approx(4.0836, abs=1e-3)
    lo, hi = r["ci"]
    assert lo < 2.75 < hi and (lo + hi) / 2 == pytest.approx(2.75)


def test_welch_constant_samples():
    assert stats.welch([5, 5, 5], [5, 5, 5])["p"] == 1.0
    assert stats.welch([0, 0, 0], [3, 3, 3])["p"] == 0.0


def test_mann_whitney_exact_distribution():
    counts = stats._u_counts(5, 5)
    assert sum(counts) == math.comb(10, 5) and counts == counts[::-1]
    # Complete separation: the smallest p the exact test can give.
    assert stats.mann_whitney([1, 2, 3], [4, 5, 6])["p"] == pytest.approx(2 / 20)
    assert stats.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])["p"] == pytest.approx(2 / 252)
    assert stats.mann_whitney([1, 3, 5], [2, 4, 6])["p"] == pytest.approx(0.7)


def test_holm():
    assert stats.holm([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert stats.holm([]) == []


def test_no_test_below_two_runs_a_side():
    assert stats.test([1.0], [2.0, 3.0]) is None
    assert stats.test([1.0, 2.0], [3.0]) is None


def draws(rng, n, mean, cv):
    return [rng.gauss(mean, mean * cv) for _ in range(n)]


@pytest.mark.parametrize("method,low,high", [("welch", 0.03, 0.07), ("mwu", 0.0, 0.06)])
def test_aa_noise_is_significant_at_the_stated_rate(method, low, high):
    """A/A: both sides drawn from the same noisy distribution (3% of the
    mean, 5 runs a side): the share of p < 0.05 is what alpha promises
    (Mann-Whitney with 5 a side is exact and a little conservative)."""
    rng = random.Random(11)
    trials = 3000
    hits = sum(stats.test(draws(rng, 5, 1e6, 0.03), draws(rng, 5, 1e6, 0.03), method)["p"]
               < stats.ALPHA for _ in range(trials))
    assert low <= hits / trials <= high


@pytest.mark.parametrize("method", ["welch", "mwu"])
@pytest.mark.parametrize("noise", ["normal", "skewed"])
def test_aa_tables_show_a_significant_cell_at_most_at_alpha(method, noise):
    """A/A tables of 12 cells (5 runs a side, 5% noise; skewed: lognormal
    with a long right tail, like throughput under host load): with Holm
    over the table, the share of tables with any significant cell is not
    above alpha beyond its 95% interval (4000 tables: about +-0.7%)."""
    rng = random.Random(5)
    tables, bad = 4000, 0
    draw = (lambda: rng.gauss(100.0, 5.0)) if noise == "normal" else \
        (lambda: 100.0 * math.exp(rng.gauss(0.0, 0.3)))
    for _ in range(tables):
        ps = [stats.test([draw() for _ in range(5)], [draw() for _ in range(5)], method,
                         level=None)["p"] for _ in range(12)]
        bad += any(p < stats.ALPHA for p in stats.holm(ps))
    assert stats.wilson(bad, tables)[0] <= stats.ALPHA, bad / tables


def test_wilson_interval():
    lo, hi = stats.wilson(15, 200)
    assert abs(lo - 0.0460) < 5e-4 and abs(hi - 0.1200) < 5e-4
    assert stats.wilson(0, 0) == (0.0, 1.0) and stats.wilson(0, 10)[0] == 0.0


def test_a_real_ten_percent_change_with_low_noise_is_significant():
    rng = random.Random(3)
    covered = held = ranked = 0
    for _ in range(200):
        a, b = draws(rng, 5, 1e6, 0.02), draws(rng, 5, 1.1e6, 0.02)
        r = stats.welch(a, b)
        assert r["p"] < 0.01 and r["ci"][0] > 0
        # Even the smallest p of a table of 12 tests must beat alpha / 12.
        held += r["p"] * 12 < stats.ALPHA
        covered += r["ci"][0] < 1e5 < r["ci"][1]
        ranked += stats.mann_whitney(a, b)["p"] < stats.ALPHA
    assert held / 200 >= 0.95 and ranked / 200 >= 0.95
    # The 95% interval holds the true change about 95% of the time.
    assert 0.9 <= covered / 200 <= 0.99


def test_summary_keeps_the_samples():
    s = stats.summary([3, None, "x", True, 1, 2])
    assert s["median"] == 2.0 and s["min"] == 1.0 and s["max"] == 3.0 and s["n"] == 3
    assert s["values"] == [3.0, 1.0, 2.0] and s["mean"] == 2.0 and s["sd"] == 1.0
    assert stats.spread_pct(s) == 100.0
    assert stats.summary([None]) is None
    assert stats.pct_change(0, 5) is None and stats.pct_change(50, 75) == 50.0
    assert stats.median([4, 1, 3, 2]) == 2.5


def test_mde_against_t_tables():
    """(t_{1-alpha/2} + t_{power}) * se with the t tables' values: df 8,
    alpha 0.05, power 0.8: 2.306 + 0.889; df 4, alpha 0.01: 4.604 +
    0.941; the normal limit: 1.960 + 0.842."""
    assert stats.mde(1.0, 8, 0.05) == pytest.approx(3.195, abs=2e-3)
    assert stats.mde(2.0, 4, 0.01) == pytest.approx(2 * 5.545, abs=4e-3)
    assert stats.mde(1.0, 1e6, 0.05) == pytest.approx(2.802, abs=2e-3)
    # Constant samples: any difference is exact.
    assert stats.mde(0.0, None, 0.05) == 0.0


def test_mde_is_seen_at_about_its_power():
    """Brute force: normal noise, 10 runs a side, the level of a table of
    4 tests. A true change of the MDE is called about 4 times in 5 (78%:
    Welch's degrees of freedom vary from sample to sample, which costs a
    few points, more with fewer runs: docs/runner-compare.md); half of it far less
    often."""
    rng = random.Random(5)
    n, alpha = 10, stats.ALPHA / 4
    d = stats.mde(math.sqrt(2.0 / n), 2 * (n - 1), alpha)

    def seen(shift, rounds=3000):
        return sum(stats.welch(draws(rng, n, 100.0, 0.01), draws(rng, n, 100.0 + shift, 0.01),
                               level=None)["p"] < alpha for _ in range(rounds)) / rounds
    assert 0.72 <= seen(d) <= 0.84
    assert seen(d / 2) < 0.3


def test_mean_change_of_one_row_is_welch_in_percent():
    a, b = [100.0, 102.0, 98.0, 101.0, 99.0], [105.0, 108.0, 103.0, 106.0, 104.0]
    w, m = stats.welch(a, b), stats.mean_change([(a, b)])
    assert m["pct"] == pytest.approx(5.2) and m["p"] == pytest.approx(w["p"])
    assert m["ci"] == pytest.approx(w["ci"]) and m["df"] == pytest.approx(w["df"])
    # Two rows alike: half the variance of one, twice its degrees of freedom.
    m2 = stats.mean_change([(a, b), (a, b)])
    assert m2["pct"] == pytest.approx(5.2)
    assert m2["se"] == pytest.approx(m["se"] / math.sqrt(2))
    assert m2["df"] == pytest.approx(2 * w["df"])
    assert stats.mean_change([(a, b), ([1.0], [2.0, 3.0])]) is None
    assert stats.mean_change([([0.0, 0.0], [1.0, 2.0])]) is None


def test_mean_change_keeps_alpha_on_aa_noise():
    """The average row's test on A/A tables of 3 rows (5% noise, 5 runs a
    side): significant at about alpha, like a single Welch test."""
    rng = random.Random(6)
    rounds = 4000
    hits = sum(stats.mean_change([(draws(rng, 5, m, 0.05), draws(rng, 5, m, 0.05))
                                  for m in (1e5, 5e4, 2e3)], level=None)["p"] < stats.ALPHA
               for _ in range(rounds))
    lo, hi = stats.wilson(hits, rounds)
    assert lo <= stats.ALPHA + 0.005 and hi >= stats.ALPHA - 0.015, (hits, lo, hi)
