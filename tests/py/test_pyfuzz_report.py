"""Random-input harness of `vnperf report`'s reader and page builder
(htmlreport.parse, htmlreport.build) on mutants of a run report, a sweep's
and a search's results.json and a compare.json (tests/py/seeds/report,
written by real runs) and of the results loader's seeds, VNPERF_PYFUZZ_N
of them (`make fuzz`: 10^5, `make pyunit`: a smoke). Rule per input: a
page whose every section is there, or a RunnerError with status 64 and
one printable line; never another exception. The plots are left out
(matplotlib per input would be the whole budget): they read the summaries
the tables read, which resultsdir.parse checks."""

import json
import random

import pytest

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, load_seeds, one_line, tree_mutant
from test_pyfuzz_results import HOSTILE
from vnperflib import exitcodes
from vnperflib.report import htmlreport, plots
from vnperflib.errors import RunnerError

NAME = "report"


@pytest.fixture(autouse=True)
def no_plots(monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)


def check(data):
    try:
        kind, parsed = htmlreport.parse(data, "r.json")
        text = htmlreport.build(kind, parsed, {}, "d")
    except RunnerError as e:
        assert e.status == exitcodes.RUNNER_USAGE and one_line(e.line), (e.status, e.line)
        return ["refused"]
    assert all('<section id="%s">' % sid in text for sid, _ in htmlreport.SECTIONS)
    assert "<script" not in text
    return [kind]


def test_seeds_make_pages():
    """Not vacuous: every seed of a real run makes its kind of page (the
    results loader's seeds include hand edits: a point without its axis
    value is refused)."""
    assert [check(s)[0] for s in load_seeds(NAME)] == ["run", "sweep", "ndr", "compare"]
    assert "sweep" in [check(s)[0] for s in load_seeds("results")]


def test_pyfuzz_report():
    seeds = load_seeds(NAME) + load_seeds("results")
    trees = [json.loads(s) for s in seeds]

    def both(i, data):
        tree = tree_mutant(random.Random(i), random.Random(i).choice(trees), HOSTILE)
        return check(data) + check(tree)
    outcomes = drive(NAME, both, seeds)
    assert outcomes.get("refused") and len(outcomes) > 2
