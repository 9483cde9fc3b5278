"""Runs guests under QEMU: streams their consoles, enforces the timeout and
maps QEMU's exit status back to the guest's exit code."""

import os
import selectors
import subprocess
import tempfile
import time

from .. import exitcodes
from . import pinning, protocol, qemucmd
from .qmp import Qmp


class Guest:
    """One QEMU process and what it printed."""

    # QOM path prefix of the first NIC (x-query-virtio): -device ...,id=nic0.
    NIC_QOM = "/machine/peripheral/nic0"

    def __init__(self, spec, qemu=qemucmd.DEFAULT_QEMU, label=None):
        self.spec = spec
        self.argv = qemucmd.build(spec, qemu)
        self.label = label or spec.name
        self.console = protocol.Console()
        self.proc = None
        self.qemu_status = None
        self.guest_code = None
        self.timed_out = False
        self.stopped = False
        self.t_start = None
        self.t_end = None
        self.t_ready = None
        self.wait_why = None   # never started: why (orchestrate.py)
        self._stderr = None

    def start(self, session, netns=None):
        self._stderr = tempfile.TemporaryFile()
        argv = self.argv if netns is None else ["ip", "netns", "exec", netns] + self.argv
        self.t_start = time.monotonic()
        self.proc = session.spawn(argv, name="qemu:" + self.label, stdout=subprocess.PIPE,
                                  stderr=self._stderr, pass_fds=qemucmd.pass_fds(self.spec))
        os.set_blocking(self.proc.stdout.fileno(), False)

    def stop(self, session):
        """Ends it now (SIGTERM, then SIGKILL)."""
        session.stop(self.proc)

    def open_monitor(self, alive=None):
        """QMP, connected (raises QmpError or OSError)."""
        return Qmp(self.spec.qmp_path).connect(alive=alive)

    def pin(self, pins, vcpu_tids):
        """Applies --pin's QEMU roles (this guest's over all guests') to
        its threads; {role: [cpus]}."""
        return pinning.apply(pinning.for_guest(pins, self.label), self.pid, vcpu_tids)

    @property
    def has_nic(self):
        """Whether the guest has a NIC (orchestrate.nic_up watches the first)."""
        return bool(self.spec.nics)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def stderr_text(self):
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def _read(self, on_line):
        try:
            data = os.read(self.proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return True
        now = time.monotonic()
        if not data:
            lines = self.console.close(now - self.t_start)
        else:
            lines = self.console.feed(data, now - self.t_start)
        for line in lines:
            if self.t_ready is None and line.msg and line.msg["type"] == "ready":
                self.t_ready = now - self.t_start
            if on_line:
                on_line(self, line)
        return bool(data)

    def _finish(self, status):
        self.t_end = time.monotonic()
        self.qemu_status = status
        self.guest_code = exitcodes.guest_code_from_qemu_status(status)
        # Status 1 is also QEMU's own failure status (bad option, missing
        # file): without the guest's exit line it was QEMU, not code 0.
        if status == 1 and self.console.last("exit") is None:
            self.guest_code = None

    @property
    def wall_s(self):
        if self.t_start is None:
            return 0.0
        return (self.t_end or time.monotonic()) - self.t_start

    def status(self):
        """The runner status for this guest: the guest's own code, or one of
        the runner's codes when it did not get to exit."""
        if self.timed_out:
            return exitcodes.RUNNER_TIMEOUT
        if self.guest_code is None:
            return exitcodes.RUNNER_NO_GUEST_EXIT
        return self.guest_code

    def why_no_exit(self):
        """One line on why QEMU ended without a guest exit."""
        if self.proc is None:
            return never_started(self)
        if self.timed_out:
            return "%s: no guest exit within the timeout; QEMU killed" % self.label
        st = self.qemu_status
        err = self.stderr_text().strip().splitlines()
        tail = (": " + err[-1]) if err else ""
        if st is not None and st < 0:
            return "%s: QEMU killed by signal %d%s" % (self.label, -st, tail)
        return "%s: QEMU exited with status %s without a guest exit%s" % (self.label, st, tail)


def never_started(g):
    """Why guest g (a sender) never started."""
    return "%s: never started (%s)" % (g.label, g.wait_why or "the guests it waits for did "
                                       "not bring their NIC up in time")


class Pump:
    """Streams the consoles of running guests; more can be added while it
    runs (a sender that must wait for its receiver)."""

    def __init__(self, on_line=None, on_tick=None, tick_s=1.0):
        self.sel = selectors.DefaultSelector()
        self.on_line = on_line
        self.on_tick = on_tick
        self.tick_s = tick_s
        self.guests = []
        self.open = set()
        self.t0 = time.monotonic()
        self.next_tick = self.t0 + tick_s

    def add(self, g):
        self.sel.register(g.proc.stdout, selectors.EVENT_READ, g)
        self.guests.append(g)
        self.open.add(g)

    def run(self, deadline, until=None):
        """Until every guest ended ("done"), the deadline ("deadline") or
        until() says so ("until")."""
        while self.open:
            now = time.monotonic()
            if now >= deadline:
                return "deadline"
            if until is not None and until():
                return "until"
            wait = min(deadline, self.next_tick) - now
            for key, _ in self.sel.select(max(0.0, wait)):
                g = key.data
                if not g._read(self.on_line):
                    self.sel.unregister(g.proc.stdout)
                    self.open.discard(g)
            now = time.monotonic()
            if now >= self.next_tick:
                self.next_tick = now + self.tick_s
                if self.on_tick:
                    self.on_tick(now - self.t0)
        return "done"

    def finish(self, stopped=False):
        """Kills guests still running (timed out, or stopped on purpose)
        and records every exit status."""
        self.sel.close()
        for g in self.guests:
            killed = g in self.open
            if killed:
                g.timed_out = not stopped
                g.stopped = stopped
                g.proc.kill()
            try:
                status = g.proc.wait(5)
            except subprocess.TimeoutExpired:
                g.proc.kill()
                status = g.proc.wait()
            if killed:
                # Killed by us: no guest code, whatever the status says.
                g.t_end = time.monotonic()
                g.qemu_status = status
            else:
                g._finish(status)
            g.proc.stdout.close()


def pump(guests, timeout, on_line=None, on_tick=None, tick_s=1.0, stop_when=None):
    """Streams all guests until every one has exited (or stop_when() says
    so) or timeout seconds passed; timed-out guests are killed and marked.
    on_tick(elapsed) runs about every tick_s seconds."""
    p = Pump(on_line, on_tick, tick_s)
    for g in guests:
        p.add(g)
    why = "done"
    try:
        why = p.run(time.monotonic() + timeout, stop_when)
    finally:
        p.finish(stopped=why == "until")
