"""vnperf run --queues N --vcpus N (issue 25): the QEMU command line the
runner builds (-smp, mq=on and vectors=2N+2 on PCI, a multiqueue tap and
netdev queues=N, vhost-user queues=N with testpmd's --rxq/--txq/--nb-cores,
the guest's queues= and vcpus=), and the one-line refusals (status 64,
before anything starts) of what has one queue pair."""

import json
import subprocess
import time

import pytest

from test_support import load_cli
from vnperflib import exitcodes, options
from vnperflib.run import identity, qemucmd, runner
from vnperflib.backends import netns, tap, testpmd, vhostpeer


def built(**kw):
    return options.build(**dict({"image": "/nonexistent/vnperf.elf"}, **kw))


def test_vcpus_default_to_the_queues_and_reach_the_guest_config():
    o = built(backend="tap", machine="q35", app="gen", queues=2)
    assert (o.queues, o.vcpus) == (2, 2)
    assert ["queues=2", "vcpus=2"] == [w for w in identity.main_words(o)
                                       if w.startswith(("queues=", "vcpus="))]
    o = built(backend="tap", machine="q35", app="gen", queues=2, vcpus=1)
    assert (o.queues, o.vcpus) == (2, 1)
    # the config word stands for the option, as -- app=rr is --app rr
    assert built(backend="tap", config=["queues=4"]).queues == 4
    with pytest.raises(Exception, match="disagree"):
        built(backend="tap", queues=2, config=["queues=4"])


def test_without_queues_nothing_changes():
    o = built(backend="tap", machine="q35", app="gen")
    assert o.queues is None and o.vcpus is None
    nic = tap.Tap(o).nics(0)[0]
    assert "queues" not in nic.netdev and "mq" not in nic.props and "vectors" not in nic.props
    assert "-smp" not in qemucmd.build(qemucmd.GuestSpec("x.elf", machine="q35", nics=[nic]))


class FakeSession:
    """Runs what the code under test leaves to be undone at close."""

    def __init__(self):
        self.undo = []

    def on_close(self, fn, *a, **kw):
        self.undo.append((fn, a))

    def close(self):
        for fn, a in reversed(self.undo):
            fn(*a)


class FakeEngine:
    local_files = True

    def guest(self, spec, label):
        return spec


def runner_argv(o, be):
    """The QEMU argv the runner builds for the options' only guest."""
    s = FakeSession()
    r = runner.Run(s, o, None, eng=FakeEngine())
    r.be = be
    r.roles = runner.guest_roles(o)
    r.accel = type("A", (), {"accel": "tcg"})()
    try:
        r.make_guests()
    finally:
        s.close()
    return qemucmd.build(r.guests[-1])


def device(argv):
    return next(b for a, b in zip(argv, argv[1:]) if a == "-device" and
                b.startswith("virtio-net"))


def netdev(argv):
    return next(b for a, b in zip(argv, argv[1:]) if a == "-netdev")


def test_tap_two_queues_on_q35():
    o = built(backend="tap", machine="q35", app="gen", queues=2)
    be = tap.Tap(o)
    be.dst_mac = "02:00:00:00:00:01"
    argv = runner_argv(o, be)
    assert argv[argv.index("-smp") + 1] == "2"
    dev = device(argv)
    assert ",mq=on" in dev and ",vectors=6" in dev, dev
    assert netdev(argv).startswith("tap,ifname=vntap0,") and ",queues=2" in netdev(argv)
    cfg = argv[argv.index("-fw_cfg") + 1].split()
    assert "queues=2" in cfg and "vcpus=2" in cfg, cfg


def test_vcpus_alone_and_four_queues():
    o = built(backend="tap", machine="q35", app="gen", queues=4, vcpus=2)
    be = tap.Tap(o)
    be.dst_mac = "02:00:00:00:00:01"
    argv = runner_argv(o, be)
    assert argv[argv.index("-smp") + 1] == "2"
    assert ",vectors=10" in device(argv) and ",queues=4" in netdev(argv)


def test_microvm_has_mq_but_no_vectors():
    o = built(backend="tap", machine="microvm", app="gen", queues=2)
    nic = tap.Tap(o).nics(0)[0]
    assert nic.props["mq"] == "on" and "vectors" not in nic.props


