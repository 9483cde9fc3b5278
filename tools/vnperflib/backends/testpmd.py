"""vhost-user backend: DPDK dpdk-testpmd with --no-huge, one net_vhost port
per guest, driven through its interactive prompt (start, show fwd stats
all, stop, show port stats all, quit) so its own statistics can be read
when the guest's app ends and at the end.

Forward modes (plan()): rxonly counts a gen; 5tswap sends app reneg's
frames back (back=1, each set counted both ways); txonly sends to a sink flat
out; a sink with --rate or --count, and reflect, are fed by the host peer
through a second, tap port (net_tap in a namespace of the runner) with io
forwarding between the two ports, so the peer's rate and count reach the
guest and a reflector's frames are drained; two guests are joined by io."""

import os
import re
import shutil
import subprocess
import time

from .. import topologies
from ..analysis import counts
from ..errors import failed, missing
from ..run import peer, qemucmd, scratch
from . import netns, vhostpeer
from .base import Backend, guest_ip, guest_mac, live_from_peer

# The forward mode for one guest by app (docs/runner-run.md). reneg's
# frames go back as the host peer's reflect sends them (MACs, IP addresses
# and UDP ports swapped, the checksum still valid: 22.11 5tswap.c); the
# guest counts them per set (back=1, docs/apps.md reneg).
FWD_MODE = {"gen": "rxonly", "sink": "txonly", "reneg": "5tswap"}
# dpdk-testpmd 22.11's --forward-mode values: it falls back to io for any
# other word, so a typo must not reach it.
FWD_MODES = ("io", "mac", "macswap", "flowgen", "rxonly", "txonly", "csum", "icmpecho", "noisy",
             "5tswap")
FEED_TAP = "vnfeed0"
STAT_RE = re.compile(r"(RX-packets|RX-missed|RX-bytes|RX-errors|RX-nombuf|TX-packets|"
                     r"TX-errors|TX-bytes|RX-dropped|TX-dropped):\s*(\d+)", re.ASCII)
BURST_RE = re.compile(r"(RX|TX)-bursts\s*:\s*(\d+)\s*\[(.*)\]", re.ASCII)


# testpmd's counters are u64 (rte_ethdev.h struct rte_eth_stats): at most
# 20 digits, which also keeps int() off Python's 4300-digit limit.
U64_MAX = 2 ** 64 - 1


def counter(digits, what):
    """A counter printed by testpmd, checked: raises failed() with one line."""
    if len(digits) > 20 or int(digits) > U64_MAX:
        raise failed("testpmd printed %s %s: more than a u64 counter holds" % (
            what, digits if len(digits) <= 24 else digits[:21] + "..."))
    return int(digits)


def _share(text):
    """A burst share "N%" or "N.M%" (0..100), checked."""
    if not re.match(r"^\d{1,3}(?:\.\d{1,6})?$", text, re.ASCII) or float(text) > 100:
        raise failed("testpmd printed a burst share %s%%: not a percent 0..100" % text[:24])
    return float(text)


def plan(opts):
    """(forward mode, fed by the peer through a tap port) for the options."""
    if topologies.topology_for(opts).switch_io():
        return "io", False
    if opts.app == "reflect" or (opts.app == "sink" and (
            opts.rate or opts.count)):
        return "io", True
    return opts.fwd_mode or FWD_MODE.get(opts.app, "rxonly"), False


def parse_port_stats(text):
    """{port: {"RX-packets": n, ...}} from `show port stats all` output (the
    last block per port wins)."""
    groups = _blocks(text, r"NIC statistics for port (\d+)")
    return groups[-1] if groups else {}


def parse_fwd_stats(text):
    """[{port: {"RX-packets", "TX-dropped", ..., "RX-bursts": (n, [(pct,
    frames)])}}], one per `show fwd stats all` or `stop` output, in order."""
    return _blocks(text, r"Forward statistics for port (\d+)")


# A forwarding stream's block (testpmd's fwd_stream_stats_display, printed
# when there are more streams than ports: a queue pair per stream).
STREAM_RE = re.compile(r"Forward Stats for RX Port=\s*(\d+)/Queue=\s*(\d+) -> "
                       r"TX Port=\s*(\d+)/Queue=\s*(\d+)", re.ASCII)


