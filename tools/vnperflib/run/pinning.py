"""--pin vcpu=0,main=1,backend=1: thread affinity by role; a QEMU role
can name one guest (vcpu@fwd1=0): that guest's threads only."""

import os
import re

from ..optypes import digits

ROLES = ("vcpu", "main", "qemu", "backend")
# The roles of one guest's QEMU (role@label).
GUEST_ROLES = ("vcpu", "main", "qemu")
LABEL_RE = re.compile(r"^[a-z][a-z0-9]*$")


def _role(part, role):
    """Checks role or role@label; returns it."""
    base, at, label = role.partition("@")
    if base not in ROLES or (at and (base not in GUEST_ROLES or not LABEL_RE.match(label))):
        raise ValueError("--pin %r: expected role=cpus with role one of %s, or %s@GUEST "
                         "for one guest's threads (e.g. vcpu@fwd1=0)"
                         % (part, ", ".join(ROLES), "|".join(GUEST_ROLES)))
    return role


def parse(spec):
    """"vcpu=0,main=1" -> {"vcpu": {0}, "main": {1}}; cpus may be lists
    "0-1" or "0+2"; "vcpu@fwd1=0" -> {"vcpu@fwd1": {0}}. Raises ValueError
    with a clear message."""
    out = {}
    ncpu = os.cpu_count() or 1
    for part in spec.split(","):
        role, eq, cpus = part.partition("=")
        if not eq:
            raise ValueError("--pin %r: expected role=cpus" % part)
        _role(part, role)
        s = set()
        for c in cpus.split("+"):
            a, dash, b = c.partition("-")
            if not digits(a) or (dash and not digits(b)):
                raise ValueError("--pin %s: %r is not a CPU number or range" % (role, c))
            lo, hi = int(a), int(b) if dash else int(a)
            if lo > hi or hi >= ncpu:
                raise ValueError("--pin %s: CPU %s outside 0-%d" % (role, c, ncpu - 1))
            s.update(range(lo, hi + 1))
        out[role] = s
    return out


def labels(pins):
    """The guest labels that per-guest roles name."""
    return sorted({r.partition("@")[2] for r in pins or () if "@" in r})


def for_guest(pins, label):
    """The roles that apply to guest label's QEMU: role@label over role;
    other guests' roles dropped."""
    out = {r: c for r, c in (pins or {}).items() if "@" not in r}
    for r, c in (pins or {}).items():
        base, _, who = r.partition("@")
        if who == label:
            out[base] = c
    return out


def _set(tid, cpus):
    os.sched_setaffinity(tid, cpus)
    return sorted(cpus)


def apply(pins, qemu_pid, vcpu_tids):
    """Pins QEMU's threads: "qemu" first for all threads, then "main" and
    "vcpu" for theirs. Returns {role: [cpus]} applied."""
    done = {}
    tids = [int(t) for t in os.listdir("/proc/%d/task" % qemu_pid)]
    if "qemu" in pins:
        for t in tids:
            _set(t, pins["qemu"])
        done["qemu"] = sorted(pins["qemu"])
    if "main" in pins:
        done["main"] = _set(qemu_pid, pins["main"])
    if "vcpu" in pins:
        for t in vcpu_tids.values():
            _set(t, pins["vcpu"])
        done["vcpu"] = sorted(pins["vcpu"])
    return done


def apply_process(pins, pid):
    """Pins a backend process (all its threads) to the "backend" CPUs."""
    if "backend" not in pins:
        return None
    for t in os.listdir("/proc/%d/task" % pid):
        _set(int(t), pins["backend"])
    return sorted(pins["backend"])


def describe(pins):
    """The canonical text of a parsed --pin ("main=1,vcpu=0+1"); "" for none."""
    return ",".join("%s=%s" % (role, "+".join(str(c) for c in sorted(cpus)))
                    for role, cpus in sorted((pins or {}).items()))
