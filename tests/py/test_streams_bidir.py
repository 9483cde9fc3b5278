"""Streams both ways (docs/streams.md, "Both ways"; issue 29): a stream's
`direction` checked and encoded for the guest and the host peer, a file
with rx streams refused in one line (status 64) on a backend whose host
end cannot send them, the host peer's command line and result lines
wired into the host's counts, and the report's row per stream and
direction with both sides' counts."""

import dataclasses
import json

import pytest

from test_report import line, rep_of
from vnpy import run_vnperf, standin_image
from vnperflib import exitcodes, options, result
from vnperflib.analysis import outcome
from vnperflib.backends import wire
from vnperflib.errors import RunnerError
from vnperflib.report import report
from vnperflib.run import streamfile

BIDIR = """
[[stream]]
name = "up"
rate = "1000"
[[stream]]
name = "down"
direction = "rx"
rate = "400"
size = 128
"""


def errors(doc):
    with pytest.raises(streamfile.StreamFileError) as e:
        streamfile.check(doc, "f.toml")
    assert e.value.status == exitcodes.RUNNER_USAGE
    return e.value.lines


def test_direction_is_encoded_tx_by_default():
    streams = streamfile.check({"stream": [{"name": "a"}, {"name": "b", "direction": "rx"},
                                           {"name": "c", "direction": "tx"}]})
    assert streamfile.directions(streams) == ["tx", "rx", "tx"]
    lines = streamfile.encode(streams).splitlines()
    assert [l.rsplit(" ", 1)[1] for l in lines[1:]] == ["dir=tx", "dir=rx", "dir=tx"]


def test_direction_errors():
    assert errors({"stream": [{"name": "a"}, {"name": "b", "direction": "down"}]}) == [
        "f.toml: stream 1 (b): direction: 'down': tx (guest to host) or rx (host peer to guest)"]


def test_a_file_of_rx_streams_only_is_taken(tmp_path):
    """gen receives only: the host peer sends every stream."""
    streams = streamfile.check({"stream": [{"name": "a", "direction": "rx"},
                                           {"name": "b", "direction": "rx", "rate": "10"}]})
    assert streamfile.directions(streams) == ["rx", "rx"]
    p = tmp_path / "rx.toml"
    p.write_text('[[stream]]\nname = "a"\ndirection = "rx"\n')
    assert options.build(backend="dgram", streams=str(p)).stream_dirs == ("rx",)
    # count= would end a run that sends nothing
    with pytest.raises(RunnerError) as e:
        options.build(backend="dgram", streams=str(p), count=100)
    assert e.value.status == exitcodes.RUNNER_USAGE and "--count with rx streams only" in \
        e.value.line


def test_rx_streams_on_dgram_socket_tap_and_vhost_net_only(tmp_path):
    p = tmp_path / "b.toml"
    p.write_text(BIDIR)
    for backend in ("dgram", "socket", "tap", "vhost-net"):
        o = options.build(backend=backend, streams=str(p))
        assert o.stream_dirs == ("tx", "rx") and "dir=rx" in o.stream_text
    for backend, topology in (("user", "host"), ("hub", "host"), ("dgram", "guests")):
        with pytest.raises(RunnerError) as e:
            options.build(backend=backend, streams=str(p), topology=topology)
        assert e.value.status == exitcodes.RUNNER_USAGE and "\n" not in e.value.line
        assert "rx streams" in e.value.line
    # the user's tap or bridge: the peer writes onto the runner's tap only
    for backend, own in ((b, o) for b in ("tap", "vhost-net")
                         for o in ({"tap": "mytap0"}, {"bridge": "br0"})):
        with pytest.raises(RunnerError) as e:
            options.build(backend=backend, streams=str(p), **own)
        assert e.value.line == "--streams: rx streams over tap need the runner's own namespace: " \
            "the host peer writes frames onto its tap, not onto --%s %s" % next(iter(own.items()))
    # tx streams alone keep every backend
    (tmp_path / "tx.toml").write_text('[[stream]]\nname = "a"\n')
    assert options.build(backend="hub", streams=str(tmp_path / "tx.toml")).stream_dirs == ("tx",)


def test_run_refuses_rx_streams_on_user_before_boot(tmp_path):
    p = tmp_path / "b.toml"
    p.write_text(BIDIR)
    r = run_vnperf(["run", "--image", standin_image(tmp_path), "--backend", "user",
                    "--streams", str(p)])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.splitlines() == [
        "vnperf: --streams: rx streams (host peer to guest) need --backend dgram, socket, tap or "
        "vhost-net: "
        "the host peer sends them on its socket (backend user)"], r.stderr


def test_the_peer_sends_the_file_to_the_guest_from_its_ready():
    o = options.build(backend="dgram", app="gen", duration=3.0)
    args = wire.stream_args(o, "/x/streams")
    assert args[:3] == ["--stream-file", "/x/streams", "--start-on-usr1"]
    val = dict(zip(args[3::2], args[4::2]))
    assert val == {"--dst-mac": "52:54:00:00:00:01", "--src-mac": "02:00:00:00:00:01",
                   "--dst-ip": "10.0.2.15", "--src-ip": "10.0.2.2", "--duration": "2.5"}


