"""backends/testpmd.py: the backend's own batch knobs reach testpmd's
command line (experiment 4 varies them), its forward mode follows the app,
and its burst statistics become frames per burst (issue 11, finding 8)."""

import argparse

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.backends import testpmd


def opts(**kw):
    base = dict(app="gen", topology="host", rate=None, count=None, size=64, fwd_mode=None,
                pmd_burst=None, pmd_rxd=None, pmd_txd=None)
    return argparse.Namespace(**dict(base, **kw))


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
    # 1000 bursts, 90% of them empty: 100 bursts moved 400 frames.
    port = {"RX-packets": 400, "RX-bursts": (1000, [(90.0, 0), (10.0, 4)])}
    assert testpmd.mean_burst(port, "RX") == pytest.approx(4.0)
    assert testpmd.mean_burst({"RX-packets": 0}, "RX") is None
