"""Sweep and search axes an app ignores are refused before anything starts
(support.APP_AXES): `--app iperf --size 64,1514` or `--app gen --msg-size
512,1024` would plot noise as an effect. Every app x role x axis."""

import os
import subprocess

import pytest

from test_support import load_cli
from vnpy import run_opts
from vnperflib import exitcodes
from vnperflib.run import support
from vnperflib.campaign import sweep
from vnperflib.errors import RunnerError, usage

APPS = support.NET_APPS + ("selftest", "alloc", "fault")
ROLES = ("client", "server")
# What each app reads, by docs/apps.md and docs/config.md: the sender's
# frames (size=, rate=: gen's own, the host sender's for sink and reflect,
# the tester's for fwd), rr's and iperf's sessions=, iperf's msg_size= (the
# host client's -l for a guest server) and the guest server's window=.
FRAMES = {"size", "rate"}
READS = {("gen", r): FRAMES for r in ROLES}
READS.update({(a, r): FRAMES for a in ("sink", "reflect", "fwd") for r in ROLES})
READS.update({("rr", "client"): {"sessions"}, ("rr", "server"): set(),
              ("iperf", "client"): {"sessions", "msg_size"},
              ("iperf", "server"): {"sessions", "msg_size", "window"}})
APP_ONLY = ("size", "rate", "sessions", "msg_size", "window")


def opts(app, role):
    return run_opts(app=app, config=["role=%s" % role])


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("axis", list(sweep.AXES))
def test_every_app_role_and_axis(app, role, axis):
    """An app-only axis outside what the app reads is refused with one
    line naming the app and the axes it does read; every other axis
    (backend, the driver's and testpmd's knobs, pin, builds) passes."""
    reads = READS.get((app, role), set())
    if axis not in APP_ONLY or axis in reads:
        support.check_axes(opts(app, role), [axis])
        return
    with pytest.raises(RunnerError) as e:
        support.check_axes(opts(app, role), [axis])
    assert e.value.status == exitcodes.RUNNER_USAGE
    line = e.value.line
    assert "\n" not in line and line.startswith("--%s: app %s" % (axis.replace("_", "-"), app))
    assert "does not read it" in line
    for a in reads:
        assert "--" + a.replace("_", "-") in line


def test_the_table_is_the_documented_one():
    assert support.APP_ONLY_AXES == tuple(sorted(APP_ONLY))
    for (app, role), reads in READS.items():
        assert set(support.app_axes(app, role)[1]) == reads, (app, role)


def cli_refusals():
    """(argv, line start) for sweep and ndr: each app-only axis an app
    ignores. ndr always has the --size axis (the RFC 2544 sizes by default)
    and sets the rate itself (--rate is refused there already)."""
    out = []
    for app in APPS:
        reads = READS.get((app, "client"), set())
        for axis in APP_ONLY:
            if axis not in reads:
                out.append((["sweep", "--app", app, sweep.flag(axis), "1,2"],
                            "--%s: app %s" % (axis.replace("_", "-"), app)))
        if "size" not in reads:
            out.append((["ndr", "--app", app], "--size: app %s" % app))
            continue
        for axis in ("sessions", "msg_size", "window"):
                out.append((["ndr", "--app", app, "--size", "60", sweep.flag(axis), "1,2"],
                            "--%s: app %s" % (axis.replace("_", "-"), app)))
    out.append((["sweep", "--app", "iperf", "--window", "65536,262144", "--", "role=client"],
                "--window: app iperf role=client"))
    return out


def test_sweep_and_ndr_refuse_in_one_line_before_anything_starts(monkeypatch, capsys, tmp_path):
    cli = load_cli()

    def no_child(self, *a, **kw):
        raise AssertionError("a refused sweep started %r" % (a[0] if a else kw.get("args"),))
    monkeypatch.setattr(subprocess.Popen, "__init__", no_child)
    cases = cli_refusals()
    assert len(cases) > 40
    out = tmp_path / "o"
    for argv, start in cases:
        status = cli.main(argv[:1] + ["--accel", "tcg", "--backend", "dgram", "--out", str(out),
                                      "--image", str(tmp_path / "none.elf")] + argv[1:])
        err = capsys.readouterr().err.strip().splitlines()
        assert status == exitcodes.RUNNER_USAGE, (argv, err)
        assert len(err) == 1 and err[0].startswith("vnperf: " + start), (argv, err)
        assert not os.path.exists(out)


@pytest.mark.parametrize("argv", [
    ["sweep", "--app", "gen", "--size", "64,1514", "--rate", "10k,20k"],
    ["sweep", "--app", "iperf", "--backend", "tap", "--sessions", "1,2", "--msg-size", "512"],
    ["sweep", "--app", "iperf", "--backend", "tap", "--window", "65536", "--", "role=server"],
    ["sweep", "--app", "rr", "--sessions", "1,4"],
    ["ndr", "--app", "sink", "--size", "60,1514"],
    ["ndr", "--topology", "pvp", "--size", "60", "--kick-batch", "1,32"],
])
def test_axes_the_app_reads_pass_the_check(argv, capsys, monkeypatch, tmp_path):
    """Accepted: the sweep goes on to its checks of the host."""
    cli = load_cli()

    def reached(base, axes):
        raise usage("reached the host checks")
    monkeypatch.setattr(sweep, "check_host", reached)
    backend = [] if "--backend" in argv else ["--backend", "dgram"]
    status = cli.main(argv[:1] + ["--accel", "tcg", "--out", str(tmp_path / "o")] + backend
                      + argv[1:])
    err = capsys.readouterr().err
    assert status == exitcodes.RUNNER_USAGE and err == "vnperf: reached the host checks\n", err
