"""Random-input harness of the console parser (protocol.py), through what
the runner makes of a console: its lines, problems, status and metrics
(outcome.py), and the fleet's histogram of its hist lines (histmerge.py). Inputs: mutants of real consoles (tests/py/seeds/console)
from mutator.py, VNPERF_PYFUZZ_N of them (`make fuzz`: 10^5, `make
pyunit`: a smoke). Rule per input: no exception at all (the parser takes
anything a guest prints), a documented status with one line why, the
metrics the numbers a report may hold, and quickly."""

import json
import math

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, inputs, one_line
from vnperflib import exitcodes, result
from vnperflib.analysis import histmerge, outcome
from vnperflib.run import protocol

NAME = "console"
# What one input may take, CPU shared with other tests included.
EXIT = b'@vnperf {"type":"exit","code":0,"reason":"ok"}'


def status_ok(status):
    """The guest's own code (0..63, passed through) or a runner status."""
    return 0 <= status < 64 or status in exitcodes.RUNNER_CODES


def guest(c):
    """What outcome.guest_report makes of a console whose QEMU agreed
    with its exit line (0 for one without a code; None: no exit)."""
    ex = c.last("exit")
    code = None if ex is None else ex.get("code") if "code" in ex else 0
    return result.GuestReport(
        label="guest", guest_code=code, started=True,
        status=exitcodes.RUNNER_NO_GUEST_EXIT if code is None else code, status_name="-",
        why_no_exit="guest: QEMU exited without a guest exit", problems=tuple(c.problems(code)),
        error=c.last("error"), result=c.last("result"), boot=c.first("boot"),
        ready=c.first("ready"))


def check(data):
    c = protocol.Console()
    mid = len(data) // 2
    lines = c.feed(data[:mid], 0.0) + c.feed(data[mid:], 0.1) + c.close(0.2)
    for l in lines:
        assert isinstance(l.text, str) and "\n" not in l.text
        assert l.bad is None or one_line(l.bad), l.bad
        assert l.msg is None or protocol.check(l.msg) is None
    g = guest(c)
    assert all(one_line(p) for p in g.problems), g.problems
    rep = result.RunResult(guests=(g,), app=(g.ready or {}).get("app"), counts=None, host={},
                           cpu=None)
    status, why = outcome.overall_status(rep, None)
    assert status_ok(status) and one_line(why), (status, why)
    try:  # the fleet merges the hist lines: a broken set is one line
        histmerge.from_lines(c.all("hist"))
    except ValueError as e:
        assert one_line(str(e)), str(e)
    m = outcome.metrics(rep)
    assert all(isinstance(v, float) and math.isfinite(v) for v in m.as_dict().values()), m
    json.dumps({"guest": g.to_dict(), "metrics": m.to_dict(), "console": [l.text for l in lines]})
    return status, lines


def test_seeds_are_consoles_by_the_protocol():
    """Not vacuous: every seed parses cleanly, and the ok ones are ok."""
    for i, data in inputs(NAME, n=0):
        status, lines = check(data)
        assert not [l.bad for l in lines if l.bad], i
        assert any(l.msg for l in lines), i


def test_pyfuzz_console():
    # As printed, and with a clean exit after it: the status logic then
    # judges what came before.
    statuses = drive(NAME, lambda i, data: (check(data)[0], check(data + b"\n" + EXIT)[0]))
    assert statuses.get(exitcodes.RUNNER_PROTOCOL) and statuses.get(0)
