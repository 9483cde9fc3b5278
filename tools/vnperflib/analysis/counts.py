"""Merges guest counters (results protocol) with host-side counts: per
direction what was sent, what arrived, what was lost and where (the guest
driver's drops, a ring, QEMU's socket, the backend, the peer), and what
the receiver's sequence numbers say. A direction with loss is never
"agree". Built typed: a result.Direction per direction, a result.Counts
of them; a drop (where a direction's frames were lost) stays the JSON
object the backends make (drop())."""

import types

from . import renegsets

TX_APPS = ("gen", "replay", "reneg")
RX_APPS = ("sink",)
# rr's "packets" counts both directions: only explicit tx_/rx_ members.
BOTH_APPS = ("reflect", "fwd")

# Where frames can be lost (the "at" of a drop), in path order.
PLACES = ("driver", "guest", "ring", "qemu_socket", "backend", "peer", "in_flight",
          "unexplained")


def drop(at, what, frames):
    """One place frames were lost: at (one of PLACES), a readable what."""
    assert at in PLACES, at
    return {"at": at, "what": what, "frames": frames}


# Frames still on a TX ring when its guest exited: counted as sent by the
# guest, never handed to the device. They locate a count's gap but say
# nothing of who was slow while the test ran.
LEFT_AT_EXIT = "left on %s's TX ring at exit"


def left_at_exit(who, frames, why=""):
    """The drop of frames left on who's TX ring at exit (why: a note)."""
    return drop("ring", LEFT_AT_EXIT % who + why, frames)


def is_left_at_exit(d):
    """Whether drop d is frames left on a TX ring at exit (left_at_exit)."""
    head, tail = LEFT_AT_EXIT.split("%s")
    return d["at"] == "ring" and d["what"].startswith(head) and tail in d["what"]


def _first(d, *keys):
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v)
    return None


def guest_counts(app, res):
    """(tx_packets, tx_bytes, rx_packets, rx_bytes) of the app's own test
    traffic ("packets"/"bytes", docs/apps.md) in the app's direction; None
    for what it does not say."""
    if not res:
        return None, None, None, None
    p, b = _first(res, "packets"), _first(res, "bytes")
    if app in TX_APPS:
        return p, b, None, None
    if app in RX_APPS:
        return None, None, p, b
    if app in BOTH_APPS:
        return p, b, p, b
    return None, None, None, None


def vnet_count(res, queue):
    """Every frame that crossed the wire on a queue ("tx"/"rx"): the app's
    tx_packets/rx_packets (its frames plus lwIP's), else the driver's
    counter (with several pairs every pair's added up: vnet.tx and
    vnet.rx are pair 0's); None if neither is there."""
    wire = _first(res or {}, queue + "_packets")
    if wire is not None:
        return wire
    pairs = ((res or {}).get("vnet") or {}).get("queues") or []
    if len(pairs) > 1:
        each = [_first(p, queue + "_packets") if isinstance(p, dict) else None for p in pairs]
        return None if None in each else sum(each)
    return _first(vnet_queue(res, queue), "packets")


def vnet_queue(res, queue):
    """The driver's counters of one queue ({} when not reported)."""
    vnet = (res or {}).get("vnet")
    q = vnet.get(queue) if isinstance(vnet, dict) else None
    return q if isinstance(q, dict) else {}


def generated(app, res):
    """Frames the sending app made, including those the guest itself
    dropped (they took their sequence numbers: the receiver sees them as
    gaps), and the guest-side drops: (frames, [drop])."""
    txp = guest_counts(app, res)[0]
    if txp is None:
        return None, []
    drops = [drop("driver", "dropped by the guest driver on a full TX ring (txfull=drop)",
                  _first(res, "tx_dropped") or 0),
             drop("guest", "not sent: lwIP out of memory (path=stack)",
                  _first(res, "tx_nomem") or 0)]
    return txp + sum(d["frames"] for d in drops), drops


def _dir(**members):
    """A result.Direction of the members given, each written. result.py
    loads here, not with this module: the backends import drop() for
    `vnperf run --help` and its refusals (tests/py/test_cli_speed.py)."""
    from .. import result
    return result.Direction.given(**members)


def _counts(dirs, agree, **members):
    """The result.Counts of directions dirs ({name: result.Direction}),
    agree and the members given (result.py loads here: _dir)."""
    from .. import result
    return result.Counts.given(**members, directions=types.MappingProxyType(dirs), agree=agree)


