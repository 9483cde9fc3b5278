"""Random-input harness of what the runner reads from its host tools:
the result lines of vnperf-peer (peer.results, then host_counts), its
progress lines on stderr (peer.progress, the live display) and the result
line of vnperf-rrserver (rrhost.results). Inputs: mutants of their real
output (tests/py/seeds/peer) from mutator.py, VNPERF_PYFUZZ_N of them (`make
fuzz`: 10^5, `make pyunit`: a smoke). Rule per input: results as
docs/peer.md gives them (every number a count 0..2^64-1 or a finite rate
>= 0, and the same of the counts made from them), or a RunnerError with
status 68 (the backend failed) and one printable line; never another
exception, and quickly. Beside each byte mutant, a tree mutant (a seed's
result line with members replaced by HOSTILE values) gets past json to
the checks, which a byte mutant rarely does."""

import io
import json
import math
import random

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, inputs, load_seeds, one_line, tree_mutant
from vnperflib import exitcodes
from vnperflib.run import peer, rrhost
from vnperflib.errors import RunnerError

NAME = "peer"
HOSTILE = [None, "", "x", "many", "count", "send", "reflect", "peer", -1, 0, 1, 2 ** 64 - 1,
           2 ** 64, 10 ** 400, -0.0, 0.5, 1e308, float("nan"), float("inf"), -float("inf"),
           True, False, [], {}, [1, -1], {"rx": -1}, {"a": float("nan")},
           json.loads("[" * 50 + "]" * 50)]


def tree_seeds():
    return [json.loads(l) for data in load_seeds(NAME) for l in data.splitlines()
            if l.startswith(b"{")]


def numbers(v):
    """Every number in v (nested dicts, lists, tuples)."""
    stack, out = [v], []
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            out.append(x)
    return out


def good_numbers(v):
    for x in numbers(v):
        if isinstance(x, float):
            assert math.isfinite(x) and x >= 0, x
        else:
            assert 0 <= x < 2 ** 64, x


def read(data, fn, accept):
    """'ok' with the checked results, or 'refused' for a one-line 68."""
    try:
        found = fn(io.BytesIO(data))
    except RunnerError as e:
        assert e.status == exitcodes.RUNNER_BACKEND_FAILED, (e.status, e.line)
        assert one_line(e.line) and e.line == str(e), e.line
        return "refused", []
    for r in found:
        assert isinstance(r, dict) and accept(r), r
        good_numbers(r)
        json.dumps(r, allow_nan=False)
    return ("ok" if found else "none"), found


def check(data):
    what, found = read(data, lambda f: peer.results(f, "peer"), lambda r: r.get("type") == "peer")
    for r in found:
        assert r["mode"] in ("count", "send", "reflect"), r
        hc = peer.host_counts(r)
        good_numbers(hc)
        # The counts made from it are whole (its rates and latency aside).
        assert all(isinstance(x, int) for x in numbers({k: v for k, v in hc.items()
                                                        if k != "peer"})), hc
        json.dumps(hc, allow_nan=False)
    rr, found = read(data, rrhost.results, lambda r: "transactions" in r)
    assert all(isinstance(x, int) for r in found for k, x in r.items()
               if isinstance(x, (int, float))), found
    live = peer.progress(data.decode("utf-8", "replace").strip().splitlines())
    assert all(isinstance(k, str) and isinstance(v, int) for k, v in live.items()), live
    good_numbers(live)
    return "peer " + what, "rr " + rr, "progress " + ("ok" if live else "none")


def test_seeds_are_results_by_the_docs():
    """Not vacuous: every seed gives a result or a progress line, none
    refused."""
    for i, data in inputs(NAME, n=0):
        got = " ".join(check(data))
        assert "refused" not in got and "ok" in got, (i, got)


def test_pyfuzz_peer():
    trees = tree_seeds()

    def both(i, data):
        # Beside the bytes, one or two seed result lines with members changed.
        rng = random.Random("peer-tree:%d" % i)
        tree = b"\n".join(tree_mutant(rng, rng.choice(trees), HOSTILE)
                          for _ in range(rng.randrange(1, 3))) + b"\n"
        return check(data) + tuple("tree " + w for w in check(tree))
    seen = drive(NAME, both)
    assert all(seen.get(w) for w in ("peer ok", "tree peer ok", "tree peer refused",
                                     "tree rr ok", "tree rr refused")), seen
