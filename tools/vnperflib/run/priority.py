"""--nice fwd1=-10,backend=-5: CPU priority of one guest's QEMU or of the
backend processes, over other work on a shared host. The runner starts
every process in its own session (proc.spawn), and with the kernel's
autogroup on (/proc/sys/kernel/sched_autogroup_enabled) CFS shares the CPUs
between sessions first: a thread's nice ranks it only inside its own
session. So a value goes to both the process's autogroup
(/proc/PID/autogroup, sched(7)) and every one of its threads."""

import os
import re

from ..errors import usage

BACKEND = "backend"
LABEL_RE = re.compile(r"^[a-z][a-z0-9]*$")
AUTOGROUP = "/proc/sys/kernel/sched_autogroup_enabled"
NICE_MIN, NICE_MAX = -20, 19


def parse(spec):
    """"fwd1=-10,backend=-5" -> {"fwd1": -10, "backend": -5}: a guest
    label or backend, each a nice value -20..19. Raises ValueError."""
    out = {}
    for part in spec.split(","):
        who, eq, val = part.partition("=")
        if not eq or not LABEL_RE.match(who):
            raise ValueError("--nice %r: expected GUEST=N or backend=N (e.g. fwd1=-10)" % part)
        try:
            n = int(val)
        except ValueError:
            n = NICE_MAX + 1
        if not NICE_MIN <= n <= NICE_MAX:
            raise ValueError("--nice %s: %r is not a nice value %d..%d" % (who, val, NICE_MIN,
                                                                          NICE_MAX))
        if who in out:
            raise ValueError("--nice %s: given twice" % who)
        out[who] = n
    return out


def check_labels(nice, labels):
    """Refuses a guest this run does not have."""
    for who in sorted(nice or ()):
        if who != BACKEND and who not in labels:
            raise usage("--nice: no guest %s in this run (its guests: %s)"
                        % (who, ", ".join(labels)))


def autogroup_on():
    try:
        with open(AUTOGROUP) as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def apply(pid, n):
    """Gives process pid (a session leader: proc.spawn) nice n: its
    autogroup when the kernel has them, and each thread. Returns n."""
    if autogroup_on():
        with open("/proc/%d/autogroup" % pid, "w") as f:
            f.write("%d" % n)
    for t in os.listdir("/proc/%d/task" % pid):
        os.setpriority(os.PRIO_PROCESS, int(t), n)
    return n


def describe(nice):
    """The canonical text ("backend=-5,fwd1=-10"); "" for none."""
    return ",".join("%s=%d" % (k, v) for k, v in sorted((nice or {}).items()))
