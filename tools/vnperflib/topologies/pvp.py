"""--topology pvp|pvvp: vnperf as the network function. One forwarding guest
(pvp) or two in a row (pvvp), app=fwd with NICs a and b, between a tester's
two ports (backends/pvp.py wires them): the host peer over dgram/socket;
over vhost-user a gen guest with two NICs behind testpmd io (--tester gen,
the default) or the DPDK host peer on the forwarder's two vhost-user
sockets itself (--tester peer, pvp only). Counts are taken at every hop, so
loss is located per hop; the tester measures the latency through the chain
(the peer one-way on the host TSC, gen round trip on its own)."""

import dataclasses
import types

from ..analysis import counts, stalls
from ..analysis.stats import number
from ..errors import usage
from .base import TESTER_KNOBS, Topology

TOPOLOGIES = {"pvp": 1, "pvvp": 2}
BACKENDS = ("dgram", "socket", "vhost-user")
TESTERS = ("gen", "peer")
# host.chain.backend of the chains whose tester is the host peer.
PEER_CHAINS = ("wire", "vhost-peer")
# Forwarders boot first and end once no frame came in for IDLE_MS (the
# tester is done and the chain drained), whatever the tester's boot took;
# FWD_CAP_S past the tester's duration is the cap (under the runner's
# default --timeout of duration + 30 s).
IDLE_MS = 1000
# --tester peer over vhost-user: seconds of the tester's frames before the
# clock starts (the peer's --warmup). The first frame back came 1.1-1.6 ms
# after the start (1.5-10 ms with the peer of 2026-11-30, when it was the
# slowest frame of the trial and a failing trial's loss was what the
# 1024-entry ring could not cover of it); 0.1-0.16 ms after a warm-up.
WARMUP_S = 0.1
# --tester peer over vhost-user with --rate: the peer's --max-lag. With
# HZ=250 the peer sometimes waited 3-4 ms for a CPU, then sent what was due
# in one burst (930 frames at 290k pps, behind_max): nearly the 1024 frames
# the forwarder's ring holds, so its loss was the tester's. 0.5 ms of
# frames is a burst any ring here takes.
MAX_LAG_S = 0.0005
FWD_CAP_S = 20
NOT_A_CHAIN = ("the network function of pvp and pvvp is app=fwd (the tester is the host peer "
               "or a gen guest)")


def tester(opts):
    """Who sends and counts: "gen" (a guest behind testpmd io, the default
    over vhost-user) or "peer" (the host peer: over dgram/socket always,
    over vhost-user with --tester peer)."""
    t = opts.tester
    return t or ("gen" if opts.backend == "vhost-user" else "peer")


PEER_KNOBS = tuple(zip(TESTER_KNOBS, (WARMUP_S, MAX_LAG_S)))


def peer_knob(opts, key):
    """The DPDK peer tester's --warmup or --max-lag in seconds (0: none)."""
    v = getattr(opts, key)
    return dict(PEER_KNOBS)[key] if v is None else v


def peer_knobs(opts):
    """{knob: seconds} of the DPDK peer tester, {} for other testers."""
    if opts.backend != "vhost-user" or tester(opts) != "peer":
        return {}
    return {k: peer_knob(opts, k) for k, _ in PEER_KNOBS}


