"""Stream files (tools/vnperflib/run/streamfile.py, docs/streams.md): what the
runner takes and how it encodes it for the guest, every error one line
naming the stream and the field, and `vnperf run --streams` refusing a bad
file with status 64 before anything boots."""

import pytest

from vnpy import cli_opts, run_vnperf, standin_image
from vnperflib import exitcodes, options
from vnperflib.run import qemucmd, streamfile
from vnperflib.errors import RunnerError

GOOD = """
rate = "1mpps"
[[stream]]
name = "bulk"
share = 0.9
size = "imix"
[[stream.var]]
field = "src_ip"
min = "10.0.0.10"
max = "10.0.0.20"
[[stream]]
name = "lat"
rate = "1k"
size = 128
vlan = [100, 200]
mode = "multi_burst"
frames = 10
gap_us = 100
bursts = 5
[[stream]]
name = "six"
ip = 6
src_ip = "fd00::2"
dst_ip = "fd00::1"
flow_label = 5
size = {min = 100, max = 200}
"""


def errors(doc):
    with pytest.raises(streamfile.StreamFileError) as e:
        streamfile.check(doc, "f.toml")
    assert e.value.status == exitcodes.RUNNER_USAGE
    return e.value.lines


def one(stream, **top):
    return dict({"stream": [stream]}, **top)


