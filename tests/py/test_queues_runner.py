"""vnperf run --queues N --vcpus N (issue 25): the QEMU command line the
runner builds (-smp, mq=on and vectors=2N+2 on PCI, a multiqueue tap and
netdev queues=N, vhost-user queues=N with testpmd's --rxq/--txq/--nb-cores,
the guest's queues= and vcpus=), and the one-line refusals (status 64,
before anything starts) of what has one queue pair."""

import dataclasses
import json
import os
import re
import socket
import subprocess
import time

import pytest

from test_support import load_cli
from vnperflib import exitcodes, options
from vnperflib.run import identity, qemucmd, rrhost, runner
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


def test_the_udp_rr_client_over_vhost_net_on_two_pairs():
    """What the runner starts for the per-vCPU UDP rr client over
    vhost-net, which needs /dev/vhost-net (no integration test boots it
    on a host without it): the multi_queue tap with queues=2 and vhost=on,
    -smp 2, mq=on with 6 vectors and no rss/hash (QEMU takes them from
    vhost), the guest's queues=2 vcpus=2 beside the client's words, the
    host's vnperf-rrserver as the one program; without the device, one
    line (the missing status) before anything starts."""
    o = built(backend="vhost-net", machine="q35", app="rr", queues=2,
              config=["role=client", "proto=udp", "sessions=4"])
    be = tap.VhostNet(o)
    be.dst_mac = "02:00:00:00:00:01"
    argv = runner_argv(o, be)
    assert argv[argv.index("-smp") + 1] == "2"
    nd, dev = netdev(argv), device(argv)
    assert nd.startswith("tap,ifname=vntap0,") and ",queues=2" in nd and ",vhost=on" in nd, nd
    assert ",mq=on" in dev and ",vectors=6" in dev and "rss=" not in dev and "hash=" not in dev
    cfg = argv[argv.index("-fw_cfg") + 1].split()
    assert {"queues=2", "vcpus=2", "role=client", "proto=udp", "sessions=4"} <= set(cfg), cfg
    assert be.programs() == [("rr host server", rrhost.rrserver_binary())]
    if not os.path.exists("/dev/vhost-net"):
        with pytest.raises(Exception, match="/dev/vhost-net missing"):
            be.check_devices()


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
    started = []
    monkeypatch.setattr(tap.peer.Peer, "start", lambda self: started.append(self.argv))
    for q, want in ((2, True), (None, False)):
        calls.clear()
        started.clear()
        be = tap.Tap(built(backend="tap", machine="q35", app="gen", queues=q))
        session = FakeSession()
        be.start(session)
        add = [c for c in calls if "tuntap" in c]
        assert len(add) == 1 and ("multi_queue" in add[0]) == want, add
        # with two pairs gen's frames are counted on the tap, by flow
        assert [a[:7] for a in started] == ([["ip", "netns", "exec", "vnns-test",
                                              tap.peer.peer_binary(), "count", "--ready-file"]]
                                            if want else []), started
        assert started == [] or started[0][-2:] == ["--rx-if", tap.Tap.TAP]
        session.close()


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
     "--topology host, pvp or pvvp"),
    # the forwarders of a chain: over testpmd io only, whose queues pair up
    *[(["--backend", b, "--queues", "2", "--topology", "pvp"],
       "--queues 2: %s has one queue pair" % b) for b in ("dgram", "socket")],
    (["--backend", "vhost-user", "--queues", "2", "--topology", "pvp", "--tester", "peer"],
     "the DPDK peer tester drives one queue pair (--tester gen)"),
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
    res = dataclasses.replace(rep_of("gen", GEN_2Q, {"rx_packets": 4001, "rx_frames": 4001}),
                              queues=outcome.queue_pairs(GEN_2Q))
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
    assert [(q.queue, q.cpu, q.packets) for q in outcome.queue_pairs(sink)] == \
        [(0, None, 2002), (1, None, 2000)]


# sink with vcpus=2 queues=2: each pair's count, CPU and its streams' loss.
SINK_2Q = dict(GEN_2Q, app="sink", queues=[
    {"queue": 0, "cpu": 0, "packets": 95, "bytes": 6270, "streams": 8, "lost": 0, "reorder": 0},
    {"queue": 1, "cpu": 1, "packets": 96, "bytes": 6336, "streams": 8, "lost": 1,
     "reorder": 2}])


