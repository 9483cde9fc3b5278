"""Receivers first, each sender once the NIC of every receiver it waits
for is up: the one orchestrator of `vnperf run` (runner.py), `vnperf
fleet` (fleet.py) and the Linux-guest baseline (bench/linuxguest.py).

A receiver's NIC is up when its app says so (a net line or the net_ready
mark), when QMP shows its driver's DRIVER_OK after its ready line, or
NET_GRACE_S after its ready line when QMP cannot say. A receiver that
fails to start, or ends before its NIC is up, leaves its senders
unstarted, each with one line why (give_up)."""

import time

from .qmp import QmpError

# Seconds after a receiver's ready line when senders start anyway if QMP
# cannot say whether its NIC is up.
NET_GRACE_S = 5.0


def nic_up(g):
    """True once guest g's first NIC has DRIVER_OK; None without QMP."""
    q = getattr(g, "qmp", None)
    if q is None or not g.has_nic:
        return None if q is None else True
    try:
        path = getattr(g, "nic_path", None)
        if path is None:
            # virtio-mmio: the device itself; PCI: the proxy's virtio-backend child.
            paths = [d["path"] for d in q.command("x-query-virtio")
                     if d["path"].startswith(g.NIC_QOM)]
            if not paths:
                return False
            path = g.nic_path = paths[0]
        return q.driver_ok(path)
    except (QmpError, OSError, ValueError, KeyError):
        g.qmp = None
        return None


def open_vcpus(g, session):
    """{cpu index: host thread id} of guest g's vCPUs (QMP's
    query-cpus-fast); the monitor stays open as g.qmp, for nic_up, until
    the session closes. Raises QmpError, OSError or ValueError."""
    q = g.open_monitor(alive=lambda: g.proc.poll() is None)
    try:
        tids = q.vcpu_threads()
    except (QmpError, OSError, ValueError):
        q.close()
        raise
    g.qmp = q
    session.on_close(q.close, what="close QMP")
    return tids


def ended(g):
    """Whether guest g's QEMU (or domain) has ended."""
    proc = g.proc
    return proc is not None and proc.poll() is not None


class Orchestrator:
    """pairs: [(sender, [receivers])]; a receiver is a guest (label, proc,
    and what nic_up reads), a sender a guest or the host end. start(x)
    starts a receiver or sender; up(g) runs once per watched guest when
    its NIC is up (receivers, and senders given in watch); give_up(x, why)
    when sender x will not start. The caller feeds console messages
    (line) and ticks (tick)."""

    def __init__(self, pairs, start, up=None, give_up=None, watch=(), grace_s=NET_GRACE_S,
                 clock=time.monotonic, nic=nic_up):
        self.pairs = [(s, list(rs)) for s, rs in pairs]
        self.start = start
        self.on_up = up
        self.on_give_up = give_up
        self.grace_s = grace_s
        self.clock = clock
        self.nic = nic
        self.watched = []
        for g in [r for _, rs in self.pairs for r in rs] + list(watch):
            if not any(g is w for w in self.watched):
                self.watched.append(g)
        self.ready_at = {}      # id(guest): its ready line's time
        self.up = set()         # id(guest) whose NIC is up
        self.failed = {}        # id(receiver): why it never came up
        self.started = set()    # id(x) started by begin or a release
        self.gave_up = {}       # id(sender): why it was not started

    def receivers(self):
        """The first wave: every receiver, and senders that wait for none."""
        out = []
        for s, rs in self.pairs:
            for x in rs if rs else [s]:
                if not any(x is o for o in out):
                    out.append(x)
        return out

    def begin(self):
        """Starts the first wave (receivers first)."""
        for x in self.receivers():
            self._start(x)

    def line(self, g, msg):
        """A console message of guest g (protocol.py's msg dict)."""
        t = msg["type"]
        if t == "ready":
            self.ready_at.setdefault(id(g), self.clock())
        elif t == "net" or (t == "mark" and msg.get("name") == "net_ready"):
            self.net_up(g)

    def net_up(self, g):
        """Guest g can take frames: up(g), and the senders that waited for
        it (and for nothing else) start."""
        if id(g) in self.up or not self._watched(g):
            return
        self.up.add(id(g))
        if self.on_up is not None:
            self.on_up(g)
        self._release()

    def fail(self, g, why):
        """Receiver g will not come up; why starts with its label ("rx-0
        did not start: ..."): its senders are given up."""
        self.failed.setdefault(id(g), why)
        self._release()

    def tick(self):
        """Polls the NICs of receivers that are ready (QMP, or the grace
        period) and notices receivers that ended before their NIC was up."""
        now = self.clock()
        for g in self.watched:
            if id(g) in self.up or id(g) in self.failed:
                continue
            t = self.ready_at.get(id(g))
            if t is not None and (self.nic(g) or now - t >= self.grace_s):
                self.net_up(g)
            elif ended(g) and self._waited_for(g):
                self.fail(g, "%s ended before its NIC was up" % g.label)

    def finish(self):
        """The guests are done: receivers that ended before their NIC was up
        (between two ticks) give their senders up too."""
        for g in self.watched:
            if id(g) not in self.up and id(g) not in self.failed and ended(g) \
                    and self._waited_for(g):
                self.fail(g, "%s ended before its NIC was up" % g.label)

    def _watched(self, g):
        return any(g is w for w in self.watched)

    def _waited_for(self, g):
        return any(any(g is r for r in rs) for _, rs in self.pairs)

    def _start(self, x):
        if id(x) not in self.started:
            self.started.add(id(x))
            self.start(x)

    def _release(self):
        for s, rs in self.pairs:
            if id(s) in self.started or id(s) in self.gave_up or not rs:
                continue
            bad = next((r for r in rs if id(r) in self.failed), None)
            if bad is not None:
                why = self.gave_up[id(s)] = "its receiver " + self.failed[id(bad)]
                if self.on_give_up is not None:
                    self.on_give_up(s, why)
            elif all(id(r) in self.up for r in rs):
                self._start(s)
