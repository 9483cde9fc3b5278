"""--placement: the runner's plan of which host CPU each measured thread
runs on (issue 25). Pure: the host's CPU list and the run's threads in,
a Plan out; placeapply.py finds the threads and sets their affinity.

Modes: auto (the default) gives every thread a CPU of its own while the
host has CPUs left; the rest share, dealt first to the vCPUs' CPUs (a
vCPU can halt and give its CPU back, a polling backend thread cannot),
never vCPU i onto backend thread i's CPU while another CPU is as free
(USERS.md experiment 5: -40% when the vhost thread shares its vCPU's
CPU), and where a vCPU shares its CPU the guest gets halting waits
(notify=hybrid) unless notify= was given. spread is auto's placement with
the guest's notify= untouched; shared puts vCPU i on backend thread i's
CPU (the two arms of experiment 5); none places nothing."""

from dataclasses import dataclass

MODES = ("auto", "none", "spread", "shared")
# What a thread is, for its plan line.
KINDS = {
    "vcpu": "guest vCPU",
    "backend": "backend thread",
    "qemu": "QEMU main loop",
    "peer": "host peer",
    "aux": "backend helper",
}
# The guest's wait that halts (docs/config.md, notify=).
HALTING = "hybrid"


@dataclass(frozen=True)
class Thread:
    name: str          # vcpu0, main, lcore1, peer, ...
    kind: str          # a KINDS key
    queue: int = None  # the queue pair a vCPU or backend thread serves
    what: str = ""     # a few words on its job, for the plan line


@dataclass(frozen=True)
class Plan:
    mode: str
    cpus: tuple        # the host CPUs the plan may use
    places: tuple      # ((Thread, cpu), ...) in the threads' order
    notify: str = None          # the notify= the plan gives the guest, or None
    notify_given: str = None    # notify= the user gave (kept)
    irq_every_vcpu: bool = True  # MSI-X reaches each vCPU (PCI); microvm's line only vCPU 0

    def cpu_of(self, name):
        for t, c in self.places:
            if t.name == name:
                return c
        return None

    def sharing(self, name):
        """The other threads on name's CPU."""
        cpu = self.cpu_of(name)
        return [t.name for t, c in self.places if c == cpu and t.name != name]

    @property
    def short(self):
        """Threads beyond the host's CPUs (0: each has its own)."""
        return max(0, len(self.places) - len(self.cpus))

    @property
    def can_halt(self):
        """Halting waits need interrupts on every vCPU that waits: PCI's
        MSI-X sends each queue's to the vCPU that owns it; virtio-mmio's one
        I/O APIC line (microvm) reaches only the first, so a guest of more
        vCPUs polls there."""
        return self.irq_every_vcpu or sum(t.kind == "vcpu" for t, _ in self.places) == 1

    @property
    def spinning_vcpus(self):
        """vCPUs that share their CPU with another thread."""
        return [t.name for t, _ in self.places if t.kind == "vcpu" and self.sharing(t.name)]

    def lines(self):
        """The plan: a head line, one line per thread, and the guest's wait."""
        if self.mode == "none":
            return ["placement none: threads left to the host's scheduler"]
        n = len(self.places)
        shared = sorted({c for t, c in self.places if self.sharing(t.name)})
        head = "placement %s: %d thread%s on %d CPU%s (%s): " % (
            self.mode, n, _s(n), len(self.cpus), _s(len(self.cpus)), cpu_list(self.cpus))
        head += "each its own CPU" if not shared else "CPU%s %s shared" % (
            _s(len(shared)), cpu_list(shared))
        if self.short:
            head += " (%d more thread%s than CPUs)" % (self.short, _s(self.short))
        out = [head]
        for t, c in self.places:
            line = "placement: %-8s CPU %d  %s" % (t.name, c, t.what or KINDS[t.kind])
            others = self.sharing(t.name)
            if others:
                line += " (shares CPU %d with %s)" % (c, ", ".join(others))
            out.append(line)
        out.append(self.notify_line())
        return [line for line in out if line]

    def notify_line(self):
        spin = self.spinning_vcpus
        if self.notify:
            return ("placement: guest notify=%s (halting waits), chosen by the plan: %s; "
                    "a polling vCPU would spin on a CPU another thread needs"
                    % (self.notify, _shares(spin)))
        if spin and self.notify_given:
            return "placement: guest notify=%s as given (the plan would choose %s: %s)" % (
                self.notify_given, HALTING, _shares(spin))
        if spin and self.mode == "auto":
            return ("placement: guest notify= unchanged (%s; virtio-mmio's interrupt reaches "
                    "only the guest's first CPU, so a guest of several vCPUs polls)"
                    % _shares(spin))
        if spin:
            return "placement: guest notify= unchanged (%s; --placement %s keeps it)" % (
                _shares(spin), self.mode)
        return ""

    def lcores(self):
        """testpmd's --lcores of the plan ("0@1,1@0": lcore i on CPU c,
        lcore0 its main lcore), or None when it places no lcore."""
        out = []
        while self.cpu_of("lcore%d" % len(out)) is not None:
            out.append("%d@%d" % (len(out), self.cpu_of("lcore%d" % len(out))))
        return ",".join(out) or None

    def describe(self):
        """Canonical text for the identity: mode and each thread's CPU
        ("auto vcpu0=1,main=0,peer=1"); "none"."""
        if self.mode == "none":
            return "none"
        return "%s %s" % (self.mode, ",".join("%s=%d" % (t.name, c) for t, c in self.places))

    def as_dict(self):
        return {"mode": self.mode, "cpus": list(self.cpus),
                "threads": [{"name": t.name, "kind": t.kind, "queue": t.queue, "cpu": c,
                             "shares_with": self.sharing(t.name)} for t, c in self.places],
                "notify": self.notify, "notify_given": self.notify_given,
                "lines": self.lines()}


