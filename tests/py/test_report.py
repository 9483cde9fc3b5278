"""report.py: the human report says what the JSON says: an rr run's
transactions per second, p99.9, max and mean latency and its service
demand per transaction; a lossy run says lossy, with the loss and where it
happened, and never that the counts agree (issue 11, findings 1 and 7)."""

import dataclasses
import re

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.analysis import counts, outcome
from vnperflib.report import report
from vnperflib import result

R = result.RunResult.from_dict  # a report's JSON object, typed as the runner returns it


def rep_of(app, sent, host=None, lossless=True, cpu_s=2.0):
    rep = R({"status": 0, "status_name": "ok", "why": "ok", "app": app, "backend": "dgram",
             "machine": "microvm", "accel": "tcg", "config": ["app=%s" % app],
             "guests": [{"label": "guest", "wall_s": 3.0, "ready_s": 0.05, "result": sent}],
             "host": host or {}, "cpu": {"total_pct": 150.0, "total_cpu_s": cpu_s,
                                         "roles": {"vcpu": {"pct": 100.0}}}})
    rep = dataclasses.replace(rep, counts=outcome.merged_counts("dgram", app, rep.guests, host,
                                                                lossless))
    return dataclasses.replace(rep, metrics=outcome.metrics(rep))


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
    rep = dataclasses.replace(rep, backend="user", counts=result.Counts.from_dict(
        {"agree": None, "directions": {}, "host": {},
         "guest": {"tx_packets": 587136, "tx_bytes": 888923904, "rx_packets": None,
                   "rx_bytes": None}}))
    text = report.human(rep)
    assert line(text, "counts") == (
        "guest only (sent 587136): no host-side count over user to check against, loss unknown")


def test_each_app_leads_with_its_own_measure():
    """Issue 26: iperf's report led with a "pps" of its frames both ways
    (ACKs and TSO super-frames included) and rr's with "Gbit/s 0.001" and
    16870 us/KB. Now a stream leads with its goodput by the receiver's
    count and demand per KB, rr with transactions and latency, the frame
    apps with pps and Gbit/s of frames without FCS; frame counts are
    counts."""
    # Guest client -> the host's iperf server: the host read 2 150 000 000
    # bytes (the guest's acknowledged count is 4 more: iperf's flags word).
    res = {"app": "iperf", "role": "client", "packets": 880000, "bytes": 2150000004,
           "pps": 880000.0, "bps": 17.2e9, "duration_ns": 1000000000, "unacked": 0,
           "sessions": [{"bytes": 2150000004, "duration_ns": 1000000000, "ok": True}]}
    host = {"iperf": {"host_role": "server", "bytes": 2150000000, "streams": [{"id": 3}]}}
    text = report.human(rep_of("iperf", res, host, cpu_s=2.1))
    first = [re.split(r"\s{2,}", l, 1)[0] for l in text.splitlines()]
    assert first.index("goodput") < first.index("frames")
    assert "pps" not in first and not [k for k in first if k.startswith("Gbit/s")], first
    assert line(text, "goodput") == (
        "17.200 Gbit/s (2150000000 bytes in 1.00 s, counted by the host's iperf server)")
    assert line(text, "frames").startswith("880000 at the guest's netif, both ways")
    # 2.1 s of host CPU over the 2 150 000 000 bytes the receiver got.
    assert line(text, "service demand") == "%.3f us/KB" % (2.1e6 / (2150000000 / 1024.0))

    # A guest server: the guest is the receiver.
    srv = dict(res, role="server", bytes=1000000000)
    got = line(report.human(rep_of("iperf", srv, {"iperf": {"host_role": "client",
                                                           "bytes": 1000000000}})), "goodput")
    assert got == "8.000 Gbit/s (1000000000 bytes in 1.00 s, counted by the guest's iperf server)"

    rr = {"app": "rr", "role": "client", "proto": "udp", "transactions": 20000, "tps": 10000.0,
          "packets": 40000, "bytes": 40000, "pps": 20000.0, "bps": 160000.0,
          "duration_ns": 2000000000, "p50_us": 80.0, "p99_us": 120.0}
    text = report.human(rep_of("rr", rr, {"rx_packets": 20000, "tx_packets": 20000}))
    first = [re.split(r"\s{2,}", l, 1)[0] for l in text.splitlines()]
    assert first.index("transactions") < first.index("latency") < first.index("messages")
    assert "pps" not in first and not [k for k in first if k.startswith("Gbit/s")], first
    assert line(text, "messages") == "40000, requests and replies (40000 bytes of payload)"
    assert line(text, "service demand") == "100.00 us/transaction"

    gen = {"app": "gen", "packets": 1000000, "bytes": 64000000, "pps": 1e6, "bps": 512e6,
           "duration_ns": 1000000000}
    text = report.human(rep_of("gen", gen, {"rx_packets": 1000000}))
    first = [re.split(r"\s{2,}", l, 1)[0] for l in text.splitlines()]
    assert first.index("pps") < first.index("Gbit/s (frames w/o FCS)") < first.index("frames")
    # 64-byte frames take 88 bytes on the wire: 0.704 Gbit/s at L1.
    assert line(text, "Gbit/s (frames w/o FCS)") == (
        "0.512 (0.704 at L1, +24 B a frame for FCS, preamble, SFD and IFG)")
    assert line(text, "frames") == "1000000" and line(text, "pps") == "1.000M"
    assert line(text, "service demand") == "2.000 us/frame, 32.000 us/KB"


