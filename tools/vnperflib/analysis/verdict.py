"""Bottleneck verdict for one run. A polling guest's vCPU thread is always
busy; what tells the sides apart is how often the guest found its TX ring
full (waiting on the backend) and whether a backend thread was saturated.
First of all: whether the host had CPUs enough for the threads measured
(hostbound.py)."""

from .. import result, topologies
from . import counts, hostbound, stalls

SATURATED_PCT = 90.0
# Busy-polling by design: 100% CPU says nothing about saturation.
POLLING_ROLES = ("vcpu", "testpmd")
RING_FULL_BACKEND = 0.20  # fraction of the run the TX ring was full


def ring_full_fraction(g):
    """Fraction of the app's duration guest g (a result.GuestReport, the
    sender) spent on a full TX ring, from driver counters (cycles or ns),
    or None when not reported."""
    r = g.result or {}
    vnet = r.get("vnet") if isinstance(r.get("vnet"), dict) else {}
    dur_ns = r.get("duration_ns")
    if not isinstance(dur_ns, (int, float)) or dur_ns <= 0:
        return None
    items = list(vnet.items())
    if isinstance(vnet.get("tx"), dict):
        items += list(vnet["tx"].items())
    for k, v in items:
        if not isinstance(v, (int, float)) or isinstance(v, bool) or "full" not in k:
            continue
        if not (k.endswith("_ns") or k.endswith("_cycles")):
            continue
        if k.endswith("_ns"):
            return min(1.0, v / dur_ns)
        if k.endswith("_cycles"):
            tsc = (g.boot or {}).get("tsc_hz")
            if isinstance(tsc, (int, float)) and tsc > 0:
                return min(1.0, v / tsc * 1e9 / dur_ns)
    return None


def _saturated(roles):
    """(role, pct) of the busiest non-polling thread group at 90% or more."""
    hot = {k: v.pct for k, v in roles.items()
           if not k.endswith(POLLING_ROLES) and v.pct >= SATURATED_PCT}
    return max(hot.items(), key=lambda kv: kv[1]) if hot else None


def _paced(result):
    """True when the app hit the rate it was asked for (gen's rate_target
    and rate_achieved)."""
    t, a = result.get("rate_target"), result.get("rate_achieved")
    return isinstance(t, (int, float)) and t > 0 and isinstance(a, (int, float)) \
        and a >= 0.97 * t


# A sender that could not hand over this share of what it offered was
# held up by the receiver.
REFUSED_SHARE = 0.01


def _verdict(side, why):
    return result.Verdict(side=side, why=why)


def bottleneck(res):
    """The result.Verdict of run res (a result.RunResult): side "host",
    "guest", "backend", "neither" or "unknown", and one line why."""
    roles = (res.cpu.roles if res.cpu is not None else None) or {}
    sent = res.sender_result
    app = res.app
    if res.backend != "none":
        busy = hostbound.verdict(res.cpu)
        if busy:
            return busy
    if topologies.of_report(res).nfwd:
        return _chain(res)
    if res.backend != "none" and app == "rr":
        return _rr(sent, _saturated(roles), res.cpu)
    if res.backend == "none" or app not in ("gen", "sink"):
        return _verdict("unknown", "no verdict for app %s" % app)
    if _paced(sent):
        return _verdict("neither", "paced at the requested rate (%.0f of %.0f %s)"
                        % (sent["rate_achieved"], sent["rate_target"],
                           "bit/s" if sent.get("rate_unit") == "bps" else "pps"))
    if app == "gen":
        return _gen(res, sent, _saturated(roles))
    return _sink(res, sent, _saturated(roles))


def _directions(res):
    """{name: result.Direction} of run res's counts."""
    return (res.counts.directions if res.counts is not None else None) or {}


def _chain(res):
    """PVP/PVVP: the hop that lost the most frames says who was slow (its
    loss is located by topologies/pvp.py's chain_counts): a forwarder's full
    input ring is the forwarder's doing, unless its vCPU stalled longer
    than that ring covers (the hop's host_stall); QEMU's socket in front of
    it is QEMU's or the forwarder's as for a sink; the backend or the
    tester's own receiving side, the host's. Frames left on a ring at
    teardown say nothing."""
    dirs = _directions(res)
    hops = [(n, d) for n, d in dirs.items() if n != "end to end" and d.lost]
    if not hops:
        if "end to end" not in dirs:
            return _verdict("unknown", "no end-to-end count of the tester's frames")
        paced = str((res.identity or {}).get("rate") or "max") not in ("max", "0")
        return _verdict("neither", "no hop lost a frame; %s" % (
            "the tester was paced (rate given)" if paced else
            "the tester sent flat out, so its own rate was the limit"))
    name, d = max(hops, key=lambda nd: nd[1].lost)
    if d.host_stall:
        return _verdict("host", d.why)
    where = [w for w in d.where or () if not counts.is_left_at_exit(w)]
    if not where:
        return _verdict("unknown", "%s: %d frames lost, none during the run at a place "
                        "counted (%s)" % (name, d.lost, d.why or "not located"))
    w = max(where, key=lambda w_: w_["frames"])
    line = "%s: %d frames %s" % (name, w["frames"], w["what"])
    if w["at"] in ("ring", "driver", "guest"):
        return _verdict("guest", line + ": the forwarder did not drain it in time")
    if w["at"] == "qemu_socket":
        g = topologies.pvp.socket_guest(res, w)
        return _socket_verdict((g.result if g is not None else None) or {}, w)
    return _verdict("backend" if w["at"] in ("backend", "peer") else "unknown", line)


