"""Random-input harness of result.parse (what result.load and the Python
API read): mutants of results.json files and run reports
(tests/py/seeds/results) from mutator.py, VNPERF_PYFUZZ_N of them. Rule
per input: a typed result whose JSON gives back every member it read (a
report's null metrics as {}), or
a RunnerError with status 64 and one printable line; never another
exception, and quickly."""

import json
import random

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, load_seeds, one_line, tree_mutant
from test_pyfuzz_results import HOSTILE
from vnperflib import exitcodes, result
from vnperflib.errors import RunnerError

NAME = "results"


def same(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def check(data):
    try:
        res = result.parse(data, "r.json")
    except RunnerError as e:
        assert e.status == exitcodes.RUNNER_USAGE and one_line(e.line), (e.status, e.line)
        return ["refused"]
    assert isinstance(res, (result.RunResult, result.SweepResult))
    read = json.loads(data)
    back = json.loads(json.dumps(res.to_dict(), default=str))
    if isinstance(res, result.RunResult) and read.get("metrics") is None:
        read["metrics"] = {}    # a report's missing metrics read as none measured
    lost = [k for k in read if k not in back or not same(read[k], back[k])]
    assert not lost, "members not given back: %s" % lost
    return ["loaded"]


def test_seeds_load_typed():
    """Not vacuous: each seed loads."""
    for data in load_seeds(NAME):
        assert check(data) == ["loaded"]


def test_pyfuzz_result():
    seeds = load_seeds(NAME)
    trees = [json.loads(s) for s in seeds]

    def both(i, data):
        tree = tree_mutant(random.Random(i), random.Random(i).choice(trees), HOSTILE)
        return check(data) + check(tree)
    outcomes = drive(NAME, both, seeds)
    assert outcomes.get("loaded") and outcomes.get("refused")
