"""Pure-logic tests of what the side-by-side benchmarks share
(bench/benchlib.py): repeats interleaved A B A B, medians and spreads,
pairwise ratios, failures carried to the table."""

import os
import sys

import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import benchlib  # noqa: E402


def test_series_median_and_spread():
    s = benchlib.Series()
    for v in (2.0, 4.0, 3.0):
        s.add(v)
    s.add(None, "boom")
    assert s.median() == 3.0
    assert abs(s.spread_pct() - 200.0 / 3) < 1e-9
    assert s.summary()["failures"] == ["boom"] and s.summary()["n"] == 3
    assert benchlib.Series().median() is None and benchlib.Series().spread_pct() is None


def test_sides_alternate_and_pairs_are_ratios_of_runs_back_to_back():
    order = []
    a_vals = iter([10.0, 20.0])
    b_vals = iter([5.0, 5.0])

    def side_a(point):
        order.append(("a", point))
        return {"pps": next(a_vals), "cpu_vcpu": 90.0}

    def side_b(point):
        order.append(("b", point))
        return {"pps": next(b_vals)}

    res, pairs = benchlib.interleave([("tx", "dgram")], [("a", side_a), ("b", side_b)], 2, "t")
    assert [s for s, _ in order] == ["a", "b", "a", "b"]
    p = ("tx", "dgram")
    assert res[p]["a"]["pps"].values == [10.0, 20.0]
    assert pairs[p]["pps"].values == [2.0, 4.0]
    assert "cpu_vcpu" not in pairs[p]
    assert benchlib.cpu_cell(res[p]["a"], ("vcpu", "main")) == "90/-"


def test_failed_runs_show_as_fail_with_their_reason():
    calls = iter([{"why": "vnperf: exit 1"}, {"pps": 3.0}])
    res, pairs = benchlib.interleave([("rx",)], [("a", lambda p: next(calls)),
                                                  ("b", lambda p: {"pps": 1.0})], 2, "t")
    a = benchlib.pick(res[("rx",)]["a"], "pps")
    assert a.values == [3.0] and a.failures == ["vnperf: exit 1"]
    assert pairs[("rx",)]["pps"].values == [3.0]
    none = benchlib.pick({"_runs": a}, "pps")
    assert benchlib.cell(none) == "FAIL"
    assert benchlib.failures([("rx a", a)]) == ["rx a: vnperf: exit 1"]


def test_cells_and_ratios():
    s = benchlib.Series()
    s.add(1.0)
    s.add(1.5)
    assert benchlib.cell(s, "%.2f".__mod__) == "1.25 ±40%"
    assert benchlib.ratio_cell(3.0, 2.0) == "1.50x" and benchlib.ratio_cell(None, 2) == "-"
    assert benchlib.range_cell(s) == "1.00-1.50"
    assert benchlib.fmt(1234567) == "1.23M"
