"""Temporary files of one runner: named vnperf-PID-... so what a SIGKILLed
runner could not remove is recognised (its PID is gone) and removed by the
next one."""

import os
import re
import shutil
import tempfile

_STALE = re.compile(r"^vnperf-(\d+)-")
DPDK_RUN = "/var/run/dpdk"


def prefix(what):
    return "vnperf-%d-%s-" % (os.getpid(), what)


def mkdtemp(session, what):
    """A private directory, removed when the session closes."""
    d = tempfile.mkdtemp(prefix=prefix(what))
    session.on_close(shutil.rmtree, d, True, what="remove " + d)
    return d


def path(session, what, suffix):
    """A path in the temp directory (for sockets that a process running as
    another user creates), removed when the session closes."""
    p = os.path.join(tempfile.gettempdir(), prefix(what) + suffix)
    session.on_close(_unlink, p, what="remove " + p)
    return p


def _unlink(p):
    if os.path.lexists(p):
        os.unlink(p)


def clean_stale():
    """Removes vnperf-PID-* entries of dead runners from the temp directory
    and DPDK's runtime directory. Returns what was removed."""
    removed = []
    for base in (tempfile.gettempdir(), DPDK_RUN):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            m = _STALE.match(name)
            if not m or os.path.exists("/proc/%s" % m.group(1)):
                continue
            p = os.path.join(base, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, True)
            else:
                _unlink(p)
            removed.append(p)
    return removed
