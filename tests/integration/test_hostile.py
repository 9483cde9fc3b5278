"""vnperf hostile booting the image (docs/hostile.md): the whole catalogue
over dgram ends with a verdict for every case and nothing left running
(conftest's no_leftovers); a case that makes QEMU die is recorded as such
and the next case still runs."""

import json
import os
import shutil

import pytest

import vnharness
from vnperflib.campaign import hostile_cases, hostile_verdict

# A stand-in QEMU: the real one, except that a guest configured for
# case=runt dies of SIGSEGV at once, as a QEMU that crashes on a case would.
CRASHER = """#!%s
import os, signal, sys
if any("case=runt" in a for a in sys.argv):
    os.kill(os.getpid(), signal.SIGSEGV)
os.execv(%r, [%r] + sys.argv[1:])
"""


def hostile(args, timeout):
    r = vnharness.run_vnperf(["hostile", "--json"] + args, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.timeout_s(600)
def test_the_whole_catalogue_over_dgram_has_a_verdict_for_every_case(image):
    res = hostile(["--backend", "dgram", "--accel", "tcg"], timeout=590)
    assert [c["name"] for c in res["cases"]] == list(hostile_cases.NAMES)
    for c in res["cases"]:
        assert c["verdict"] in hostile_verdict.VERDICTS, c
        assert c["spec"] == hostile_cases.SPEC[c["name"]]
        if c["verdict"] != "crashed":
            assert c["guest"]["sent"] == 32, c
    assert res["wall_s"] < 600


@pytest.mark.timeout_s(240)
def test_a_case_that_kills_qemu_is_recorded_and_the_next_one_runs(image, tmp_path):
    real = shutil.which("qemu-system-x86_64")
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_text(CRASHER % (vnharness.PYTHON, real, real))
    os.chmod(qemu, 0o755)
    res = hostile(["--backend", "dgram", "--accel", "tcg", "--qemu", str(qemu),
                   "--case", "runt,len_zero"], timeout=230)
    crash, nxt = res["cases"]
    assert (crash["name"], crash["verdict"]) == ("runt", "crashed")
    assert crash["host"]["signal"] == "SIGSEGV" and "SIGSEGV" in crash["why"]
    assert "--qemu %s " % qemu in crash["command"] and crash["command"].endswith("-- case=runt")
    assert nxt["name"] == "len_zero" and nxt["verdict"] != "crashed"
    assert nxt["guest"]["completed"] == nxt["guest"]["sent"] == 32