def test_sink_pairs_carry_their_loss_and_reordering():
    from test_report import line, rep_of
    from vnperflib.analysis import outcome
    from vnperflib.report import report
    from vnperflib import result
    res = dataclasses.replace(rep_of("sink", SINK_2Q, {"tx_packets": 191, "tx_frames": 191}),
                              queues=outcome.queue_pairs(SINK_2Q))
    assert [(q.queue, q.cpu, q.packets, q.lost, q.reorder) for q in res.queues] == \
        [(0, 0, 95, 0, 0), (1, 1, 96, 1, 2)]
    back = json.loads(report.to_json(res))["queues"]
    assert [(q["lost"], q["reorder"]) for q in back] == [(0, 0), (1, 2)]
    assert result.RunResult.from_dict(res.to_dict()).to_dict() == res.to_dict()
    assert line(report.human(res), "per queue") == (
        "0: 95 (cpu 0, lost 0, reorder 0, tx 2001, rx 1); "
        "1: 96 (cpu 1, lost 1, reorder 2, tx 2000, rx 0)")


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


def test_run_and_a_sweep_take_the_vcpus_from_one_rule(monkeypatch):
    """`run --queues N` and a sweep's queues axis give the guest its vCPUs
    by one rule (options.with_vcpus; issue 30: sweep.point_opts repeated
    it): changed there, both follow."""
    import argparse
    from vnperflib.campaign import sweep
    seen = []

    def rule(o):
        seen.append(o.queues)
        return dataclasses.replace(o, vcpus=7) if o.vcpus is None and o.queues else o
    monkeypatch.setattr(options, "with_vcpus", rule)
    assert built(backend="tap", machine="q35", app="gen", queues=2).vcpus == 7
    ns = argparse.Namespace(aa=False, **{n: None for n in sweep.AXES})
    ns.queues = "4"
    (pt,) = sweep.points(sweep.axes_from(ns))
    base = built(backend="tap", machine="q35", app="gen")
    assert base.vcpus is None and sweep.point_opts(base, pt).vcpus == 7
    assert seen[0] == 2 and seen[-1] == 4


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


# testpmd's `stop` with two queue pairs on one port (--record-burst-stats):
# a block per forwarding stream (more streams than ports), then the port's.
STOP_2Q = """testpmd> stop
Telling cores to stop...
Waiting for lcores to finish...

  ------- Forward Stats for RX Port= 0/Queue= 0 -> TX Port= 0/Queue= 0 -------
  RX-packets: 2003           TX-packets: 7              TX-dropped: 1
  RX-bursts : 130 [92% of 16 pkts + 8% of other]

  ------- Forward Stats for RX Port= 0/Queue= 1 -> TX Port= 0/Queue= 1 -------
  RX-packets: 1995           TX-packets: 0              TX-dropped: 0

  ---------------------- Forward statistics for port 0  ----------------------
  RX-packets: 3998           RX-dropped: 0             RX-total: 3998
  TX-packets: 7              TX-dropped: 1             TX-total: 8
  ----------------------------------------------------------------------------
"""


def test_testpmd_counts_each_queue_pair_from_its_streams():
    streams = testpmd.parse_stream_stats(STOP_2Q + STOP_2Q.replace("2003", "2004"))
    assert len(streams) == 2 and streams[1][(0, 0)]["RX-packets"] == 2004
    assert streams[0][(0, 1)] == {"tx_port": 0, "tx_queue": 1, "RX-packets": 1995,
                                  "TX-packets": 0, "TX-dropped": 0}
    assert testpmd.queue_counts(streams[0], 0, 2) == [
        {"queue": 0, "rx_packets": 2003, "tx_packets": 7, "tx_dropped": 1},
        {"queue": 1, "rx_packets": 1995, "tx_packets": 0, "tx_dropped": 0}]
    # the port's own block is unchanged by the streams before it
    assert testpmd.parse_fwd_stats(STOP_2Q)[-1][0]["RX-packets"] == 3998
    # testpmd prints no stream that moved nothing: its queue counts 0
    assert testpmd.queue_counts(streams[0], 0, 3)[2] == {
        "queue": 2, "rx_packets": 0, "tx_packets": 0, "tx_dropped": 0}
    # no stream of the port (one queue pair prints none), or one past the pairs
    assert testpmd.queue_counts(streams[0], 1, 2) is None
    assert testpmd.queue_counts(streams[0], 0, 1) is None
    assert testpmd.parse_stream_stats("no streams here") == []


