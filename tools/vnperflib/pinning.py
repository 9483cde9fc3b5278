"""--pin vcpu=0,main=1,backend=1: thread affinity by role."""

import os

ROLES = ("vcpu", "main", "qemu", "backend")


def parse(spec):
    """"vcpu=0,main=1" -> {"vcpu": {0}, "main": {1}}; cpus may be lists
    "0-1" or "0+2". Raises ValueError with a clear message."""
    out = {}
    ncpu = os.cpu_count() or 1
    for part in spec.split(","):
        role, eq, cpus = part.partition("=")
        if not eq or role not in ROLES:
            raise ValueError("--pin %r: expected role=cpus with role one of %s"
                             % (part, ", ".join(ROLES)))
        s = set()
        for c in cpus.split("+"):
            a, dash, b = c.partition("-")
            if not a.isdigit() or (dash and not b.isdigit()):
                raise ValueError("--pin %s: %r is not a CPU number or range" % (role, c))
            lo, hi = int(a), int(b) if dash else int(a)
            if lo > hi or hi >= ncpu:
                raise ValueError("--pin %s: CPU %s outside 0-%d" % (role, c, ncpu - 1))
            s.update(range(lo, hi + 1))
        out[role] = s
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
