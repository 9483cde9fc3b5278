"""Random-input harness of the parsers of dpdk-testpmd's output
(backends/testpmd.py: parse_port_stats, parse_fwd_stats, and burst_range
and batch_figure on what they give, as collect() uses them). Inputs:
mutants of testpmd sessions (tests/py/seeds/testpmd) from mutator.py,
VNPERF_PYFUZZ_N of them (`make fuzz`: 10^5, `make pyunit`: a smoke). Rule
per input: statistics of the shape the parsers document (ports and
counters 0..2^64-1, burst shares finite percents 0..100, a frames-per-burst
range of finite numbers within 1..--burst), or a RunnerError with status 68
(the backend failed) and one printable line; never another exception, and
quickly."""

import math

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, inputs, one_line
from vnperflib import exitcodes
from vnperflib.backends import testpmd
from vnperflib.errors import RunnerError

NAME = "testpmd"
U64 = 2 ** 64


def count(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < U64


def check_port(port, burst):
    assert isinstance(port, dict), port
    for k, v in port.items():
        if k.endswith("-bursts"):
            n, spread = v
            assert count(n), v
            for pct, frames in spread:
                assert isinstance(pct, float) and math.isfinite(pct) and 0 <= pct <= 100, v
                assert frames is None or count(frames), v
        else:
            assert k in testpmd.STAT_RE.pattern and count(v), (k, v)
    for side in ("RX", "TX"):
        rng = testpmd.burst_range(port, side, burst)
        if rng is None:
            continue
        lo, hi = rng
        assert all(isinstance(x, float) and math.isfinite(x) for x in rng), rng
        assert 1.0 <= lo <= hi, rng
        fig = testpmd.batch_figure(rng)
        assert fig is None or (math.isfinite(fig) and lo <= fig <= hi), (rng, fig)


def check_ports(ports, burst):
    assert isinstance(ports, dict), ports
    for p, port in ports.items():
        assert count(p), p
        check_port(port, burst)


def check(data):
    text = data.decode("utf-8", "replace")
    try:
        stats = testpmd.parse_port_stats(text)
        fwd = testpmd.parse_fwd_stats(text)
    except RunnerError as e:
        assert e.status == exitcodes.RUNNER_BACKEND_FAILED, (e.status, e.line)
        assert one_line(e.line) and e.line == str(e), e.line
        return "refused"
    for burst in (1, testpmd.DEFAULT_BURST):
        check_ports(stats, burst)
        assert isinstance(fwd, list)
        for ports in fwd:
            check_ports(ports, burst)
    return "ok" if stats or fwd else "none"


def test_seeds_are_testpmd_sessions():
    """Not vacuous: every seed gives port and forward statistics."""
    for i, data in inputs(NAME, n=0):
        text = data.decode()
        assert check(data) == "ok", i
        assert testpmd.parse_port_stats(text) and len(testpmd.parse_fwd_stats(text)) == 2, i


def test_pyfuzz_testpmd():
    assert drive(NAME, lambda i, data: (check(data),)).get("ok")
