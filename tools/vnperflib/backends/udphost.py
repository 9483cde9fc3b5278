"""The host's UDP count of gen's datagrams in a backend's namespace (the
guest's uso=: the segments the device cut, as the host's stack delivers
them; app reneg's too, each set's on a stream of its own): starts
tools/vnperflib/run/udpcount.py there, bound before the guest boots, and
reads its result line at the end (docs/runner-run.md)."""

import os
import sys
import time

from ..errors import failed
from ..run import proc, scratch

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run",
                      "udpcount.py")
READY_S = 5.0


def wanted(opts):
    """Whether the run asks for it: gen with a uso= word (uso=0 too, the
    baseline of an A/B)."""
    return opts.app == "gen" and any(w.startswith("uso=") for w in opts.config)


def reneg_uso(opts):
    """Whether app reneg sends USO datagrams (a uso= word other than 0):
    the host's stack gets each set's segments, a stream each (docs/apps.md,
    reneg), counted here beside the host peer that reflects its frames."""
    words = [w.partition("=")[2] for w in opts.config if w.startswith("uso=")]
    return opts.app == "reneg" and bool(words) and words[-1].strip("0") != ""


def dst_port(opts):
    """gen's (and reneg's) destination port: the config's dst_port=, else
    its default."""
    port = "9000"
    for w in opts.config:
        k, _, v = w.partition("=")
        if k == "dst_port":
            port = v
    return port


class UdpCount:
    label = "udpcount"

    def __init__(self, session, ns, host, port, echo=False):
        """ns None: the host's own namespace; echo: each datagram sent back
        (udpcount.py --echo)."""
        self.session = session
        self.tmp = scratch.mkdtemp(session, "udpcount")
        self.ready = os.path.join(self.tmp, "ready")
        self.out = open(os.path.join(self.tmp, "out"), "w+b")
        self.err = open(os.path.join(self.tmp, "err"), "w+b")
        session.on_close(self.out.close, what="close udpcount output")
        session.on_close(self.err.close, what="close udpcount errors")
        self.argv = (["ip", "netns", "exec", ns] if ns else []) + [
            sys.executable, SCRIPT, "--bind", "%s:%s" % (host, port), "--ready-file",
            self.ready] + (["--echo"] if echo else [])
        self.proc = None
        self.result = None

    def _err_line(self):
        self.err.seek(0)
        lines = self.err.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else "no error output"

    def start(self):
        self.proc = self.session.spawn(self.argv, name=self.label, stdout=self.out,
                                       stderr=self.err, watch=self.session.TASK)
        deadline = time.monotonic() + READY_S
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None:
                raise failed("udpcount exited at start (status %d): %s"
                             % (self.proc.returncode, self._err_line()))
            if time.monotonic() >= deadline:
                raise failed("udpcount did not bind within %.0f s" % READY_S)
            time.sleep(0.01)

    def dead(self):
        if self.proc is not None and self.proc.poll() not in (None, 0):
            return "udpcount died (status %d): %s" % (self.proc.returncode, self._err_line())
        return None

    def finish(self, linger_s=0.5):
        """Segments still in the host's queues get linger_s; then SIGTERM
        and its result line."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            time.sleep(linger_s)
        self.result = proc.stop_for_result(self.session, self.proc, self.out,
                                           lambda o: o.get("mode") == "udpcount")
        if self.result is None:
            raise failed("udpcount printed no result (status %s): %s"
                         % (self.proc.returncode, self._err_line()))
        return self.result
