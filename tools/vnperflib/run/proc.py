"""Child processes and teardown that happen on every exit path.

Every child runs in its own session (process group) and gets SIGKILL from
the kernel if the runner dies (PR_SET_PDEATHSIG), so even a runner killed
with SIGKILL leaves no QEMU behind. Session.close() undoes everything in
reverse order with SIGINT/SIGTERM blocked, so a second Ctrl-C cannot cut
the teardown short."""

import ctypes
import json
import os
import signal
import subprocess
import time

PR_SET_PDEATHSIG = 1
_libc = None


def _child_setup():
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The parent may already be gone before prctl took effect.
        if os.getppid() == 1:
            os._exit(1)


def _load_libc():
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = None


class Interrupted(Exception):
    """SIGINT/SIGTERM/SIGHUP arrived; carries the runner status to return."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.status = 128 + signum


def kill_group(p, grace=1.0):
    """SIGTERM to the child's process group, SIGKILL after grace seconds."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    # The leader may be gone while others in its group live on.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        pass


class Session:
    """Context manager: signal handlers, children, undo stack."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    # spawn(watch=...): what ending early means for a child.
    DAEMON = "daemon"  # runs until the backend stops it: any end is a death
    TASK = "task"      # may finish on its own: only a failure or a signal is

    def __init__(self):
        self.children = []
        self._undo = []
        self._old = {}
        self.errors = []
        self._closing = False
        self.late = []  # signals that arrived during teardown

    def __enter__(self):
        _load_libc()
        for s in self.SIGNALS:
            self._old[s] = signal.signal(s, self._on_signal)
        return self

    def _on_signal(self, signum, frame):
        if self._closing:
            # Teardown runs to its end whatever arrives (a second Ctrl-C);
            # the signal is reported after it.
            self.late.append(signum)
            return
        raise Interrupted(signum)

    def spawn(self, argv, name=None, watch=None, **kw):
        """Starts argv in its own session and registers it for teardown.
        watch (DAEMON or TASK): died() reports it ending early."""
        kw.setdefault("stdin", subprocess.DEVNULL)
        p = subprocess.Popen(argv, start_new_session=True, preexec_fn=_child_setup, **kw)
        p.vn_name = name or os.path.basename(argv[0])
        p.vn_watch = watch
        self.children.append(p)
        return p

    def died(self):
        """None, or one line for the first watched child that ended early:
        a DAEMON that ended at all, a TASK that failed or was killed."""
        for p in self.children:
            rc = p.poll() if p.vn_watch else None
            if rc is None or (p.vn_watch == self.TASK and rc == 0):
                continue
            how = "signal %d" % -rc if rc < 0 else "status %d" % rc
            return "%s (pid %d) ended during the run (%s)" % (p.vn_name, p.pid, how)
        return None

    def stop(self, p, grace=1.0):
        kill_group(p, grace)
        if p in self.children:
            self.children.remove(p)

    def on_close(self, fn, *args, what=None):
        """Registers an undo action (run in reverse order at close)."""
        self._undo.append((fn, args, what or getattr(fn, "__name__", "cleanup")))

    def close(self):
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, self.SIGNALS)
        try:
            for p in reversed(self.children):
                kill_group(p)
            self.children.clear()
            while self._undo:
                fn, args, what = self._undo.pop()
                try:
                    fn(*args)
                except Exception as e:  # teardown goes on; the error is reported
                    self.errors.append("%s: %s" % (what, e))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)

    def __exit__(self, exc_type, exc, tb):
        self._closing = True
        self.close()
        stop = exc if isinstance(exc, Interrupted) else None
        if stop is None and self.late:
            stop = Interrupted(self.late[0])
        for s, h in self._old.items():
            # Ending on a signal: more of them (a storm) must not cut the
            # one closing line short or turn it into a traceback.
            signal.signal(s, signal.SIG_IGN if stop else h)
        if stop is not None and stop is not exc:
            raise stop from None
        return False


def run_quiet(argv, timeout=10):
    """Runs a short helper command; returns (rc, combined output)."""
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except FileNotFoundError:
        return 127, "%s: not found" % argv[0]
    except subprocess.TimeoutExpired:
        return 124, "%s: timed out after %ss" % (argv[0], timeout)
    return r.returncode, r.stdout.decode("utf-8", "replace")


def stop_for_result(session, p, out, accept):
    """Stops p with SIGTERM (our host tools print their result line on it),
    waits up to 5 s before the session kills it, and returns the last JSON
    object written to the file out that accept() takes, or None."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            session.stop(p)
    found = results(out, accept)
    return found[-1] if found else None


def results(out, accept):
    """Every JSON object written to the file out that accept() takes, in
    order."""
    out.seek(0)
    found = []
    for line in out.read().decode("utf-8", "replace").splitlines():
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # not a result line: nested too deep
            continue
        if isinstance(obj, dict) and accept(obj):
            found.append(obj)
    return found


def monotonic():
    return time.monotonic()
