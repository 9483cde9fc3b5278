"""One measured run: backend up, guest(s) booted and streamed, host-side
counts and CPU collected, everything torn down, one typed report
(result.RunResult)."""

import dataclasses
import os
import sys
import time

from .. import backends, exitcodes, result, topologies
from ..analysis import hostcpu, outcome, verdict
from ..backends import testpmd
from ..errors import RunnerError, failed, usage
from . import (artifacts, engine, guest, identity, orchestrate, pcap, pinning, placeapply,
               priority, qemucmd, scratch, streamfile)
from .echo import Echo
from .qmp import QmpError

def log(opts, line):
    """Runner lines go to stderr so --json stdout stays parseable."""
    print("vnperf: " + line, file=sys.stderr, flush=True)


def guest_roles(opts):
    """[(label, config words)] of the options' topology: receivers first,
    the sender last (its result is the run's; topologies/)."""
    return topologies.topology_for(opts).roles(opts)


def check_pin_labels(pins, labels):
    """Refuses --pin role@GUEST for a guest this run does not have."""
    for label in pinning.labels(pins):
        if label not in labels:
            raise usage("--pin: no guest %s in this run (its guests: %s)"
                        % (label, ", ".join(labels)))


class Run:
    """One run, in the order it happens: check, start the backend, build the
    guests, stream them (receivers first, the sender once their NICs are
    up: orchestrate.py), stop the backend, report. The console and tick
    callbacks share the run's state through the instance."""

    def __init__(self, session, opts, resolver, eng=None):
        self.session = session
        self.opts = opts
        self.resolver = resolver
        self.engine = eng or engine.QemuEngine(opts.qemu)
        self.roles = None
        self.be = None
        self.accel = None
        self.guests = []
        self.meter = hostcpu.CpuMeter()
        self.qmp_info = {}
        self.pump = None
        self.adopted = set()
        self.niced = {}              # --nice applied: {guest label or backend: n}
        self.window_open = False     # the sender's ready line started the CPU window
        self.window_closed = False   # its result line ended it
        self.backend_dead = None
        self.guest_exiting = False   # a guest printed its exit line: QEMU and what hangs on it end
        self.orch = None
        self.t0 = None
        self._plan = self._plan_why = None   # --placement's, made once checked
        self.placed = {}             # thread: the CPU it was given
        self.unplaced = {}           # planned thread: why it was not placed

    @property
    def plan(self):
        """--placement's plan (placement.Plan), made on first use."""
        if self._plan is None:
            self._plan, self._plan_why = placeapply.plan_for(self.opts)
        return self._plan

    @property
    def plan_why(self):
        """Why the run has no plan, or None."""
        return self._plan_why if self.plan is not None else None

    @property
    def sender(self):
        """The guest whose result is the run's (the last one)."""
        return self.guests[-1]

    def check(self):
        """Everything that can be refused before anything starts but what
        works (support.check), which run_one's callers ask before the
        run's modules load (tools/vnperf's run_report) or before their
        first run (sweep, ndr, conform)."""
        opts = self.opts
        self.engine.check(opts)
        # A remote engine's guests live on its host.
        too_big = self.engine.local_files and qemucmd.check_memory(opts.memory)
        if too_big:
            raise usage(too_big)
        scratch.root()  # a full or unusable TMPDIR, before anything starts
        self.be = backends.make(opts.backend, opts)
        self.be.check()
        self.be.place(self.plan)
        self.roles = guest_roles(opts)
        labels = [label for label, _ in self.roles]
        check_pin_labels(opts.pin, labels)
        if opts.nice:
            if not isinstance(self.engine, engine.QemuEngine):
                raise usage("--nice: --engine qemu only (libvirtd starts the guests)")
            priority.check_labels(opts.nice, labels)
        # A remote engine's image is a path on its host.
        artifacts.check(opts, [self.be], local=self.engine.local_files)

    def start_backend(self):
        self.accel = self.resolver.resolve(self.session, lambda line: log(self.opts, line))
        self._say(["placement: no plan: " + self.plan_why] if self.plan_why
                  else self.plan.lines())
        self.placed.update(self.be.placed())
        self.be.start(self.session, nguests=len(self.roles))
        scratch.clean_stale()

    def make_guests(self):
        opts, be = self.opts, self.be
        tmp = scratch.mkdtemp(self.session, "run")
        replay = pcap.qemu_args(opts, tmp) if opts.pcap is not None else []
        last = len(self.roles) - 1
        for i, (label, words) in enumerate(self.roles):
            words = list(words) + placeapply.guest_words(self.plan)
            cfg = qemucmd.merge_config(be.guest_config(i), words, opts.config)
            # The stream file is the sender's (the last guest's).
            files = ((streamfile.FWCFG_NAME, opts.stream_text),) \
                if opts.stream_text and i == last else ()
            spec = qemucmd.GuestSpec(opts.image, machine=opts.machine, memory_mb=opts.memory,
                                     accel=self.accel.accel, config=cfg, nics=be.nics(i),
                                     qmp_path=os.path.join(tmp, "qmp%d.sock" % i),
                                     shared_mem=be.needs_shared_mem, name="vnperf-" + label,
                                     boot=opts.boot, esp=opts.esp, smp=opts.vcpus or 1,
                                     files=files,
                                     extra=be.qemu_extra(i) + list(opts.qemu_args)
                                     + (replay if i == len(self.roles) - 1 else []))
            self.guests.append(self.engine.guest(spec, label))
        for note in be.notes():
            log(opts, note)
        # The sender's own NIC is watched too: the backend's host senders
        # start once it is up (on_guest_ready).
        self.orch = orchestrate.Orchestrator([(self.sender, self.guests[:-1])], self._start_guest,
                                             up=self._net_ready, give_up=self._give_up,
                                             watch=[self.sender])

    def stream(self):
        """Boots the guests and streams their consoles until they end, the
        timeout, or the backend dies."""
        self.t0 = time.monotonic()
        echo = Echo(self.opts, len(self.guests) > 1, self.be.live)

        def on_line(g, line):
            echo(g, line)
            self._on_line(g, line)

        # Receivers boot first; the sender once they can take frames.
        self.orch.begin()
        self._adopt_backend_processes()
        self.pump = guest.Pump(on_line, self._on_tick, tick_s=0.1)
        for g in self.guests:
            if g.proc is not None:
                self.pump.add(g)
        why = "done"
        try:
            why = self.pump.run(self.t0 + self.opts.timeout,
                                until=lambda: self.backend_dead is not None)
        finally:
            self.pump.finish(stopped=why == "until")
        self.orch.finish()
        for g in self.guests:
            if g.proc is None:
                # Never started: its receivers did not come up in time.
                g.timed_out = True
        if not self.window_closed:
            self.meter.stop(time.monotonic())

    def stop_backend(self):
        """(host-side counts, one line if the backend failed)."""
        dead = self.backend_dead
        try:
            self.be.finish()
        except RunnerError as e:
            dead = dead or e.line
        host = self.be.collect()
        return host, dead or self.be.healthy()

    def report(self, host, dead):
        """The run's result.RunResult, assembled from its typed parts: the
        guests, both sides' counts, the CPU, the queue pairs and streams,
        the metrics; then the topology's part, the verdict and the
        status."""
        guests = tuple(outcome.guest_report(g) for g in self.guests)
        sent = guests[-1].result
        app = (guests[-1].ready or {}).get("app") or _app_of(self.roles[-1][1])
        res = result.RunResult.of(
            time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            engine=self.engine.describe(), machine=self.opts.machine, boot=self.opts.boot,
            accel=self.accel.accel, accel_why=self.accel.why, backend=self.opts.backend,
            app=app, config=tuple(self.sender.spec.config), guests=guests, host=host,
            counts=outcome.merged_counts(self.opts.backend, app, guests, host,
                                         self.be.lossless),
            queues=outcome.queue_pairs(sent, host),
            streams=outcome.stream_rows(sent, host, [g.result for g in guests[:-1]],
                                        self.opts.stream_names),
            cpu=self.meter.result(), qmp=self.qmp_info, topology=self.opts.topology,
            nice=dict(self.niced), identity=run_identity(self.opts, self.accel.accel),
            placement=self._placement_report(), wall_s=time.monotonic() - self.t0)
        res = dataclasses.replace(res, metrics=outcome.metrics(res))
        res = topologies.topology_for(self.opts).finish_report(res)
        status, why = outcome.overall_status(res, dead)
        return dataclasses.replace(res, verdict=verdict.bottleneck(res), status=status, why=why,
                                   status_name=exitcodes.status_name(status))

    def _say(self, lines):
        """Lines where the console echo goes (not with --quiet; stderr
        with --json or --csv), so a failure's stderr stays one line."""
        if self.opts.quiet:
            return
        out = sys.stderr if self.opts.json or self.opts.csv else sys.stdout
        for line in lines:
            print(line, file=out, flush=True)

    def _placement_report(self):
        """The plan, what was placed and what not (result JSON)."""
        plan = self.plan.as_dict()
        plan.update(placed=dict(self.placed), not_placed=dict(self.unplaced),
                    why_none=self.plan_why)
        return plan

    def _start_guest(self, g):
        g.start(self.session, netns=self.be.netns)
        if g.pid is not None:
            self.meter.add_qemu(g.label, g.pid)
            self._nice(g.label, g.pid)
        self.qmp_info.update(_qmp_setup(self.opts, [g], self.meter, self.session))
        tids = self.qmp_info[g.label].get("vcpu_threads")
        if self.plan.places and g.pid is not None:
            if tids is None:
                self.unplaced["vcpus"] = "no vCPU thread ids from QMP"
            done, missed = placeapply.apply_qemu(self.plan, g.pid, tids or {})
            self.placed.update(done)
            self.unplaced.update(missed)
        if self.pump is not None:
            self.pump.add(g)

    def _nice(self, who, pid):
        """--nice for guest label or the backend: a run without the
        priority asked for is not run (negative values need root)."""
        n = (self.opts.nice or {}).get(who)
        if n is None:
            return
        try:
            self.niced[who] = priority.apply(pid, n)
        except ProcessLookupError:
            return  # gone already: nothing to prioritize
        except OSError as e:
            raise failed("--nice %s=%d: %s (a negative value needs root)" % (who, n, e.strerror))

    def _adopt_backend_processes(self):
        """Backend processes (also senders started later) join the CPU
        accounting and get --pin backend=."""
        for role, pid in self.be.processes():
            if pid in self.adopted:
                continue
            self.adopted.add(pid)
            self.meter.add_process(role, pid)
            self._nice(priority.BACKEND, pid)
            if self.opts.pin:
                try:
                    pinning.apply_process(self.opts.pin, pid)
                except OSError:
                    pass  # gone already: nothing to pin
            self._place_process(role, pid)

    def _place_process(self, role, pid):
        """A host process on its planned CPU (testpmd: by its --lcores)."""
        if not self.plan.places or role == "testpmd":
            return
        name = placeapply.peer_name(self.plan, role, self.placed)
        if name is None:
            self.unplaced[role] = "not in the plan: left to the scheduler"
            return
        try:
            self.placed[name] = placeapply.apply_process(self.plan, name, pid)
        except OSError:
            pass  # gone already: nothing to place

    def _net_ready(self, g):
        """Guest g can take frames: the backend's host senders go (the
        orchestrator then starts the sender VM)."""
        self.be.on_guest_ready(self.guests.index(g))
        self._adopt_backend_processes()
        if self.plan.places and g.pid is not None:
            done, missed = placeapply.apply_vhost(self.plan, g.pid)
            self.placed.update(done)
            self.unplaced.update(missed)

    def _give_up(self, g, why):
        """The sender will not start: its report says why."""
        g.wait_why = why

    def _on_line(self, g, line):
        if line.msg is None:
            return
        self.orch.line(g, line.msg)
        i = self.guests.index(g)
        t = line.msg["type"]
        if t == "ready":
            # The measurement window: the main (sending) guest's app run.
            if g is self.sender and not self.window_open:
                self.window_open = True
                self.meter.start(time.monotonic())
        elif t == "exit":
            self.guest_exiting = True
        elif t == "result":
            self.be.tick()
            self.be.on_guest_done(i)
            if g is self.sender and not self.window_closed:
                self.window_closed = True
                self.meter.stop(time.monotonic())

    def _on_tick(self, elapsed):
        self.meter.tick()
        self.be.tick()
        self.orch.tick()
        if self.backend_dead is None:
            self.backend_dead = self.be.healthy()
        # Every host process the backend started, whatever the backend
        # checks itself: one that ends early fails the run (passt dying
        # read as "ok", the guest's TX ring full 100%).
        if self.backend_dead is None and not self.guest_exiting:
            self.backend_dead = self.session.died()


