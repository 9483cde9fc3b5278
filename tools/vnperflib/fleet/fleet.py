"""`vnperf fleet SPEC`: groups of appliances started through libvirt on
one host or several (docs/fleet.md). Receivers first; each sender once its
receiver's NIC is up (orchestrate.py); every console streamed by one pump;
the results merged per instance, per group and for the fleet
(fleetreport.py).

Every domain is transient and started with AUTODESTROY; the engines
destroy them all, in parallel and bounded in time, on every exit path
(the session's undo stack), and the report names any that could not be
destroyed."""

import os
import queue
import threading
import time

from .. import optypes
from ..analysis import udpdrops
from ..errors import RunnerError, usage
from ..run import guest, libvirtconn, orchestrate, ports, qemucmd, runner
from ..run.domxml import Iface
from ..run.engine_libvirt import LibvirtEngine
from ..run.proc import Session
from . import fleetreport, fleetspec

# A receiver runs this much longer than its sender's duration: the sender
# boots after it (several domains at once take seconds each).
RX_EXTRA_S = 10
STARTUP_BASE_S = 30.0
STARTUP_PER_DOMAIN_S = 2.0
RUN_EXTRA_S = 30.0

# Addresses on wires the fleet's guests share (network, bridge, ...).
SHARED_NET = "10.77.%d.%d"
SHARED_MASK = "255.255.0.0"
PASST_GUEST = "10.0.2.15"
PASST_GW = "10.0.2.2"
APP_PORT = 9000


class Instance:
    """One appliance: its group, index, addresses, config and guest."""

    def __init__(self, group, k, n, run_byte):
        self.group = group
        self.k = k
        self.label = "%s-%d" % (group.name, k)
        self.mac = "52:54:%02x:00:%02x:%02x" % (run_byte, (n + 1) >> 8, (n + 1) & 0xff)
        self.ip = SHARED_NET % ((n + 1) >> 8, (n + 1) & 0xff)
        self.partner = None
        self.ports = None  # udp wire: (local, remote)
        self.words = []
        self.iface = None
        self.g = None
        self.ready_at = None
        self.start_error = None
        self.running = False
        self.wait_why = None

    @property
    def sender(self):
        return self.group.to is not None


def plan(spec):
    """[Instance] with partners, addresses, interfaces and config words."""
    run_byte = os.getpid() & 0xff
    insts, by_group = [], {}
    for g in spec.groups:
        by_group[g.name] = [Instance(g, k, len(insts) + k, run_byte) for k in range(g.count)]
        insts += by_group[g.name]
    for g in spec.groups:
        if g.to is not None:
            for a, b in zip(by_group[g.name], by_group[g.to.name]):
                a.partner, b.partner = b, a
    for i in insts:
        _wire(spec, i)
    for i in insts:
        i.words = qemucmd.merge_config(_duration(spec, i), i.group.config, _app_words(i),
                                       _addr_words(i))
    return insts


def _app_words(i):
    words = ["app=" + i.group.app]
    if i.group.app in fleetspec.ROLE_APPS:
        words.append("role=" + i.group.role)
    if i.group.queues:
        # a queue pair per vCPU (docs/config.md)
        words += ["queues=%d" % i.group.queues, "vcpus=%d" % i.group.queues]
    return words


def _duration(spec, i):
    """duration= unless the group's config sets it; a receiver outlasts
    its sender."""
    mine = _word(i.group.config, "duration")
    if mine is not None:
        return []
    if i.partner is not None and not i.sender:
        sd = _word(i.partner.group.config, "duration")
        return ["duration=%d" % ((int(sd) if optypes.digits(sd) else spec.duration)
                                 + RX_EXTRA_S)]
    return ["duration=%d" % spec.duration]


def _word(words, key):
    for w in words:
        k, _, v = w.partition("=")
        if k == key:
            return v
    return None


def _props(g):
    props = {}
    if g.queue_size:
        props.update(rx_queue_size=g.queue_size, tx_queue_size=g.queue_size)
    if g.event_idx is not None:
        props["event_idx"] = g.event_idx
    return props


def _wire(spec, i):
    kind, arg = i.group.wire
    props = _props(i.group)
    if kind == "none":
        return
    if kind == "udp":
        if i.sender:
            pt, pr = ports.free_udp_ports(2)
            i.ports = (pt, pr)
            i.partner.ports = (pr, pt)
        return  # both ends get their Iface once ports are known (_udp_ifaces)
    if kind == "passt":
        fwd = []
        if not i.sender:
            i.host_port = ports.free_udp_ports(1)[0]
            fwd = [("udp", i.host_port, APP_PORT)]
        i.iface = Iface("passt", i.mac, props, ip=(PASST_GUEST, 24), forwards=fwd)
        return
    if kind == "user":
        i.iface = Iface("user", i.mac, props)
        return
    src = {"network": {"name": arg}, "bridge": {"name": arg},
           "ethernet": {"dev": arg.format(i=i.k, group=i.group.name) if arg else None},
           "vhostuser": {"path": (arg or "").format(i=i.k, group=i.group.name),
                         "mode": "client"}}[kind]
    i.iface = Iface(kind, i.mac, props, queues=i.group.queues or 1, **src)


