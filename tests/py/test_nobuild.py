"""The runner refuses a bad command line the same without a build: every
option, combination and host refusal comes before the check of build/
(artifacts.py), which then names the one file missing with its status.
Runs a copy of tools/ that has no build/ beside it."""

import os
import shutil
import subprocess

import pytest

from vnpy import PYTHON, ROOT
from vnperflib import exitcodes

USAGE, MISSING = exitcodes.RUNNER_USAGE, exitcodes.RUNNER_BACKEND_MISSING


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A tree with tools/ only: what a fresh clone has before make."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(os.path.join(ROOT, "tools"), str(root / "tools"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    elf = root / "fake.elf"
    elf.write_bytes(b"\x7fELF")
    return root


def vnperf(root, args):
    return subprocess.run([PYTHON, str(root / "tools" / "vnperf")] + args, cwd=str(root),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args,status,needle", [
    (["run", "--backend", "dgram", "--app", "iperf"], USAGE,
     "iperf over dgram: iperf needs the host's iperf 2"),
    (["run", "--backend", "dgram", "--app", "rr", "--", "proto=tcp"], USAGE,
     "proto=tcp needs --topology guests"),
    (["run", "--engine", "libvirt", "--machine", "microvm"], USAGE, "microvm has no PCI bus"),
    (["sweep", "--size", "64", "--", "rate=1k", "rate=2k"], USAGE, "rate given twice"),
    (["sweep", "--backend", "dgram,hub", "--app", "sink"], USAGE,
     "sink over hub: QEMU alone"),
    (["ndr", "--backend", "dgram", "--rate", "10k"], USAGE, "the search chooses the rate"),
    # Only then the files of build/: the image first, then the programs.
    (["run", "--backend", "dgram", "--app", "gen"], USAGE,
     "image %(root)s/build/vnperf.elf not found or unreadable (build it with make)"),
    (["run", "--backend", "dgram", "--app", "gen", "--image", "%(root)s/fake.elf"], MISSING,
     "dgram: host peer %(root)s/build/tools/vnperf-peer missing (run make)"),
    (["sweep", "--size", "64", "--image", "%(root)s/fake.elf"], MISSING,
     "dgram: host peer %(root)s/build/tools/vnperf-peer missing (run make)"),
])
def test_refused_alike_without_a_build(bare, args, status, needle, tmp_path):
    args = [a % {"root": bare} for a in args] + (
        ["--out", str(tmp_path / "o")] if args[0] in ("sweep", "ndr") else [])
    r = vnperf(bare, args)
    assert r.returncode == status, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle % {"root": bare} in lines[0], r.stderr
    assert not os.path.exists(tmp_path / "o")


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
                    reason="tap needs root and /dev/net/tun")
def test_tap_sink_names_its_sender(bare):
    """The tap backend's sink is fed by the host peer and its rr client is
    answered by vnperf-rrserver: a run without them is refused before any
    namespace or QEMU starts."""
    img = str(bare / "fake.elf")
    r = vnperf(bare, ["run", "--backend", "tap", "--app", "sink", "--image", img])
    assert r.returncode == MISSING and "tap: host peer" in r.stderr, r.stderr
    r = vnperf(bare, ["run", "--backend", "tap", "--app", "rr", "--image", img])
    assert r.returncode == MISSING and "tap: rr host server" in r.stderr, r.stderr