def run_identity(opts, accel):
    """What defines a run of these options (identity.py): the placement's
    plan ("none" without one) and the notify= it chose too."""
    plan, _ = placeapply.plan_for(opts)
    ident = identity.of_run(opts, identity.main_words(opts) + placeapply.guest_words(plan),
                            accel, testpmd.plan(opts)[0] if opts.backend == "vhost-user" else None)
    # The mode: with the host's CPUs (host_cpus) it makes the plan.
    ident["placement"] = plan.mode
    return ident


def run_one(session, opts, resolver, eng=None):
    """Runs one test of options support.check has passed; eng: the engine
    (engine.py; default QEMU). Returns its result.RunResult; raises
    RunnerError."""
    run = Run(session, opts, resolver, eng)
    run.check()
    run.start_backend()
    run.make_guests()
    run.stream()
    return run.report(*run.stop_backend())


def _app_of(words):
    for w in words:
        if w.startswith("app="):
            return w[4:]
    return None


def _qmp_setup(opts, guests, meter, session):
    """vCPU thread ids from QMP (for CPU roles and --pin); the connection
    stays open (g.qmp) to watch the NIC come up."""
    info = {}
    for g in guests:
        try:
            tids = orchestrate.open_vcpus(g, session)
        except (QmpError, OSError, ValueError) as e:
            info[g.label] = {"error": str(e)}
            continue
        if g.pid is not None:
            meter.set_vcpus(g.pid, tids.values())
        info[g.label] = {"vcpu_threads": tids}
        pin = opts.pin
        if pin:
            info[g.label]["pinned"] = g.pin(pin, tids)
    return info