class Chain(Topology):
    """pvp (one forwarder) or pvvp (two in a row) between a tester's two
    ports."""

    joins_guests = True
    no_row = NOT_A_CHAIN
    rows = {"fwd": dict({b: None for b in BACKENDS},
                        **{"*": "a chain of guests needs %s" % ", ".join(BACKENDS)})}

    def __init__(self, name, nfwd):
        self.name = name
        self.nfwd = nfwd

    def default_app(self):
        return "fwd"

    def check(self, opts):
        """Refuses what a chain cannot do, before anything starts."""
        topo = self.name
        if opts.backend not in BACKENDS:
            raise usage("--topology %s: --backend %s cannot join guests into a chain (one of %s)"
                        % (topo, opts.backend, ", ".join(BACKENDS)))
        if tester(opts) == "gen" and opts.backend != "vhost-user":
            raise usage("--tester gen: over --backend %s the tester is the host peer (a gen "
                        "tester needs vhost-user)" % opts.backend)
        if tester(opts) == "peer" and opts.backend == "vhost-user" and self.nfwd != 1:
            raise usage("--tester peer: the DPDK peer's two vhost-user ports take one forwarder "
                        "(--topology pvp; pvvp needs --tester gen)")
        for k, _ in PEER_KNOBS:
            if getattr(opts, k) is not None and not peer_knobs(opts):
                raise usage("--%s: the DPDK peer tester's (--backend vhost-user --tester peer)"
                            % k.replace("_", "-"))
        if opts.app != "fwd":
            raise usage("--topology %s: the network function is app=fwd (not --app %s); the "
                        "tester is the host peer (dgram, socket) or a gen guest (vhost-user)"
                        % (topo, opts.app))

    def roles(self, opts):
        """The forwarders first, then a gen tester (the run's sender: it
        boots once the chain is up)."""
        self.check(opts)
        d = opts.duration or 5
        # every guest of the chain: the same pairs and vCPUs
        mq = ["%s=%d" % (k, getattr(opts, k)) for k in ("queues", "vcpus")
              if getattr(opts, k) is not None]
        out = []
        for i in range(self.nfwd):
            out.append(("fwd%d" % (i + 1), ["app=fwd", "duration=%d" % (d + FWD_CAP_S),
                                            "idle_ms=%d" % IDLE_MS] + mq))
        if tester(opts) == "gen":
            words = ["app=gen", "duration=%d" % d] + mq
            for key in ("size", "rate", "count"):
                if getattr(opts, key) is not None:
                    words.append("%s=%s" % (key, getattr(opts, key)))
            out.append(("tester", words))
        return out

    def option_refusal(self, opts):
        return None

    def queues_refusal(self, opts):
        """Several pairs through testpmd io (--rxq/--txq N: its stream of
        port p's queue q goes to queue q of p's partner), so every guest of
        the chain has the pairs; the DPDK peer tester drives one."""
        q = opts.queues or 1
        if q > 1 and opts.backend == "vhost-user" and tester(opts) == "peer":
            return "--queues %d: the DPDK peer tester drives one queue pair (--tester gen)" % q
        return None

    def pmd_refusal(self, opts, knob):
        if tester(opts) == "peer":
            return "--%s is a testpmd knob: --tester peer runs no testpmd" % \
                knob.replace("_", "-")
        return None

    def identity(self, opts):
        ident = {"tester": tester(opts)}
        for k, v in peer_knobs(opts).items():
            ident[k] = "%g" % v
        return ident

    def make_backend(self, name, opts):
        self.check(opts)
        from ..backends import pvp as wiring
        return wiring.make(name, opts, self.nfwd)

    def finish_report(self, res):
        return finish_report(res)

    def gen_sends(self, opts):
        return tester(opts) == "gen"

    def receiver_app(self, opts):
        return "fwd"

    def device_app(self):
        return "fwd"


PVP = Chain("pvp", TOPOLOGIES["pvp"])
PVVP = Chain("pvvp", TOPOLOGIES["pvvp"])


def _pairs(result, dev):
    """The driver's per-pair counts of NIC dev ([] with one pair)."""
    v = (result or {}).get("vnet" if dev == 0 else "vnet%d" % dev)
    qs = v.get("queues") if isinstance(v, dict) else None
    return qs if isinstance(qs, list) and len(qs) > 1 else []


def _vnet(result, dev, queue, key="packets"):
    """A driver count of NIC dev's queue ("rx", "tx"); its frames are
    every pair's (the "rx"/"tx" objects are pair 0's)."""
    pairs = _pairs(result, dev)
    if key == "packets" and pairs:
        n = [q.get("%s_packets" % queue) for q in pairs]
        return sum(n) if all(isinstance(x, int) for x in n) else None
    v = (result or {}).get("vnet" if dev == 0 else "vnet%d" % dev)
    q = v.get(queue) if isinstance(v, dict) else None
    return q.get(key) if isinstance(q, dict) else None


def _fwd_hop(name, result, got_a, a2b=None):
    """Inside a forwarder: what came in on a against what went out on b
    (a2b: one pair's counts instead of the result's total)."""
    a2b = a2b if a2b is not None else (result or {}).get("a_to_b") or {}
    drops = [counts.drop("driver", "dropped on %s's full output ring (tx_dropped)" % name,
                         a2b.get("tx_dropped", 0)),
             counts.drop("guest", "kept by %s for its own address (lwIP)" % name,
                         a2b.get("to_lwip", 0)),
             counts.drop("guest", "runts %s dropped" % name, a2b.get("runts", 0)),
             counts.drop("guest", "for %s's own address on a pair lwIP is not on (not_ours)"
                         % name, a2b.get("not_ours", 0))]
    return ("%s a -> b" % name, got_a, a2b.get("packets"), drops)


