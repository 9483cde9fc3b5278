"""bench/bench_tcp_stream.py's logic without a guest: its options, the
sides (one vnperf side per --notify mode, each booted with its notify=
word, the Linux guest last) and the table's columns per side."""

import os
import sys

import pytest
import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import bench_tcp_stream as b  # noqa: E402
import benchlib  # noqa: E402


def refused(argv, capsys):
    with pytest.raises(SystemExit) as e:
        b.parse(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


def test_bad_notify_options_are_refused_with_one_line(capsys):
    assert "distinct modes" in refused(["--notify", "poll,spin"], capsys)
    assert "distinct modes" in refused(["--notify", "poll,poll"], capsys)
    assert "one mode" in refused(["--aa", "--notify", "poll,hybrid"], capsys)
    assert "one at a time" in refused(["--no-offloads", "--notify", "poll"], capsys)
    assert "one at a time" in refused(["--no-offloads", "--aa"], capsys)


def test_one_vnperf_side_per_mode_with_its_word_and_linux_last():
    names = lambda argv: [n for n, _ in b.make_sides(b.parse(argv))]  # noqa: E731
    assert names([]) == ["vnperf", "linux"]
    assert names(["--no-offloads"]) == ["vnperf", "vnperf-off", "linux"]
    assert names(["--aa"]) == ["linux", "linux'"]
    aa = b.make_sides(b.parse(["--aa", "--notify", "hybrid"]))
    assert [n for n, _ in aa] == ["vnperf hybrid", "vnperf hybrid'"]
    assert all(f.args(("tap", "h2g", 4, 512), True)[-1] == "notify=hybrid" for _, f in aa)
    sides = b.make_sides(b.parse(["--notify", "poll,hybrid", "--", "rx_ring=512"]))
    assert [n for n, _ in sides] == ["vnperf poll", "vnperf hybrid", "linux"]
    argv = sides[1][1].args(("user", "h2g", 4, 512), True)
    words = argv[argv.index("--") + 1:]
    assert words == ["role=server", "sessions=4", "msg_size=512", "rx_ring=512", "notify=hybrid"]
    assert "notify=" not in " ".join(b.make_sides(b.parse([]))[0][1].args(
        ("tap", "g2h", 1, 16384), True))


def test_the_table_has_rate_sd_and_cpu_columns_per_mode(capsys, monkeypatch):
    monkeypatch.setattr(b.linuxguest, "kernel_release", lambda: "6.1")
    o = b.parse(["--notify", "poll,hybrid", "--repeat", "1"])
    figs = {"vnperf poll": (0.2, 40.0, 100.0), "vnperf hybrid": (0.4, 20.0, 60.0),
            "linux": (0.5, 10.0, 80.0)}
    sides = [(n, lambda p, f=f: {"gbps": f[0], "sd": f[1], "cpu_vcpu": f[2], "cpu_main": 30.0,
                                 "cpu_iperf": 25.0}) for n, f in figs.items()]
    points = [("user", "h2g", 1, 512)]
    res, pairs = benchlib.interleave(points, sides, 1, "tcp")
    b.print_report(o, points, sides, res, pairs)
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("backend"))
    for col in ("vnperf poll Gbit/s", "vnperf hybrid Gbit/s", "vnperf poll/linux",
                "vnperf hybrid/linux", "vnperf hybrid SD", "SD vnperf hybrid/linux",
                "vnperf hybrid CPU v/m/i"):
        assert col in header, col
    row = next(line for line in out.splitlines() if line.startswith("user"))
    for cell in ("0.400", "0.80x", "20.00", "2.00x", "60/30/25", "100/30/25"):
        assert cell in row, cell


def test_pin_and_nice_go_to_the_runner_and_the_linux_guest_alike(capsys, monkeypatch):
    o = b.parse(["--pin", "vcpu=1,main=0,backend=0", "--nice", "guest=-5,backend=-5"])
    argv = b.make_sides(o)[0][1].args(("tap", "h2g", 1, 512), True)
    assert argv[argv.index("--pin") + 1] == "backend=0,main=0,vcpu=1"
    assert argv[argv.index("--nice") + 1] == "backend=-5,guest=-5"
    assert argv.index("--nice") < argv.index("--")
    seen = {}

    class FakeRun:
        def execute(self):
            return {"status": 1, "why": "not booted"}

    monkeypatch.setattr(b.linuxguest, "make_run", lambda *a, **kw: seen.update(kw) or FakeRun())
    b.LinuxSide(o)(("tap", "h2g", 1, 512))
    assert seen["pins"] == {"vcpu": {1}, "main": {0}, "backend": {0}}
    assert seen["nice"] == {"guest": -5, "backend": -5}
    monkeypatch.setattr(b.linuxguest, "kernel_release", lambda: "6.1")
    b.print_report(o, [], [("vnperf", None), ("linux", None)], {}, {})
    assert "pin backend=0,main=0,vcpu=1, nice backend=-5,guest=-5" in capsys.readouterr().out
    plain = b.parse([])
    assert "--pin" not in b.make_sides(plain)[0][1].args(("tap", "h2g", 1, 512), True)
    b.print_report(plain, [], [("vnperf", None), ("linux", None)], {}, {})
    assert "unpinned" in capsys.readouterr().out


def test_bad_pin_and_nice_are_refused_with_one_line(capsys):
    assert "outside" in refused(["--pin", "vcpu=99"], capsys)
    assert "not role@GUEST" in refused(["--pin", "vcpu@fwd1=0"], capsys)
    assert "guest=N or backend=N" in refused(["--nice", "fwd1=-5"], capsys)
    assert "not a nice value" in refused(["--nice", "guest=-50"], capsys)
