"""Random-input harness of the results loader `vnperf compare` uses
(resultsdir.parse) and of compare itself on what it loads: mutants of
results.json files and run reports (tests/py/seeds/results) from
mutator.py, VNPERF_PYFUZZ_N of them (`make fuzz`: 10^5, `make pyunit`: a
smoke). Rule per input: the table, CSV and JSON come out, or a RunnerError
with status 64 and one printable line; never another exception, and
quickly."""

import json
import random

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, inputs, load_seeds, one_line, tree_mutant
from vnperflib.campaign import compare
from vnperflib import exitcodes
from vnperflib.report import resultsdir
from vnperflib.errors import RunnerError

NAME = "results"
# What a hand edit puts where compare reads a member.
HOSTILE = [None, "", "x", "64", [], {}, [5], {"a": 1}, -1, -0.5, 0, 0.0, 1e308, float("nan"),
           float("inf"), -float("inf"), 2 ** 64 + 1, 10 ** 400, True, False, ["1", "2"],
           [0, 0, 0], "\n\x1b[2J", {"\n": 1}, json.loads("[" * 50 + "]" * 50)]


def refused(e):
    assert e.status == exitcodes.RUNNER_USAGE and one_line(e.line), (e.status, e.line)
    return "refused"


def compared(a, b, ab=()):
    try:
        cmp = compare.compare(a, b, None, set(ab))
    except RunnerError as e:
        return refused(e)
    compare.render(cmp, "A", "B")
    compare.to_csv(cmp)
    compare.to_json(cmp)
    return "compared"


def check(data, base, i=0):
    """What compare does with data as B against the first seed (odd i) or
    as both A and B (even i: both sides hostile): the outcome."""
    try:
        pts = resultsdir.parse(data, "b.json")
    except RunnerError as e:
        return [refused(e)]
    if i % 2:
        return [compared(base, pts, ("image", "event_idx", "app", "size"))]
    return [compared(pts, pts)]


def test_seeds_load_and_compare():
    """Not vacuous: each seed loads and compares with itself."""
    base = resultsdir.parse(load_seeds(NAME)[0], "a.json")
    for i, data in inputs(NAME, n=0):
        pts = resultsdir.parse(data, "seed %d" % i)
        cmp = compare.compare(pts, pts)
        assert cmp.rows, i
        check(data, base, 0)
        check(data, base, 1)


def test_pyfuzz_results():
    seeds = load_seeds(NAME)
    trees = [json.loads(s) for s in seeds]
    base = resultsdir.parse(seeds[0], "a.json")

    def both(i, data):
        # Each index: the mutator's bytes and a member-level mutant.
        tree = tree_mutant(random.Random(i), random.Random(i).choice(trees), HOSTILE)
        return check(data, base, i) + check(tree, base, i)
    outcomes = drive(NAME, both, seeds)
    assert outcomes.get("compared") and outcomes.get("refused")