SOCKET_INLET = "in QEMU's UDP socket buffer (%s a)"


def _socket_inlet(host, name):
    """Over UDP links: what fwd name's QEMU dropped on its receiving socket."""
    qd = host.get("qemu_socket_drops") or {}
    return counts.drop("qemu_socket", SOCKET_INLET % name, qd.get(name + " a", 0))


def socket_guest(res, d):
    """The forwarder (a result.GuestReport of run res) whose QEMU socket
    drop d is (_socket_inlet), or None."""
    return next((g for g in res.guests or ()
                 if g.label and d["what"] == SOCKET_INLET % g.label), None)


def _plus(n, more):
    """n and more frames (more absent: 0); None when n is no count."""
    return n + more if isinstance(n, int) and isinstance(more, int) else \
        n if more is None else None


def _ring_inlet(host, name):
    """The DPDK peer on fwd1 a's vhost-user socket: the frames its full RX
    ring refused (the peer's ring_full, its --warmup's too)."""
    tx = host.get("peer_tx") or {}
    full = _plus((tx.get("errors") or {}).get("ring_full", 0),
                 (tx.get("warmup") or {}).get("ring_full"))
    return counts.drop("ring", "refused by %s a's full RX ring (peer ring_full)" % name, full)


def _peer_hops(results, host, n):
    """(name, sent, received, drops) per hop of a chain between the host
    peer's two ports: UDP links, or the DPDK peer's vhost-user ports."""
    inlet = _ring_inlet if (host.get("chain") or {}).get("backend") == "vhost-peer" \
        else _socket_inlet
    tx, rx = host.get("peer_tx") or {}, host.get("peer_rx") or {}
    # The peer's --warmup frames went through every hop before the clock
    # started: the interfaces count them, end to end does not.
    wu = tx.get("warmup") or {}
    hops = []
    up, sent, left = "peer-tx", _plus(tx.get("packets"), wu.get("sent")), []
    for i in range(n):
        name, r = "fwd%d" % (i + 1), results[i]
        got = _vnet(r, 0, "rx")
        at = inlet(host, name)
        hops.append(("%s -> %s a" % (up, name), sent, got, left + [at], (i, at)))
        hops.append(_fwd_hop(name, r, got))
        up, sent = name + " b", _vnet(r, 1, "tx")
        left = [counts.left_at_exit(name + " b", _vnet(r, 1, "tx", "in_flight") or 0)]
    err = rx.get("errors") or {}
    hops.append(("%s -> peer-rx" % up, sent, _plus(rx.get("packets"), wu.get("returned")),
                 left + [counts.drop("peer", "in peer-rx's socket buffer",
                                     err.get("sock_drops", 0))]))
    return hops, ("peer-tx", tx.get("packets"), rx.get("vnperf"))


def _testpmd_hops(results, host, n):
    """Per hop of a chain through testpmd io; the tester is the last guest."""
    st = ((host.get("testpmd") or {}).get("ports")) or {}
    tester = results[n] or {}

    def port(p, key):
        return (st.get(p) or st.get(str(p)) or {}).get(key)

    hops = []
    up, sent = "tester a", _vnet(tester, 0, "tx")
    left = [counts.left_at_exit("tester a", _vnet(tester, 0, "tx", "in_flight") or 0)]
    src = 0
    for i in range(n + 1):
        dst = src + 1
        hops.append(("%s -> testpmd port %d" % (up, src), sent, port(src, "RX-packets"), left))
        down = "fwd%d a" % (i + 1) if i < n else "tester b"
        full = max(0, (port(src, "RX-packets") or 0) - (port(dst, "TX-packets") or 0))
        at = counts.drop("ring", "not placed by testpmd io in %s's full RX ring" % down, full)
        hops.append(("testpmd port %d -> %d (io)" % (src, dst), port(src, "RX-packets"),
                     port(dst, "TX-packets"), [at], (i, at) if i < n else None))
        r = results[i] if i < n else tester
        got = _vnet(r, 0 if i < n else 1, "rx")
        hops.append(("testpmd port %d -> %s" % (dst, down), port(dst, "TX-packets"), got, []))
        if i < n:
            name = "fwd%d" % (i + 1)
            hops.append(_fwd_hop(name, r, got))
            up, sent = name + " b", _vnet(r, 1, "tx")
            left = [counts.left_at_exit(name + " b", _vnet(r, 1, "tx", "in_flight") or 0)]
        src = dst + 1
    rxd = tester.get("rx") if isinstance(tester.get("rx"), dict) else {}
    sent_app = tester.get("packets")
    if isinstance(sent_app, int):
        sent_app += tester.get("tx_dropped") or 0
    return hops, ("tester", sent_app, rxd.get("packets"))


