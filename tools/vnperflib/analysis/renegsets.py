"""app=reneg's counts per feature set (docs/apps.md, reneg): the guest
sends each set's frames on the set's stream id and the host peer counts
and reflects each one, so every set has two directions of its own:
guest->host (the set's frames sent against the peer's count of its
stream) and, where the peer reflected (back=1: dgram, socket, tap),
host->guest (the peer's count of the stream, each frame sent back,
against what the guest counted back on it). A loss names its set
and its way. The driver's counters of each set's bring-up come once, in
the set's sample line; with_set_counters puts them in the set's entry."""


def set_label(k, s):
    """The name of set k (from 0) in a direction: "set 2 (-event_idx)"."""
    text = s.get("set") if isinstance(s, dict) else None
    return "set %d (%s)" % (k + 1, text) if isinstance(text, str) else "set %d" % (k + 1)


def _count(obj, key):
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def with_set_counters(res, samples):
    """The guest's result (a dict, or None) of app reneg with each set's
    driver counters from its sample line as sets[k]["vnet"] (a sample of
    no set left out); any other result as it is."""
    if not isinstance(res, dict) or res.get("app") != "reneg" \
            or not isinstance(res.get("sets"), list):
        return res
    vnet = {s.get("set"): s.get("vnet") for s in samples or ()
            if isinstance(s, dict) and s.get("app") == "reneg"}
    return dict(res, sets=[dict(s, vnet=vnet[k]) if isinstance(s, dict) and vnet.get(k)
                           is not None else s for k, s in enumerate(res["sets"])])


def peer_streams(peer):
    """{stream id: packets} of the host peer's result (None: no result)."""
    if not isinstance(peer, dict):
        return None
    out = {}
    for s in peer.get("streams") or ():
        if _count(s, "id") is not None and _count(s, "packets") is not None:
            out[s["id"]] = s["packets"]
    return out


def directions(res, peer):
    """[(name, sent, received, where)] per set and way (host->guest where
    the set counted frames back: back=1), where a list of (at, what,
    frames) places of counts.drop; [] without sets. A set whose stream the
    peer never saw was received 0 there (None: no peer result)."""
    sets = (res or {}).get("sets")
    if not isinstance(sets, list):
        return []
    got = peer_streams(peer)
    out = []
    for k, s in enumerate(sets):
        if not isinstance(s, dict):
            continue
        stream = _count(s, "stream")
        host = None if got is None or stream is None else got.get(stream, 0)
        name = set_label(k, s)
        out.append((name + " guest->host", _count(s, "packets"), host, []))
        back = s.get("rx")
        if isinstance(back, dict):  # back=1: the peer reflected
            bad = _count(back, "malformed") or 0
            out.append((name + " host->guest", host, _count(back, "packets"),
                        [("guest", "malformed (length, header or checksum), dropped by the "
                          "guest", bad)]))
    return out
