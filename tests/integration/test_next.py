"""build/next (make next): Debian 13's QEMU 10.0 and DPDK 24.11 run by the
runner through tools/next/run, without chroot: boots on microvm and q35
with exact both-side counts, vhost-user through its testpmd, and a sweep
with --qemu system,next that compare pairs by QEMU version (issue 27)."""

import json
import os

import pytest

from vnharness import run_vnperf
from vnperflib.run import nextroot

pytestmark = pytest.mark.skipif(nextroot.stamp() is None,
                                reason="build/next absent: run make next (Debian 13's QEMU "
                                       "and DPDK, debootstrap)")
RUN = ["run", "--accel", "tcg", "--quiet", "--json", "--app", "gen", "--size", "64"]
N = 5000
NEXT_QEMU = "10.0."


def run_json(args, timeout=120):
    r = run_vnperf(RUN + args, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    assert rep["status"] == 0, (rep["why"], r.stderr[-2000:])
    return rep


def exact(rep):
    """The generator's N frames, counted by the guest and by the host."""
    d = rep["counts"]["directions"]["guest->host"]
    assert rep["counts"]["guest"]["tx_packets"] == N
    assert (d["verdict"], d["sent"], d["received"]) == ("agree", N, N), d["why"]


@pytest.mark.parametrize("machine", ["microvm", "q35"])
def test_next_qemu_boots_with_exact_counts(image, peer, machine):
    rep = run_json(["--qemu", "next", "--machine", machine, "--backend", "dgram",
                    "--count", str(N), "--rate", "20k", "--duration", "30"])
    exact(rep)
    ident = rep["identity"]
    assert ident["qemu"] == nextroot.qemu("next")
    assert ident["qemu_version"].startswith(NEXT_QEMU), ident["qemu_version"]
    assert "(Debian qemu-system-x86 1:10.0." in ident["qemu_version"]


@pytest.mark.skipif(nextroot.open_above(nextroot.DRIVERS) is not None,
                    reason="DPDK 24.11 loads no driver below a world-writable folder (%s)"
                    % nextroot.open_above(nextroot.DRIVERS))
def test_vhost_user_through_next_testpmd(image):
    rep = run_json(["--qemu", "next", "--testpmd", "next", "--machine", "q35",
                    "--backend", "vhost-user", "--duration", "1"])
    d = rep["counts"]["directions"]["guest->host frames"]
    assert d["verdict"] == "agree" and d["sent"] == d["received"] > 0, d["why"]
    # testpmd counted every frame the generator sent (and the ARP before).
    assert d["sent"] == rep["counts"]["guest"]["tx_packets"] + 1
    assert "(Debian dpdk-dev 24.11." in rep["identity"]["backend_version"]
    assert rep["identity"]["backend_version"].startswith(nextroot.testpmd("next"))


@pytest.mark.timeout_s(300)
def test_sweep_system_vs_next_compares_two_qemu_versions(image, peer, tmp_path):
    out = str(tmp_path / "ab")
    r = run_vnperf(["sweep", "--accel", "tcg", "--qemu", "system,next", "--backend", "dgram",
                    "--size", "64", "--repeat", "2", "--duration", "1", "--out", out],
                   timeout=280)
    assert r.returncode == 0, r.stderr[-2000:]
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    assert res["axes"]["qemu"] == ["system", "next"]
    c = run_vnperf(["compare", "--json", out, out, "--ab", "qemu"])
    assert c.returncode == 0, c.stderr
    cmp = json.loads(c.stdout)
    # The points name the binaries (docs/runner-sweep.md, "A/B of two builds").
    assert cmp["differences"]["qemu"] == [nextroot.qemu("system"), nextroot.qemu("next")]
    a, b = cmp["differences"]["qemu_version"]
    assert not a.startswith(NEXT_QEMU) and b.startswith(NEXT_QEMU), (a, b)
    t = run_vnperf(["compare", out, out, "--ab", "qemu"])
    assert t.returncode == 0 and a in t.stdout and b in t.stdout, t.stdout
