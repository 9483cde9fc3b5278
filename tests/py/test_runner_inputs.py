"""Issue 31 F1, F2, F6, F15, F17: what a user types is refused before
anything starts, with one line and status 64 (docs/protocol.md), never a
traceback (70), a run without a timeout or QEMU's own refusal (66)."""

import argparse

import pytest

from vnpy import run_vnperf, standin_image

from vnperflib import optypes
from vnperflib.run import qemucmd

USAGE = 64
HUGE_MB = str(qemucmd.host_memory_mb() + 1)


@pytest.mark.parametrize("args,needle", [
    # F1: FileNotFoundError from the accelerator probe, status 70.
    (["run", "--qemu", "/nonexistent"], "--qemu /nonexistent: no such program"),
    (["run", "--engine", "libvirt", "--qemu", "/nonexistent"], "--qemu /nonexistent: no such"),
    # F2: qemucmd.config_string's ValueError, status 70.
    (["run", "--", "app=selftest\nx=1"], "contains whitespace"),
    (["run", "--", "app=selftest x=1"], "contains whitespace"),
    # F6: NaN and infinity switched the timeout off.
    (["run", "--timeout", "nan"], "'nan' is not a number of seconds"),
    (["run", "--timeout", "inf"], "'inf' is not a number of seconds"),
    (["run", "--timeout", "NaN", "--backend", "dgram"], "'NaN' is not a number of seconds"),
    (["run", "--warmup", "nan"], "'nan' is not a number of seconds"),
    (["ndr", "--exceed-ratio", "nan", "--size", "64"], "'nan' is not a number"),
    (["ndr", "--resolution", "inf", "--backend", "dgram", "--size", "64"], "--resolution 'inf'"),
    (["ndr", "--floor", "inf", "--backend", "dgram", "--size", "64"], "--floor 'inf'"),
    (["compare", "--alpha", "nan", "a", "b"], "'nan' is not a number"),
    # F15: QEMU refused them (66) after the backend and the probe ran.
    (["run", "--queue-size", "3", "--backend", "dgram"], "3: QEMU's virtio-net takes one of"),
    (["run", "--queue-size", "2048"], "2048: QEMU's virtio-net takes one of 256, 512, 1024"),
    (["run", "--queue-size", "128"], "128: QEMU's virtio-net takes one of"),
    (["run", "--memory", "99999999999"], "more than this host's RAM"),
    (["run", "--memory", HUGE_MB], "more than this host's RAM"),
    (["sweep", "--size", "64,128", "--backend", "dgram", "--memory", HUGE_MB],
     "more than this host's RAM"),
    (["ndr", "--size", "64", "--backend", "dgram", "--memory", HUGE_MB],
     "more than this host's RAM"),
    # F17: an empty --out wrote to the default directory.
    (["sweep", "--size", "64", "--out", ""], "--out: '': an empty path names no directory"),
    (["ndr", "--size", "64", "--backend", "dgram", "--out", ""], "an empty path"),
    (["fleet", "spec.toml", "--out", ""], "an empty path"),
])
def test_refused_with_one_line_and_64(tmp_path, args, needle):
    if args[0] != "fleet":
        args = args[:1] + ["--image", standin_image(tmp_path)] + args[1:]
    r = run_vnperf(args, timeout=30)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert needle in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("v", ["nan", "-nan", "inf", "-inf", "Infinity", "1e999"])
def test_finite_refuses_what_is_not_a_finite_number(v):
    with pytest.raises(argparse.ArgumentTypeError):
        optypes.finite(v)


def test_finite_takes_numbers():
    assert [optypes.digits(s) for s in ("0", "4096", "", "\u00b2", "1\u0663", "-1", "1 ")] == \
        [True, True, False, False, False, False, False]
    assert optypes.finite("2.5") == 2.5 and optypes.finite_float("-1e3") == -1000.0


def test_queue_sizes_qemu_takes_are_taken():
    """Each size named is one QEMU's virtio-net accepts: a power of two,
    256 to 1024 (qemucmd.QUEUE_SIZES)."""
    for n in qemucmd.QUEUE_SIZES:
        assert n & (n - 1) == 0 and 256 <= n <= 1024


def test_memory_within_the_host_is_taken():
    assert qemucmd.check_memory(128) is None
    assert "RAM" in qemucmd.check_memory(qemucmd.host_memory_mb() + 1)


@pytest.mark.parametrize("n", [64, 128, 2048])
def test_fleet_queue_size_is_one_qemu_takes(tmp_path, n):
    """F15 for fleet specs: 64 and 128 passed the spec check and failed when
    libvirt defined the domain."""
    from test_fleetspec import GOOD, refused
    line = refused(tmp_path, GOOD.replace('pin = "vcpu=0"', "queue_size = %d" % n, 1))
    assert "group 2 queue_size: %d is outside 256..1024" % n in line, line
