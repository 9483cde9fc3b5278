"""report.py: the human report says what the JSON says: an rr run's
transactions per second, p99.9, max and mean latency and its service
demand per transaction; a lossy run says lossy, with the loss and where it
happened, and never that the counts agree (issue 11, findings 1 and 7)."""

import re

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import counts, outcome, report


def rep_of(app, result, host=None, lossless=True, cpu_s=2.0):
    rep = {"status": 0, "status_name": "ok", "why": "ok", "app": app, "backend": "dgram",
           "machine": "microvm", "accel": "tcg", "config": ["app=%s" % app],
           "guests": [{"label": "guest", "wall_s": 3.0, "ready_s": 0.05, "result": result}],
           "host": host or {}, "cpu": {"total_pct": 150.0, "total_cpu_s": cpu_s,
                                       "roles": {"vcpu": {"pct": 100.0}}}}
    rep["counts"] = outcome.merged_counts("dgram", app, [rep["guests"][0]], host, lossless)
    rep["metrics"] = outcome.metrics(rep)
    return rep


def line(text, key):
    """The value of the report's row named key."""
    (hit,) = [re.split(r"\s{2,}", l, 1)[1] for l in text.splitlines()
              if re.split(r"\s{2,}", l, 1)[0] == key]
    return hit


def test_rr_report_has_tps_tail_latency_and_demand_per_transaction():
    res = {"app": "rr", "role": "client", "proto": "udp", "transactions": 20000, "tps": 10000.0,
           "packets": 40000, "bytes": 40000, "duration_ns": 2000000000, "timeouts": 0,
           "late": 0, "sessions": 1, "p50_us": 80.0, "p90_us": 95.0, "p99_us": 120.0,
           "p999_us": 400.0, "max_us": 900.0, "mean_us": 85.5}
    text = report.human(rep_of("rr", res, {"rx_packets": 20000, "tx_packets": 20000}))
    assert line(text, "transactions") == "20000, 10.000k/s"
    assert line(text, "latency") == (
        "p50 80.0 us, p90 95.0 us, p99 120.0 us, p99.9 400.0 us, max 900.0 us, mean 85.5 us")
    # 2 s of host CPU over 20000 transactions.
    assert "100.00 us/transaction" in line(text, "service demand")


def test_txfull_drop_run_reads_lossy_with_the_drops_located():
    res = {"app": "gen", "packets": 127895, "bytes": 127895 * 64, "tx_dropped": 17425403,
           "duration_ns": 2000000000, "vnet": {"tx": {"packets": 127895, "in_flight": 0}}}
    host = {"rx_packets": 127895, "rx_frames": 127895,
            "rx_drops": [counts.drop("peer", "in the peer's socket buffer", 0)],
            "rx_seq_lost": 17326053,
            "peer": {"streams": [{"id": 0, "first_seq": 0, "max_seq": 17453948}]}}
    text = report.human(rep_of("gen", res, host))
    got = line(text, "counts guest->host")
    assert got.startswith("lossy: 17553298 sent, 127895 received, 17425403 lost"), got
    assert "17425403 dropped by the guest driver on a full TX ring (txfull=drop)" in got
    assert "agree" not in got


def test_backend_batch_is_a_range_when_testpmd_cannot_pin_it():
    """testpmd's whole-percent burst shares left 3.8..32 frames per burst
    (tests/py/test_testpmd.py): the report gives the range, not 3.8."""
    res = {"app": "gen", "packets": 7772544, "bytes": 7772544 * 64,
           "duration_ns": 1000000000, "vnet": {"tx": {"packets": 7772545, "in_flight": 0}}}
    host = {"backend_batch": None, "backend_batch_range": [3.77, 32.0]}
    got = line(report.human(rep_of("gen", res, host)), "notifications")
    assert "backend 3.8..32 frames per burst (testpmd gives its burst shares in whole " \
        "percents)" in got, got
    host = {"backend_batch": 1.0, "backend_batch_range": [1.0, 1.0]}
    got = line(report.human(rep_of("gen", res, host)), "notifications")
    assert "backend 1.0 frames per burst" in got and ".." not in got, got


def test_run_without_a_host_count_says_so_instead_of_nothing():
    # A 1514-byte gen over user (slirp, restrict=on): 587136 frames sent, none
    # counted by anyone (docs/experiments.md, the 1500-MTU sweep).
    rep = rep_of("gen", {"app": "gen", "packets": 587136, "bytes": 888923904,
                         "duration_ns": 1000002374})
    rep["backend"] = "user"
    rep["counts"] = {"agree": None, "directions": {}, "host": {},
                     "guest": {"tx_packets": 587136, "tx_bytes": 888923904,
                               "rx_packets": None, "rx_bytes": None}}
    text = report.human(rep)
    assert line(text, "counts") == (
        "guest only (sent 587136): no host-side count over user to check against, loss unknown")
