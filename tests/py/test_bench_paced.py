"""bench/bench_paced.py: the stream file per target, each stream's error
against its own target on both sides, and a point the backend did not
take (loss, a full ring) never read as the pacer's accuracy."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import bench_paced  # noqa: E402


def rep(target_pkts, side_pkts, host=None, ring_full=0, secs=2.0):
    streams = [{"id": 0, "packets": target_pkts}, {"id": 1, "packets": side_pkts}]
    peer = {"streams": [{"id": i, "packets": n} for i, n in enumerate(host)]} if host else {}
    return {"status": 0, "host": {"peer": peer}, "guests": [{"result": {
        "duration_ns": int(secs * 1e9), "streams": streams,
        "vnet": {"tx": {"ring_full": ring_full}}}}]}


def test_rates_parse_and_refuse():
    assert bench_paced.parse_rates("10k,100k,1m") == [10000, 100000, 1000000]
    assert bench_paced.parse_rates("1.5m") == [1500000]
    for bad in ("x", "10", "20m", "k"):
        with pytest.raises(ValueError):
            bench_paced.parse_rates(bad)


def test_stream_file_has_the_target_and_a_tenth():
    text = bench_paced.stream_file(100000)
    assert text.count("[[stream]]") == 2
    assert 'rate = "100000pps"' in text and 'rate = "10000pps"' in text


def test_each_stream_is_judged_against_its_own_target():
    # 2 s at 10k and 1k: the target 0.5% fast, the side stream exact.
    got = bench_paced.judge(rep(20100, 2000, host=[20100, 2000]), 10000, False)
    assert got["target"]["guest_pct"] == pytest.approx(0.5)
    assert got["side"]["guest_pct"] == pytest.approx(0.0)
    assert got["target"]["host_pct"] == pytest.approx(0.5)
    assert got["target"]["taken"] and got["side"]["taken"]
    s = bench_paced.summary([got["target"], got["target"]])
    assert s["within_goal"] and s["guest_pct_worst"] == pytest.approx(0.5)


def test_loss_or_a_full_ring_is_not_taken():
    got = bench_paced.judge(rep(20000, 2000, host=[19000, 2000]), 10000, False)
    assert not got["target"]["taken"] and "host counted 19000 of 20000" in got["target"]["why"]
    assert got["side"]["taken"]
    full = bench_paced.judge(rep(1200000, 120000, ring_full=7), 1000000, False)
    assert not full["target"]["taken"] and full["target"]["why"] == "TX ring full"
    s = bench_paced.summary([full["target"]])
    assert not s["within_goal"]
    row = bench_paced.rows_of([(1000000, {"target": s, "side": s})])[0]
    assert row[-1].startswith("not taken: TX ring full")


def test_a_ring_full_for_a_moment_with_the_rate_held_is_taken():
    got = bench_paced.judge(rep(200000, 20000, ring_full=2), 100000, True)
    s = bench_paced.summary([got["target"]])
    assert s["taken"] and s["within_goal"]
    assert bench_paced.rows_of([(100000, {"target": s})])[0][-1] == "within 1% (TX ring full)"


def test_off_by_more_than_the_goal_is_said():
    got = bench_paced.judge(rep(20400, 2000, host=[20400, 2000]), 10000, False)
    s = bench_paced.summary([got["target"]])
    assert s["taken"] and not s["within_goal"]
    assert bench_paced.rows_of([(10000, {"target": s})])[0][-1] == "off by more"


def test_icount_leaves_the_wall_clock_host_column_out_and_failed_runs_say_why():
    got = bench_paced.judge(rep(20000, 2000, host=[20000, 2000]), 10000, True)
    assert got["target"]["host_pct"] is None and got["target"]["taken"]
    assert bench_paced.judge({"status": 69, "why": "no backend"}, 10000, False) == \
        {"why": "status 69: no backend"}


def test_a_host_that_counts_only_the_total_judges_the_point_by_it():
    # vhost-user: testpmd counts every stream together, the run judges it.
    lost = rep(3000000, 300000)
    lost["counts"] = {"directions": {"guest->host frames": {
        "sent": 3300000, "received": 3299000, "lost": 1000}}}
    got = bench_paced.judge(lost, 1000000, False)
    assert not got["target"]["taken"] and not got["side"]["taken"]
    assert got["target"]["why"] == "host counted 3299000 of 3300000 (all streams)"
    assert not bench_paced.summary([got["target"]])["within_goal"]
    lost["counts"]["directions"]["guest->host frames"].update(received=3300000, lost=0)
    assert bench_paced.judge(lost, 1000000, False)["target"]["taken"]