def parse_stream_stats(text):
    """[{(rx port, rx queue): {"tx_port", "tx_queue", "RX-packets",
    "TX-packets", "TX-dropped"}}], one per `show fwd stats all` or `stop`
    output, in order (a stream seen again starts the next)."""
    groups, cur, key = [], {}, None
    for line in text.splitlines():
        m = STREAM_RE.search(line)
        if m:
            rp, rq, tp, tq = (counter(g, "a port or queue") for g in m.groups())
            key = (rp, rq)
            if key in cur:
                groups.append(cur)
                cur = {}
            cur[key] = {"tx_port": tp, "tx_queue": tq}
            continue
        if key is None:
            continue
        found = STAT_RE.findall(line)
        if not found and line.strip():
            key = None
        for k, v in found:
            cur[key][k] = counter(v, k)
    if cur:
        groups.append(cur)
    return groups


def queue_counts(streams, port, nqueues):
    """Per queue pair of port (its RX queue q: the guest's transmitq q; its
    TX queue q: the guest's receiveq q), what testpmd's streams moved:
    [{"queue", "rx_packets", "tx_packets", "tx_dropped"}]; None when no
    stream from or to the port is there or one is past nqueues. testpmd
    prints no stream that moved nothing: a queue without one counts 0."""
    rx = {q: s for (p, q), s in streams.items() if p == port}
    to = {s["tx_queue"] for s in streams.values() if s["tx_port"] == port}
    if not (rx or to) or not set(rx) | to <= set(range(nqueues)):
        return None
    out = []
    for q in range(nqueues):
        tx = [s for s in streams.values() if s["tx_port"] == port and s["tx_queue"] == q]
        out.append({"queue": q, "rx_packets": rx.get(q, {}).get("RX-packets", 0),
                    "tx_packets": sum(s.get("TX-packets", 0) for s in tx),
                    "tx_dropped": sum(s.get("TX-dropped", 0) for s in tx)})
    return out


def _blocks(text, header):
    """Consecutive per-port blocks, grouped: a port seen again starts the
    next group."""
    groups, cur, port = [], {}, None
    for line in text.splitlines():
        m = re.search(header, line, re.ASCII)
        if m:
            port = counter(m.group(1), "port")
            if port in cur:
                groups.append(cur)
                cur = {}
            cur[port] = {}
            continue
        if port is None:
            continue
        if re.search(r"(Forward|NIC) statistics|Accumulated forward", line):
            port = None
            continue
        for k, v in STAT_RE.findall(line):
            cur[port][k] = counter(v, k)
        b = BURST_RE.search(line)
        if b:
            # "N% of other": the sizes beyond the two it names (None).
            spread = [(_share(p), counter(n, "a burst size") if n else None) for p, n in
                      re.findall(r"([\d.]+)% of (?:(\d+) pkts|other)", b.group(3), re.ASCII)]
            cur[port][b.group(1) + "-bursts"] = (counter(b.group(2), b.group(1) + "-bursts"),
                                                 spread)
        if line.strip().startswith(("####", "----", "++++")) and cur[port]:
            port = None
    if cur:
        groups.append(cur)
    return groups


# testpmd's own --burst when none is given (DPDK 22.11 DEF_PKT_BURST).
DEFAULT_BURST = 32
# The batch figure is given when its bounds are this close (else the range).
BATCH_TIGHT = 1.1


def burst_range(port, side, burst=DEFAULT_BURST):
    """(lo, hi) frames per non-empty burst on one side ("RX"/"TX") of a
    port, from --record-burst-stats; None without bursts or frames.
    testpmd prints every share but the last as a whole percent rounded
    down (22.11 pkt_burst_stats_display), so with 99% of its polls empty
    the non-empty ones are anywhere up to 1% of them: the frames per burst
    are only bounded, also by 1 and --burst and by the order in which it
    names the sizes (_ranked_range). No other source pins them: its xstats
    (the vhost library's per-queue counters) count frames by size, not
    bursts. One size of non-empty burst and no "other" share: that size,
    exactly."""
    bursts, spread = port.get(side + "-bursts", (0, []))
    frames = port.get(side + "-packets", 0)
    if not bursts or not frames:
        return None
    sizes = {n for _, n in spread if n != 0}
    if len(sizes) == 1 and None not in sizes:
        n = float(sizes.pop())
        return n, n
    empty = next((p for p, n in spread if n == 0), 0.0)
    most = bursts * (100.0 - empty) / 100.0
    least = bursts * (99.0 - empty) / 100.0
    lo = max(1.0, frames / most) if most > 0 else float(burst)
    hi = min(float(burst), frames / least) if least > 0 else float(burst)
    ranked = _ranked_range(spread, burst)
    if ranked is not None and max(lo, ranked[0]) <= min(hi, ranked[1]):
        lo, hi = max(lo, ranked[0]), min(hi, ranked[1])
    return lo, max(lo, hi)


