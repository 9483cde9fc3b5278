"""backends/testpmd.py: the backend's own batch knobs reach testpmd's
command line (experiment 4 varies them), its forward mode follows the app,
and its burst statistics become frames per burst (issue 11, finding 8)."""


import pytest

from vnpy import run_opts
from vnperflib import exitcodes
from vnperflib.backends import testpmd
from vnperflib.errors import RunnerError


def opts(**kw):
    base = dict(app="gen", topology="host", rate=None, count=None, size=64, fwd_mode=None,
                pmd_burst=None, pmd_rxd=None, pmd_txd=None)
    return run_opts(**dict(base, **kw))


def app_args(o):
    argv = testpmd.VhostUser(o)._argv()
    return argv[argv.index("--") + 1:]


def test_burst_and_ring_knobs_reach_testpmd():
    args = app_args(opts(pmd_burst=4, pmd_rxd=512, pmd_txd=2048))
    assert "--burst=4" in args and "--rxd=512" in args and "--txd=2048" in args
    assert "--record-burst-stats" in args


def test_without_knobs_testpmd_keeps_its_defaults():
    args = app_args(opts())
    assert not [a for a in args if a.startswith(("--burst", "--rxd", "--txd"))]


@pytest.mark.parametrize("kw,plan", [
    ({}, ("rxonly", False)),
    ({"fwd_mode": "macswap"}, ("macswap", False)),
    ({"app": "sink"}, ("txonly", False)),
    ({"app": "sink", "rate": "100k"}, ("io", True)),
    ({"app": "sink", "count": 5000}, ("io", True)),
    ({"app": "reflect"}, ("io", True)),
    ({"topology": "guests"}, ("io", False)),
])
def test_forward_mode_by_app(kw, plan):
    assert testpmd.plan(opts(**kw)) == plan


def test_frames_per_burst_leaves_out_empty_polls():
    # 1000 bursts, 90% of them empty, the others all of 4 frames.
    port = {"RX-packets": 400, "RX-bursts": (1000, [(90.0, 0), (10.0, 4)])}
    assert testpmd.burst_range(port, "RX") == (4.0, 4.0)
    assert testpmd.batch_figure((4.0, 4.0)) == 4.0
    assert testpmd.burst_range({"RX-packets": 0}, "RX") is None


def test_whole_percent_shares_bound_the_batch():
    """Measured (sweep --backend vhost-user --pmd-burst 1,32, gen 64 B):
    testpmd's shares are whole percents rounded down. --burst 1 printed
    "80% of 0 pkts + 20% of 1 pkts" over 34022587 polls and 6500993
    frames: the table said 0.955 frames per burst, below the one frame a
    non-empty burst of one holds. --burst 32 printed "99% of 0 + 0% of 32
    + 1% of 1" for 7772545 frames: the table said 3.8, yet the non-empty
    polls may be any share up to 1% of 206177994. testpmd names the most
    frequent size first, so there are at least as many bursts of 32 as of
    1: 16.5..32 (issue 26; 3.8..32 before)."""
    one = {"RX-packets": 6500993, "RX-bursts": (34022587, [(80.0, 0), (20.0, 1)])}
    assert testpmd.burst_range(one, "RX", 1) == (1.0, 1.0)
    full = {"RX-packets": 7772545, "RX-bursts": (206177994, [(99.0, 0), (0.0, 32), (1.0, 1)])}
    lo, hi = testpmd.burst_range(full, "RX", 32)
    assert lo == pytest.approx(16.5) and hi == pytest.approx(32.0, rel=1e-4)
    assert testpmd.batch_figure((lo, hi)) is None
    # Half the polls empty: the share is known to 1 point in 50, tight.
    half = {"TX-packets": 16000, "TX-bursts": (1000, [(50.0, 0), (30.0, 32), (20.0, 16)])}
    lo, hi = testpmd.burst_range(half, "TX", 32)
    assert (lo, hi) == (32.0, 32.0) or hi <= lo * testpmd.BATCH_TIGHT
    assert testpmd.batch_figure((lo, hi)) == pytest.approx((lo + hi) / 2)


def test_burst_stats_other_share_is_kept():
    text = ("---------------------- Forward statistics for port 0  ----------------------\n"
            "  RX-packets: 900            RX-dropped: 0             RX-total: 900\n"
            "  RX-bursts : 1000 [50% of 0 pkts + 30% of 2 pkts + 10% of 1 pkts + 10% of other]\n"
            "  TX-packets: 0              TX-dropped: 0             TX-total: 0\n"
            "----------------------------------------------------------------------------\n")
    port = testpmd.parse_fwd_stats(text)[0][0]
    assert port["RX-bursts"] == (1000, [(50.0, 0), (30.0, 2), (10.0, 1), (10.0, None)])
    # Sizes beyond those named: no exact size, bounds from the empty share.
    assert testpmd.burst_range(port, "RX", 32) == (pytest.approx(1.8), pytest.approx(900 / 490))


