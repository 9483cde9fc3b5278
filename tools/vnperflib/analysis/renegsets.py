"""app=reneg's counts per feature set (docs/apps.md, reneg): the guest
sends each set's frames on the set's stream id and the host peer counts
and reflects each one, so every set has two directions of its own:
guest->host (the set's frames sent against the peer's count of its
stream) and, where the peer reflected (back=1: dgram, socket, tap),
host->guest (the peer's count of the stream, each frame sent back,
against what the guest counted back on it). testpmd 5tswap (vhost-user)
sends every frame back and counts none per set: its port totals stand in
for the peer's count (echo_peer). A loss names its set
and its way. With stream_s= each set also runs a TCP stream to the host's
iperf 2 server, one connection a set: stream_directions counts its bytes
(the guest's acknowledged against the server's stream of the set's local
port, or of its place in order behind a NAT). With uso= each set that
negotiated HOST_USO sends USO datagrams, every segment stamped on stream
id 0x100 + the set's index: uso_directions counts its segments against
the host UDP socket's count of that stream (run/udpcount.py, tap). The
driver's counters of each set's bring-up come once, in the set's sample
line; with_set_counters puts them in the set's entry."""

# iperf 2's flags word, the first 4 bytes of a client's stream: the
# host's server reads it as the header and does not count it (app iperf's
# too: counts.py).
IPERF_FLAGS_BYTES = 4


def set_label(k, s):
    """The name of set k (from 0) in a direction: "set 2 (-event_idx)"."""
    text = s.get("set") if isinstance(s, dict) else None
    return "set %d (%s)" % (k + 1, text) if isinstance(text, str) else "set %d" % (k + 1)


def _count(obj, key):
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def tcp_stream(s):
    """Set s's TCP stream (its "tcp": {"bytes", "duration_ns", "gbps",
    "unacked", "ok"}, stream_s=), or None."""
    st = s.get("tcp") if isinstance(s, dict) else None
    return st if isinstance(st, dict) else None


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


def echo_peer(res, host):
    """The per-stream counts ({"streams": [{"id", "packets"}]}, as the host
    peer's) of a host end that sends every frame back on its port and
    counts only its port's totals (host: rx_frames, tx_frames; testpmd
    5tswap): where every frame the guest sent reached it (rx_frames the
    guest's tx_packets, lwIP's included) each set's frames did, and the
    way back is the guest's count per set; else where every frame it
    received came back to the guest (tx_frames and rx_frames its
    rx_packets) each set's count is what the guest got back on it, the
    loss guest->host. None where the totals lost frames both ways or
    counts are missing: which sets lost them is not known."""
    res, host = res or {}, host or {}
    sets = res.get("sets")
    got, back = _count(host, "rx_frames"), _count(host, "tx_frames")
    if not isinstance(sets, list) or None in (got, back) or not all(
            isinstance(s, dict) and _count(s, "stream") is not None for s in sets):
        return None
    if got == _count(res, "tx_packets"):
        way = [_count(s, "packets") for s in sets]
    elif got == back == _count(res, "rx_packets"):
        way = [_count(s.get("rx"), "packets") for s in sets]
    else:
        return None
    if None in way:
        return None
    return {"streams": [{"id": s["stream"], "packets": n} for s, n in zip(sets, way)]}


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


def host_streams(iperf):
    """The host iperf server's streams as [(client_port, bytes)], in the
    order they ended (one a set); None without its result."""
    streams = iperf.get("streams") if isinstance(iperf, dict) else None
    if not isinstance(streams, list):
        return None
    return [(_count(s, "client_port"), _count(s, "bytes")) for s in streams if isinstance(s, dict)]


def _set_streams(sets, iperf):
    """[(k, set, stream, host bytes or None)] for each set with a TCP
    stream: the server's stream from the set's local port where no NAT
    stood between (tap: a failed set shifts no other), else the sets'
    streams in order; a stream the server never reported got 0."""
    got = host_streams(iperf)
    by_port = got is not None and iperf.get("nat") is False
    ports = {p: n for p, n in got or () if p is not None}
    out, j = [], 0
    for k, s in enumerate(sets if isinstance(sets, list) else ()):
        st = tcp_stream(s)
        if st is None:
            continue
        if got is None:
            host = None
        elif by_port:
            host = ports.get(_count(st, "local_port"), 0)
        else:
            host = got[j][1] if j < len(got) else 0
        j += 1
        out.append((k, s, st, host))
    return out


def stream_directions(res, iperf):
    """[(name, sent, received, where)] in bytes, one per set with a TCP
    stream (stream_s=): the bytes the host acknowledged, less iperf's
    flags word, plus what the guest still held unacknowledged at its stop
    (the host may have read any part of it: its ACKs lost on the way
    back; located at the guest), against the host iperf server's stream of
    the set (_set_streams; None: no server result)."""
    out = []
    for k, s, st, host in _set_streams((res or {}).get("sets"), iperf):
        acked, unacked = _count(st, "bytes"), _count(st, "unacked") or 0
        sent = None if acked is None else max(0, acked - IPERF_FLAGS_BYTES) + unacked
        out.append((set_label(k, s) + " stream guest->host", sent, host,
                    [("guest", "bytes unacknowledged at the guest's stop (the host's iperf "
                      "may have read any part of them: its ACKs lost on the way back)",
                      unacked)]))
    return out


# apps/reneg_uso.h's RENEG_USO_STREAM: a set's USO segments' stream id is
# its index plus this (uso=).
USO_STREAM = 0x100


def uso_of(s):
    """Set s's USO datagrams (its "uso" object: gso_size,
    segments_per_datagram, last_segment, datagrams, segments, stream,
    host_uso) where it negotiated HOST_USO and sent them, or None."""
    u = s.get("uso") if isinstance(s, dict) else None
    return u if isinstance(u, dict) and u.get("host_uso") is True else None


def udp_streams(udp):
    """{stream id: {"packets", "sizes"}} of the host's udpcount result
    (None: no result)."""
    if not isinstance(udp, dict):
        return None
    return {s["id"]: s for s in udp.get("streams") or ()
            if _count(s, "id") is not None and _count(s, "packets") is not None}


def uso_directions(res, udp):
    """[(name, sent, received, where)] in segments, one per set that sent
    USO datagrams (uso=: uso_of): the segments the device was to cut
    against the host UDP socket's count of the set's stream (0: none came;
    None: no udpcount result), and "uso guest->host" for them all. Where:
    the segments the socket had no room for (its namespace's
    RcvbufErrors over the run, any set's: the sets are not told apart)."""
    got = udp_streams(udp)
    full = _count(udp, "rcvbuf_errors") or 0
    where = [("peer", "segments the host's UDP socket had no room for (RcvbufErrors over the "
              "run, any set's)", full)]
    out, sent, received = [], 0, 0
    for k, s in enumerate((res or {}).get("sets") or ()):
        u = uso_of(s)
        if u is None:
            continue
        host = None if got is None else _count(got.get(_count(u, "stream")), "packets") or 0
        out.append((set_label(k, s) + " uso guest->host", _count(u, "segments"), host, where))
        sent += _count(u, "segments") or 0
        received = None if host is None else received + host
    if out:
        out.append(("uso guest->host", sent, received, where))
    return out