def _ranked_range(spread, burst):
    """(lo, hi) mean frames per non-empty burst that testpmd's ranking
    allows, or None. It names the most frequent non-empty size S1 first,
    the next S2 second, the rest "other" (22.11 pkt_burst_stats_display):
    n1 >= n2 >= the count of any other size. Over that cone the mean
    lies between S1 (n1 alone growing) and the mixes of one burst of S1,
    one of S2 and one of each of some other sizes (its extreme rays), the
    best of which takes other sizes greedily. Measured, gen 64 B into
    --burst 32: "99% of 0 pkts + 0% of 32 pkts + 1% of 1 pkts": 16.5..32
    (the empty share alone left 1.2..32); --burst 256, "... 0% of 32
    pkts + 0% of 256 pkts + 1% of other": 22.5..236 (1.4..256)."""
    if len(spread) not in (3, 4) or spread[0][1] != 0 or not (spread[1][1] and spread[2][1]):
        return None
    if len(spread) == 4 and spread[3][1] is not None:
        return None
    s1, s2 = spread[1][1], spread[2][1]
    others = [k for k in range(1, burst + 1) if k not in (s1, s2)] if len(spread) == 4 else []

    def mix(order, better):
        num, den = float(s1 + s2), 2.0
        for k in order:
            if not better(k, num / den):
                break
            num, den = num + k, den + 1
        return num / den

    return (min(s1, mix(others, lambda k, m: k < m)),
            max(s1, mix(reversed(others), lambda k, m: k > m)))


def batch_figure(rng):
    """The one number for tables: the middle of a tight range, else None."""
    if rng is None or rng[1] > rng[0] * BATCH_TIGHT:
        return None
    return (rng[0] + rng[1]) / 2.0


def pmd_lcores(ncpu, queues):
    """(testpmd's -l, its --nb-cores): the main lcore and a forwarding
    lcore per queue pair, within this host's CPUs (one forwarding lcore
    polls every queue when the host has no more: testpmd spreads the
    streams over the cores it has)."""
    fwd = max(1, min(queues, ncpu - 1))
    return ("0-%d" % fwd if ncpu >= 2 else "0"), fwd