def _pair_count(rows, q, key):
    """testpmd's count key of queue q of one port (queue_counts' rows)."""
    row = next((r for r in rows or () if r.get("queue") == q), None)
    return row.get(key) if row else None


def _testpmd_pair_hops(results, host, n):
    """Per pair of a chain through testpmd io with several pairs (its
    stream of port p's queue q goes to queue q of p's partner): each NIC's
    driver count of pair q against testpmd's of that queue, and inside
    each forwarder pair q of a against pair q of b. [] with one pair."""
    ports = (host.get("testpmd") or {}).get("queues") or {}
    tester = results[n] or {}
    npairs = len(_pairs(tester, 0))
    hops = []

    def port(p):
        return ports.get(p) or ports.get(str(p))

    for q in range(npairs if ports else 0):
        def drv(r, dev, way):
            row = next((x for x in _pairs(r, dev) if x.get("queue") == q), {})
            return row.get(way + "_packets")

        hops.append(("tester a -> testpmd port 0, pair %d" % q, drv(tester, 0, "tx"),
                     _pair_count(port(0), q, "rx_packets"), []))
        for i in range(n):
            name, r, a, b = "fwd%d" % (i + 1), results[i] or {}, 2 * i + 1, 2 * i + 2
            got = drv(r, 0, "rx")
            hops.append(("testpmd port %d -> %s a, pair %d" % (a, name, q),
                         _pair_count(port(a), q, "tx_packets"), got, []))
            mine = next((x for x in r.get("queues") or () if x.get("queue") == q), {})
            hop = _fwd_hop(name, r, got, mine.get("a_to_b") or {})
            hops.append(("%s, pair %d" % (hop[0], q),) + hop[1:])
            hops.append(("%s b -> testpmd port %d, pair %d" % (name, b, q), drv(r, 1, "tx"),
                         _pair_count(port(b), q, "rx_packets"), []))
        last = 2 * n + 1
        hops.append(("testpmd port %d -> tester b, pair %d" % (last, q),
                     _pair_count(port(last), q, "tx_packets"), drv(tester, 1, "rx"), []))
    return hops


def offered_pps(res):
    """Frames per second the tester offered the chain of run res (the
    peer's or the gen tester's), or None."""
    host = res.host or {}
    if (host.get("chain") or {}).get("backend") in PEER_CHAINS:
        tx = host.get("peer_tx") or {}
        sent, dur = number(tx.get("packets")), number(tx.get("elapsed_ns"))
    else:
        tester = res.sender_result
        sent, dur = number(tester.get("packets")), number(tester.get("duration_ns"))
        sent = sent + (number(tester.get("tx_dropped")) or 0) if sent is not None else None
    return sent / (dur / 1e9) if sent and dur and dur > 0 else None


def _stall_note(res, inlet):
    """(side, note): why a hop's frames found fwd i+1 a's RX ring full
    (inlet: (i, the drop there), its full ring or, over UDP, QEMU's socket
    behind it), when its vCPU stalled, or its sample lines paused it,
    longer than the ring covers at the offered rate (stalls.blame)."""
    if not inlet or not inlet[1]["frames"] or inlet[0] >= len(res.guests):
        return None, ""
    g = res.guests[inlet[0]]
    return stalls.blame(g.label + " a", stalls.read(g.result)[0], stalls.ring_size(g.result),
                        offered_pps(res), "forwarder")


def _hop(res, name, sent, got, drops, into):
    """One hop's result.Direction; its loss at a forwarder's full RX ring
    said to be the host's when that forwarder's vCPU stalled too long."""
    d = counts._direction(name, sent, got, drops, lossless=True)
    side, note = _stall_note(res, into[0] if into else None)
    if note and d.verdict != "agree":
        d = dataclasses.replace(d, why=d.why + "; " + note, host_stall=side == "host")
    return d