def test_vhost_user_reports_testpmds_counts_per_queue(monkeypatch):
    o = built(backend="vhost-user", machine="q35", app="gen", queues=2)
    be = testpmd.VhostUser(o)
    be.socks = ["/tmp/s0"]
    be.stats = {0: {"RX-packets": 3998}}
    be.fwd = testpmd.parse_fwd_stats(STOP_2Q)
    be.streams = testpmd.parse_stream_stats(STOP_2Q)
    host = be.collect()
    assert [(q["queue"], q["rx_packets"]) for q in host["queues"]] == [(0, 2003), (1, 1995)]


def two_pairs(tx0, tx1, rx0=0, rx1=0):
    return {"app": "gen", "vnet": {"queues": [
        {"queue": 0, "packets": tx0 + rx0, "tx_packets": tx0, "rx_packets": rx0,
         "hash_bad_type": 0, "hash_bad_value": 0},
        {"queue": 1, "packets": tx1 + rx1, "tx_packets": tx1, "rx_packets": rx1,
         "hash_bad_type": 1, "hash_bad_value": 2}]}}


def test_both_sides_agree_per_queue_or_the_report_says_which_lost():
    from test_report import line, rep_of
    from vnperflib.analysis import outcome
    from vnperflib.report import report
    host = {"queues": testpmd.queue_counts(testpmd.parse_stream_stats(STOP_2Q)[0], 0, 2)}
    good = outcome.queue_pairs(two_pairs(2003, 1995, 6, 0), host)
    assert [(q.agree, q.why) for q in good] == [(False, "queue 0 host->guest: 7 sent, 6 "
                                                       "received (lost 1)"), (True, None)]
    exact = outcome.queue_pairs(two_pairs(2003, 1995, 7, 0), host)
    assert [q.agree for q in exact] == [True, True]
    # txonly goes on after the guest stopped counting: host->guest not judged
    outlives = outcome.queue_pairs(two_pairs(2003, 1995, 6, 0),
                                   dict(host, sender_outlives_guest=True))
    assert [q.agree for q in outlives] == [True, True]
    lost = outcome.queue_pairs(two_pairs(2003, 2000, 7, 0), host)
    assert lost[1].why == "queue 1 guest->host: 2000 sent, 1995 received (lost 5)"
    assert [q.hash_bad for q in lost] == [0, 3]
    rep = rep_of("gen", GEN_2Q, {"rx_packets": 4001, "rx_frames": 4001})
    res = dataclasses.replace(rep, queues=lost)
    assert line(report.human(res), "counts per queue") == \
        "disagree: queue 1 guest->host: 2000 sent, 1995 received (lost 5)"
    assert line(report.human(res), "per queue") == (
        "0: 2010 (tx 2003, rx 7, host rx 2003, tx 7); "
        "1: 2000 (tx 2000, rx 0, host rx 1995, tx 0, 3 wrong hash reports)")
    assert line(report.human(dataclasses.replace(rep, queues=exact)), "counts per queue") == \
        "agree on each of 2 queue pairs"
    # without the backend's counts: nothing judged
    assert report.queue_counts_line(outcome.queue_pairs(two_pairs(1, 1))) is None


def test_a_pair_that_carried_nothing_is_named():
    """16 consecutive source ports all hash to pair 0 of 2 (Toeplitz with
    the Microsoft key): the report says pair 1 was idle."""
    from test_report import line, rep_of
    from vnperflib.analysis import outcome
    from vnperflib.report import report
    rep = rep_of("gen", GEN_2Q, {"rx_packets": 4001, "rx_frames": 4001})
    idle = dataclasses.replace(rep, queues=outcome.queue_pairs(two_pairs(2000, 0)))
    assert line(report.human(idle), "idle queues") == (
        "1 of 2 carried nothing: every flow hashed to the other pairs; more flows or wider "
        "flows= ranges spread them (docs/apps.md, gen)")
    busy = dataclasses.replace(rep, queues=outcome.queue_pairs(two_pairs(1000, 1000)))
    assert "idle queues" not in report.human(busy)


