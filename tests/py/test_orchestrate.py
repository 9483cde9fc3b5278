"""The one orchestrator (tools/vnperflib/run/orchestrate.py) on fake guests:
receivers first, each sender once every receiver it waits for has its NIC
up, a receiver that dies or does not start gives its senders up with one
line; run, fleet and the Linux-guest baseline use it."""

import json
import os
import re
import time

from vnpy import ROOT, run_vnperf, standin_image
from vnperflib import exitcodes
from vnperflib.run import orchestrate

BOOT = ('@vnperf {"type":"boot","boot_path":"pvh","tsc_hz":2600000000,"tsc_method":"pit",'
        '"acpi":true,"ram_bytes":133823488,"arena_free_bytes":1000}')


class Proc:
    def __init__(self):
        self.status = None

    def poll(self):
        return self.status


class Fake:
    """A guest as the orchestrator sees it: label, proc, QMP (none)."""

    has_nic = True
    qmp = None

    def __init__(self, label):
        self.label = label
        self.proc = None


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def make(pairs, watch=(), nic=lambda g: None):
    events = []
    clock = Clock()

    def start(x):
        x.proc = Proc()
        events.append(("start", x.label))

    o = orchestrate.Orchestrator(pairs, start, up=lambda g: events.append(("up", g.label)),
                                 give_up=lambda x, why: events.append(("give_up", x.label, why)),
                                 watch=watch, clock=clock, nic=nic)
    return o, events, clock


def test_receivers_first_the_sender_once_every_receiver_nic_is_up():
    fwd1, fwd2, tester = Fake("fwd1"), Fake("fwd2"), Fake("tester")
    o, events, clock = make([(tester, [fwd1, fwd2])], watch=[tester])
    o.begin()
    assert events == [("start", "fwd1"), ("start", "fwd2")]
    o.line(fwd1, {"type": "ready"})
    o.line(fwd1, {"type": "net"})
    o.line(fwd2, {"type": "ready"})
    o.tick()
    # fwd2 ready, its NIC not yet up (no QMP, grace not over): the tester waits.
    assert events == [("start", "fwd1"), ("start", "fwd2"), ("up", "fwd1")]
    clock.t += orchestrate.NET_GRACE_S
    o.tick()
    assert events[3:] == [("up", "fwd2"), ("start", "tester")]
    # The sender's own NIC is watched too (the backend's host senders).
    o.line(tester, {"type": "mark", "name": "net_ready"})
    o.line(fwd1, {"type": "net"})
    assert events[5:] == [("up", "tester")]


def test_qmp_driver_ok_is_the_nic_up_after_the_ready_line():
    rx, tx = Fake("rx"), Fake("tx")
    o, events, _ = make([(tx, [rx])], nic=lambda g: True)
    o.begin()
    o.tick()
    assert events == [("start", "rx")]   # DRIVER_OK counts after the ready line only
    o.line(rx, {"type": "ready"})
    o.tick()
    assert events[1:] == [("up", "rx"), ("start", "tx")]


def test_a_single_guest_starts_at_once():
    g = Fake("guest")
    o, events, _ = make([(g, [])], watch=[g])
    o.begin()
    o.line(g, {"type": "net"})
    assert events == [("start", "guest"), ("up", "guest")]


def test_a_receiver_that_dies_gives_its_sender_up_with_one_line():
    rx, tx = Fake("rx"), Fake("tx")
    o, events, clock = make([(tx, [rx])])
    o.begin()
    o.line(rx, {"type": "ready"})
    rx.proc.status = 1
    o.tick()
    clock.t += 2 * orchestrate.NET_GRACE_S
    o.tick()
    assert events == [("start", "rx"),
                      ("give_up", "tx", "its receiver rx ended before its NIC was up")]
    assert tx.proc is None


def test_a_receiver_that_did_not_start_gives_up_only_its_own_senders():
    a_rx, a_tx, b_rx, b_tx = Fake("a-0"), Fake("a-1"), Fake("b-0"), Fake("b-1")
    o, events, _ = make([(a_tx, [a_rx]), (b_tx, [b_rx])])
    o.begin()
    o.fail(a_rx, "a-0 did not start: domain exists")
    o.line(b_rx, {"type": "net"})
    assert events[2:] == [("give_up", "a-1", "its receiver a-0 did not start: domain exists"),
                          ("up", "b-0"), ("start", "b-1")]


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def test_run_fleet_and_the_linux_baseline_share_it():
    """One orchestrator: no other module orders receivers and senders or
    reads a NIC's DRIVER_OK; the baseline's vCPUs come from QMP as the
    runner's."""
    for parts in (("tools", "vnperflib", "run", "runner.py"),
                  ("tools", "vnperflib", "fleet", "fleet.py"),
                  ("bench", "linuxguest.py")):
        text = read(*parts)
        assert "orchestrate.Orchestrator(" in text, parts
        assert not re.search(r"NET_GRACE_S|driver_ok|def nic_up|vcpu_threads\(", text), parts
    assert "class Run:" not in read("bench", "linuxguest.py")


