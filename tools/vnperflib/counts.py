"""Merges guest counters (results protocol) with host-side counts, says
whether they agree and, where they differ, where frames were lost."""

TX_APPS = ("gen",)
RX_APPS = ("sink",)
# rr's "packets" counts both directions: only explicit tx_/rx_ members.
BOTH_APPS = ("reflect", "fwd")


def _first(d, *keys):
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v)
    return None


def guest_counts(app, result):
    """(tx_packets, tx_bytes, rx_packets, rx_bytes) of the app's own test
    traffic ("packets"/"bytes", docs/apps.md) in the app's direction; None
    for what it does not say."""
    if not result:
        return None, None, None, None
    p, b = _first(result, "packets"), _first(result, "bytes")
    if app in TX_APPS:
        return p, b, None, None
    if app in RX_APPS:
        return None, None, p, b
    if app in BOTH_APPS:
        return p, b, p, b
    return None, None, None, None


def vnet_count(result, queue):
    """Every frame that crossed the wire on a queue ("tx"/"rx"): the app's
    tx_packets/rx_packets (its frames plus lwIP's), else the driver's
    counter; None if neither is there."""
    wire = _first(result or {}, queue + "_packets")
    if wire is not None:
        return wire
    vnet = (result or {}).get("vnet")
    q = vnet.get(queue) if isinstance(vnet, dict) else None
    return _first(q, "packets") if isinstance(q, dict) else None


def _direction(what, sent, got, drops, lossless):
    d = {"sent": sent, "received": got}
    if sent is None or got is None:
        d["verdict"] = "unknown"
        d["why"] = "%s: one side reports no count" % what
        return d
    lost = sent - got
    d["lost"] = lost
    d["loss_pct"] = 100.0 * lost / sent if sent else 0.0
    if lost == 0:
        d["verdict"] = "agree"
        d["why"] = "%s: %d sent, %d received" % (what, sent, got)
    elif lost < 0:
        d["verdict"] = "disagree"
        d["why"] = ("%s: receiver counted %d more than were sent "
                    "(frames from elsewhere, or a counting bug)" % (what, -lost))
    else:
        where = []
        known = 0
        for place, n in sorted((drops or {}).items()):
            if n:
                where.append("%d at %s" % (n, place))
                known += n
        rest = lost - known
        if rest > 0:
            where.append("%d in between (%s)" % (rest, "unexplained on a lossless path" if lossless
                                                  else "backend/QEMU queue"))
        d["located"] = min(known, lost)
        # Loss the counters account for is loss, not disagreement.
        d["verdict"] = "disagree" if lossless and rest > 0 else "lossy"
        d["why"] = "%s: %d of %d lost (%.3f%%): %s" % (what, lost, sent, d["loss_pct"],
                                                       ", ".join(where))
    return d


def merge(app, result, host, lossless=False):
    """Both directions that have counts on either side, and an overall
    "agree": True only if every direction with both counts agrees."""
    txp, txb, rxp, rxb = guest_counts(app, result)
    host = host or {}
    out = {"guest": {"tx_packets": txp, "tx_bytes": txb, "rx_packets": rxp, "rx_bytes": rxb},
           "host": dict(host), "directions": {}}
    # Frames still on the guest's TX ring when it exited were counted as
    # sent but never reached the device.
    rx_drops = dict(host.get("rx_drops") or {})
    inflight = _first(((result or {}).get("vnet") or {}).get("tx") or {}, "in_flight")
    if inflight:
        rx_drops["the guest's TX ring at exit (never sent)"] = inflight
    # App level: the app's frames against the host end's count of them.
    if txp is not None and host.get("rx_packets") is not None and (txp or host["rx_packets"]):
        out["directions"]["guest->host"] = _direction(
            "guest->host", txp, host["rx_packets"], rx_drops, lossless)
    if rxp is not None and host.get("tx_packets") is not None and (rxp or host["tx_packets"]):
        out["directions"]["host->guest"] = _direction(
            "host->guest", host["tx_packets"], rxp, host.get("tx_drops"), lossless)
    # Wire level: every frame the driver sent against every frame the host
    # end saw (ARP included), when both sides report it.
    vtx = vnet_count(result, "tx")
    if vtx is not None and host.get("rx_frames") is not None and (vtx or host["rx_frames"]):
        out["directions"]["guest->host frames"] = _direction(
            "guest->host frames", vtx, host["rx_frames"], rx_drops, lossless)
    vrx = vnet_count(result, "rx")
    if vrx is not None and host.get("tx_frames") is not None and (vrx or host["tx_frames"]):
        drops = dict(host.get("tx_drops") or {})
        ring = ((result or {}).get("vnet") or {}).get("rx", {}).get("size")
        if host.get("sender_outlives_guest") and isinstance(ring, int):
            # The host keeps sending after the app stopped reading: up to a
            # ring's worth is left in the guest's RX ring.
            drops["the guest's RX ring after the app stopped"] = min(
                ring, max(0, host["tx_frames"] - vrx - sum(drops.values())))
        if app == "rr":
            # The client stops at its deadline with up to one reply per
            # session still on its way.
            inflight = _first(result, "sessions") or 1
            drops["replies in flight when the client stopped"] = min(
                inflight, max(0, host["tx_frames"] - vrx - sum(drops.values())))
        out["directions"]["host->guest frames"] = _direction(
            "host->guest frames", host["tx_frames"], vrx, drops, lossless)
    verdicts = [d["verdict"] for d in out["directions"].values()]
    # None: no direction has counts on both sides (e.g. hub, user).
    out["agree"] = all(v == "agree" for v in verdicts) if verdicts else None
    return out