def _agree(dirs):
    """Every direction agrees; None when no direction has counts on both
    sides (e.g. hub, user)."""
    verdicts = [d.verdict for d in dirs.values()]
    return all(v == "agree" for v in verdicts) if verdicts else None


def _direction(what, sent, got, where=(), lossless=False, seen=None):
    """One direction (a result.Direction): sent, received, lost and
    where; the receiver's own view (seen: sequence gaps and what lies
    outside the numbers it saw) when it has one."""
    d = _counted(what, sent, got, tuple(w for w in where if w["frames"]), lossless, seen)
    return d if seen is None else d.but(receiver=seen)


def _counted(what, sent, got, where, lossless, seen):
    """_direction's Direction, but the receiver's view (a member it adds);
    seen only for the why."""
    if sent is None or got is None:
        return _dir(sent=sent, received=got, where=where, verdict="unknown",
                    why="%s: one side reports no count" % what)
    lost = sent - got
    pct = 100.0 * lost / sent if sent else 0.0
    if lost <= 0:
        why = "%s: %d sent, %d received, none lost" % (what, sent, got) if lost == 0 else \
            "%s: receiver counted %d more than were sent (frames from elsewhere, or a " \
            "counting bug)" % (what, -lost)
        return _dir(sent=sent, received=got, where=where, lost=lost, loss_pct=pct,
                    verdict="agree" if lost == 0 else "disagree", why=why)
    known = sum(w["frames"] for w in where)
    if known > lost:
        # Places that can only hold up to a bound (a ring) were given that
        # bound: the loss itself is what was counted.
        where, known = _clip(where, lost), lost
    rest = lost - known
    if rest:
        where += (drop("unexplained", "unexplained on a lossless path" if lossless
                       else "in between (backend or QEMU queues, not counted)", rest),)
    # Loss the counters account for is loss, not disagreement.
    return _dir(
        sent=sent, received=got, where=where, lost=lost, loss_pct=pct, located=known,
        verdict="disagree" if lossless and rest else "lossy",
        why="%s: %d sent, %d received, %d lost (%.3f%%): %s%s" % (
            what, sent, got, lost, pct, _where_text(where), _seen_text(seen)))


def _where_text(where):
    return "; ".join("%d %s" % (w["frames"], w["what"]) for w in where)


def _clip(where, lost):
    out, left = [], lost
    for w in where:
        n = min(w["frames"], left)
        if n:
            out.append(dict(w, frames=n))
        left -= n
    return tuple(out)


def _seen_text(seen):
    if not seen:
        return ""
    if seen["after_last"] is None:
        return "; the receiver saw %d sequence gaps" % seen["seq_gaps"]
    return "; the receiver saw %d sequence gaps and %d frames beyond its highest number" % (
        seen["seq_gaps"], seen["after_last"])


def receiver_view(sent, streams, gaps):
    """What a receiver's sequence numbers say: gaps between the first and
    the highest it saw, and (with its per-stream highest numbers) how many
    of the sender's frames lie beyond them (lost at the end, invisible as
    gaps). None when the receiver tracked no sequence numbers."""
    if gaps is None:
        return None
    after = None
    if isinstance(streams, list) and sent is not None:
        after = sent - sum(s.get("max_seq", 0) + 1 for s in streams if isinstance(s, dict))
    return {"seq_gaps": gaps, "after_last": after}