def test_a_run_whose_receiver_dies_ends_with_its_line_and_status(tmp_path):
    """--topology guests with a stand-in QEMU whose receiver ends after
    boot: the sender's QEMU never starts, the run ends at once with the
    receiver's line and status 66, and the sender's report names it."""
    launched = tmp_path / "launched"
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\ncase \"$*\" in\n"
                    "*vnperf-rx,*) echo rx >> '%s'; echo '%s'; exit 1 ;;\n"
                    "*vnperf-tx,*) echo tx >> '%s'; sleep 30 ;;\nesac\n"
                    % (launched, BOOT, launched))
    os.chmod(qemu, 0o755)
    t0 = time.monotonic()
    r = run_vnperf(["run", "--accel", "tcg", "--topology", "guests", "--backend", "dgram",
                    "--app", "gen", "--duration", "20", "--json", "--image",
                    standin_image(tmp_path), "--qemu", str(qemu)], timeout=60)
    assert time.monotonic() - t0 < 20
    assert r.returncode == exitcodes.RUNNER_NO_GUEST_EXIT, r.stderr
    assert "Traceback" not in r.stderr
    assert launched.read_text() == "rx\n"
    rep = json.loads(r.stdout)
    assert rep["why"].startswith("rx: QEMU exited with status 1 without a guest exit")
    tx = rep["guests"][-1]
    assert tx["why_no_exit"] == "tx: never started (its receiver rx ended before its NIC was up)"


FLEET = """\
[fleet]
name = "pairs"
accel = "tcg"
duration = 3

[[group]]
name = "rx"
app = "sink"
count = 2
wire = "network:default"

[[group]]
name = "solo"
app = "selftest"
count = 1

[[group]]
name = "tx"
app = "gen"
count = 2
to = "rx"
wire = "network:default"
"""


class Domain(Fake):
    """A fleet's domain as the fleet drives it: created paused, resumed."""

    def __init__(self, label, log):
        super().__init__(label)
        self.proc = Proc()
        self.proc.kill = lambda: log.append(("kill", label))
        self.log = log
        self.stop_why = None

    def resume(self):
        self.log.append(("resume", self.label))
        return None


class Line:
    def __init__(self, msg):
        self.msg = msg


def test_a_fleet_resumes_receivers_first_and_each_sender_after_its_own(tmp_path):
    from vnperflib.fleet import fleet, fleetspec
    p = tmp_path / "spec.toml"
    p.write_text(FLEET)
    f = fleet.Fleet(None, fleetspec.load(str(p)), None)
    log = []
    for i in f.insts:
        i.g = Domain(i.label, log)
    f.orch = orchestrate.Orchestrator(fleet.pairs(f.insts), f._start, give_up=f._gave_up)
    by = {i.label: i for i in f.insts}
    by["rx-1"].start_error = "rx-1: create: no space"
    f.orch.begin()
    # rx-1 was not created: its sender is destroyed, never resumed.
    assert log == [("resume", "rx-0"), ("kill", "tx-1"), ("resume", "solo-0")]
    assert by["tx-1"].wait_why == "its receiver rx-1 did not start: rx-1: create: no space"
    f._on_line(by["rx-0"].g, Line({"type": "ready"}))
    f._on_line(by["solo-0"].g, Line({"type": "net"}))
    f._on_line(by["tx-1"].g, Line({"type": "net"}))
    assert log[3:] == []
    f._on_line(by["rx-0"].g, Line({"type": "net"}))
    assert log[3:] == [("resume", "tx-0")] and by["tx-0"].running


class Qmp:
    def __init__(self, ok):
        self.ok = ok

    def command(self, name):
        assert name == "x-query-virtio"
        return [{"path": "/machine/peripheral/nic0/virtio-backend"}, {"path": "/machine/x"}]

    def driver_ok(self, path):
        if self.ok is None:
            raise OSError("monitor gone")
        assert path == "/machine/peripheral/nic0/virtio-backend"
        return self.ok


def test_nic_up_reads_driver_ok_of_the_first_nic_and_drops_a_broken_monitor():
    g = Fake("rx")
    g.NIC_QOM = "/machine/peripheral/nic0"
    assert orchestrate.nic_up(g) is None          # no QMP: the grace period decides
    g.qmp = Qmp(False)
    assert orchestrate.nic_up(g) is False
    g.qmp.ok = True
    assert orchestrate.nic_up(g) is True
    g.qmp.ok = None
    assert orchestrate.nic_up(g) is None and g.qmp is None
    # A guest without a NIC has nothing to wait for.
    g.qmp, g.has_nic = Qmp(False), False
    assert orchestrate.nic_up(g) is True


def test_a_fleet_domain_with_its_group_interface_waits_for_driver_ok():
    from vnperflib.run import engine_libvirt, qemucmd
    from vnperflib.run.domxml import Iface
    eng = engine_libvirt.LibvirtEngine("qemu:///system", None)
    spec = qemucmd.GuestSpec("/x.elf", machine="q35", memory_mb=128, accel="tcg",
                             name="vnperf-rx-0")
    g = eng.guest(spec, "rx-0", ifaces=[Iface("user", "52:54:00:00:00:01", {})])
    assert g.has_nic and not spec.nics
    assert not eng.guest(spec, "solo-0", ifaces=[]).has_nic
