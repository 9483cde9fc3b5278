"""Host side of app=iperf: Debian's iperf 2, server for a guest client
(started before the guest), client for a guest server (started once the
guest's NIC is up, retrying the connect until the guest listens). Over
tap it runs inside the runner's namespace; over slirp on the
host's loopback, where the backend maps the guest's gateway address (the
guest's client) and forwards a port to the guest (its server). Its CSV
reports give the host's byte counts per stream."""

import os
import signal
import subprocess
import time

from ..errors import failed, missing
from ..optypes import digits
from . import scratch

PORT = 5001
# app reneg's stream_s= (docs/apps.md, reneg): seconds of one TCP stream
# per set, at most (apps/app_reneg.c checks it too).
RENEG_STREAM_MAX_S = 60


def config_value(words, key, default):
    for w in words:
        k, _, v = w.partition("=")
        if k == key:
            return v
    return default


def reneg_stream_s(opts):
    """App reneg's stream_s=: the seconds of the TCP stream each set runs
    to the host's iperf 2 server on PORT (0: none, and for any other app);
    None when the word is no number of seconds 0..RENEG_STREAM_MAX_S."""
    if opts.app != "reneg":
        return 0
    v = config_value(opts.config, "stream_s", "0")
    return int(v) if digits(v) and int(v) <= RENEG_STREAM_MAX_S else None


def parse_csv_reports(text):
    """Per-stream reports of `iperf -y C` (the -1 id lines are client SUMs):
    [{"id", "interval", "bytes", "bps", "client_port"}]; iperf 2 writes the
    client's address and port first on both ends (client_port None where
    that field is no number)."""
    out = []
    for line in text.splitlines():
        f = line.strip().split(",")
        if len(f) < 9 or not digits(f[7]) or f[5] == "-1":
            continue
        out.append({"id": int(f[5]), "interval": f[6], "bytes": int(f[7]), "bps": int(f[8]),
                    "client_port": int(f[2]) if digits(f[2]) else None})
    return out


def count_resets(text):
    """Streams the host's iperf client lost to a reset: iperf 2 prints
    'tcp write failed: Connection reset by peer' for each (slirp accepts a
    connection on the host side and can reset it before the guest sees
    its SYN)."""
    return sum(1 for line in text.splitlines() if "reset by peer" in line)


def guest_aborted(result):
    """Streams the guest's iperf server saw reset or aborted before the
    client's FIN (its result's "aborted"; 0 for a client or an image that
    does not report it)."""
    n = (result or {}).get("aborted")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def receiver_bytes(result, host):
    """(bytes, who) of the stream's payload as its receiving end counted
    it: the host iperf server's when the guest sends, the guest's when it
    receives; (None, None) when that end gave no count. The guest's
    frames (both ways, ACKs and TSO super-frames as one) are no measure
    of the stream."""
    ip = (host or {}).get("iperf") or {}
    if (result or {}).get("role") == "server":
        n = (result or {}).get("bytes")
        who = "the guest's iperf server"
    else:
        n = ip.get("bytes") if ip.get("host_role") == "server" else None
        who = "the host's iperf server"
    if not isinstance(n, int) or isinstance(n, bool):
        return None, None
    return n, who


class HostIperf:
    """netns: run inside it (tap), or None (the host's loopback); target:
    where the host's client connects; port: the host's port (its server's,
    or the one its client connects to), by default the guest's dst_port=;
    bind: the host server's address (default: every address of the
    namespace, or the host's loopback); nat: whether the guest's
    connections reach it through a NAT (slirp, passt) that gives them ports
    of its own (the result's "nat": a stream's client_port is the guest's
    local port only without)."""

    def __init__(self, session, netns, target, opts, port=None, bind=None, nat=True):
        if not any(os.access(os.path.join(d, "iperf"), os.X_OK)
                   for d in os.environ.get("PATH", "/usr/bin").split(os.pathsep)):
            raise missing("iperf: host iperf 2 not found (Debian package iperf)")
        self.session = session
        words = list(opts.config)
        self.role = config_value(words, "role", "client")  # the guest's role
        sessions = config_value(words, "sessions", "1")
        port = str(port or config_value(words, "dst_port", str(PORT)))
        # A guest server times each stream from its accept to the client's
        # FIN and waits duration= plus a grace for the client (app_iperf.c):
        # the host's client sends for the whole duration= asked.
        duration = opts.duration or 10
        tmp = scratch.mkdtemp(session, "iperf")
        self.out = open(os.path.join(tmp, "out"), "w+b")
        session.on_close(self.out.close, what="close iperf output")
        base = (["ip", "netns", "exec", netns] if netns else []) + ["iperf", "-y", "C", "-p", port]
        if opts.ip6:
            base.append("-V")  # iperf 2: IPv6 sockets (the server's on :: or bind)
        if self.role == "client":
            bind = bind or (None if netns else "::1" if opts.ip6 else "127.0.0.1")
            self.argv = base + ["-s"] + (["-B", bind] if bind else [])
        else:
            self.argv = base + ["-c", target, "-t", str(duration), "-P", sessions,
                                "--connect-retries", "50"]
            # The guest server's msg_size= is the sending side's write size.
            msg = config_value(words, "msg_size", None)
            if msg is not None:
                self.argv += ["-l", msg]
        self.proc = None
        self.result = None
        self.finished = False
        self.nat = nat

    def start(self):
        # The host's server (guest client) runs until stopped; its client
        # ends by itself.
        watch = self.session.DAEMON if self.role == "client" else self.session.TASK
        self.proc = self.session.spawn(self.argv, name="iperf", stdout=self.out,
                                       stderr=subprocess.STDOUT, watch=watch)
        if self.role == "client":
            # The server must listen before the guest connects.
            time.sleep(0.3)
            if self.proc.poll() is not None:
                raise failed("iperf -s exited at start: %s" % self._tail())

    def _tail(self):
        self.out.seek(0)
        lines = self.out.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def dead(self):
        if self.proc is not None and not self.finished and self.role == "client" \
                and self.proc.poll() is not None:
            return "iperf -s died (status %d): %s" % (self.proc.returncode, self._tail())
        return None

    def finish(self):
        self.finished = True
        if self.proc is None:
            return
        if self.role == "client":
            # Let the last stream's report out, then stop the server.
            time.sleep(0.5)
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.session.stop(self.proc)
        self.out.seek(0)
        text = self.out.read().decode("utf-8", "replace")
        streams = parse_csv_reports(text)
        self.result = {"host_role": "server" if self.role == "client" else "client",
                       "streams": streams, "bytes": sum(s["bytes"] for s in streams),
                       "streams_reset": count_resets(text), "nat": self.nat}


class IperfBackend:
    """What a backend with a host iperf does for app=iperf; a backend calls
    these from its own hooks. The guest's client gets the host's server
    before it boots; the guest's server gets the host's client once the
    guest is up."""

    iperf = None

    def iperf_start(self, session, netns, target, port=None, bind=None, nat=True):
        self.iperf = HostIperf(session, netns, target, self.opts, port, bind, nat)
        if self.iperf.role == "client":
            self.iperf.start()

    def iperf_ready(self):
        if self.iperf is not None and self.iperf.proc is None:
            self.iperf.start()

    def iperf_collect(self):
        return {"iperf": self.iperf.result} if self.iperf is not None else {}

    def iperf_processes(self):
        if self.iperf is not None and self.iperf.proc is not None:
            return [("iperf", self.iperf.proc.pid)]
        return []
