"""app=rr against the host: the guest's client over tap answered by
vnperf-rrserver in the runner's namespace (UDP and TCP, sessions), both
ends' transaction counts (the refusals: tests/py/test_support.py)."""

import json
import os

import pytest

from vnharness import run_vnperf

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (tap in a namespace)")


@needs_root
@pytest.mark.parametrize("proto,sessions,req,resp", [
    ("udp", 1, 1, 1), ("udp", 4, 100, 1000), ("tcp", 1, 1, 1), ("tcp", 4, 64, 2000)])
def test_rr_client_against_host_over_tap(image, no_leftovers, proto, sessions, req, resp):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--app", "rr", "--duration", "2", "--", "role=client", "proto=" + proto,
                    "sessions=%d" % sessions, "req_size=%d" % req, "resp_size=%d" % resp],
                   timeout=120)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    res = rep["guests"][-1]["result"]
    assert r.returncode == 0, (rep["why"], rep["guests"][-1]["console_tail"][-8:])
    host = rep["host"]["rr"]
    assert (host["proto"], host["req_size"], host["resp_size"]) == (proto, req, resp), host
    assert res["transactions"] > 50, res
    assert host["io_errors"] == 0 and host["refused"] == 0 and host["short_msgs"] == 0, host
    if proto == "tcp":
        assert host["sessions"] == sessions, host
    # The client stops at its deadline with at most one transaction per
    # session in flight (answered by the host, not yet counted by the guest);
    # over UDP each timeout may be a request the host answered whose reply was
    # lost or late (analysis/counts.py's _server_view, the same rule).
    extra = host["transactions"] - res["transactions"]
    assert 0 <= extra <= sessions + res["timeouts"], (extra, host, res)
    # ... and the report's count line says so, with the server's count.
    d = rep["counts"]["directions"]["rr transactions"]
    assert d["server_answered"] == host["transactions"] and d["verdict"] == "agree", d
    assert host["req_bytes"] >= res["transactions"] * req, (host, res)

