"""Bottleneck verdict for one run. The guest polls, so its vCPU thread is
always busy; what tells the sides apart is how often the guest found its TX
ring full (waiting on the backend) and whether a backend thread was
saturated."""

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


def bottleneck(rep):
    """{"side": "guest"|"backend"|"neither"|"unknown", "why": line}."""
    roles = (rep.get("cpu") or {}).get("roles", {})
    result = rep["guests"][-1].get("result") or {}
    app = rep["app"]
    if rep["backend"] == "none" or app not in ("gen", "sink"):
        return {"side": "unknown", "why": "no verdict for app %s" % app}
    if _paced(result):
        return {"side": "neither", "why": "paced at the requested rate (%.0f of %.0f %s)"
                % (result["rate_achieved"], result["rate_target"],
                   "bit/s" if result.get("rate_unit") == "bps" else "pps")}
    hot = _saturated(roles)
    if app == "gen":
        frac = ring_full_fraction(rep)
        if frac is not None and frac >= RING_FULL_BACKEND:
            return {"side": "backend", "why": "guest TX ring full %.0f%% of the run" % (100 * frac)}
        if hot:
            return {"side": "backend", "why": "%s at %.0f%% CPU" % hot}
        if frac is not None:
            return {"side": "guest", "why": "TX ring full only %.1f%% of the run and no backend "
                                            "thread saturated" % (100 * frac)}
        if roles:
            return {"side": "guest", "why": "no backend thread saturated (ring-full time not "
                                            "reported)"}
        return {"side": "unknown", "why": "no CPU figures"}
    # sink: the host sends; frames the guest did not take in time were
    # dropped in front of it.
    d = ((rep.get("counts") or {}).get("directions") or {}).get("host->guest frames") or \
        ((rep.get("counts") or {}).get("directions") or {}).get("host->guest") or {}
    if d.get("located"):
        return {"side": "guest", "why": "the guest did not drain its RX ring in time (%s)"
                % d["why"].split(": ", 1)[-1]}
    if hot:
        return {"side": "backend", "why": "%s at %.0f%% CPU" % hot}
    if any(w.startswith("rate=") and w not in ("rate=", "rate=max", "rate=0")
           for w in rep.get("config", ())):
        return {"side": "neither", "why": "the host sender was paced (rate given) and "
                                          "nothing was dropped"}
    return {"side": "unknown", "why": "no drops and no saturated host thread"}