def test_hash_report_line():
    from vnperflib.report import report
    assert report.hash_line({"types": 0}) is None
    assert report.hash_line({"types": 63, "ok": 190, "none": 1, "skipped": 0, "bad_type": 1,
                             "bad_value": 2}) == \
        "194 checked: 190 right, 1 not hashed (NONE), 0 skipped, 3 wrong (1 of a wrong type, " \
        "2 with a wrong hash)"


@pytest.mark.parametrize("backend,has,props,note", [
    ("tap", {"rss", "hash", "mq"}, {"rss": "on", "hash": "on"}, None),
    ("tap", {"mq"}, {}, "tap: qemu-x's virtio-net-pci has no rss and hash properties"),
    ("vhost-net", {"rss", "hash"}, {}, "vhost-net: no rss=on,hash=on: QEMU hashes"),
])
def test_rss_and_hash_wired_where_qemu_can(backend, has, props, note, monkeypatch):
    monkeypatch.setattr(qemucmd, "device_props", lambda qemu, driver: frozenset(has))
    o = built(backend=backend, machine="q35", app="gen", queues=2, qemu="qemu-x")
    be = {"tap": tap.Tap, "vhost-net": tap.VhostNet}[backend](o)
    nic = be.nics(0)[0]
    assert {k: nic.props.get(k) for k in ("rss", "hash") if k in nic.props} == props
    got = be.hash_note()
    assert (got is None) if note is None else got.startswith(note), got
    # one pair: nothing wired, nothing said
    one = tap.Tap(built(backend=backend, machine="q35", app="gen", qemu="qemu-x"))
    assert "hash" not in one.nics(0)[0].props and one.hash_note() is None


def test_vhost_user_says_it_has_no_hash_reports():
    be = testpmd.VhostUser(built(backend="vhost-user", machine="q35", app="gen", queues=2))
    assert be.hash_note().startswith("vhost-user: no rss=on,hash=on")
    assert "hash" not in vhostpeer.vhost_nic(be.opts, 0).props


def test_device_props_from_qemus_help(monkeypatch):
    out = 'virtio-net-pci options:\n  hash=<bool>            - on/off (default: false)\n' \
          '  rss=<bool>             - on/off (default: false)\n  mq=<bool>\n'
    seen = []

    def fake_run(argv, **kw):
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, out, "")
    monkeypatch.setattr(qemucmd.subprocess, "run", fake_run)
    qemucmd.device_props.cache_clear()
    try:
        assert qemucmd.device_props("qemu-y", "virtio-net-pci") == {"hash", "rss", "mq"}
        qemucmd.device_props("qemu-y", "virtio-net-pci")
        assert seen == [["qemu-y", "-device", "virtio-net-pci,help"]]  # asked once

        def gone(argv, **kw):
            raise FileNotFoundError(argv[0])
        monkeypatch.setattr(qemucmd.subprocess, "run", gone)
        assert qemucmd.device_props("qemu-z", "virtio-net-pci") == frozenset()
        assert qemucmd.hash_props("qemu-z", "q35") == {}
    finally:
        qemucmd.device_props.cache_clear()


def test_libvirt_takes_queues_over_vhost_user_only():
    from vnperflib import topologies
    from vnperflib.run import support
    o = built(backend="vhost-user", engine="libvirt", machine="q35", app="gen", queues=2)
    assert support.queues_refusal(o, topologies.topology_for(o)) is None
    o = built(backend="dgram", engine="libvirt", machine="q35", app="gen", queues=2)
    assert support.queues_refusal(o, topologies.topology_for(o)) == \
        "--queues 2: --engine libvirt only over vhost-user (its dgram and socket interfaces " \
        "have one queue pair)"
    # vCPUs alone: the domain's <vcpu>
    o = built(backend="dgram", engine="libvirt", machine="q35", app="gen", vcpus=2)
    assert support.queues_refusal(o, topologies.topology_for(o)) is None


def test_the_flow_to_queue_map_is_the_guests_rss():
    from vnperflib.analysis import rss
    # Microsoft's IPv4 TCP vectors: 0x51ccc178 (entry 0x78: pair 0 of 2),
    # 0xafc7327f (entry 0x7f: pair 1); test_vnet_mq.c names the same pairs
    assert rss.toeplitz(rss.MS_KEY, bytes([66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea,
                                           0x06, 0xe6])) == 0x51ccc178
    assert rss.flow_queue("66.9.149.187", "161.142.100.80", 2794, 1766, 2) == 0
    assert rss.flow_queue("38.27.205.30", "209.142.163.6", 48228, 2217, 2) == 1
    assert rss.flow_queue("38.27.205.30", "209.142.163.6", 48228, 2217, 1) == 0


