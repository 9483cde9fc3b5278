"""bench/bench_pps.py with --notify: one vnperf side per notification mode,
each with the config word of its mode, interrupts per frame and idle share
taken from the runner's metrics, every vnperf side as a ratio to Linux."""

import os
import sys

import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import bench_pps  # noqa: E402
import benchlib  # noqa: E402


def fake_rep(words):
    hybrid = "notify=hybrid" in words
    return {"metrics": {"pps": 200.0 if hybrid else 100.0, "packets": 10, "duration_s": 1.0,
                        "irq_per_packet": 0.25 if hybrid else None,
                        "idle_pct": 40.0 if hybrid else None},
            "host": {"rx_frames": 200.0 if hybrid else 100.0}, "cpu": None}


def test_one_side_per_mode_with_its_word(monkeypatch):
    seen = []

    def run(args, timeout):
        seen.append(args[args.index("--") + 1:])
        return fake_rep(args)
    monkeypatch.setattr(benchlib, "vnperf_run", run)
    o = bench_pps.parse(["--notify", "poll,hybrid", "--tests", "tx", "--backends", "dgram",
                         "--repeat", "1", "--", "kick_batch=8"])
    sides = [("vnperf " + m, bench_pps.VnperfSide(o, m)) for m in ("poll", "hybrid")] + \
        [("linux", lambda p: {"pps": 50.0, "own_pps": 50.0})]
    res, pairs = benchlib.interleave([("tx", "dgram")], sides, 1, "pps")
    assert seen == [["kick_batch=8", "notify=poll"], ["kick_batch=8", "notify=hybrid"]]
    table = []
    monkeypatch.setattr(benchlib, "print_table", lambda header, rows: table.extend([header] + rows))
    bench_pps.print_report(o, [("tx", "dgram")], sides, res, pairs)
    head, row = table
    cells = dict(zip(head, row))
    assert cells["vnperf poll/linux"] == "2.00x" and cells["vnperf hybrid/linux"] == "4.00x"
    assert cells["vnperf hybrid irq/pkt"] == "0.250" and cells["vnperf hybrid idle%"] == "40"
    assert cells["vnperf poll irq/pkt"] == "-" and "linux irq/pkt" not in cells


def test_unknown_mode_and_aa_with_modes_are_refused(capsys):
    for argv in (["--notify", "poll,spin"], ["--aa", "--notify", "poll"]):
        try:
            bench_pps.parse(argv)
        except SystemExit as e:
            assert e.code == 2
        else:
            raise AssertionError(argv)
    assert "--notify" in capsys.readouterr().err
