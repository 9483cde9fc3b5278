"""A stream file's run in the report (analysis/outcome.stream_rows,
result.StreamRow, report.human): the JSON's `streams`, one entry per stream
with what gen sent and what the receiver counted, and a table row per
stream plus their total."""

import dataclasses
import json

from test_report import line, rep_of
from vnperflib import result
from vnperflib.analysis import outcome
from vnperflib.report import report

GEN = {"app": "gen", "packets": 7500, "bytes": 576000, "duration_ns": 3000000000,
       "streams": [{"id": 0, "mode": "continuous", "packets": 6000, "bytes": 384000},
                   {"id": 1, "mode": "continuous", "packets": 1500, "bytes": 192000,
                    "rx": {"packets": 1500, "p50_us": 20.0, "p99_us": 40.5, "max_us": 61.0}}]}
PEER = {"peer": {"streams": [{"id": 0, "packets": 6000, "lost": 0, "dup": 0, "reorder": 0},
                             {"id": 1, "packets": 1490, "lost": 10, "dup": 0, "reorder": 2}]},
        "rx_packets": 7490}


def test_rows_pair_what_gen_sent_with_what_the_peer_counted():
    rows = outcome.stream_rows(GEN, PEER, [], ("fast", "slow"))
    assert [(r.id, r.name, r.packets, r.received, r.lost, r.reorder) for r in rows] == \
        [(0, "fast", 6000, 6000, 0, 0), (1, "slow", 1500, 1490, 10, 2)]
    assert rows[1].p99_us == 40.5 and rows[0].p99_us is None


def test_a_receiving_guest_counts_when_there_is_no_peer():
    sink = {"app": "sink", "per_stream": [{"stream": 1, "packets": 1500, "lost": 0, "dup": 0,
                                           "reorder": 0}]}
    rows = outcome.stream_rows(GEN, {}, [sink])
    assert [(r.id, r.name, r.received) for r in rows] == [(0, None, None), (1, None, 1500)]
    assert outcome.stream_rows({"app": "gen"}, PEER, []) is None


def test_json_and_table_list_each_stream_and_the_total():
    res = dataclasses.replace(rep_of("gen", GEN, PEER),
                              streams=outcome.stream_rows(GEN, PEER, [], ("fast", "slow")))
    back = json.loads(report.to_json(res))["streams"]
    assert [(s["id"], s["packets"]) for s in back] == [(0, 6000), (1, 1500)]
    assert result.RunResult.from_dict(res.to_dict()).to_dict() == res.to_dict()
    text = report.human(res)
    assert line(text, "stream 0 (fast)") == "6000 sent, 6000 received, 0 lost, 0 dup, 0 reordered"
    assert line(text, "stream 1 (slow)") == ("1500 sent, 1490 received, 10 lost, 0 dup, "
                                             "2 reordered, latency p50 20.0 us, p99 40.5 us, "
                                             "max 61.0 us")
    assert line(text, "streams total") == "7500 sent, 7490 received, 10 lost, 0 dup, 2 reordered"