def _gen(res, sent, hot):
    dropped = sent.get("tx_dropped")
    made = (sent.get("packets") or 0) + (dropped or 0)
    if isinstance(dropped, (int, float)) and made and dropped / made >= RING_FULL_BACKEND:
        return _verdict("backend", "the guest's TX ring was full for %.1f%% of the frames it "
                        "made (dropped, txfull=drop): the backend did not take them in time"
                        % (100.0 * dropped / made))
    frac = ring_full_fraction(res.sender)
    if frac is not None and frac >= RING_FULL_BACKEND:
        return _verdict("backend", "guest TX ring full %.0f%% of the run" % (100 * frac))
    if hot:
        return _verdict("backend", "%s at %.0f%% CPU" % hot)
    if frac is not None:
        return _verdict("guest", "TX ring full only %.1f%% of the run and no backend thread "
                        "saturated" % (100 * frac))
    if res.cpu:
        return _verdict("guest", "no backend thread saturated (ring-full time not reported)")
    return _verdict("unknown", "no CPU figures")


def _sink(res, sent, hot):
    """The host sends; the place that turned most frames away says who was
    slow: the guest's full RX ring (testpmd could not place them while the
    app ran), QEMU's socket, or the backend's own queues. Frames left in
    the guest's ring after the app stopped say nothing. Either of the
    first two is the host's when the guest's vCPU stalled longer than its
    RX ring covers at the offered rate (stalls.py). QEMU that stopped
    reading its socket altogether is the backend's (counts.socket_stall)."""
    stall = counts.stalled(res.counts)
    if stall:
        return _verdict("backend", stall)
    host = res.host or {}
    refused, offered = host.get("ring_full_drops") or 0, host.get("offered_at_end")
    socket, backend = _lost_at(res, "qemu_socket"), _lost_at(res, "backend")
    worst = max((refused, (socket or {}).get("frames", 0), (backend or {}).get("frames", 0)))
    if worst and worst == refused and offered and refused / offered >= REFUSED_SHARE:
        return _host_stall(res, _verdict(
            "guest", "testpmd could not place %d of the %d frames it offered (%.1f%%) in the "
            "guest's full RX ring while the app ran" % (refused, offered,
                                                        100.0 * refused / offered)))
    if socket and worst == socket["frames"]:
        return _host_stall(res, _socket_verdict(sent, socket))
    if backend and worst == backend["frames"]:
        return _verdict("backend", "%d frames %s" % (backend["frames"], backend["what"]))
    if hot:
        return _verdict("backend", "%s at %.0f%% CPU" % hot)
    if any(w.startswith("rate=") and w not in ("rate=", "rate=max", "rate=0")
           for w in res.config or ()):
        return _verdict("neither", "the host sender was paced (rate given) and nothing was "
                        "dropped")
    return _verdict("unknown", "no drops and no saturated host thread")


def _host_stall(res, v):
    """v, or the host's side when the guest's vCPU stalled longer than its
    RX ring covers: the ring overflowed whatever the app's speed (the
    guest's, with the reason, when its own sample lines paused it)."""
    g = res.sender
    st, _ = stalls.read(g.result)
    side, note = stalls.blame(g.label or "the guest", st, stalls.ring_size(g.result),
                              stalls.offered_pps(res), res.app or "guest")
    return _verdict(side, "%s; %s" % (v.why, note)) if note else v


def _lost_at(res, place):
    """The largest host->guest drop at place, or None."""
    dirs = _directions(res)
    for name in ("host->guest", "host->guest frames"):
        d = dirs.get(name)
        found = [w for w in (d.where if d is not None else None) or ()
                 if w["at"] == place and w["frames"]]
        if found:
            return max(found, key=lambda w: w["frames"])
    return None


def _socket_verdict(sent, at):
    """Drops in QEMU's receiving UDP socket: QEMU's netdev reads one
    datagram per call (docs/apps.md). If the guest mostly found its RX ring
    empty, QEMU's read path was the bottleneck, not the guest."""
    q = (sent.get("vnet") or {}).get("rx") or {}
    polls, frames = q.get("polls"), q.get("packets")
    if isinstance(polls, (int, float)) and polls and isinstance(frames, (int, float)):
        empty = max(0.0, 1.0 - frames / polls)
        if empty >= 0.5:
            return _verdict("backend", "QEMU's netdev did not read its UDP socket in time: %d "
                            "frames dropped in the socket buffer while the guest found its RX "
                            "ring empty in at least %.0f%% of its polls"
                            % (at["frames"], 100 * empty))
        return _verdict("guest", "the guest did not drain its RX ring in time: QEMU's socket "
                        "buffer overflowed (%d frames) while the guest's polls found %.1f "
                        "frames each" % (at["frames"], frames / polls))
    return _verdict("unknown", "%d frames %s (the guest's RX polls not reported)"
                    % (at["frames"], at["what"]))


# Below this share of the run waiting for a CPU, the host had CPUs to spare.
SPARE_WAIT_PCT = 10.0


def _rr(sent, hot, cpu):
    """Request/response: one transaction in flight per session, so the rate
    is the round trip's, unless a thread on the way was saturated. The
    round trip includes waiting for a CPU: said when it was not rare (the
    report's `waited for a CPU` line beside it)."""
    if hot:
        return _verdict("backend", "%s at %.0f%% CPU" % hot)
    p50 = sent.get("p50_us")
    lat = " (p50 %.0f us)" % p50 if isinstance(p50, (int, float)) else ""
    wait = cpu.wait_pct if cpu is not None else None
    host = "and CPUs to spare" if wait is None or wait < SPARE_WAIT_PCT else \
        "but its threads waited for a CPU %.0f%% of the run, part of each round trip" % wait
    return _verdict("neither", "latency-bound: each session waits for its answer%s, no host "
                    "thread saturated, %s" % (lat, host))
