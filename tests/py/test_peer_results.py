"""The result lines the runner reads from vnperf-peer and vnperf-rrserver
(docs/peer.md, tools/rrserver/rrs_main.c): checked as they are read, so a
broken line is one line and status 68, never a traceback (70) or a number
outside the protocol in a report. Found by test_pyfuzz_peer."""

import json
import tempfile

import pytest

from vnpy import run_opts
from vnperflib import exitcodes
from vnperflib.run import peer, rrhost, scratch
from vnperflib.errors import RunnerError
from vnperflib.run.proc import Session

GOOD = {"type": "peer", "mode": "count", "stop": "idle", "packets": 300, "bytes": 18000,
        "pps": 3101, "bps": 1488595, "vnperf": 300, "lost": 0,
        "errors": {"rx": 0, "sock_drops": 0, "first_error": ""}}


class DoneProc:
    """A host tool that has already exited with status 0."""
    returncode = 0

    def poll(self):
        return 0


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(scratch, "_root", None)
    s = Session()
    yield s
    s.close()


def finished_peer(session, *lines):
    p = peer.Peer(session, "/bin/true", "count", 0, None)
    p.proc = DoneProc()
    for l in lines:
        p.out.write((l if isinstance(l, str) else json.dumps(l)).encode() + b"\n")
    return p


def refused(fn):
    with pytest.raises(RunnerError) as e:
        fn()
    assert e.value.status == exitcodes.RUNNER_BACKEND_FAILED
    assert "\n" not in e.value.line
    return e.value.line


def test_good_result_is_read(session):
    res = finished_peer(session, GOOD).finish(linger_s=0)
    assert res["packets"] == 300
    assert peer.host_counts(res)["rx_packets"] == 300


@pytest.mark.parametrize("member, value, why", [
    ("packets", float("nan"), "packets nan is not a count"),
    ("packets", -1, "packets -1 is not a count or rate"),
    ("packets", "many", "packets 'many' is not a count"),
    ("bytes", 2 ** 64, "bytes 18446744073709551616 is not a count or rate"),
    ("pps", float("inf"), "pps inf is not a count or rate"),
    ("lost", -3, "lost -3 is not a count or rate"),
    ("errors", {"sock_drops": -1}, "errors.sock_drops -1 is not a count or rate"),
    ("vnperf", 299.5, "vnperf 299.5 is not a count"),
    ("errors", {"rx": 0.5}, "errors.rx 0.5 is not a count"),
    ("newer", 1.5, "newer 1.5 is not a whole count"),
    ("vnperf", {"rx": 0.5}, "vnperf dict is not a count"),
    ("lost", None, "lost None is not a count"),
    ("errors", {"sock_drops": []}, "errors.sock_drops list is not a count"),
    ("mode", None, "mode None is not one of count, send, reflect"),
])
def test_result_outside_the_protocol_is_refused(session, member, value, why):
    """Before: NaN, negative and string counts went into the host counts
    as printed, and a line without a mode or packets was a KeyError (70)."""
    bad = dict(GOOD, **{member: value})
    line = refused(lambda: peer.host_counts(finished_peer(session, bad).finish(linger_s=0)))
    assert line.startswith("peer: result " + why), line


def test_result_without_packets_is_refused_not_a_key_error(session):
    bad = {k: v for k, v in GOOD.items() if k != "packets"}
    line = refused(lambda: peer.host_counts(finished_peer(session, bad).finish(linger_s=0)))
    assert line == "peer: result packets None is not a count (docs/peer.md)"


def test_result_nested_too_deep_is_not_a_result(session):
    """Before: 2000 `[` on the peer's stdout was a RecursionError (70)."""
    p = finished_peer(session, "[" * 2000, GOOD)
    assert p.finish(linger_s=0)["packets"] == 300
    p = finished_peer(session, "[" * 2000)
    assert "printed no result" in refused(lambda: p.finish(linger_s=0))


def test_rrserver_result_outside_its_counters_is_refused(session):
    """Before: "transactions": NaN reached counts._first, int(nan): a
    ValueError (70)."""
    opts = run_opts()
    rr = rrhost.HostRr(session, None, "127.0.0.1", opts)
    rr.proc = DoneProc()
    good = {"proto": "udp", "port": 9000, "transactions": 20, "refused": 0}
    rr.out.write(json.dumps(good).encode() + b"\n")
    rr.finish()
    assert rr.result["transactions"] == 20
    rr.out.write(json.dumps(dict(good, transactions=float("nan"))).encode() + b"\n")
    line = refused(rr.finish)
    assert line == "rrserver: result transactions nan is not a count (docs/peer.md)", line
    rr.out.seek(0)
    rr.out.truncate()
    rr.out.write(json.dumps(dict(good, io_errors=-1)).encode() + b"\n")
    assert refused(rr.finish) == "rrserver: result io_errors -1 is not a count or rate >= 0"
    rr.out.seek(0)
    rr.out.truncate()
    rr.out.write(json.dumps(dict(good, refused=[0])).encode() + b"\n")
    assert refused(rr.finish) == "rrserver: result refused list is not a count (docs/peer.md)"


def test_garbled_progress_line_is_passed_over(session):
    """Found by test_pyfuzz_peer: a progress counter of 5000 digits was
    int()'s ValueError (70) in the live display; one beyond u64 or in
    non-ASCII digits went into it as printed."""
    p = finished_peer(session)
    good = "vnperf-peer: t=1s packets=1610 bytes=96600 lost=0\n"
    for bad in ("packets=" + "9" * 5000, "packets=18446744073709551616", "packets=\u0663"):
        p.err.seek(0)
        p.err.truncate()
        p.err.write((good + "vnperf-peer: t=2s %s lost=0\n" % bad).encode())
        assert p.live() == {"t": 1, "packets": 1610, "bytes": 96600, "lost": 0}, bad[:40]


@pytest.mark.parametrize("rate,size,pps", [
    ("250k", 60, 250000), ("1.5mpps", 60, 1500000), ("10gbps", 1250, 1000000),
    ("1tbps", 1250, 100000000), ("0.5t", 60, 500000000000), ("max", 60, None)])
def test_host_rate_takes_the_guests_multipliers(rate, size, pps):
    """The guest's rate= takes t (apps/rate.c): the host sender's the same."""
    assert peer.rate_pps(rate, size) == pps


def test_host_rate_refuses_what_the_guest_refuses():
    with pytest.raises(ValueError, match=r"\[k\|m\|g\|t\]"):
        peer.rate_pps("1pbps", 60)
