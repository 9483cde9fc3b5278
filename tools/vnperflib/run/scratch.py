"""Temporary files of one runner, all in one directory of its own,
$TMPDIR/vnperf-PID-XXXXXXXX (0711: a process running as another user can
reach the socket directory made for it, but list nothing), removed when the
runner exits. What a SIGKILLed runner left is recognised by its dead PID
and removed by the next run or `vnperf doctor --clean` (docs/runner-support.md).
DPDK's runtime directory holds testpmd's vnperf-PID-dpdk prefix too."""

import atexit
import errno
import os
import re
import shutil
import tempfile

from ..errors import missing

_STALE = re.compile(r"^vnperf-(\d+)-")
DPDK_RUN = "/var/run/dpdk"
_root = None  # this runner's directory, once made


def prefix(what):
    """vnperf-PID-what-: the name of an entry outside root() (DPDK's
    runtime directory, libvirt's staging folder), for clean_stale."""
    return "vnperf-%d-%s-" % (os.getpid(), what)


def root():
    """This runner's directory, made on first use, removed at exit."""
    global _root
    if _root is None or not os.path.isdir(_root):
        _check_tmpdir()
        try:
            d = tempfile.mkdtemp(prefix="vnperf-%d-" % os.getpid())
            os.chmod(d, 0o711)
        except OSError as e:
            raise missing("temp directory %s: %s (TMPDIR)" % (tempfile.gettempdir(), why(e)))
        _root = d
        atexit.register(shutil.rmtree, d, True)
    return _root


def _check_tmpdir():
    """Python falls back to /tmp when TMPDIR cannot be written to (full,
    read-only): refused instead, naming why (the run's files would land
    where the user did not put them)."""
    want = os.environ.get("TMPDIR")
    if not want or os.path.abspath(want) == tempfile.gettempdir():
        return
    bad = unwritable(want, 1) if os.path.isdir(want) else "not a directory"
    raise missing("TMPDIR=%s cannot hold the runner's files: %s" % (want, bad or "unusable"))


def why(e):
    """An OSError as its message and errno name: "No space left on device
    (ENOSPC)"."""
    name = errno.errorcode.get(e.errno)
    return "%s (%s)" % (e.strerror, name) if name else str(e)


def mkdtemp(session, what):
    """A private directory in root(), removed when the session closes."""
    base = root()
    try:
        d = tempfile.mkdtemp(prefix=what + "-", dir=base)
    except OSError as e:
        raise missing("temp directory %s: %s (TMPDIR)" % (base, why(e)))
    session.on_close(shutil.rmtree, d, True, what="remove " + d)
    return d


def path(session, what, suffix):
    """A path for a socket that a process running as another user (passt
    as nobody) creates: in a directory of root() anyone may write to, like
    /tmp (sticky), removed when the session closes."""
    d = mkdtemp(session, what)
    os.chmod(d, 0o1777)
    return os.path.join(d, suffix)


def unwritable(d, size=4096):
    """None if a file of size bytes can be written in d, else why not (a
    full disk: "No space left on device (ENOSPC)")."""
    try:
        fd, p = tempfile.mkstemp(prefix="probe-", dir=d)
    except OSError as e:
        return why(e)
    try:
        left = size
        while left:  # a short write is a nearly full disk: the next one says why
            left -= os.write(fd, b"\0" * left)
        os.fsync(fd)
        return None
    except OSError as e:
        return why(e)
    finally:
        os.close(fd)
        os.unlink(p)


def _unlink(p):
    if os.path.lexists(p):
        os.unlink(p)


def clean_stale():
    """Removes vnperf-PID-* entries of dead runners from the temp directory
    and DPDK's runtime directory. Returns what was removed."""
    return remove_dead((tempfile.gettempdir(), DPDK_RUN), _STALE)


def remove_dead(bases, pattern):
    """Removes the entries of bases whose name matches pattern (group 1: a
    runner's PID) and whose runner is gone. Returns what was removed."""
    removed = []
    for base in bases:
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            m = pattern.match(name)
            if not m or os.path.exists("/proc/%s" % m.group(1)):
                continue
            p = os.path.join(base, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, True)
            else:
                _unlink(p)
            removed.append(p)
    return removed