def merge(app, res, host, lossless=False):
    """Both directions that have counts on either side, app level and
    frame level (a result.Counts), and an overall "agree": True only if
    every direction with both counts agrees (None when none has both)."""
    host = host or {}
    txp, txb, rxp, rxb = guest_counts(app, res)
    dirs = {}
    # Frames still on the guest's TX ring when it exited were counted as
    # sent but never reached the device.
    ring = left_at_exit("the guest", _first(vnet_queue(res, "tx"), "in_flight") or 0,
                        " (never sent)")
    rx_where = [ring] + list(host.get("rx_drops") or ())
    sent, guest_drops = generated(app, res)
    if sent is not None and host.get("rx_packets") is not None and (sent or host["rx_packets"]):
        seen = receiver_view(sent, (host.get("peer") or {}).get("streams"),
                             host.get("rx_seq_lost"))
        dirs["guest->host"] = _direction("guest->host", sent, host["rx_packets"],
                                         guest_drops + rx_where, lossless, seen)
    if rxp is not None and host.get("tx_packets") is not None and (rxp or host["tx_packets"]):
        seen = receiver_view(host["tx_packets"], None, _first(res, "lost"))
        where = _rx_where(app, res, host, host["tx_packets"], rxp)
        dirs["host->guest"] = socket_stall(_direction("host->guest", host["tx_packets"], rxp,
                                                      where, lossless, seen), where)
    # Frame level: every frame the driver sent against every frame the host
    # end saw (ARP included), when both sides report it.
    vtx = vnet_count(res, "tx")
    if vtx is not None and host.get("rx_frames") is not None and (vtx or host["rx_frames"]):
        dirs["guest->host frames"] = _direction("guest->host frames", vtx, host["rx_frames"],
                                                rx_where, lossless)
    vrx = vnet_count(res, "rx")
    if vrx is not None and host.get("tx_frames") is not None and (vrx or host["tx_frames"]):
        where = _rx_where(app, res, host, host["tx_frames"], vrx)
        dirs["host->guest frames"] = socket_stall(
            _direction("host->guest frames", host["tx_frames"], vrx, where, lossless), where)
    if app == "rr":
        dirs.update(_rr_direction(res, _first(host.get("rr") or {}, "transactions")))
    if app == "reneg":
        peer = renegsets.echo_peer(res, host) if host.get("echoes") else host.get("peer")
        for name, sent, got, where in renegsets.directions(res, peer):
            dirs[name] = _direction(name, sent, got, [drop(*w) for w in where], lossless)
        # TCP: bytes acknowledged and never delivered are the backend's
        # disagreement on any path
        for name, sent, got, where in renegsets.stream_directions(res, host.get("iperf")):
            dirs[name] = _direction(name, sent, got, [drop(*w) for w in where], True)
        for name, sent, got, where in renegsets.uso_directions(res, host.get("udp")):
            dirs[name] = _direction(name, sent, got, [drop(*w) for w in where], lossless)
    return _counts(dirs, _agree(dirs), guest={"tx_packets": txp, "tx_bytes": txb,
                                              "rx_packets": rxp, "rx_bytes": rxb},
                   host=dict(host))


# QEMU 7.2's dgram netdev takes a zero-length datagram for the end of a
# connection and stops reading its socket for the rest of the run
# (docs/runner-run.md). A guest that got less than this share of what the host
# sent into QEMU's socket met that, not overload: a flat-out dgram sink
# still takes about a tenth of the peer's rate (docs/apps.md).
STALL_SHARE = 0.01
STALL_WHY = ("QEMU stopped reading its UDP socket (QEMU 7.2's dgram netdev stops receiving "
             "for the rest of the run after a zero-length datagram)")


def socket_stall(d, where):
    """Direction d (a result.Direction) into a guest, marked stalled when
    the host fed QEMU's UDP socket (a qemu_socket place in where) and the
    guest got almost nothing: the frames neither received nor dropped by
    the full socket were left unread in it, so the whole loss lies at
    QEMU's socket."""
    sent, got = d.sent, d.received
    if not any(w["at"] == "qemu_socket" for w in where) or not sent or got is None \
            or got >= STALL_SHARE * sent:
        return d
    located = tuple(w for w in d.where if w["at"] != "unexplained")
    unread = d.lost - sum(w["frames"] for w in located)
    where = located + ((drop("qemu_socket", "left unread in QEMU's UDP socket", unread),)
                       if unread else ())
    return d.but(where=where, located=d.lost, verdict="lossy", stalled=True,
                 why="%s: %s: the guest received %d of %d frames; %s" % (
                     d.why.split(":", 1)[0], STALL_WHY, got, sent, _where_text(where)))


def stalled(c):
    """The why of the first direction of c (result.Counts, or None) stalled
    at QEMU's socket, or None."""
    for d in _directions(c).values():
        if d.stalled:
            return d.why
    return None


def _directions(c):
    """{name: result.Direction} of c (result.Counts, or None)."""
    return (c.directions if c is not None else None) or {}


def _rx_where(app, res, host, sent, got):
    """Where host->guest frames were lost: the host end's drops, frames
    left in the guest's RX ring when the sender outlived the app, rr
    replies in flight when the client stopped."""
    where = list(host.get("tx_drops") or ())
    ring = _first(vnet_queue(res, "rx"), "size")
    if host.get("sender_outlives_guest") and ring:
        # The host kept sending after the app stopped reading: up to a
        # ring's worth is left in the guest's RX ring.
        where.append(drop("ring", "left in the guest's RX ring after the app stopped", ring))
    if app == "rr":
        # The client stops at its deadline with up to one reply per
        # session still on its way.
        where.append(drop("in_flight", "replies in flight when the client stopped",
                          _first(res, "sessions") or 1))
    return where


