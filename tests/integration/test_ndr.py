"""The RFC 2544 search (`vnperf ndr`) end to end under TCG: short trials,
coarse resolutions (two cores shared by every guest and the peer)."""

import csv
import json
import os

import pytest

from vnharness import run_vnperf
from vnperflib import exitcodes


def ndr_once(out, args, timeout):
    r = run_vnperf(["ndr", "--accel", "tcg", "--size", "60", "--duration", "1", "--json",
                    "--out", out] + args, timeout=timeout)
    assert r.stdout, "no results (status %d): %s" % (r.returncode, r.stderr)
    res = json.loads(r.stdout)
    (point,) = res["points"]
    (found,) = point["searches"]
    return r, res, point, found


def ndr(tmp_path, args, timeout=170):
    """One search; a second where the first's verification lost frames at
    every rate it tried (status 71, "not repeatable"): the honest answer
    when another job took the two CPUs for those seconds (CI once lost
    3-10% in each 1 s trial), and no answer about the search."""
    out = str(tmp_path / "ndr")
    r, res, point, found = ndr_once(out, args, timeout)
    if r.returncode == exitcodes.RUNNER_NO_RATE and "not repeatable" in found["why"]:
        out = str(tmp_path / "ndr-again")
        r, res, point, found = ndr_once(out, args, timeout)
    assert r.returncode == 0 and found["status"] == "ok", "%s\n%s" % (found["why"], r.stderr)
    return out, res, point, found


def report(out, trial):
    with open(os.path.join(out, trial["run"])) as f:
        return json.load(f)


def agree(rep, names):
    dirs = rep["counts"]["directions"]
    for n in names:
        assert dirs[n]["verdict"] == "agree", dirs[n]["why"]
        assert dirs[n]["sent"] == dirs[n]["received"] > 0
    return dirs


@pytest.mark.timeout_s(380)
def test_ndr_of_the_sink_over_dgram_converges_and_verifies(tmp_path, image, peer):
    # QEMU's own 208 KiB socket overflows whenever its main loop waits for
    # a CPU: a quiet CI's 1 s trials lost 48-3942 frames at a rate the one
    # before had passed, and the verification failed 3 times. The 4 MiB
    # socket (as the PVP test's) holds those waits, so the search finds
    # the sink's rate, not the host's scheduling.
    out, res, point, found = ndr(tmp_path, ["--backend", "dgram", "--resolution", "10k",
                                            "--floor", "2k", "--latency-at", "none",
                                            "--sock-rcvbuf", "4M"])
    trials = found["trials"]
    assert trials[0]["kind"] == "max" and trials[0]["target_pps"] is None
    verify = trials[-1]
    assert verify["kind"] == "verify" and verify["target_pps"] == found["rate_pps"]
    assert verify["lost"] == 0 and not verify["missed"]
    # The verification run: the peer's frames and the sink's count agree,
    # at the app's level and at every frame on the wire.
    rep = report(out, verify)
    dirs = agree(rep, ["host->guest", "host->guest frames"])
    assert dirs["host->guest"]["sent"] == rep["host"]["peer"]["packets"] == \
        rep["guests"][0]["result"]["packets"] == verify["sent"]
    # Converged: a failing trial at most one resolution above the rate,
    # unless the sink kept up with the flat-out peer.
    above = [t["target_pps"] or trials[0]["achieved_pps"] for t in trials if not t["passed"]]
    assert not above or min(above) - found["rate_pps"] <= 10000
    assert found["rate_pps"] >= 2000
    assert point["summary"]["ndr_pps"]["median"] == found["rate_pps"]
    # Every trial is listed: in the JSON, in trials.csv, each with its run.
    with open(os.path.join(out, "trials.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [r["kind"] for r in rows] == [t["kind"] for t in trials]
    assert all(os.path.isfile(os.path.join(out, t["run"])) for t in trials)


@pytest.mark.timeout_s(380)
def test_pvp_over_dgram_counts_exactly_below_ndr(tmp_path, image, peer):
    # QEMU's own UDP socket (208 KiB) overflows when its main loop waits a
    # few ms for a CPU: CI lost 465 of 9241 frames at half the NDR so.
    # The search and its latency trial run on the same 4 MiB socket.
    out, res, point, found = ndr(tmp_path, ["--backend", "dgram", "--topology", "pvp",
                                            "--resolution", "25%", "--latency-at", "50",
                                            "--sock-rcvbuf", "4M"])
    (half,) = found["latency"]
    assert half["pct"] == 50 and half["target_pps"] == round(found["rate_pps"] / 2)
    rep = report(out, half)
    assert rep["status"] == 0 and [g["label"] for g in rep["guests"]] == ["fwd1"]
    hops = rep["counts"]["hops"]
    assert hops == ["peer-tx -> fwd1 a", "fwd1 a -> b", "fwd1 b -> peer-rx"]
    dirs = agree(rep, hops + ["end to end"])
    assert dirs["end to end"]["sent"] == rep["host"]["peer_tx"]["packets"] == \
        rep["host"]["peer_rx"]["vnperf"]
    # One-way latency through the forwarder, on the host's TSC.
    lat = half["latency"]
    assert lat["count"] == dirs["end to end"]["received"] and 0 < lat["p50_us"] <= lat["max_us"]
    assert point["summary"]["p50_ns"]["median"] == pytest.approx(lat["p50_us"] * 1e3)