def test_counters_beyond_u64_and_bad_shares_are_one_line():
    """Found by test_pyfuzz_testpmd: a 401-digit counter went into the
    report as printed (over 4300 digits: int()'s ValueError, 70), a share
    "1.2.3%" was float()'s ValueError and "999...%" an infinite share;
    now each is one line and 68 (the backend failed)."""
    head = "  ---------------------- Forward statistics for port 0  -------------------\n"

    def refused(body):
        with pytest.raises(RunnerError) as e:
            testpmd.parse_fwd_stats(head + body)
        assert e.value.status == exitcodes.RUNNER_BACKEND_FAILED
        assert "\n" not in e.value.line
        return e.value.line

    assert refused("  RX-packets: 18446744073709551616\n") == (
        "testpmd printed RX-packets 18446744073709551616: more than a u64 counter holds")
    assert "more than a u64" in refused("  TX-bytes: %s\n" % ("9" * 5000))
    assert refused("  RX-bursts : 10 [1.2.3% of 0 pkts]\n") == (
        "testpmd printed a burst share 1.2.3%: not a percent 0..100")
    assert "not a percent" in refused("  RX-bursts : 10 [%s%% of 0 pkts]\n" % ("9" * 400))
    assert "not a percent" in refused("  RX-bursts : 10 [101% of 0 pkts]\n")
    # The largest u64 is a counter; a non-ASCII digit is not a digit.
    port = testpmd.parse_fwd_stats(head + "  RX-packets: 18446744073709551615\n"
                                   "  TX-packets: \u0663\n")[0][0]
    assert port == {"RX-packets": 2 ** 64 - 1}


# dpdk-testpmd 22.11's statistics at `stop`, captured from `tools/vnperf run
# --accel tcg --backend vhost-user --pmd-burst 32 --duration 2` (gen 64 B).
BURST32_STOP = """\
  ---------------------- Forward statistics for port 0  ----------------------
  RX-packets: 593377         RX-dropped: 0             RX-total: 593377
  TX-packets: 0              TX-dropped: 0             TX-total: 0
  RX-bursts : 47884535 [99% of 0 pkts + 0% of 32 pkts + 1% of 1 pkts]
  ----------------------------------------------------------------------------

  +++++++++++++++ Accumulated forward statistics for all ports+++++++++++++++
  RX-packets: 593377         RX-dropped: 0             RX-total: 593377
  TX-packets: 0              TX-dropped: 0             TX-total: 0
  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
"""


def test_ranked_burst_sizes_narrow_the_batch():
    """Issue 26: with --pmd-burst 32 the batch column was empty and the
    report said 1.2..32 frames per burst, all that the empty polls' whole
    percent (99%) leaves. testpmd names the most frequent non-empty size
    first: at least as many bursts of 32 as of 1, at least one of 1, so
    593377 = 32 n32 + n1 with n32 >= n1 >= 1: 16.5..32. Still no single
    figure (the table shows the range, test_sweep_logic.py)."""
    port = testpmd.parse_fwd_stats(BURST32_STOP)[0][0]
    assert port["RX-bursts"] == (47884535, [(99.0, 0), (0.0, 32), (1.0, 1)])
    assert testpmd.burst_range(port, "RX", 32) == (16.5, 32.0)
    assert testpmd.batch_figure((16.5, 32.0)) is None
    # --pmd-burst 256 (same run otherwise): 32 and 256 named, the rest
    # "other", each other size at most as frequent as 256. The lowest mean:
    # one burst each of 32, 256 and 1..22 (22.5); the highest: 32, 256 and
    # 237..255 (236.3). The empty share alone left 1.4..256.
    port = testpmd.parse_fwd_stats(BURST32_STOP.replace(
        "47884535 [99% of 0 pkts + 0% of 32 pkts + 1% of 1 pkts]",
        "73444341 [99% of 0 pkts + 0% of 32 pkts + 0% of 256 pkts + 1% of other]").replace(
        "593377 ", "1021121"))[0][0]
    assert port["RX-packets"] == 1021121
    lo, hi = testpmd.burst_range(port, "RX", 256)
    assert lo == pytest.approx((288 + 22 * 23 / 2) / 24.0) \
        and hi == pytest.approx((288 + sum(range(237, 256))) / 21.0)
    assert "%.3g..%.3g" % (lo, hi) == "22.5..236"
    # Sizes of 0 frames named as non-empty: no ranking (nor a division by 0).
    assert testpmd._ranked_range([(50.0, 0), (30.0, 0), (20.0, 0)], 32) is None