def _rr_direction(res, served=None):
    """rr: every UDP timeout is a request or a reply that never came (it
    is sent again); TCP retransmits by itself. served: the server's own
    count of answers (host rr server, or the server guest), when known.
    Returns {"rr transactions": its result.Direction}, {} when the client
    sent nothing."""
    tr, to = _first(res or {}, "transactions"), _first(res or {}, "timeouts")
    if tr is None or to is None or tr + to == 0:
        # Nothing sent is no agreement (a client that never got going).
        return {}
    d = _direction(
        "rr transactions", tr + to, tr,
        [drop("in_flight", "timed out after 200 ms (request or reply lost, sent again)", to)])
    if served is not None:
        d = _server_view(d, served, tr, to, _first(res, "sessions") or 1)
    return {"rr transactions": d}


def _server_view(d, served, done, timeouts, sessions):
    """The server's side of the client's count: it answered every
    transaction the client completed, and may have answered one more per
    session (in flight at the client's stop) and each timed-out request
    whose reply was lost. Outside that, the two sides disagree."""
    extra = served - done
    if 0 <= extra <= sessions + timeouts:
        return d.but(server_answered=served, why=d.why + (
            "; the server answered %d (%d more: in flight at the client's stop%s)" % (
                served, extra, ", or replies lost" if timeouts else "")))
    return d.but(server_answered=served, verdict="disagree", why=(
        "rr transactions: the client completed %d, the server answered %d (%s)" % (
            done, served, "fewer than completed" if extra < 0 else
            "more than one in flight per session (%d sessions) and the %d timeouts" % (
                sessions, timeouts))))


# The metrics of a run that are the guest's own count when result.Counts.host_counted
# is False: its rates.
GUEST_RATES = ("pps", "bps", "tps")


def merge_guests(app, tx_result, rx_result, lossless=True, drops=()):
    """Two-guest topology: the sender guest's counts against the receiver
    guest's, at app level and (driver counters) at frame level."""
    sent, guest_drops = generated(app, tx_result)
    _, _, rxp, _ = guest_counts("sink", rx_result) if app == "gen" else (None,) * 4
    dirs = {}
    ring = left_at_exit("the sender", _first(vnet_queue(tx_result, "tx"), "in_flight") or 0,
                        " (never sent)")
    if sent is not None and rxp is not None:
        where = guest_drops + [ring] + list(drops)
        dirs["tx guest->rx guest"] = socket_stall(_direction(
            "tx guest->rx guest", sent, rxp, where, lossless,
            receiver_view(sent, None, _first(rx_result or {}, "lost"))), where)
    vtx, vrx = vnet_count(tx_result, "tx"), vnet_count(rx_result, "rx")
    if vtx is not None and vrx is not None:
        where = [ring] + list(drops)
        dirs["tx guest->rx guest frames"] = socket_stall(_direction(
            "tx guest->rx guest frames", vtx, vrx, where, lossless), where)
    if app == "rr":
        dirs.update(_rr_direction(tx_result, _first(rx_result or {}, "transactions")))
    return _counts(dirs, _agree(dirs), guest={"tx_packets": guest_counts(app, tx_result)[0]},
                   peer_guest={"rx_packets": rxp})


def merge_fwd(res, host, lossless=True):
    """app=fwd: host sender -> guest NIC a -> forwarded -> NIC b -> host
    counter; the guest's a_to_b in between."""
    host = host or {}
    a2b = (res or {}).get("a_to_b") if isinstance((res or {}).get("a_to_b"), dict) else {}
    fwd = _first(a2b, "packets")
    guest_drops = [drop("driver", "dropped by the forwarder on NIC b's full TX ring",
                        _first(a2b, "tx_dropped") or 0),
                   drop("guest", "runts the forwarder dropped", _first(a2b, "runts") or 0)]
    dirs = {}
    sent, got = host.get("tx_packets"), host.get("rx_packets")
    if sent is not None and fwd is not None:
        # Frames the forwarder received but could not pass on were received.
        dirs["host->guest a"] = _direction(
            "host->guest a", sent, fwd + sum(d["frames"] for d in guest_drops),
            host.get("tx_drops") or (), lossless)
    if fwd is not None and got is not None:
        dirs["guest b->host"] = _direction("guest b->host", fwd, got, (), lossless)
    if sent is not None and got is not None:
        where = list(host.get("tx_drops") or ()) + guest_drops
        dirs["end to end"] = _direction("end to end", sent, got, where, lossless)
    return _counts(dirs, _agree(dirs), guest={"a_to_b": fwd}, host=dict(host))