def udp_ifaces(insts):
    """The udp pairs' interfaces, from the ports plan() picked."""
    for i in insts:
        if i.group.wire[0] == "udp":
            mine, theirs = i.ports
            i.iface = Iface("udp", i.mac, _props(i.group),
                            local=(i.group.address, mine),
                            remote=(i.partner.group.address, theirs))


def _addr_words(i):
    kind = i.group.wire[0]
    if kind == "none":
        return []
    if kind in ("passt", "user"):
        words = ["ip=" + PASST_GUEST, "gw=" + PASST_GW]
        if i.sender and kind == "passt":
            # passt maps the gateway to its host: the receiver's forward.
            words += ["dst_ip=" + PASST_GW, "dst_port=%d" % i.partner.host_port]
        return words
    words = ["ip=" + i.ip, "mask=" + SHARED_MASK]
    if i.partner is not None:
        words += ["dst_ip=" + i.partner.ip, "dst_mac=" + i.partner.mac]
    return words


def pairs(insts):
    """The orchestrator's [(sender, [its receiver])] of the instances'
    guests; an instance without a partner waits for none. The first wave
    (every one but the senders) is in the spec's order."""
    out = []
    for i in insts:
        if not i.sender:
            out.append((i.partner.g, [i.g]) if i.partner is not None else (i.g, []))
    return out


def receiver_ports(insts):
    """{receiver label: its QEMU's local UDP port} of the udp pairs."""
    return {i.label: i.ports[0] for i in insts
            if i.partner is not None and not i.sender and i.ports}