class VhostUser(Backend):
    name = "vhost-user"
    lossless = True
    needs_shared_mem = True
    max_queues = qemucmd.MAX_QUEUES

    def __init__(self, opts):
        super().__init__(opts)
        self.proc = None
        self.socks = []
        self.log = None
        self.prefix = scratch.prefix("dpdk").rstrip("-")
        self.stats = {}
        self.fwd = []
        self.streams = []
        self.mode, self.feed = plan(opts)
        self.queues = opts.queues or 1
        self.feed_ns = None
        self.feed_tap = None
        self.finished = False
        self.snapped = False
        self.session = None
        self.sender = None
        self.feed_mac = None

    def check(self):
        if shutil.which(self.opts.testpmd) is None:
            raise missing("vhost-user: %s not found (Debian package dpdk-dev)"
                          % self.opts.testpmd)
        if self.feed and os.geteuid() != 0:
            raise missing("vhost-user: %s needs root to feed the guest through a tap port "
                          "in a namespace" % ("reflect" if self.opts.app == "reflect"
                                              else "--rate/--count"))

    def programs(self):
        return [("host peer", peer.peer_binary())] if self.feed else []

    def start(self, session, nguests=1):
        self.session = session
        tmp = scratch.mkdtemp(session, "vu")
        # DPDK leaves its runtime directory behind.
        session.on_close(shutil.rmtree, "/var/run/dpdk/" + self.prefix, True,
                         what="remove DPDK runtime dir")
        self.socks = [os.path.join(tmp, "vhost%d.sock" % i) for i in range(nguests)]
        self.feed_ns = netns.create(session) if self.feed else None
        self.log = open(os.path.join(tmp, "testpmd.log"), "w+b")
        session.on_close(self.log.close, what="close testpmd log")
        argv = self._argv()
        if self.feed_ns:
            # testpmd's tap port is created in the namespace; QEMU stays out.
            argv = ["ip", "netns", "exec", self.feed_ns] + argv
        self.proc = session.spawn(argv, name="testpmd", stdin=subprocess.PIPE,
                                  stdout=self.log, stderr=subprocess.STDOUT,
                                  watch=session.DAEMON)
        self._wait(lambda: all(os.path.exists(s) for s in self.socks),
                   "its vhost-user sockets")
        if self.feed:
            self._wait(lambda: netns.link(self.feed_ns, FEED_TAP) is not None,
                       "its tap port " + FEED_TAP)
            netns.face_guest(self.feed_ns, FEED_TAP, guest_mac(0))
            self.feed_mac = netns.link(self.feed_ns, FEED_TAP)[0]
            self.sender = netns.sender(session, self.opts, self.feed_ns)
            # A full guest ring makes io wait (up to 100 ms) instead of
            # dropping; the kernel queues up to 10000 frames meanwhile.
            netns.ip("-n", self.feed_ns, "link", "set", FEED_TAP, "txqueuelen", "10000")
            self._cmd("set fwd io retry")
            self._cmd("set burst tx delay 10 retry 10000")
        if self.mode != "txonly":
            self._cmd("start")

    def _argv(self):
        vdevs = []
        for i, s in enumerate(self.socks):
            vdevs += ["--vdev", "net_vhost%d,iface=%s,queues=%d" % (i, s, self.queues)]
        if self.feed:
            vdevs += ["--vdev", "net_tap0,iface=%s" % FEED_TAP]
        ncpu = os.cpu_count() or 1
        lcores, fwd = pmd_lcores(ncpu, self.queues)
        args = ["--forward-mode=" + self.mode, "--nb-cores=%d" % fwd, "--total-num-mbufs=16384",
                "--record-burst-stats", "-i"]
        if self.queues > 1:
            args += ["--rxq=%d" % self.queues, "--txq=%d" % self.queues]
        for knob, flag in (("pmd_burst", "--burst"), ("pmd_rxd", "--rxd"), ("pmd_txd", "--txd")):
            if getattr(self.opts, knob):
                args.append("%s=%d" % (flag, getattr(self.opts, knob)))
        if self.mode in ("txonly", "flowgen"):
            args += ["--txpkts=%d" % (self.opts.size or 64), "--eth-peer=0,%s" % guest_mac(0)]
        placed = self.plan.lcores() if self.plan is not None else None
        # --placement: lcore i on the plan's CPU (EAL's lcore@cpu map).
        cores = ["--lcores", placed] if placed else ["-l", lcores]
        return [self.opts.testpmd, "--no-huge", "-m", "512"] + cores + [
            "--no-pci", "--no-shconf", "--file-prefix", self.prefix,
            "--log-level=lib.eal:error"] + vdevs + ["--"] + args

    def _wait(self, ready, what, timeout_s=15.0):
        deadline = time.monotonic() + timeout_s
        while not ready():
            if self.proc.poll() is not None:
                raise failed("testpmd exited at start (status %d): %s"
                             % (self.proc.returncode, self._tail()))
            if time.monotonic() >= deadline:
                raise failed("testpmd did not create %s within %.0f s" % (what, timeout_s))
            time.sleep(0.05)

    def _text(self):
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def _tail(self):
        lines = [l for l in self._text().splitlines() if l.strip()]
        return lines[-1] if lines else "no output"

    def _cmd(self, line):
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise failed("testpmd is gone: " + self._tail())

    def on_guest_ready(self, index):
        if self.mode == "txonly":
            self._cmd("start")
        if self.sender is not None and self.sender.proc is None:
            self.sender.start()

    def on_guest_done(self, index):
        # The app stopped counting: testpmd's figures now are the run's
        # (a sender that goes on fills the guest's ring and drops the rest).
        if not self.snapped and index == len(self.socks) - 1 and self.proc.poll() is None:
            self.snapped = True
            self._cmd("show fwd stats all")

    def nics(self, index):
        return [vhostpeer.vhost_nic(self.opts, index)]

    def qemu_extra(self, index):
        return ["-chardev", "socket,id=vu%d,path=%s" % (index, self.socks[index])]

    def guest_config(self, index):
        if len(self.socks) == 2:
            other = 1 - index
            return ["ip=" + guest_ip(index), "dst_ip=" + guest_ip(other),
                    "dst_mac=" + guest_mac(other)]
        if self.feed:
            return ["ip=" + netns.GUEST_IP, "dst_ip=" + netns.HOST_IP,
                    "dst_mac=" + self.feed_mac]
        return ["ip=" + guest_ip(0), "dst_ip=10.0.2.2", "dst_mac=02:00:00:00:00:01"] + (
            ["back=1"] if self.mode == "5tswap" and self.opts.app == "reneg" else [])

    def placed(self):
        lcores = self.plan.lcores() if self.plan is not None else None
        return {"lcore" + m.split("@")[0]: int(m.split("@")[1])
                for m in lcores.split(",")} if lcores else {}

    def processes(self):
        out = [("testpmd", self.proc.pid)] if self.proc else []
        if self.sender is not None and self.sender.proc is not None:
            out.append(("peer", self.sender.proc.pid))
        return out

    def live(self):
        return live_from_peer(self.sender)

    def healthy(self):
        if self.proc is not None and not self.finished and self.proc.poll() is not None:
            return "testpmd died (status %d): %s" % (self.proc.returncode, self._tail())
        return self.sender.dead() if self.sender else None

    def finish(self):
        if self.sender is not None:
            self.sender.finish()
        if self.proc is None or self.proc.poll() is not None:
            return
        self.finished = True
        if self.feed_ns:
            # testpmd's tap port goes away with testpmd.
            self.feed_tap = netns.link(self.feed_ns, FEED_TAP)
        self._cmd("stop")
        self._cmd("show port stats all")
        self._cmd("quit")
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.session.stop(self.proc)
        text = self._text()
        self.stats = parse_port_stats(text)
        self.fwd = parse_fwd_stats(text)
        self.streams = parse_stream_stats(text)

    def collect(self):
        if not self.stats:
            return {}
        out = {"testpmd": {"mode": self.mode, "fed_by_peer": self.feed, "ports": self.stats,
                           "fwd": self.fwd}}
        if len(self.socks) == 2:
            return out
        final = self.fwd[-1].get(0, {}) if self.fwd else {}
        at_end = self.fwd[0].get(0, {}) if len(self.fwd) > 1 else None
        p = self.stats.get(0, {})
        # The guest's port, the traffic's side: what testpmd moved per burst.
        rng = burst_range(final, "RX" if self.opts.app == "gen" else "TX",
                          self.opts.pmd_burst or DEFAULT_BURST)
        out["backend_batch"] = batch_figure(rng)
        out["backend_batch_range"] = list(rng) if rng else None
        # testpmd counts every frame (ARP too): wire-level counts.
        out.update(rx_frames=p.get("RX-packets"), rx_bytes=p.get("RX-bytes"),
                   tx_frames=p.get("TX-packets"), tx_bytes=p.get("TX-bytes"),
                   rx_drops=[counts.drop("backend", "missed by testpmd (RX-missed)",
                                         p.get("RX-missed", 0)),
                             counts.drop("backend", "no mbuf in testpmd (RX-nombuf)",
                                         p.get("RX-nombuf", 0))],
                   # txonly sends until stopped; behind the feeder the kernel
                   # answers reflections that come back after the peer closed
                   # its socket (ICMP port unreachable) until QEMU is gone.
                   sender_outlives_guest=self.mode == "txonly" or self.feed,
                   # every frame sent back on its port, none counted per set
                   echoes=self.mode == "5tswap")
        if self.queues > 1 and self.streams:
            # Per queue pair: the streams' counts at the end (stop's).
            out["queues"] = queue_counts(self.streams[-1], 0, self.queues)
        if at_end is not None:
            # Frames testpmd could not place in the guest's full RX ring
            # while the app ran: the guest did not keep up.
            out["ring_full_drops"] = at_end.get("TX-dropped", 0)
            out["offered_at_end"] = at_end.get("TX-packets", 0) + at_end.get("TX-dropped", 0)
        if self.feed:
            out.update(self._feed_counts(p, final))
        return out

    def _feed_counts(self, guest_port, final):
        """The peer's frames at app level, and where they were lost on the
        way: the namespace's tap queue, testpmd's io towards the guest."""
        res = self.sender.result if self.sender else None
        out = {"tx_drops": [counts.drop("ring", "not placed in the guest's full RX ring by "
                                        "testpmd io (TX-dropped)", final.get("TX-dropped", 0))]}
        tap = self.feed_tap
        if tap is not None:
            out["tx_drops"].append(counts.drop(
                "backend", "dropped at testpmd's tap port queue (tx_dropped)",
                tap[1].get("tx", {}).get("dropped", 0)))
        if res is not None:
            out.update(peer=res, tx_packets=res["packets"])
        return out
