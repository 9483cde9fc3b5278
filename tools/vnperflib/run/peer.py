"""The host-side C peer (build/tools/vnperf-peer, docs/peer.md): one UDP
datagram is one Ethernet frame, as QEMU's -netdev dgram and socket,udp= send
them. Modes: count (guest sends), send (guest receives), reflect (guest
runs request/response)."""

import ipaddress
import math
import os
import re
import signal
import time

from ..analysis import counts
from ..errors import failed
from . import proc, scratch

# Addresses on the emulated wire; the peer does not answer ARP, so the guest
# is told its MAC.
PEER_MAC = "02:00:00:00:00:01"
PEER_IP = "10.0.2.2"
GUEST_IP = "10.0.2.15"


def peer_binary(name="vnperf-peer"):
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))  # tools/
    return os.path.join(os.path.dirname(here), "build", "tools", name)


def peer_dpdk_binary():
    """The same peer over DPDK net_vhost ports (docs/peer.md)."""
    return peer_binary("vnperf-peer-dpdk")


_MULT = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
PROGRESS_RE = re.compile(r"^vnperf-peer(?:-dpdk)?: t=\d+s ")
NO_ERROR_OUTPUT = "no error output"
# Its status when the result line did not reach stdout (tools/peer/peer_run.h).
EXIT_OUTPUT = 4
# A result line's members (docs/peer.md): counters are u64, the rates
# finite and >= 0, and so is every other number in it (errors, streams,
# sizes, latency, warmup).
MODES = ("count", "send", "reflect")
U64_MAX = 2 ** 64 - 1
COUNTS = ("packets", "bytes")
# The other counters it prints, by mode (a count where there).
MORE_COUNTS = ("duration_ns", "elapsed_ns", "start_unix_ns", "first_ns", "last_ns", "batch",
               "rcvbuf", "sndbuf", "vnperf", "non_vnperf", "lost", "dup", "reorder", "stale",
               "streams_overflow", "flows_overflow", "tx_packets", "tx_bytes", "size", "rate", "behind_max",
               "skipped", "streams_sent")
ERROR_COUNTS = ("rx", "tx", "refused", "reflect_runts", "sock_drops", "ring_full")
RATES = ("pps", "bps")


def is_result(obj):
    return obj.get("type") == "peer"