# iperf 2's flags word, the first 4 bytes of a client's stream: the host's
# server reads it as the header and does not count it (docs/runner-run.md).
IPERF_FLAGS_BYTES = renegsets.IPERF_FLAGS_BYTES


def _iperf_to_host(name, res, host):
    """A guest client's streams: the guest counts what the host
    acknowledged, the host's iperf what it read. What the guest still held
    unacknowledged at its stop may have arrived too (its ACKs lost on the
    way back): the host's count lies between the two, or the ends disagree.
    A result.Direction."""
    acked, got = _first(res, "bytes"), host["iperf"]["bytes"]
    unacked = _first(res, "unacked") or 0
    sessions = res.get("sessions")
    streams = len(sessions) if isinstance(sessions, list) else len(host["iperf"].get("streams", ()))
    lo, hi = acked - IPERF_FLAGS_BYTES * streams, acked + unacked
    verdict = "tcp"
    why = "%s: the guest saw %d bytes acknowledged, the host's iperf read %d (%+d)" % (
        name, acked, got, got - acked)
    if got < lo:
        verdict = "disagree"
        why += ": less than was acknowledged: the backend acknowledged bytes it never delivered"
    elif got > hi:
        verdict = "disagree"
        why += ": more than the guest sent (%d acknowledged, %d unacknowledged)" % (acked, unacked)
    elif unacked:
        lost = ["%d frames %s" % (x["frames"], x["what"]) for x in host.get("tx_drops") or ()
                if x["frames"]]
        why += "; %d bytes were still unacknowledged at the guest's stop and %d of them arrived: " \
               "the ACKs were lost on the way back%s" % (
                   unacked, max(0, got - lo), ": " + "; ".join(lost) if lost else "")
    else:
        why += ": each stream's %d-byte flags word is not counted by the host" % IPERF_FLAGS_BYTES
    return _dir(sent=acked, received=got, unacked=unacked, verdict=verdict,
                                  where=(), why=why)


def merge_iperf(res, host):
    """app=iperf: the TCP byte counts of both ends, side by side. TCP
    retransmits, so there is no loss to find: a guest client's counts are
    checked against each other (_iperf_to_host); a guest server counts
    until each stream's FIN. Agree is never True (no loss to count): False
    when a client's counts disagree, else None."""
    ip = (host or {}).get("iperf") or {}
    gbytes = _first(res or {}, "bytes")
    members = dict(guest={"bytes": gbytes}, host={"iperf": ip})
    if gbytes is None or ip.get("bytes") is None:
        return _counts({}, None, **members)
    if ip.get("host_role") == "server":
        name = "guest->host bytes"
        d = _iperf_to_host(name, res, host)
    else:
        name, sent, got = "host->guest bytes", ip["bytes"], gbytes
        d = _dir(
            sent=sent, received=got, verdict="tcp", where=(),
            why="%s: sender counted %d bytes, receiver %d (%+d; TCP retransmits what is lost, "
                "so loss is not visible here)" % (name, sent, got, got - sent))
    return _counts({name: d}, False if d.verdict == "disagree" else None, **members)


# The directions whose loss is the run's: the app's own frames first, the
# wire's frames when the host end cannot tell the app's frames apart.
APP_DIRECTIONS = ("guest->host", "host->guest", "tx guest->rx guest", "end to end",
                  "rr transactions")
WIRE_DIRECTIONS = ("guest->host frames", "host->guest frames", "tx guest->rx guest frames")


def run_loss(c):
    """(loss %, frames lost) of the worst direction of c (result.Counts, or
    None), app level first; (None, None) without counts on both sides."""
    dirs = _directions(c)
    for names in (APP_DIRECTIONS, WIRE_DIRECTIONS):
        have = [dirs[n] for n in names if n in dirs and dirs[n].loss_pct is not None]
        if have:
            worst = max(have, key=lambda d: d.loss_pct)
            return worst.loss_pct, worst.lost
    return None, None