class TwoLines:
    """A peer that printed send --stream-file's two result lines."""
    SEND = {"type": "peer", "mode": "send", "packets": 1000, "bytes": 128000,
            "streams": [{"id": 1, "packets": 1000, "bytes": 128000, "next_seq": 1000}]}
    COUNT = {"type": "peer", "mode": "count", "packets": 2994, "vnperf": 2993, "bytes": 191612,
             "lost": 0, "streams": [{"id": 0, "packets": 2993, "unique": 2993, "lost": 0,
                                     "dup": 0, "reorder": 0}]}

    def __init__(self):
        self.results = [self.SEND, self.COUNT]
        self.result = self.COUNT


def test_host_counts_of_both_lines():
    be = wire.Dgram(options.build(backend="dgram", app="gen"))
    be.peers = [TwoLines()]
    host = be.collect()
    assert host["peer"] is TwoLines.COUNT and host["peer_tx"] is TwoLines.SEND
    assert (host["rx_packets"], host["tx_packets"], host["tx_frames"]) == (2993, 1000, 1000)


def test_tap_host_counts_of_both_lines():
    """Over tap the peer's count is of its packet socket on the tap: gen's
    streams app level, the tap's drops and the socket buffer's beside."""
    from vnperflib.backends import tap
    be = tap.Tap(options.build(backend="tap", app="gen"))
    tap_drop = {"at": "backend", "what": "tap", "frames": 3}
    host = be.streams_counted(TwoLines.SEND, dict(TwoLines.COUNT, errors={"sock_drops": 2}),
                              [tap_drop])
    assert host["peer"]["vnperf"] == 2993 and host["peer_tx"] is TwoLines.SEND
    assert (host["rx_packets"], host["tx_packets"]) == (2993, 1000)
    assert host["rx_drops"] == [tap_drop, {"at": "peer", "frames": 2, "what":
                                           "in the host peer's packet socket buffer"}]
    assert "queues" not in host


GEN = {"app": "gen", "packets": 2993, "bytes": 191552, "duration_ns": 3000000000,
       "streams": [{"id": 0, "direction": "tx", "mode": "continuous", "packets": 2993,
                    "bytes": 191552},
                   {"id": 1, "direction": "rx", "mode": "continuous",
                    "rx": {"packets": 998, "bytes": 127744, "lost": 2, "dup": 0,
                           "reorder": 1}}]}
HOST = {"peer": TwoLines.COUNT, "peer_tx": TwoLines.SEND, "rx_packets": 2993,
        "tx_packets": 1000}


def test_rows_per_stream_and_direction():
    rows = outcome.stream_rows(GEN, HOST, [], ("up", "down"))
    assert [(r.id, r.name, r.direction, r.packets, r.received, r.lost, r.reorder)
            for r in rows] == [(0, "up", "tx", 2993, 2993, 0, 0),
                               (1, "down", "rx", 1000, 998, 2, 1)]
    # no latency host->guest: the stamps are the host's TSC
    assert rows[1].p50_us is None and "p50_us" not in rows[1].to_dict()
    # no send line: what the host sent is not known
    bare = outcome.stream_rows(GEN, dict(HOST, peer_tx=None), [], ())
    assert (bare[1].packets, bare[1].received) == (None, 998)


def test_json_and_table_by_direction():
    res = dataclasses.replace(rep_of("gen", GEN, HOST),
                              streams=outcome.stream_rows(GEN, HOST, [], ("up", "down")))
    back = json.loads(report.to_json(res))["streams"]
    assert [(s["id"], s["direction"]) for s in back] == [(0, "tx"), (1, "rx")]
    assert result.RunResult.from_dict(res.to_dict()).to_dict() == res.to_dict()
    text = report.human(res)
    assert line(text, "stream 0 (up) tx") == "2993 sent, 2993 received, 0 lost, 0 dup, " \
        "0 reordered"
    assert line(text, "stream 1 (down) rx") == "1000 sent, 998 received, 2 lost, 0 dup, " \
        "1 reordered"
    assert line(text, "streams total tx") == "2993 sent, 2993 received, 0 lost, 0 dup, " \
        "0 reordered"
    assert line(text, "streams total rx") == "1000 sent, 998 received, 2 lost, 0 dup, " \
        "1 reordered"


def test_table_of_rx_streams_only_has_no_tx_total():
    gen = {"app": "gen", "packets": 0, "bytes": 0, "duration_ns": 3000000000,
           "streams": [GEN["streams"][1]]}
    res = dataclasses.replace(rep_of("gen", gen, HOST),
                              streams=outcome.stream_rows(gen, HOST, [], ("up", "down")))
    text = report.human(res)
    assert line(text, "stream 1 (down) rx") == line(text, "streams total rx") == \
        "1000 sent, 998 received, 2 lost, 0 dup, 1 reordered"
    assert "streams total tx" not in text