def test_the_namespace_tap_is_multi_queue(monkeypatch):
    calls = []
    monkeypatch.setattr(netns, "create", lambda session: "vnns-test")
    monkeypatch.setattr(netns, "ip", lambda *a: calls.append(a))
    monkeypatch.setattr(netns, "face_guest", lambda *a: None)
    monkeypatch.setattr(netns, "link", lambda ns, dev: ("02:00:00:00:00:01", {}))
    for q, want in ((2, True), (None, False)):
        calls.clear()
        be = tap.Tap(built(backend="tap", machine="q35", app="gen", queues=q))
        be.start(FakeSession())
        add = [c for c in calls if "tuntap" in c]
        assert len(add) == 1 and ("multi_queue" in add[0]) == want, add


def test_vhost_user_queues_reach_qemu_and_testpmd(monkeypatch):
    o = built(backend="vhost-user", machine="q35", app="gen", queues=2)
    nic = vhostpeer.vhost_nic(o, 0)
    assert nic.netdev == "vhost-user,chardev=vu0,queues=2"
    # QEMU 7.2 under TCG crashes when vhost-user starts with MSI-X
    assert nic.props["vectors"] == 0 and nic.props["mq"] == "on"
    be = testpmd.VhostUser(o)
    be.socks = ["/tmp/s0"]
    monkeypatch.setattr(testpmd.os, "cpu_count", lambda: 2)
    argv = be._argv()
    assert "net_vhost0,iface=/tmp/s0,queues=2" in argv
    args = argv[argv.index("--") + 1:]
    assert "--rxq=2" in args and "--txq=2" in args and "--nb-cores=1" in args
    assert argv[argv.index("-l") + 1] == "0-1"
    monkeypatch.setattr(testpmd.os, "cpu_count", lambda: 16)
    argv = be._argv()
    assert "--nb-cores=2" in argv and argv[argv.index("-l") + 1] == "0-2"


@pytest.mark.parametrize("ncpu,queues,want", [
    (1, 1, ("0", 1)), (1, 4, ("0", 1)), (2, 1, ("0-1", 1)), (2, 4, ("0-1", 1)),
    (4, 2, ("0-2", 2)), (16, 8, ("0-8", 8)), (4, 8, ("0-3", 3))])
def test_testpmd_lcores_within_the_host(ncpu, queues, want):
    assert testpmd.pmd_lcores(ncpu, queues) == want


ONE_QUEUE = ("dgram", "socket", "user", "hub", "passt")


@pytest.mark.parametrize("argv,why", [
    *[(["--backend", b, "--queues", "2"], "--queues 2: %s has one queue pair" % b)
      for b in ONE_QUEUE],
    (["--backend", "vhost-user", "--queues", "2", "--topology", "guests", "--app", "gen"],
     "--topology host only"),
    (["--backend", "vhost-user", "--app", "sink", "--count", "100", "--queues", "2"],
     "the peer-dpdk feeder drives one queue pair"),
    (["--tap", "vnnosuch0", "--queues", "2"], "your own tap is opened as it is"),
    (["--backend", "tap", "--queues", "9"], "at most 8"),
    (["--backend", "tap", "--vcpus", "0"], "must be > 0"),
])
def test_one_queue_backends_are_refused_before_anything_starts(argv, why, monkeypatch,
                                                                capsys, tmp_path):
    cli = load_cli()
    started = []

    def no_child(self, *a, **kw):
        started.append(a[0] if a else kw.get("args"))
        raise AssertionError("a refused run started %r" % (started[-1],))

    monkeypatch.setattr(subprocess.Popen, "__init__", no_child)
    t0 = time.monotonic()
    try:
        status = cli.main(["run", "--machine", "q35", "--image", str(tmp_path / "none.elf")]
                          + argv)
    except SystemExit as e:   # argparse's own refusal
        status = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert status == exitcodes.RUNNER_USAGE, (argv, err)
    assert len(err) == 1 and why in err[0], (argv, err)
    assert time.monotonic() - t0 < 1.0 and started == []