# Microsoft's IPv6 TCP vectors (the virtio spec quotes the same suite):
# source, destination, source port, destination port, hash
MS_IPV6 = [("3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x40207d3d),
           ("3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0xdde51bbf),
           ("3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024,
            0x02d1feef)]


@pytest.mark.parametrize("src,dst,sport,dport,want", MS_IPV6)
def test_the_flow_to_queue_map_hashes_ipv6_flows(src, dst, sport, dport, want):
    """An IPv6 TCP/UDP flow's hash input is its 16-byte source and
    destination addresses, then the ports (virtio 1.2 s5.1.6.4.3.2, no
    extension headers: the guest asks for no _EX hash type)."""
    from vnperflib.analysis import rss
    assert rss.toeplitz(rss.MS_KEY, rss.flow_input(src, dst, sport, dport)) == want
    assert rss.flow_queue(src, dst, sport, dport, 2) == (want & 127) % 2
    assert rss.flow_queue(src, dst, sport, dport, 4) == (want & 127) % 4


def test_a_flow_of_two_address_families_is_refused():
    from vnperflib.analysis import rss
    with pytest.raises(ValueError, match="IPv4 and IPv6"):
        rss.flow_queue(netns.HOST_IP6, netns.GUEST_IP, 9000, 49152, 2)


def test_tap_counts_the_peers_flow_on_its_queue_pair():
    from vnperflib.analysis import outcome, rss
    o = built(backend="tap", machine="q35", app="sink", queues=2, count=100)
    be = tap.Tap(o)
    q = rss.flow_queue(netns.HOST_IP, netns.GUEST_IP, netns.SENDER_PORT, netns.GUEST_PORT, 2)
    host = {"queues": be.flow_queues(100)}
    assert [h["tx_packets"] for h in host["queues"]] == [100 if i == q else 0 for i in (0, 1)]
    sink = {"app": "sink", "queues": [{"queue": i, "cpu": i, "packets": 100 if i == q else 0}
                                      for i in (0, 1)],
            "vnet": {"queues": [{"queue": i, "packets": 3, "tx_packets": 0,
                                 "rx_packets": (100 if i == q else 0) + 1} for i in (0, 1)]}}
    # the driver's rx has a frame of the kernel's more: the app's count is compared
    pairs = outcome.queue_pairs(sink, host)
    assert [(p.agree, p.host_tx_packets) for p in pairs] == [
        (True, 100 if i == q else 0) for i in (0, 1)]
    sink["queues"][q]["packets"] = 97
    assert outcome.queue_pairs(sink, host)[q].why == \
        "queue %d host->guest: 100 sent, 97 received (lost 3)" % q
    # without the app's own per-pair counts nothing is judged
    assert outcome.queue_pairs(dict(sink, queues=None), host)[q].agree is None


RRSERVER = rrhost.rrserver_binary()


@pytest.mark.skipif(not os.access(RRSERVER, os.X_OK), reason="vnperf-rrserver not built")
def test_rrserver_counts_its_udp_answers_per_client_port(tmp_path):
    """The host end of a UDP rr client: its answers per client port, so
    the runner can count them per queue pair (one port, one flow)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ready = tmp_path / "ready"
    p = subprocess.Popen([RRSERVER, "--proto", "udp", "--bind", "127.0.0.1", "--port",
                          str(port), "--req", "1", "--resp", "4", "--ready-file", str(ready)],
                         stdout=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        while not ready.exists() and time.monotonic() - t0 < 10:
            time.sleep(0.01)
        clients = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
        for c, n in zip(clients, (3, 2)):
            c.bind(("127.0.0.1", 0))
            c.settimeout(5)
            for i in range(n):
                c.sendto(bytes([i]), ("127.0.0.1", port))
                assert c.recv(16)[:1] == bytes([i])
    finally:
        p.terminate()
        out = p.communicate(timeout=10)[0]
    res = json.loads(out)
    assert res["transactions"] == 5
    assert res["udp_ports"] == sorted([c.getsockname()[1], n] for c, n in zip(clients, (3, 2)))
    for c in clients:
        c.close()


@pytest.mark.parametrize("ip6,host,guest", [(False, netns.HOST_IP, netns.GUEST_IP),
                                             (True, netns.HOST_IP6, netns.GUEST_IP6)])
def test_tap_counts_the_rr_servers_answers_on_the_pair_of_their_flow(ip6, host, guest):
    """--queues 2, a UDP rr client over tap: each client port's answers
    count on the pair QEMU's RSS gives their flow (server port to client
    port), app level (the guest's per-pair transactions meet them). With
    --ip6 the server answers from the namespace's IPv6 address to the
    guest's, so each port's answers count on the pair of that IPv6 flow
    (QEMU's UDPv6 hash)."""
    from vnperflib.analysis import rss
    be = tap.Tap(built(backend="tap", machine="q35", app="rr", queues=2, ip6=ip6))
    be.dst_ip = host        # as start() sets it
    ports = [[49152 + i, 10 + i] for i in range(16)]
    got = be.rr_queues({"port": 9000, "udp_ports": ports})
    want = [0, 0]
    for port, n in ports:
        want[rss.flow_queue(host, guest, 9000, port, 2)] += n
    assert min(want) > 0 and sum(want) == sum(n for _, n in ports)
    assert got == [{"queue": q, "tx_packets": want[q], "app_level": True} for q in (0, 1)]


# gen's flows= of the integration test (flows=sport:5000-5003,dport:9000-9003):
# a flow from the guest's port to the host's, as the host peer lists it.
GEN_FLOWS = [{"src": netns.GUEST_IP, "sport": sp, "dst": netns.HOST_IP, "dport": dp,
              "packets": 100 + sp - 5000, "bytes": 60 * (100 + sp - 5000)}
             for sp in range(5000, 5004) for dp in range(9000, 9004)]


def test_gen_sends_a_flow_on_the_pair_of_its_replies():
    """rss.sent_pair is the swapped flow's pair (apps/app_gen.c's
    vnet_flow_pair(daddr, saddr, dport, sport)), the pair the integration
    test's rss_pair(HOST_IP, GUEST_IP, dport, sport) names."""
    from vnperflib.analysis import rss
    pairs = [rss.sent_pair(netns.GUEST_IP, netns.HOST_IP, sp, dp, 2)
             for sp in range(5000, 5004) for dp in range(9000, 9004)]
    assert pairs == [rss.flow_queue(netns.HOST_IP, netns.GUEST_IP, dp, sp, 2)
                     for sp in range(5000, 5004) for dp in range(9000, 9004)]
    assert 0 < sum(pairs) < len(pairs)  # both pairs carry some
    assert rss.sent_pair(netns.GUEST_IP, netns.HOST_IP, 5000, 9000, 1) == 0


def test_tap_counts_gens_flows_on_the_pairs_they_were_sent_on():
    """--queues 2, gen over the namespace's tap: the host peer's flows add
    up per pair where gen sent them; each pair's app count meets them
    (pair 0's driver count has lwIP's ARP more: not a vnperf flow), and a
    frame lost on pair 1 is named there."""
    from test_report import line, rep_of
    from vnperflib.analysis import outcome, rss
    from vnperflib.report import report
    be = tap.Tap(built(backend="tap", machine="q35", app="gen", queues=2, count=1000))
    want = [0, 0]
    for f in GEN_FLOWS:
        want[rss.flow_queue(f["dst"], f["src"], f["dport"], f["sport"], 2)] += f["packets"]
    res = {"type": "peer", "mode": "count", "packets": sum(want) + 2, "vnperf": sum(want),
           "flows": GEN_FLOWS, "flows_overflow": 0, "errors": {"sock_drops": 0}}
    host = be.counted(res, [])
    assert host["rx_packets"] == sum(want)
    assert host["queues"] == [{"queue": q, "rx_packets": want[q], "app_level": True}
                              for q in (0, 1)]
    gen = {"app": "gen", "queues": [{"queue": q, "cpu": q, "packets": want[q]} for q in (0, 1)],
           "vnet": {"queues": [{"queue": q, "packets": want[q] + 2 * (q == 0),
                                "tx_packets": want[q] + 2 * (q == 0), "rx_packets": 0}
                               for q in (0, 1)]}}
    pairs = outcome.queue_pairs(gen, host)
    assert [(p.agree, p.host_rx_packets, p.tx_packets) for p in pairs] == [
        (True, want[0], want[0] + 2), (True, want[1], want[1])]
    # one of gen's frames on pair 1 never reached the host
    host["queues"][1]["rx_packets"] -= 1
    lost = outcome.queue_pairs(gen, host)
    assert [p.agree for p in lost] == [True, False]
    assert lost[1].why == "queue 1 guest->host: %d sent, %d received (lost 1)" % (
        want[1], want[1] - 1)
    rep = dataclasses.replace(rep_of("gen", GEN_2Q, {"rx_packets": 4001, "rx_frames": 4001}),
                              queues=lost)
    assert line(report.human(rep), "counts per queue") == "disagree: " + lost[1].why


def test_tap_flows_beyond_the_peers_table_are_not_judged_per_pair():
    from test_report import line, rep_of
    from vnperflib.analysis import outcome
    from vnperflib.report import report
    be = tap.Tap(built(backend="tap", machine="q35", app="gen", queues=2, count=1000))
    res = {"type": "peer", "mode": "count", "packets": 10, "vnperf": 10, "flows": GEN_FLOWS[:1],
           "flows_overflow": 3, "errors": {}}
    host = be.counted(res, [])
    gen = {"app": "gen", "queues": [{"queue": q, "cpu": q, "packets": 5} for q in (0, 1)],
           "vnet": {"queues": [{"queue": q, "packets": 5, "tx_packets": 5, "rx_packets": 0}
                               for q in (0, 1)]}}
    pairs = outcome.queue_pairs(gen, host)
    assert [(p.agree, p.host_rx_packets) for p in pairs] == [(None, None), (None, None)]
    rep = dataclasses.replace(rep_of("gen", GEN_2Q, {"rx_packets": 4001, "rx_frames": 4001}),
                              queues=pairs)
    assert line(report.human(rep), "counts per queue") == (
        "not judged: the host peer counted 3 frames of flows beyond its table (flows_overflow, "
        "docs/peer.md): not by flow")


def test_the_host_peer_counts_gen_by_flow_only_over_a_multiqueue_namespace_tap():
    from vnperflib.run import placeapply
    gen2 = built(backend="tap", machine="q35", app="gen", queues=2)
    assert tap.counts_flows(gen2)
    assert ("host peer", tap.peer.peer_binary()) in tap.Tap(gen2).programs()
    assert "peer" in [t.name for t in placeapply.threads_for(gen2)]
    assert tap.counts_flows(built(backend="vhost-net", machine="q35", app="gen", queues=2))
    for o in (built(backend="tap", machine="q35", app="gen"),
              built(backend="tap", machine="q35", app="sink", queues=2),
              built(backend="tap", machine="q35", app="gen", queues=2, config=["uso=1"])):
        assert not tap.counts_flows(o), o
    assert tap.Tap(built(backend="tap", machine="q35", app="gen")).programs() == []


def test_a_peer_results_flows_are_checked():
    from vnperflib.errors import RunnerError
    from vnperflib.run import peer
    peer.check_flows(GEN_FLOWS)
    # an IPv6 stream's flow (docs/peer.md)
    peer.check_flows([{"src": "fd00::2", "sport": 1234, "dst": "fd00::1", "dport": 5678,
                       "packets": 3, "bytes": 300}])
    for bad, why in (({"src": "10.0.0.2", "sport": 1, "dst": "x", "dport": 2, "packets": 1,
                       "bytes": 60}, "flows[0].dst 'x' is not an IP address"),
                     ({"src": "10.0.0.2", "sport": 70000, "dst": "10.0.0.1", "dport": 2,
                       "packets": 1, "bytes": 60}, "flows[0].sport 70000 is not a port"),
                     ({"src": "10.0.0.2", "sport": 1, "dst": "10.0.0.1", "dport": 2,
                       "packets": 1.5, "bytes": 60}, "flows[0].packets 1.5 is not a count"),
                     (7, "flows[0] is not an object")):
        with pytest.raises(RunnerError, match=re.escape(why)):
            peer.check_flows([bad])
    with pytest.raises(RunnerError, match="flows 'x' is not a list"):
        peer.check_result({"type": "peer", "mode": "count", "packets": 1, "bytes": 60,
                           "flows": "x"})