class Fleet:
    """One fleet run, in the order it happens (start, stream, report)."""

    def __init__(self, session, spec, opts):
        self.session = session
        self.spec = spec
        self.opts = opts
        self.insts = plan(spec)
        udp_ifaces(self.insts)
        self.engines = {}
        self.created = queue.Queue()
        self.creating = 0
        self.pump = None
        self.orch = None
        self.t0 = None
        self.t_created = None
        self.t_all_ready = None
        self.wall_s = None
        self.accel = {}
        self.socket_drops = {}  # receiver label: drops on its QEMU's UDP socket

    def engine(self, g):
        uri = g.uri or self.spec.uri
        console = g.console or self.spec.console
        key = (uri, console)
        if key not in self.engines:
            self.engines[key] = LibvirtEngine(uri, console)
        return self.engines[key]

    def check(self):
        """Refusals before anything starts: images, machines, daemons."""
        why = libvirtconn.available()
        if why:
            raise usage("fleet: " + why)
        for g in self.spec.groups:
            eng = self.engine(g)
            image = g.image or self.spec.image
            if eng.local_files and not os.path.isfile(image):
                raise usage("fleet: group %s: image %s not found (build it with make)"
                            % (g.name, image))
            eng.connection(self.session)

    def resolve_accel(self):
        """The accelerator per engine (one KVM probe per URI for auto)."""
        for eng in self.engines.values():
            if eng.uri in self.accel:
                continue
            if self.spec.accel != "auto":
                self.accel[eng.uri] = self.spec.accel
                continue
            ok, why = eng._probe(self.session, self.spec.image, self.spec.machine)
            self.accel[eng.uri] = "kvm" if ok else "tcg"
            runner.log(self.opts, "fleet: %s: accel %s: %s" % (eng.uri, self.accel[eng.uri],
                                                               why))

    def make_guest(self, i):
        g, s = i.group, self.spec
        eng = self.engine(g)
        spec = qemucmd.GuestSpec(g.image or s.image, machine=g.machine or s.machine,
                                 memory_mb=g.memory or s.memory, accel=self.accel[eng.uri],
                                 config=i.words, name="vnperf-" + i.label,
                                 smp=g.queues or 1)
        i.g = eng.guest(spec, i.label, ifaces=[i.iface] if i.iface else [], pins=g.pin or {})

    def create(self):
        """Creates every domain paused, at most spec.parallel at a time, in
        the background: libvirt's start-up cost (seconds a domain under
        load) is paid before any guest runs, so running guests do not slow
        it and it does not delay a sender behind its receiver."""
        sem = threading.Semaphore(self.spec.parallel)
        fleetreport.log_progress(self.opts, "creating %d domain%s: %s" % (
            len(self.insts), "s" if len(self.insts) != 1 else "", _groups_of(self.insts)))
        for i in self.insts:
            self.make_guest(i)
            self.creating += 1
            threading.Thread(target=self._create, args=(i, sem), daemon=True,
                             name="create " + i.label).start()

    def _create(self, i, sem):
        with sem:
            try:
                i.g.start(self.session, paused=True)
            except RunnerError as e:
                i.start_error = e.line
            except Exception as e:  # a thread must report, never die silently
                i.start_error = "%s: %s" % (e.__class__.__name__, e)
        self.created.put(i)

    def run(self):
        """Receivers and partnerless groups run once every domain exists;
        each sender once its receiver is ready with its NIC up."""
        self.t0 = time.monotonic()
        self.create()
        self.orch = orchestrate.Orchestrator(pairs(self.insts), self._start,
                                             give_up=self._gave_up)
        deadline = self.t0 + self.timeout()
        self.pump = guest.Pump(self._on_line, self._on_tick, tick_s=0.1)
        while time.monotonic() < deadline:
            self._take_created()
            if self.creating == 0 and self.t_created is None:
                self.t_created = time.monotonic() - self.t0
                fleetreport.log_progress(self.opts, "%d domains created in %.1f s" % (
                    len(self.insts), self.t_created))
                self.orch.begin()
            if self.creating == 0 and not self.pump.open:
                break
            self.pump.run(min(deadline, time.monotonic() + 0.2)) if self.pump.open \
                else self._idle(0.1)
        self._take_created()
        self.pump.finish()
        self.orch.finish()
        self.wall_s = time.monotonic() - self.t0

    def _start(self, g):
        """Resumes g's domain; one that cannot run gives its sender up."""
        i = self._inst(g)
        self._resume([i])
        if i.start_error:
            self.orch.fail(g, "%s did not start: %s" % (i.label, i.start_error))

    def _gave_up(self, g, why):
        self._give_up(self._inst(g), why)

    def _resume(self, insts):
        for i in insts:
            if i.start_error is None and i.g.resume() is None:
                i.running = True
            elif i.start_error is None:
                i.start_error = "%s: resume: %s" % (i.label, i.g.stop_why)

    def _idle(self, s):
        time.sleep(s)
        self._on_tick(time.monotonic() - self.t0)

    def timeout(self):
        if self.spec.timeout:
            return self.spec.timeout
        longest = max(int(w.partition("=")[2]) for i in self.insts for w in i.words
                      if w.startswith("duration=") and optypes.digits(w.partition("=")[2]))
        return STARTUP_BASE_S + STARTUP_PER_DOMAIN_S * len(self.insts) / self.spec.parallel \
            + longest + RUN_EXTRA_S

    def _take_created(self):
        while True:
            try:
                i = self.created.get_nowait()
            except queue.Empty:
                return
            self.creating -= 1
            if i.start_error is None:
                i.g.qmp = i.g.open_monitor()
                self.pump.add(i.g)

    def _on_line(self, g, line):
        if line.msg is not None:
            self.orch.line(g, line.msg)
        if line.msg is not None and line.msg["type"] == "ready":
            i = self._inst(g)
            if i.ready_at is None:
                i.ready_at = time.monotonic()
                if all(x.ready_at is not None or x.start_error or x.wait_why
                       for x in self.insts):
                    self.t_all_ready = i.ready_at - self.t0
                    fleetreport.log_progress(self.opts, "all %d instances ready after %.1f s" % (
                        len(self.insts), self.t_all_ready))

    def _inst(self, g):
        return next(i for i in self.insts if i.g is g)

    def _on_tick(self, elapsed):
        """A receiver up releases its sender; one that failed first leaves
        its sender unstarted, destroyed, with the reason (orchestrate.py)."""
        udpdrops.sample(self.socket_drops, receiver_ports(self.insts))
        self.orch.tick()

    def _give_up(self, i, why):
        i.wait_why = why
        if i.g is not None and i.g.proc is not None:
            i.g.proc.kill()

    def report(self):
        return fleetreport.build(self)


def _groups_of(insts):
    names = []
    for i in insts:
        if i.group.name not in names:
            names.append(i.group.name)
    return ", ".join("%s x%d" % (n, sum(1 for i in insts if i.group.name == n)) for n in names)


def main(opts):
    """`vnperf fleet`: returns the exit status."""
    spec = fleetspec.load(opts.spec)
    out = opts.out or os.path.join("results", time.strftime("fleet-%Y%m%d-%H%M%S"))
    if os.path.exists(os.path.join(out, "results.json")):
        raise usage("fleet: %s already holds results; choose another --out" % out)
    s = Session()
    try:
        with s:
            f = Fleet(s, spec, opts)
            f.check()
            f.resolve_accel()
            f.run()
    finally:
        # Also on Ctrl-C: name every domain that could not be destroyed.
        for e in s.errors:
            runner.log(opts, "teardown: " + e)
    return fleetreport.finish(f, s, out)


def add_arguments(p):
    p.add_argument("spec", metavar="SPEC", help="fleet spec, TOML or JSON (docs/fleet.md)")
    p.add_argument("--out", type=optypes.out_dir, default=None, help="results directory (default "
                   "results/fleet-YYYYmmdd-HHMMSS); `vnperf compare` reads it")
    p.add_argument("--json", action="store_true", help="print the fleet report as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