def merge_guests(app, tx_result, rx_result, lossless=True, drops=None):
    """Two-guest topology: the sender guest's counts against the receiver
    guest's, at app level and (driver counters) at frame level."""
    txp, _, _, _ = guest_counts(app, tx_result)
    partner = {"gen": "sink", "rr": "rr"}.get(app, app)
    _, _, rxp, _ = guest_counts(partner if partner != "rr" else "sink", rx_result)
    out = {"guest": {"tx_packets": txp}, "peer_guest": {"rx_packets": rxp}, "directions": {}}
    if txp is not None and rxp is not None and app == "gen":
        out["directions"]["tx guest->rx guest"] = _direction(
            "tx guest->rx guest", txp, rxp, drops, lossless)
    vtx, vrx = vnet_count(tx_result, "tx"), vnet_count(rx_result, "rx")
    if vtx is not None and vrx is not None:
        out["directions"]["tx guest->rx guest frames"] = _direction(
            "tx guest->rx guest frames", vtx, vrx, drops, lossless)
    verdicts = [d["verdict"] for d in out["directions"].values()]
    out["agree"] = all(v == "agree" for v in verdicts) if verdicts else None
    return out


def merge_fwd(result, host, lossless=True):
    """app=fwd: host sender -> guest NIC a -> forwarded -> NIC b -> host
    counter; the guest's a_to_b in between."""
    host = host or {}
    a2b = (result or {}).get("a_to_b") if isinstance((result or {}).get("a_to_b"), dict) else {}
    fwd = _first(a2b, "packets")
    guest_drops = {"guest forwarder (tx_dropped)": _first(a2b, "tx_dropped") or 0,
                   "guest forwarder (runts)": _first(a2b, "runts") or 0}
    out = {"guest": {"a_to_b": fwd}, "host": dict(host), "directions": {}}
    sent, got = host.get("tx_packets"), host.get("rx_packets")
    if sent is not None and fwd is not None:
        # Frames the forwarder received but could not pass on were received.
        out["directions"]["host->guest a"] = _direction("host->guest a", sent, fwd + sum(
            guest_drops.values()), host.get("tx_drops"), lossless)
    if fwd is not None and got is not None:
        out["directions"]["guest b->host"] = _direction("guest b->host", fwd, got, None, lossless)
    if sent is not None and got is not None:
        drops = dict(host.get("tx_drops") or {})
        drops.update(guest_drops)
        out["directions"]["end to end"] = _direction("end to end", sent, got, drops, lossless)
    verdicts = [d["verdict"] for d in out["directions"].values()]
    out["agree"] = all(v == "agree" for v in verdicts) if verdicts else None
    return out


def merge_iperf(result, host):
    """app=iperf: the TCP byte counts of both ends, side by side. TCP
    retransmits, so there is no loss to find; the ends count their own
    stream headers differently, so small differences are normal."""
    ip = (host or {}).get("iperf") or {}
    gbytes = _first(result or {}, "bytes")
    out = {"guest": {"bytes": gbytes}, "host": {"iperf": ip}, "directions": {}, "agree": None}
    if gbytes is None or ip.get("bytes") is None:
        return out
    if ip.get("host_role") == "server":
        name, sent, got = "guest->host bytes", gbytes, ip["bytes"]
    else:
        name, sent, got = "host->guest bytes", ip["bytes"], gbytes
    out["directions"][name] = {
        "sent": sent, "received": got, "verdict": "tcp",
        "why": "%s: sender counted %d bytes, receiver %d (%+d; TCP, not compared for loss)"
               % (name, sent, got, got - sent)}
    return out
