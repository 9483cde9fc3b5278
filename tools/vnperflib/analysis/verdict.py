"""Bottleneck verdict for one run. A polling guest's vCPU thread is always
busy; what tells the sides apart is how often the guest found its TX ring
full (waiting on the backend) and whether a backend thread was saturated.
First of all: whether the host had CPUs enough for the threads measured
(hostbound.py)."""

from .. import topologies
from . import counts, hostbound, stalls

SATURATED_PCT = 90.0
# Busy-polling by design: 100% CPU says nothing about saturation.
POLLING_ROLES = ("vcpu", "testpmd")
RING_FULL_BACKEND = 0.20  # fraction of the run the TX ring was full


def ring_full_fraction(rep):
    """Fraction of the app's duration the guest spent on a full TX ring,
    from driver counters (cycles or ns), or None when not reported."""
    g = rep["guests"][-1]
    r = g.get("result") or {}
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
            tsc = (g.get("boot") or {}).get("tsc_hz")
            if isinstance(tsc, (int, float)) and tsc > 0:
                return min(1.0, v / tsc * 1e9 / dur_ns)
    return None


def _saturated(roles):
    """(role, pct) of the busiest non-polling thread group at 90% or more."""
    hot = {k: v["pct"] for k, v in roles.items()
           if not k.endswith(POLLING_ROLES) and v["pct"] >= SATURATED_PCT}
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


def bottleneck(rep):
    """{"side": "host"|"guest"|"backend"|"neither"|"unknown", "why": line}."""
    roles = (rep.get("cpu") or {}).get("roles", {})
    result = rep["guests"][-1].get("result") or {}
    app = rep["app"]
    if rep["backend"] != "none":
        busy = hostbound.verdict(rep.get("cpu"))
        if busy:
            return busy
    if topologies.of_report(rep).nfwd:
        return _chain(rep)
    if rep["backend"] != "none" and app == "rr":
        return _rr(result, _saturated(roles), rep.get("cpu"))
    if rep["backend"] == "none" or app not in ("gen", "sink"):
        return {"side": "unknown", "why": "no verdict for app %s" % app}
    if _paced(result):
        return {"side": "neither", "why": "paced at the requested rate (%.0f of %.0f %s)"
                % (result["rate_achieved"], result["rate_target"],
                   "bit/s" if result.get("rate_unit") == "bps" else "pps")}
    if app == "gen":
        return _gen(rep, result, _saturated(roles))
    return _sink(rep, result, _saturated(roles))


def _chain(rep):
    """PVP/PVVP: the hop that lost the most frames says who was slow (its
    loss is located by topologies/pvp.py's chain_counts): a forwarder's full
    input ring is the forwarder's doing, unless its vCPU stalled longer
    than that ring covers (the hop's host_stall); QEMU's socket in front of
    it is QEMU's or the forwarder's as for a sink; the backend or the
    tester's own receiving side, the host's. Frames left on a ring at
    teardown say nothing."""
    dirs = (rep.get("counts") or {}).get("directions") or {}
    hops = [(n, d) for n, d in dirs.items() if n != "end to end" and d.get("lost")]
    if not hops:
        if "end to end" not in dirs:
            return {"side": "unknown", "why": "no end-to-end count of the tester's frames"}
        paced = str((rep.get("identity") or {}).get("rate") or "max") not in ("max", "0")
        return {"side": "neither", "why": "no hop lost a frame; %s" % (
            "the tester was paced (rate given)" if paced else
            "the tester sent flat out, so its own rate was the limit")}
    name, d = max(hops, key=lambda nd: nd[1]["lost"])
    if d.get("host_stall"):
        return {"side": "host", "why": d["why"]}
    where = [w for w in d.get("where") or () if not counts.is_left_at_exit(w)]
    if not where:
        return {"side": "unknown", "why": "%s: %d frames lost, none during the run at a place "
                "counted (%s)" % (name, d["lost"], d.get("why") or "not located")}
    w = max(where, key=lambda w_: w_["frames"])
    line = "%s: %d frames %s" % (name, w["frames"], w["what"])
    if w["at"] in ("ring", "driver", "guest"):
        return {"side": "guest", "why": line + ": the forwarder did not drain it in time"}
    if w["at"] == "qemu_socket":
        g = topologies.pvp.socket_guest(rep, w)
        return _socket_verdict((g or {}).get("result") or {}, w)
    return {"side": "backend" if w["at"] in ("backend", "peer") else "unknown", "why": line}


def _gen(rep, result, hot):
    dropped = result.get("tx_dropped")
    made = (result.get("packets") or 0) + (dropped or 0)
    if isinstance(dropped, (int, float)) and made and dropped / made >= RING_FULL_BACKEND:
        return {"side": "backend", "why": "the guest's TX ring was full for %.1f%% of the "
                "frames it made (dropped, txfull=drop): the backend did not take them in "
                "time" % (100.0 * dropped / made)}
    frac = ring_full_fraction(rep)
    if frac is not None and frac >= RING_FULL_BACKEND:
        return {"side": "backend", "why": "guest TX ring full %.0f%% of the run" % (100 * frac)}
    if hot:
        return {"side": "backend", "why": "%s at %.0f%% CPU" % hot}
    if frac is not None:
        return {"side": "guest", "why": "TX ring full only %.1f%% of the run and no backend "
                                        "thread saturated" % (100 * frac)}
    if rep.get("cpu"):
        return {"side": "guest", "why": "no backend thread saturated (ring-full time not "
                                        "reported)"}
    return {"side": "unknown", "why": "no CPU figures"}


