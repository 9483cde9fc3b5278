"""--nice (vnperflib/run/priority.py): parsing, refusals, and the priority a
process and its threads really get."""

import os
import subprocess

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.run import priority
from vnperflib.errors import RunnerError


def test_parse_and_describe():
    n = priority.parse("fwd1=-10,backend=5")
    assert n == {"fwd1": -10, "backend": 5}
    assert priority.describe(n) == "backend=5,fwd1=-10" and priority.describe(None) == ""


@pytest.mark.parametrize("spec,needle", [
    ("fwd1", "expected GUEST=N"), ("Fwd1=1", "expected GUEST=N"),
    ("fwd1=-21", "not a nice value -20..19"), ("fwd1=x", "not a nice value"),
    ("fwd1=1,fwd1=2", "given twice"),
])
def test_parse_refusals(spec, needle):
    with pytest.raises(ValueError, match=needle):
        priority.parse(spec)


def test_a_guest_the_run_lacks_is_refused():
    priority.check_labels({"fwd1": -5, "backend": -5}, ["fwd1", "tester"])
    with pytest.raises(RunnerError, match=r"no guest fwd2 in this run \(its guests: fwd1\)"):
        priority.check_labels({"fwd2": -5}, ["fwd1"])


def test_apply_sets_every_thread_and_the_autogroup():
    # A session leader like every process the runner spawns; nice 7 needs
    # no privilege.
    p = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert priority.apply(p.pid, 7) == 7
        for t in os.listdir("/proc/%d/task" % p.pid):
            assert os.getpriority(os.PRIO_PROCESS, int(t)) == 7
        if priority.autogroup_on():
            with open("/proc/%d/autogroup" % p.pid) as f:
                assert f.read().split()[-1] == "7"
    finally:
        p.kill()
        p.wait()
