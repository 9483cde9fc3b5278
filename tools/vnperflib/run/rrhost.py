"""Host end of app=rr where the guest's peer is the host's own stack (tap):
vnperf-rrserver (tools/rrserver), netperf's UDP_RR/TCP_RR server. It
answers every req_size bytes with resp_size bytes, on the guest client's
proto= and dst_port=, and prints its counts as one JSON line when
stopped."""

import os
import time

from ..errors import failed
from . import proc, scratch
from .iperf import config_value
from .peer import check_counts

# Its result line's counters (tools/rrserver/rrs_main.c rrs_report).
COUNTS = ("transactions",)
MORE_COUNTS = ("port", "req_size", "resp_size", "sessions", "req_bytes", "resp_bytes",
               "short_msgs", "refused", "io_errors")
# and "udp_ports": [[client port, answers], ...] (UDP), for the counts per
# queue pair (backends/tap.py rr_queues)


def is_result(obj):
    return "transactions" in obj


def results(out):
    """Every result line in the server's output file out, checked: its
    counters u64, as it prints them."""
    found = proc.results(out, is_result)
    for r in found:
        check_counts(r, "rrserver", COUNTS, MORE_COUNTS)
    return found


def rrserver_binary():
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))  # tools/
    return os.path.join(os.path.dirname(here), "build", "tools", "vnperf-rrserver")


class HostRr:
    """The server for a guest client, inside netns (or on the host when
    None), bound to bind, on port (default: the guest's dst_port=)."""

    def __init__(self, session, netns, bind, opts, port=None):
        self.session = session
        words = list(opts.config)
        tmp = self.tmp = scratch.mkdtemp(session, "rrserver")
        self.ready_file = os.path.join(tmp, "ready")
        self.out = open(os.path.join(tmp, "out"), "w+b")
        self.err = open(os.path.join(tmp, "err"), "w+b")
        session.on_close(self.out.close, what="close rrserver output")
        session.on_close(self.err.close, what="close rrserver errors")
        self.argv = (["ip", "netns", "exec", netns] if netns else []) + [
            rrserver_binary(), "--proto", config_value(words, "proto", "udp"),
            "--bind", bind, "--port", str(port or config_value(words, "dst_port", "9000")),
            "--req", config_value(words, "req_size", "1"),
            "--resp", config_value(words, "resp_size", "1"), "--ready-file", self.ready_file]
        self.proc = None
        self.result = None
        self.finished = False

    def start(self, wait_s=5.0):
        self.proc = self.session.spawn(self.argv, name="rrserver", stdout=self.out,
                                       stderr=self.err, watch=self.session.DAEMON)
        deadline = time.monotonic() + wait_s
        while not os.path.exists(self.ready_file):
            if self.proc.poll() is not None:
                raise failed("rrserver exited at start (status %d): %s"
                             % (self.proc.returncode, self._err_line()))
            if time.monotonic() >= deadline:
                raise failed("rrserver did not listen within %.0f s" % wait_s)
            time.sleep(0.01)

    def _err_line(self):
        self.err.seek(0)
        lines = self.err.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else "no error output"

    def dead(self):
        if self.proc is not None and not self.finished and self.proc.poll() is not None:
            return "rrserver died (status %d): %s" % (self.proc.returncode, self._err_line())
        return None

    def finish(self):
        """Stops the server (SIGTERM: it prints its counts) and reads them."""
        self.finished = True
        if self.proc is None:
            return
        proc.stop_for_result(self.session, self.proc, self.out, is_result)
        found = results(self.out)
        self.result = found[-1] if found else self.result
        if self.result is None:
            line = self._err_line()
            # A full disk takes its error line too: say what writing there gives.
            full = line == "no error output" and scratch.unwritable(self.tmp)
            raise failed("rrserver printed no result (status %s): %s"
                         % (self.proc.returncode, "its output in %s could not be written: %s"
                            % (self.tmp, full) if full else line))