def _sink(rep, result, hot):
    """The host sends; the place that turned most frames away says who was
    slow: the guest's full RX ring (testpmd could not place them while the
    app ran), QEMU's socket, or the backend's own queues. Frames left in
    the guest's ring after the app stopped say nothing. Either of the
    first two is the host's when the guest's vCPU stalled longer than its
    RX ring covers at the offered rate (stalls.py). QEMU that stopped
    reading its socket altogether is the backend's (counts.socket_stall)."""
    stall = counts.stalled(rep.get("counts"))
    if stall:
        return {"side": "backend", "why": stall}
    host = rep.get("host") or {}
    refused, offered = host.get("ring_full_drops") or 0, host.get("offered_at_end")
    socket, backend = _lost_at(rep, "qemu_socket"), _lost_at(rep, "backend")
    worst = max((refused, (socket or {}).get("frames", 0), (backend or {}).get("frames", 0)))
    if worst and worst == refused and offered and refused / offered >= REFUSED_SHARE:
        return _host_stall(rep, {"side": "guest", "why": "testpmd could not place %d of the %d "
                                 "frames it offered (%.1f%%) in the guest's full RX ring while "
                                 "the app ran" % (refused, offered, 100.0 * refused / offered)})
    if socket and worst == socket["frames"]:
        return _host_stall(rep, _socket_verdict(result, socket))
    if backend and worst == backend["frames"]:
        return {"side": "backend", "why": "%d frames %s" % (backend["frames"], backend["what"])}
    if hot:
        return {"side": "backend", "why": "%s at %.0f%% CPU" % hot}
    if any(w.startswith("rate=") and w not in ("rate=", "rate=max", "rate=0")
           for w in rep.get("config", ())):
        return {"side": "neither", "why": "the host sender was paced (rate given) and "
                                          "nothing was dropped"}
    return {"side": "unknown", "why": "no drops and no saturated host thread"}


def _host_stall(rep, v):
    """v, or the host's side when the guest's vCPU stalled longer than its
    RX ring covers: the ring overflowed whatever the app's speed (the
    guest's, with the reason, when its own sample lines paused it)."""
    g = rep["guests"][-1]
    st, _ = stalls.read(g.get("result"))
    side, note = stalls.blame(g.get("label") or "the guest", st,
                              stalls.ring_size(g.get("result")), stalls.offered_pps(rep),
                              rep.get("app") or "guest")
    return {"side": side, "why": "%s; %s" % (v["why"], note)} if note else v


def _lost_at(rep, place):
    """The largest host->guest drop at place, or None."""
    dirs = (rep.get("counts") or {}).get("directions") or {}
    for name in ("host->guest", "host->guest frames"):
        found = [w for w in (dirs.get(name) or {}).get("where", ())
                 if w["at"] == place and w["frames"]]
        if found:
            return max(found, key=lambda w: w["frames"])
    return None


def _socket_verdict(result, at):
    """Drops in QEMU's receiving UDP socket: QEMU's netdev reads one
    datagram per call (docs/apps.md). If the guest mostly found its RX ring
    empty, QEMU's read path was the bottleneck, not the guest."""
    q = (result.get("vnet") or {}).get("rx") or {}
    polls, frames = q.get("polls"), q.get("packets")
    if isinstance(polls, (int, float)) and polls and isinstance(frames, (int, float)):
        empty = max(0.0, 1.0 - frames / polls)
        if empty >= 0.5:
            return {"side": "backend", "why": "QEMU's netdev did not read its UDP socket in "
                    "time: %d frames dropped in the socket buffer while the guest found its RX "
                    "ring empty in at least %.0f%% of its polls" % (at["frames"], 100 * empty)}
        return {"side": "guest", "why": "the guest did not drain its RX ring in time: QEMU's "
                "socket buffer overflowed (%d frames) while the guest's polls found %.1f "
                "frames each" % (at["frames"], frames / polls)}
    return {"side": "unknown", "why": "%d frames %s (the guest's RX polls not reported)"
            % (at["frames"], at["what"])}


# Below this share of the run waiting for a CPU, the host had CPUs to spare.
SPARE_WAIT_PCT = 10.0


def _rr(result, hot, cpu):
    """Request/response: one transaction in flight per session, so the rate
    is the round trip's, unless a thread on the way was saturated. The
    round trip includes waiting for a CPU: said when it was not rare (the
    report's `waited for a CPU` line beside it)."""
    if hot:
        return {"side": "backend", "why": "%s at %.0f%% CPU" % hot}
    p50 = result.get("p50_us")
    lat = " (p50 %.0f us)" % p50 if isinstance(p50, (int, float)) else ""
    wait = (cpu or {}).get("wait_pct")
    host = "and CPUs to spare" if wait is None or wait < SPARE_WAIT_PCT else \
        "but its threads waited for a CPU %.0f%% of the run, part of each round trip" % wait
    return {"side": "neither", "why": "latency-bound: each session waits for its answer%s, "
            "no host thread saturated, %s" % (lat, host)}
