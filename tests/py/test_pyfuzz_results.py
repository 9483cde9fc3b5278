"""Random-input harness of the results loader `vnperf compare` uses
(resultsdir.parse) and of compare itself on what it loads: mutants of
results.json files and run reports (tests/py/seeds/results) from
mutator.py, VNPERF_PYFUZZ_N of them (`make fuzz`: 10^5, `make pyunit`: a
smoke). Rule per input: the table, CSV and JSON come out, or a RunnerError
with status 64 and one printable line; never another exception, and
quickly."""

import copy
import json
import random
import time

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import inputs, load_seeds
from vnperflib import compare, exitcodes, resultsdir
from vnperflib.errors import RunnerError

NAME = "results"
SLOW_S = 0.5
# What a hand edit puts where compare reads a member.
HOSTILE = [None, "", "x", "64", [], {}, [5], {"a": 1}, -1, -0.5, 0, 0.0, 1e308, float("nan"),
           float("inf"), -float("inf"), 2 ** 64 + 1, 10 ** 400, True, False, ["1", "2"],
           [0, 0, 0], "\n\x1b[2J", {"\n": 1}, json.loads("[" * 50 + "]" * 50)]


def _slots(v, out):
    """Every (container, key) of a parsed JSON value."""
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        out.append((v, k))
        _slots(x, out)
    return out


def tree_mutant(rng, seeds):
    """A seed with one to three members replaced by HOSTILE values or
    removed: structure a byte mutant rarely keeps parseable."""
    data = json.loads(rng.choice(seeds))
    for _ in range(rng.randrange(1, 4)):
        slots = _slots(data, [])
        if not slots:
            break
        c, k = rng.choice(slots)
        if isinstance(c, dict) and rng.randrange(5) == 0:
            del c[k]
        else:
            c[k] = copy.deepcopy(rng.choice(HOSTILE))
    return json.dumps(data).encode()


def one_line(text):
    """One printable line: no control character a terminal would act on."""
    return isinstance(text, str) and not any(c < " " or c == "\x7f" for c in text)


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
        assert cmp["rows"], i
        check(data, base, 0)
        check(data, base, 1)


def test_pyfuzz_results():
    seeds = load_seeds(NAME)
    base = resultsdir.parse(seeds[0], "a.json")
    n = slowest = 0
    outcomes = {}
    t0 = time.monotonic()
    for i, data in inputs(NAME):
        # Each index: the mutator's bytes and a member-level mutant.
        tree = tree_mutant(random.Random(i), seeds)
        t = time.monotonic()
        try:
            got = check(data, base, i) + check(tree, base, i)
        except Exception as e:  # noqa: BLE001 - the rule is: none but RunnerError
            raise AssertionError("input %d (%r... / %r...): %s: %s" % (
                i, data[:160], tree[:400], type(e).__name__, e)) from e
        took = time.monotonic() - t
        assert took < SLOW_S, "input %d took %.2f s: %r..." % (i, took, data[:120])
        slowest = max(slowest, took)
        for o in got:
            outcomes[o] = outcomes.get(o, 0) + 1
        n += 1
    print("pyfuzz results: %d inputs (x2: bytes, members) in %.1f s, slowest %.1f ms, outcomes %s" % (
        n, time.monotonic() - t0, slowest * 1e3, dict(sorted(outcomes.items()))))
    assert outcomes.get("compared") and outcomes.get("refused")