# gen with vcpus=2 queues=2: its own per-pair entries and the driver's.
GEN_2Q = {"app": "gen", "packets": 4000, "bytes": 256000, "duration_ns": 1000000000,
          "vcpus": 2,
          "queues": [{"queue": 0, "cpu": 0, "flows": 9, "packets": 2000, "bytes": 128000},
                     {"queue": 1, "cpu": 1, "flows": 7, "packets": 2000, "bytes": 128000}],
          "vnet": {"tx": {"packets": 2001}, "queues": [
              {"queue": 0, "packets": 2002, "tx_packets": 2001, "tx_bytes": 128042,
               "rx_packets": 1, "rx_bytes": 42},
              {"queue": 1, "packets": 2000, "tx_packets": 2000, "tx_bytes": 128000,
               "rx_packets": 0, "rx_bytes": 0}]}}


def test_the_report_lists_each_queue_pair_in_the_json_and_the_table():
    from test_report import line, rep_of
    from vnperflib.analysis import outcome
    from vnperflib.report import report
    from vnperflib import result
    rep = rep_of("gen", GEN_2Q, {"rx_packets": 4001, "rx_frames": 4001})
    rep["queues"] = outcome.queue_pairs(GEN_2Q)
    res = result.RunResult.from_dict(rep)
    assert [(q.queue, q.cpu, q.packets, q.tx_packets, q.rx_packets) for q in res.queues] == \
        [(0, 0, 2000, 2001, 1), (1, 1, 2000, 2000, 0)]
    back = json.loads(report.to_json(res))["queues"]
    assert [(q["queue"], q["cpu"], q["packets"]) for q in back] == [(0, 0, 2000), (1, 1, 2000)]
    assert result.RunResult.from_dict(res.to_dict()).to_dict() == res.to_dict()
    assert line(report.human(res), "per queue") == \
        "0: 2000 (cpu 0, tx 2001, rx 1); 1: 2000 (cpu 1, tx 2000, rx 0)"


def test_one_pair_or_an_app_without_its_own_list():
    from vnperflib.analysis import outcome
    assert outcome.queue_pairs({"app": "gen", "vnet": {"queues": [{"queue": 0}]}}) is None
    assert outcome.queue_pairs({"app": "selftest"}) is None
    sink = dict(GEN_2Q, app="sink", queues=None)
    assert [(q["queue"], q["cpu"], q["packets"]) for q in outcome.queue_pairs(sink)] == \
        [(0, None, 2002), (1, None, 2000)]


def test_your_own_nic_keeps_its_queues_and_gets_the_vcpus():
    o = built(qemu_args=["-device", "virtio-net-pci,netdev=x,mq=on,vectors=6"],
              config=["queues=2"])
    assert (o.backend, o.queues, o.vcpus) == ("none", 2, 2)
    from vnperflib.run import support
    support.check(o)  # no refusal: your device has the pairs


def test_queues_is_a_sweep_axis_with_the_vcpus_following():
    import argparse
    from vnperflib.campaign import sweep
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.queues = "1,2,4"
    pts = sweep.points(sweep.axes_from(ns))
    base = built(backend="tap", machine="q35", app="gen")
    got = [sweep.point_opts(base, pt) for pt in pts]
    assert [(o.queues, o.vcpus) for o in got] == [(1, 1), (2, 2), (4, 4)]
    assert ("queues=4", "vcpus=4") == tuple(w for w in identity.main_words(got[-1])
                                             if w.startswith(("queues=", "vcpus=")))
    two = built(backend="tap", machine="q35", app="gen", vcpus=2)
    assert [sweep.point_opts(two, pt).vcpus for pt in pts] == [2, 2, 2]
    with pytest.raises(Exception, match="at most 8"):
        sweep.parse_axis("queues", "1,9")


def test_a_sweep_over_a_one_queue_backend_is_refused_before_its_first_run(tmp_path):
    from vnpy import run_vnperf
    r = run_vnperf(["sweep", "--accel", "tcg", "--backend", "tap,dgram", "--queues", "1,2",
                    "--out", str(tmp_path / "o")], timeout=30)
    assert r.returncode == exitcodes.RUNNER_USAGE, r.stderr
    assert r.stderr.strip().splitlines() == [
        "vnperf: gen over dgram: --queues 2: dgram has one queue pair (tap, vhost-net or "
        "vhost-user have 8)"]
    assert not (tmp_path / "o").exists()


def test_a_run_without_queues_pairs_with_one_recorded_before_them():
    assert not {"queues", "vcpus"} & set(identity.guest_params(["app=gen"]))
    p = identity.guest_params(identity.main_words(built(backend="tap", queues=2)))
    assert (p["queues"], p["vcpus"]) == ("2", "2")