def test_good_file_encodes(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(GOOD)
    text = streamfile.encode(streamfile.load(str(p)))
    lines = text.splitlines()
    assert lines[0] == streamfile.MAGIC and text.endswith("\n")
    assert lines[1].startswith("s id=0 ip=4 proto=udp vlan=0 ")
    assert "size=60:7/590:4/1514:1 rate=pps:900000 mode=continuous" in lines[1]
    assert lines[2] == "v f=src_ip op=inc lo=167772170 hi=167772180 step=1"
    assert "vlan=100/200" in lines[3] and "mode=multi_burst frames=10 gap_ns=100000 bursts=5" \
        in lines[3] and "rate=pps:1000" in lines[3]
    assert "ip=6" in lines[4] and "sip=fd000000000000000000000000000002" in lines[4]
    assert "fl=5 size=100-200 rate=max" in lines[4]


@pytest.mark.parametrize("rate,want", [
    ("100k", ("pps", 100000)), ("1.5mpps", ("pps", 1500000)), ("10gbps", ("bps", 10**10)),
    ("max", None), ("64", ("pps", 64))])
def test_rates(rate, want):
    assert streamfile.parse_rate(rate) == want


@pytest.mark.parametrize("stream,field", [
    ({"size": 10}, "size"), ({"size": 9015}, "size"), ({"size": "64:0"}, "size"),
    ({"size": {"min": 100, "max": 90}}, "size"), ({"size": {"lo": 1}}, "size"),
    ({"size": True}, "size"), ({"size": "64:1,60:1"}, "size"),
    ({"size": "6\u00b2:1"}, "size"), ({"size": "64:\u00b2"}, "size"),
    ({"rate": "fast"}, "rate"), ({"rate": "0.5"}, "rate"), ({"rate": "2gpps"}, "rate"),
    ({"rate": "1k", "share": 0.5}, "rate"), ({"share": 0}, "share"), ({"share": 0.5}, "share"),
    ({"mode": "bursty"}, "mode"), ({"mode": "burst"}, "frames"),
    ({"mode": "burst", "frames": 0}, "frames"), ({"frames": 3}, "frames"),
    ({"mode": "multi_burst", "frames": 3, "gap_us": 1}, "bursts"),
    ({"mode": "poisson"}, "mode"), ({"ip": 5}, "ip"), ({"ip": 6, "size": 128}, "src_ip"),
    ({"src_ip": "fd00::1"}, "src_ip"), ({"dst_ip": "10.0.0.256"}, "dst_ip"),
    ({"src_mac": "02:00"}, "src_mac"), ({"src_port": 0}, "src_port"),
    ({"dst_port": 65536}, "dst_port"), ({"tos": 256}, "tos"), ({"ttl": 0}, "ttl"),
    ({"flow_label": 1}, "flow_label"), ({"vlan": 4095, "size": 100}, "vlan"),
    ({"vlan": [1, 2, 3]}, "vlan"), ({"vlan": [5, 6]}, "size"), ({"name": "a b"}, "name"),
    ({"bogus": 1}, "bogus"), ({"var": {}}, "var"),
])
def test_stream_errors(stream, field):
    stream = dict({"name": "x"}, **stream)
    lines = errors(one(stream))
    assert len(lines) == 1, lines
    assert lines[0].startswith("f.toml: stream 0 (%s): %s: " % (stream["name"], field)), lines


@pytest.mark.parametrize("var,field", [
    ({"field": "ttl"}, "field"), ({"field": "vlan", "min": 1, "max": 2}, "field"),
    ({"field": "flow_label", "min": 1, "max": 2}, "field"),
    ({"field": "tos", "op": "up", "min": 0, "max": 1}, "op"),
    ({"field": "tos", "min": 0, "max": 256}, "max"),
    ({"field": "tos", "min": 5, "max": 4}, "max"),
    ({"field": "tos", "min": 0, "max": 4, "step": 0}, "step"),
    ({"field": "src_port", "min": 0}, "max"),
    ({"field": "src_ip", "min": "10.0.0.1", "max": "fd00::1"}, "max"),
    ({"field": "src_mac", "min": "02:00:00:00:00:01", "max": "03:00:00:00:00:01"}, "max"),
    ({"field": "tos", "min": 0, "max": 1, "size": 3}, "size"),
])
def test_var_errors(var, field):
    lines = errors(one({"name": "x", "var": [var]}))
    assert lines == [l for l in lines if l.startswith("f.toml: stream 0 (x) var 0: %s: " % field)], \
        lines
    assert lines


def test_proto_encodes():
    """proto= on each stream's line (format 2), udp where the file gives
    none; ICMP's ports 0 (it has none)."""
    doc = {"stream": [{"proto": "tcp", "size": 78, "src_port": 80},
                      {"proto": "icmp", "size": 66},
                      {"proto": "icmp", "ip": 6, "src_ip": "fd00::2", "dst_ip": "fd00::1",
                       "size": 86, "var": [{"field": "src_ip", "min": "fd00::2",
                                            "max": "fd00::9"}]},
                      {"size": 60}]}
    lines = streamfile.encode(streamfile.check(doc)).splitlines()
    assert lines[0] == "vnperf-streams 2"
    assert lines[1].startswith("s id=0 ip=4 proto=tcp vlan=0 ") and " sport=80 dport=0 " in lines[1]
    assert lines[2].startswith("s id=1 ip=4 proto=icmp ") and " sport=0 dport=0 " in lines[2]
    assert lines[3].startswith("s id=2 ip=6 proto=icmp ")
    assert lines[5].startswith("s id=3 ip=4 proto=udp ")


@pytest.mark.parametrize("stream,field,why", [
    ({"proto": "sctp"}, "proto", "'sctp': one of udp, tcp, icmp"),
    ({"proto": 6}, "proto", "6: one of udp, tcp, icmp"),
    # TCP: 14 + 20 + 20 and the whole 24-byte stamp
    ({"proto": "tcp", "size": 77}, "size", "frames below 78 bytes"),
    ({"proto": "tcp", "size": 81, "vlan": [5]}, "size", "frames below 82 bytes"),
    ({"proto": "tcp", "ip": 6, "src_ip": "fd00::2", "dst_ip": "fd00::1", "size": 97}, "size",
     "frames below 98 bytes"),
    ({"proto": "icmp", "size": 65}, "size", "frames below 66 bytes"),
    ({"proto": "icmp", "size": {"min": 64, "max": 100}}, "size", "frames below 66 bytes"),
    ({"proto": "icmp", "ip": 6, "src_ip": "fd00::2", "dst_ip": "fd00::1", "size": 85}, "size",
     "frames below 86 bytes"),
    ({"proto": "icmp", "size": 66, "src_port": 5}, "src_port", "an ICMP stream has no ports"),
    ({"proto": "icmp", "size": 66, "dst_port": 5}, "dst_port", "an ICMP stream has no ports"),
    ({"proto": "icmp", "size": 66, "var": [{"field": "dst_port", "min": 1, "max": 2}]},
     "field", "dst_port: the stream's frames have no such field"),
])
def test_proto_errors(stream, field, why):
    lines = errors(one(dict({"name": "x"}, **stream)))
    assert len(lines) == 1, lines
    assert lines[0].startswith("f.toml: stream 0 (x)") and (": %s: " % field) in lines[0], lines
    assert why in lines[0], lines


def test_proto_smallest_frames_pass():
    for st in ({"proto": "tcp", "size": 78}, {"proto": "icmp", "size": 66},
               {"proto": "tcp", "size": 86, "vlan": [1, 2]}):
        assert streamfile.check(one(st))[0].proto == st["proto"]


def test_file_errors():
    assert errors({}) == ["f.toml: file: stream: no [[stream]] tables"]
    assert errors({"stream": [{}] * 17})[0].endswith("17 streams, at most 16")
    assert errors({"rate": "1k", "stream": [{}]}) == [
        "f.toml: file: rate: no stream has a share of it"]
    assert errors({"rate": "1k", "stream": [{"share": 0.6}, {"share": 0.6}]}) == [
        "f.toml: file: share: the shares add up to more than 1"]
    assert errors({"streams": []})[0] == \
        "f.toml: file: streams: unknown key (known: rate, [[stream]])"
    two = errors({"stream": [{"name": "a"}, {"name": "a", "tos": -1}]})
    assert two == ["f.toml: stream 1 (a): name: 'a': given to stream 0 too",
                   "f.toml: stream 1 (a): tos: -1: a whole number 0..255"]


def test_same_var_twice():
    v = {"field": "tos", "min": 0, "max": 1}
    assert errors(one({"name": "x", "var": [v, v]})) == [
        "f.toml: stream 0 (x) var 1: field: tos has a var already"]


def test_encoding_limit():
    v = [{"field": f, "min": "02:00:00:00:00:00", "max": "02:00:ff:ff:ff:ff"}
         for f in ("src_mac", "dst_mac")]
    v += [{"field": f, "min": 1, "max": 65535} for f in ("src_port", "dst_port")]
    doc = {"stream": [{"name": "n%02d" % i, "var": v} for i in range(16)]}
    assert errors(doc)[-1].startswith("f.toml: file: stream: encodes to ")


def test_fw_cfg_file_on_the_command_line():
    spec = qemucmd.GuestSpec("img", files=(("opt/vnperf/streams", "a,b\nc"),))
    argv = qemucmd.build(spec)
    assert argv[argv.index("name=opt/vnperf/streams,string=a,,b\nc") - 1] == "-fw_cfg"


def test_run_refuses_a_bad_file_in_one_line_per_error(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[[stream]]\nname = "a"\nsize = 1\nrate = "q"\n')
    r = run_vnperf(["run", "--image", standin_image(tmp_path), "--backend", "dgram",
                    "--streams", str(p)])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.splitlines() == [
        "vnperf: %s: stream 0 (a): size: 1: a whole number 60..9014" % p,
        "vnperf: %s: stream 0 (a): rate: 'q': expected <number>[k|m|g|t][pps|bps], e.g. "
        "100k, 1.5mpps, 10gbps" % p], r.stderr


@pytest.mark.parametrize("extra,word", [
    (["--size", "128"], "size"), (["--rate", "1k"], "rate"), (["--", "imix=simple"], "imix"),
    (["--", "flows=sport:1-2"], "flows")])
def test_shorthand_beside_streams_refused(tmp_path, extra, word):
    p = tmp_path / "s.toml"
    p.write_text(GOOD)
    with pytest.raises(RunnerError) as e:
        options.RunOptions.from_cli(cli_opts("run", "--backend", "dgram", "--streams", str(p),
                                             *extra)[1])
    assert e.value.status == exitcodes.RUNNER_USAGE and "%s=" % word in e.value.line


def test_streams_make_gen_with_the_encoding(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(GOOD)
    o = options.build(backend="dgram", streams=str(p))
    assert o.app == "gen" and o.stream_text.startswith(streamfile.MAGIC + "\n")
    with pytest.raises(RunnerError):
        options.build(backend="dgram", streams=str(p), app="sink")
    with pytest.raises(RunnerError):
        options.build(backend="dgram", streams=str(tmp_path / "none.toml"))
    (tmp_path / "n.toml").write_text("[[stream]\n")
    with pytest.raises(RunnerError) as e:
        options.build(backend="dgram", streams=str(tmp_path / "n.toml"))
    assert "not TOML" in e.value.line


def test_every_example_loads():
    import glob
    import os
    from vnpy import ROOT
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "streams", "*.toml")))
    assert len(files) >= 7
    for f in files:
        assert streamfile.encode(streamfile.load(f)).startswith(streamfile.MAGIC)