def test_progress_line_leads_with_the_apps_own_measure():
    """The live line of each sample: iperf's goodput (its frames both ways
    as a count), rr's transactions/s and p99, the frame apps' pps and
    Gbit/s of frames without FCS."""
    assert report.progress({"app": "iperf", "t": 1.0, "packets": 91234, "bytes": 2e9,
                            "pps": 91234.0, "bps": 17.9e9, "goodput_bps": 17.2e9}) == (
        "17.200 Gbit/s goodput  frames 91234")
    # An image from before goodput_bps: no figure rather than the frames'.
    assert report.progress({"app": "iperf", "packets": 5, "pps": 5.0}) == (
        "- Gbit/s goodput  frames 5")
    assert report.progress({"app": "rr", "packets": 20000, "pps": 20000.0, "bps": 160000.0,
                            "transactions": 10000, "tps": 10000.0, "p99_us": 120.0}) == (
        "10.000k tps  p99 120.0 us")
    assert report.progress({"app": "gen", "packets": 10, "pps": 1.25e6, "bps": 0.64e9}) == (
        "1.250M pps  0.640 Gbit/s (frames w/o FCS)")


def test_csv_and_metrics_add_columns_and_keep_the_old_ones():
    """New figures are added to the CSV and the metrics (a stream's
    goodput_bps, the batch bounds), none renamed: older readers find
    their columns."""
    old = ("backend", "app", "machine", "accel", "size", "status", "pps", "bps", "packets",
           "bytes", "loss_pct", "lost", "tx_dropped", "cpu_pct", "sd_us_per_packet",
           "sd_us_per_kb", "sd_us_per_tx", "tps", "p50_ns", "p99_ns", "p999_ns",
           "kicks_per_packet", "suppressed_pct", "backend_batch", "agree", "bottleneck")
    assert report.CSV_FIELDS[:len(old)] == old
    res = {"app": "gen", "packets": 7772544, "bytes": 7772544 * 64, "pps": 7772544.0,
           "bps": 7772544.0 * 512, "duration_ns": 1000000000}
    m = rep_of("gen", res, {"backend_batch": None, "backend_batch_range": [16.5, 32.0]}).metrics
    assert (m.backend_batch_lo, m.backend_batch_hi) == (16.5, 32.0)
    assert m.backend_batch is None and m.pps == 7772544.0
    row = report.csv_row(rep_of("iperf", {"app": "iperf", "role": "server", "packets": 10,
                                        "bytes": 125000000, "duration_ns": 1000000000}))
    assert row["goodput_bps"] == 1e9 and "goodput_bps" in report.to_csv([row]).split("\n")[0]


def test_features_say_what_was_negotiated_and_switched_off():
    """EVENT_IDX switched off: the report names it and what the driver
    negotiated, not an empty features value."""
    res = {"app": "gen", "packets": 1000, "bytes": 64000, "duration_ns": 1000000000,
           "vnet": {"features_offered": ["mac", "mrg_rxbuf", "ctrl_vq", "event_idx"],
                    "features": ["mac", "mrg_rxbuf"], "tx": {"packets": 1000, "in_flight": 0}}}
    rep = rep_of("gen", res)

    def features(event_idx, features):
        ident = {"event_idx": event_idx, "features": features}
        return line(report.human(dataclasses.replace(rep, identity=ident)), "virtio features")

    assert features("off", "none") == "negotiated mac mrg_rxbuf; switched off: event_idx"
    assert features("on", "-mrg_rxbuf,-csum").endswith("switched off: mrg_rxbuf csum")
    assert features("on", "none").endswith("switched off: none")


def test_each_vcpu_thread_has_its_share_with_several():
    """Issue 25: with several vCPUs the report names each vCPU thread's CPU
    (cpu.per_thread), so a per-queue rate stands beside the CPU its vCPU
    had; one vCPU: no row (the role's figure is the thread's)."""
    threads = [{"role": "main", "name": "qemu-system-x86", "tid": 1, "pct": 1.0},
               {"role": "vcpu", "name": "CPU 0/TCG", "tid": 2, "pct": 52.4, "wait_pct": 40.0},
               {"role": "vcpu", "name": "CPU 1/TCG", "tid": 3, "pct": 48.6, "wait_pct": 0.2}]
    rep = rep_of("gen", {"app": "gen", "packets": 10, "duration_ns": 10 ** 9})
    two = dataclasses.replace(rep, cpu=dataclasses.replace(
        rep.cpu, per_thread=tuple(result.CpuThread.from_dict(t) for t in threads)))
    assert line(report.human(two), "vCPU threads") == \
        "CPU 0/TCG 52% (waited 40%), CPU 1/TCG 49%"
    one = dataclasses.replace(rep, cpu=dataclasses.replace(
        rep.cpu, per_thread=tuple(result.CpuThread.from_dict(t) for t in threads[:2])))
    assert "vCPU threads" not in report.human(one)
    assert "vCPU threads" not in report.human(rep)
    # two guests: each thread named with its guest, as the roles are
    a_b = [dict(t, role="a:vcpu") for t in threads[1:2]] + [dict(threads[2], role="b:vcpu")]
    ab = dataclasses.replace(rep, cpu=dataclasses.replace(
        rep.cpu, per_thread=tuple(result.CpuThread.from_dict(t) for t in a_b)))
    assert line(report.human(ab), "vCPU threads") == \
        "a:CPU 0/TCG 52% (waited 40%), b:CPU 1/TCG 49%"