def chain_counts(res):
    """The result.Counts of run res's chain: a direction per hop (frames at
    the interfaces), and "end to end" (the tester's test frames out and
    back). A hop whose loss was at a forwarder's full RX ring (or QEMU's
    socket in front of it) says when that forwarder's vCPU stalled longer
    than the ring covers."""
    from .. import result  # typing, not loaded for --help (tests/py/test_cli_speed.py)
    host = res.host or {}
    chain = host.get("chain") or {}
    n = chain.get("nfwd") or nfwd_of(res)
    results = [g.result for g in res.guests]
    hops, (who, sent, got) = (_testpmd_hops if chain.get("backend") == "vhost-user"
                              else _peer_hops)(results, host, n)
    dirs = {}
    located = []
    for name, s, g, drops, *into in hops:
        drops = [d for d in drops if d["frames"]]
        located += drops
        if isinstance(s, int) and isinstance(g, int):
            dirs[name] = _hop(res, name, s, g, drops, into)
    if isinstance(sent, int) and isinstance(got, int):
        dirs["end to end"] = counts._direction("end to end", sent, got, located, lossless=True)
    verdicts = [d.verdict for d in dirs.values()]
    pairs = {}
    if chain.get("backend") == "vhost-user":
        for name, s, g, drops in _testpmd_pair_hops(results, host, n):
            pairs[name] = counts._direction(name, s, g, [d for d in drops if d["frames"]],
                                            lossless=True)
        verdicts += [d.verdict for d in pairs.values()]
    return result.Counts.given(host=dict(host), directions=types.MappingProxyType(dirs),
                               agree=all(v == "agree" for v in verdicts) if verdicts else None,
                               tester=who, hops=tuple(h[0] for h in hops if h[0] in dirs),
                               pairs=types.MappingProxyType(pairs) if pairs else None)


def waits(res):
    """Where frames waited in each forwarder of run res, one line each:
    its input ring (bursts that came back full), its output ring (time the
    driver waited on a full ring, bursts it could not take, most in
    flight), and how long its vCPU did not come round (stalls.py)."""
    out = {}
    pps = offered_pps(res)
    for g in res.guests:
        r = g.result or {}
        d = r.get("a_to_b")
        if r.get("app") != "fwd" or not isinstance(d, dict):
            continue
        tsc = number((g.boot or {}).get("tsc_hz"))
        wait = number(_vnet(r, 1, "tx", "full_wait_cycles"))
        line = "input ring: %s of %s bursts full; output ring: %s waited full, %s " \
            "bursts refused, at most %s frames in flight" % (
                d.get("rx_full"), d.get("rx_bursts"),
                "%.1f ms" % (wait / tsc * 1e3) if tsc and wait is not None else "-",
                d.get("tx_full"), d.get("tx_in_flight_max"))
        stall = stalls.waits_line(r, pps)
        out[g.label] = line + "; " + stall if stall else line
    return out


def nfwd_of(res):
    return TOPOLOGIES.get(res.topology, 1)


def finish_report(res):
    """Run res (a result.RunResult) with counts per hop, the forwarders'
    waits, and metrics of the chain: the tester's frames back per second
    of its sending, and the latency it measured."""
    c = chain_counts(res)
    e2e = c.directions.get("end to end")
    host = res.host or {}
    tester = res.sender_result
    if host.get("chain", {}).get("backend") in PEER_CHAINS:
        dur = number((host.get("peer_tx") or {}).get("elapsed_ns"))
        lat = (host.get("peer_rx") or {}).get("latency") or {}
        rx_bytes = (host.get("peer_rx") or {}).get("bytes")
    else:
        dur = number(tester.get("duration_ns"))
        lat = tester.get("rx") if isinstance(tester.get("rx"), dict) else {}
        rx_bytes = lat.get("bytes")
    m = {}
    got = e2e.received if e2e is not None else None
    if isinstance(got, int) and dur:
        m.update(packets=float(got), pps=got / (dur / 1e9), duration_s=dur / 1e9)
        nbytes = number(rx_bytes)
        if nbytes is not None:
            m.update(bytes=nbytes, bps=nbytes * 8 / (dur / 1e9))
    for k in ("p50", "p90", "p99", "p999"):
        if number(lat.get(k + "_us")):
            m[k + "_ns"] = number(lat[k + "_us"]) * 1e3
    return dataclasses.replace(res, counts=c, waits=waits(res),
                               metrics=dataclasses.replace(res.metrics, **m))