def _s(n):
    return "s"[:n != 1]


def _shares(vcpus):
    return "%s share%s a CPU" % (", ".join(vcpus), "s"[:len(vcpus) == 1])


def cpu_list(cpus):
    """(0, 1, 2, 5) -> "0-2,5"."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(_span(run))
        run = [c]
    if run:
        out.append(_span(run))
    return ",".join(out)


def _span(run):
    return str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1])


def threads(vcpus, workers=(), backend_main=True, peers=(), aux=()):
    """The measured threads of one guest: vcpus vCPUs, backend threads by
    name (workers[i] serves queue pair i: testpmd's forwarding lcores,
    vhost workers, passt), QEMU's main loop (the backend's thread when
    backend_main: dgram, tap, ... do their I/O there), host peers and
    helpers by name."""
    out = [Thread("vcpu%d" % i, "vcpu", i) for i in range(vcpus)]
    out += [Thread(w, "backend", i) for i, w in enumerate(workers)]
    if backend_main:
        out.append(Thread("main", "backend", 0, "QEMU main loop: the backend's I/O"))
    else:
        out.append(Thread("main", "qemu"))
    out += [Thread(p, "peer") for p in peers]
    out += [Thread(a, "aux") for a in aux]
    return tuple(out)


def _partner(t, ts):
    """Backend thread i for vCPU i, vCPU i for backend thread i."""
    if t.queue is None or t.kind not in ("vcpu", "backend"):
        return None
    other = "backend" if t.kind == "vcpu" else "vcpu"
    for u in ts:
        if u.kind == other and u.queue == t.queue:
            return u
    return None


# The order threads get a CPU of their own in: pollers first.
_RANK = {"backend": 0, "vcpu": 1, "qemu": 2, "peer": 3, "aux": 4}


def plan(mode, cpus, ts, notify_given=None, irq_every_vcpu=True):
    """The Plan of threads ts on host CPUs cpus (a non-empty list) in mode.
    notify_given: the guest's notify= as the user gave it (None: not);
    irq_every_vcpu: whether each vCPU can take its queues' interrupts
    (False on microvm)."""
    if mode not in MODES:
        raise ValueError("placement %r: one of %s" % (mode, ", ".join(MODES)))
    cpus = tuple(sorted(set(cpus)))
    if not cpus:
        raise ValueError("placement: no host CPU to place on")
    if mode == "none":
        return Plan(mode, cpus, (), None, notify_given, irq_every_vcpu)
    load = {c: [] for c in cpus}
    where = {}
    order = sorted(ts, key=lambda t: (_RANK[t.kind], ts.index(t)))
    if mode == "shared":
        order = [t for t in order if t.kind != "vcpu" or _partner(t, ts) is None] + \
            [t for t in order if t.kind == "vcpu" and _partner(t, ts) is not None]
    for t in order:
        p = _partner(t, ts)
        if mode == "shared" and t.kind == "vcpu" and p is not None:
            c = where[p.name]
        else:
            c = _pick(t, load, where.get(p.name) if p is not None else None)
        load[c].append(t)
        where[t.name] = c
    places = tuple((t, where[t.name]) for t in ts)
    p = Plan(mode, cpus, places, None, notify_given, irq_every_vcpu)
    if mode == "auto" and notify_given is None and p.spinning_vcpus and p.can_halt:
        p = Plan(mode, cpus, places, HALTING, None, irq_every_vcpu)
    return p


def _pick(t, load, avoid):
    """The least loaded CPU; among those, not the partner's (avoid), then
    one a vCPU holds (it can halt), then the lowest."""
    def key(c):
        has_vcpu = any(u.kind == "vcpu" for u in load[c])
        return (len(load[c]), c == avoid, not has_vcpu, c)
    return min(load, key=key)