def bad_number(obj):
    """The first number in obj (nested; walked without recursion, as deep
    as json read it) that is not a count 0..2^64-1 or a finite rate >= 0,
    as (path, value); None when all are."""
    stack = [("", obj)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, dict):
            stack.extend(("%s.%s" % (path, k) if path else str(k), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend(("%s[%d]" % (path, i), x) for i, x in enumerate(v))
        elif isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        elif isinstance(v, int) and not 0 <= v <= U64_MAX:
            return path, v
        elif isinstance(v, float) and not (math.isfinite(v) and v >= 0):
            return path, v
    return None


def check_counts(obj, label, counts_, more=(), rates=(), where=""):
    """Raises failed() with one line unless obj has the whole counts
    counts_, the counts more and the numbers rates where it has them, every
    other number of its own whole, and no number in it that breaks
    bad_number()."""
    for k in counts_ + tuple(k for k in more if k in obj):
        v = obj.get(k)
        if not isinstance(v, int) or isinstance(v, bool):
            raise failed("%s: result %s%s %s is not a count (docs/peer.md)"
                         % (label, where, k, _short(v)))
    for k, v in obj.items():
        if k in rates:
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise failed("%s: result %s %s is not a number" % (label, k, _short(v)))
        elif isinstance(v, float):
            raise failed("%s: result %s%s %s is not a whole count" % (
                label, where, k[:40], _short(v)))
    bad = bad_number(obj)
    if bad is not None:
        raise failed("%s: result %s%s %s is not a count or rate >= 0" % (
            label, where, bad[0][:80], _short(bad[1])))


def _short(v):
    """v for one line: at most 40 characters (a huge int by its size: its
    digits may pass Python's 4300-digit limit)."""
    if isinstance(v, int) and not isinstance(v, bool):
        text = "%d" % v if v.bit_length() <= 256 else "a %d-bit number" % v.bit_length()
    else:
        text = repr(v) if isinstance(v, (str, float)) or v is None else type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def check_result(res, label="peer"):
    """res (a result line, type peer) as docs/peer.md gives it. Raises
    failed() with one line."""
    if res.get("mode") not in MODES:
        raise failed("%s: result mode %s is not one of %s" % (
            label, _short(res.get("mode")), ", ".join(MODES)))
    errs = res.get("errors", {})
    if not isinstance(errs, dict):
        raise failed("%s: result errors %s is not an object" % (label, _short(errs)))
    check_counts(errs, label, (), ERROR_COUNTS, where="errors.")
    check_counts(res, label, COUNTS, MORE_COUNTS, RATES)
    if "flows" in res:
        check_flows(res["flows"], label)


FLOW_COUNTS = ("sport", "dport", "packets", "bytes")


def check_flows(flows, label="peer"):
    """A receiving result's flows (docs/peer.md): each an object with
    IPv4 or IPv6 src and dst, ports 0..65535 and whole counts. Raises
    failed() with one line."""
    if not isinstance(flows, list):
        raise failed("%s: result flows %s is not a list" % (label, _short(flows)))
    for i, f in enumerate(flows):
        where = "flows[%d]." % i
        if not isinstance(f, dict):
            raise failed("%s: result %s is not an object" % (label, where.rstrip(".")))
        check_counts(f, label, FLOW_COUNTS, where=where)
        for k in ("src", "dst"):
            try:
                ipaddress.ip_address(f.get(k) if isinstance(f.get(k), str) else "")
            except ValueError:
                raise failed("%s: result %s%s %s is not an IP address"
                             % (label, where, k, _short(f.get(k))))
        for k in ("sport", "dport"):
            if f[k] > 65535:
                raise failed("%s: result %s%s %s is not a port" % (label, where, k, f[k]))


def progress(lines):
    """The counters of the last progress line among lines whose every
    counter is a u64 in ASCII digits (t=Ns: N) ({} without one): a garbled
    line is passed over, it only feeds the live display."""
    for line in reversed(lines):
        if not PROGRESS_RE.match(line):
            continue
        pairs = [(k, v.rstrip("s")) for k, v in re.findall(r"(\w+)=(\S*)", line)]
        if all(re.match(r"^[0-9]{1,20}$", v) and int(v) <= U64_MAX for _, v in pairs):
            return {k: int(v) for k, v in pairs}
    return {}


def results(out, label="peer"):
    """Every result line in the peer's output file out, checked."""
    found = proc.results(out, is_result)
    for r in found:
        check_result(r, label)
    return found


def rate_pps(rate, size):
    """The runner's --rate (guest syntax, docs/config.md: 250k, 1.5mpps,
    10gbps, 100mbit, max) as frames per second for a host sender of size-byte
    frames; None for as fast as possible. Raises ValueError."""
    if rate is None or rate.strip().lower() in ("", "0", "max"):
        return None
    m = re.match(r"^(\d+(?:\.\d+)?)([kmgt]?)(pps|bps|bit|bit/s)?$", rate.strip().lower())
    if not m:
        raise ValueError("rate %r: expected <number>[k|m|g|t][pps|bps|bit], e.g. 100k, 1gbps"
                         % rate)
    n = float(m.group(1)) * _MULT[m.group(2)]
    if m.group(3) in ("bps", "bit", "bit/s"):
        n /= size * 8.0
    return max(1, int(round(n)))


def feed_args(opts, size):
    """A sender's count or duration and rate for a guest sink or reflector:
    the same count and rate as the guest; without a count, 0.5 s shorter
    than the run, so the guest is still counting when it stops."""
    args = ["--count", str(opts.count)] if opts.count \
        else ["--duration", "%.1f" % max(0.5, (opts.duration or 5) - 0.5)]
    pps = rate_pps(opts.rate, size)
    return args + (["--rate", str(pps)] if pps else [])


def mode_for_app(app):
    """Peer mode by guest app: it does the opposite half (reneg: each set's
    frames counted and sent back, docs/apps.md)."""
    return {"gen": "count", "sink": "send", "rr": "reflect", "reflect": "send",
            "reneg": "reflect"}.get(app, "count")


class Peer:
    def __init__(self, session, binary, mode, local_port, remote_port, args=(), label="peer",
                 host="127.0.0.1", remote_host="127.0.0.1", netns=None):
        self.session = session
        self.mode = mode
        self.label = label
        self.tmp = scratch.mkdtemp(session, "peer")
        self.ready_file = os.path.join(self.tmp, "ready")
        self.out = open(os.path.join(self.tmp, "out"), "w+b")
        self.err = open(os.path.join(self.tmp, "err"), "w+b")
        session.on_close(self.out.close, what="close peer output")
        session.on_close(self.err.close, what="close peer errors")
        self.argv = ["ip", "netns", "exec", netns] if netns else []
        self.argv += [binary, mode]
        if local_port is not None:
            self.argv += ["--local", "%s:%d" % (host, local_port)]
        if remote_port is not None:
            self.argv += ["--remote", "%s:%d" % (remote_host, remote_port)]
        self.argv += ["--ready-file", self.ready_file, "--progress"] + list(args)
        self.proc = None
        self.result = None
        self.results = []  # every result line (send with a return port: send, count)

    def start(self, wait_s=5.0):
        self.proc = self.session.spawn(self.argv, name=self.label, stdout=self.out,
                                       stderr=self.err, watch=self.session.TASK)
        deadline = time.monotonic() + wait_s
        while not os.path.exists(self.ready_file):
            if self.proc.poll() is not None:
                raise failed("%s exited at start (status %d): %s"
                             % (self.label, self.proc.returncode, self.stderr_line()))
            if time.monotonic() >= deadline:
                raise failed("%s did not bind within %.0f s" % (self.label, wait_s))
            time.sleep(0.01)

    def go(self):
        """--start-on-usr1: the guest app is ready, the clock starts."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)

    def _err_lines(self):
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace").strip().splitlines()

    def stderr_line(self):
        lines = [l for l in self._err_lines() if not PROGRESS_RE.match(l)]
        return lines[-1] if lines else NO_ERROR_OUTPUT

    def live(self):
        """The counters of the peer's last progress line ({} before the
        first): packets, lost, ... (count/reflect) or sent (send)."""
        if self.proc is None:
            return {}
        return progress(self._err_lines())

    def dead(self):
        """One line if the peer died on its own with an error, else None."""
        if self.proc is not None and self.proc.poll() not in (None, 0):
            return "%s died (status %d): %s" % (self.label, self.proc.returncode,
                                                self.stderr_line())
        return None

    def finish(self, linger_s=0.5):
        """Lets the peer drain for linger_s (frames still in QEMU or the
        socket), stops it with SIGTERM (it prints its result on it) and
        parses the result line."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            time.sleep(linger_s)
        proc.stop_for_result(self.session, self.proc, self.out, is_result)
        self.results = results(self.out, self.label)
        self.result = self.results[-1] if self.results else self.result
        if self.result is None:
            raise failed("%s printed no result (status %s): %s"
                         % (self.label, self.proc.returncode, self.why_no_result()))
        return self.result

    def why_no_result(self):
        """Its last error line; when a full disk took that too, what
        writing in its directory gives (its status 4: docs/peer.md)."""
        line = self.stderr_line()
        if line != NO_ERROR_OUTPUT:
            return line
        full = scratch.unwritable(self.tmp)
        if full:
            return "its output in %s could not be written: %s" % (self.tmp, full)
        if self.proc.returncode == EXIT_OUTPUT:
            return "its result could not be written (status %d)" % EXIT_OUTPUT
        return line


def host_counts(res):
    """Peer result -> host-side counts (rx = frames from the guest)."""
    if res is None:
        return {}
    err = res.get("errors") or {}
    out = {"peer": res}
    drops = [counts.drop("peer", "in the peer's socket buffer (SO_RXQ_OVFL)", err.get("sock_drops", 0))]
    # App-level counts are the peer's vnperf-format frames; every frame
    # (ARP and the like too) is the wire-level count.
    if res["mode"] == "count":
        out.update(rx_packets=res.get("vnperf", res["packets"]), rx_bytes=res["bytes"],
                   rx_frames=res["packets"], rx_drops=drops, rx_seq_lost=res.get("lost"))
    elif res["mode"] == "send":
        out.update(tx_packets=res["packets"], tx_bytes=res["bytes"])
    elif res["mode"] == "reflect":
        # Request/response frames are not vnperf frames: frame level, and
        # the vnperf frames (reneg's) where there are any.
        out.update(rx_frames=res["packets"], rx_bytes=res["bytes"], rx_drops=drops,
                   tx_frames=res.get("tx_packets"), tx_bytes=res.get("tx_bytes"))
        if res.get("vnperf"):
            out.update(rx_packets=res["vnperf"], rx_seq_lost=res.get("lost"))
    if res["mode"] == "send":
        out["tx_frames"] = res["packets"]
    return out
