"""One shared boot of `vnperf conform` (conform_plan.Group with sets): app
reneg runs each combination as one set (the device reset and negotiated
again, virtio 1.2 s2.4, s3.1.1), and the boot is cut into one view per set
for conform_checks.judge: the set's driver counters (its sample line,
docs/apps.md) and its count directions (analysis/renegsets.py): its
frames guest->host as the host peer counted its stream and, where the
peer reflects (back), host->guest as the guest counted them back, and
with the stream kind its TCP stream's bytes against the host's iperf
server's stream of the set, with the uso kind (a set that negotiated
HOST_USO) its USO segments against the host UDP socket's count of its
stream, by size. A set completes when its sample came and
each of its directions was counted;
a loss there is judged (conform_checks' traffic check names the set and
the way), unless the boot's own direction of that way located frames
lost at the host (flow control: the set reruns fresh). The first set that
did not complete ends what the boot decides (conform_plan.execute reruns
it and the rest fresh)."""

import dataclasses

from .. import result
from ..analysis import renegsets
from . import conform_plan

WAYS = ("guest->host", "host->guest")


def reneg_traffic(traffic, group, count, stream_s, uso_seg):
    """The traffic tuple (name, option changes, words) of a group's boot:
    app reneg with the kind's frame size (a BOTH group's: the small
    frames, the MTU's follow), the group's sets and line words; with the
    stream kind each set's TCP stream of stream_s seconds; with the uso
    kind count USO datagrams per set that negotiates HOST_USO, cut at
    uso_seg bytes."""
    _, change, extra = traffic
    stream = ("stream_s=%d" % stream_s,) if conform_plan.STREAM in group.kinds else ()
    uso = ("uso=%d" % uso_seg,) if conform_plan.USO in group.kinds else ()
    return (group.traffic, dict(app="reneg", size=change["size"], count=count, rate=None, duration=None,
                       sets="/".join(group.sets)), tuple(extra) + stream + uso)


def _host_located(whole):
    """Frames the boot's own direction (a result.Direction or None)
    located lost on the host's side of the device."""
    return sum(w["frames"] for w in (whole.where if whole is not None else None) or ()
               if w["at"] not in ("unexplained", "guest"))


def set_directions(dirs, k, text, back, stream=False, uso=False):
    """({name: result.Direction} of set k (text) in the boot's count
    directions, each way it ran (stream: its TCP stream's too; uso: its
    USO segments'); None) or (None, why the set is not judged here: a way
    not counted, or lost where the host located the boot's loss)."""
    label = renegsets.set_label(k, {"set": text})
    out = {}
    ways = WAYS[:2 if back else 1] + (("stream guest->host",) if stream else ()) + (
        ("uso guest->host",) if uso else ())
    for way in ways:
        name = "%s %s" % (label, way)
        d = dirs.get(name)
        if d is None or d.verdict == "unknown":
            return None, "%s: no count (%s)" % (way, d.why if d is not None else
                                                "the guest's result or the host peer's missing")
        located = _host_located(dirs.get(way))
        if (d.lost or 0) > 0 and located:
            return None, "%s: %d sent, %d received; the boot's %s lost %d frames at the " \
                "host (flow control)" % (way, d.sent, d.received, way, located)
        out[name] = d
    return out, None


def set_report(rep, sample, dirs):
    """The boot's report as one set saw it: the sender's result holds the
    set's driver counters and the frames that came back malformed, no
    console (another set's lines are not its), and the set's directions."""
    sets = rep.sender_result.get("sets") or ()
    k = sample["set"]
    back = (sets[k] if k < len(sets) else {}).get("rx") or {}
    mine = {"vnet": sample["vnet"], "packets": sample["packets"],
            "malformed": back.get("malformed", 0)}
    stream = renegsets.tcp_stream(sets[k]) if k < len(sets) else None
    if stream is not None:
        mine["tcp"] = stream   # its ok: conform_checks' traffic
    uso = renegsets.uso_of(sets[k]) if k < len(sets) else None
    host = None
    if uso is not None:
        mine["uso"] = uso      # conform_checks' uso, with the host's count of its stream
        host = {"udp": _set_udp(rep, uso, dirs.get("%s uso guest->host" % renegsets.set_label(
            k, sets[k])))}
    guest = dataclasses.replace(rep.sender, result=mine, console_tail=(), samples=(sample,))
    agree = all(d.verdict == "agree" for d in dirs.values())
    return dataclasses.replace(rep, guests=rep.guests[:-1] + (guest,),
                               counts=result.Counts(directions=dirs, agree=agree, host=host))


def _set_udp(rep, uso, d):
    """The host UDP socket's count (run/udpcount.py) as one set saw it:
    its stream's segment sizes, its segments the set's direction d located
    at the socket's full buffer, the boot's checksum errors (the stack
    counts them for no stream)."""
    udp = ((rep.counts.host if rep.counts is not None else None) or {}).get("udp") or {}
    mine = (renegsets.udp_streams(udp) or {}).get(uso.get("stream")) or {}
    return {"sizes": mine.get("sizes") or {},
            "rcvbuf_errors": (d.located or 0) if d is not None else 0,
            "csum_errors": udp.get("csum_errors", 0)}


def boot_view(rep):
    """The whole boot's report without its sets' directions: a fresh boot
    of one set that did not complete, judged as any fresh boot (its
    loss located by the boot's own directions)."""
    c = rep.counts
    if c is None:
        return rep
    dirs = {k: d for k, d in (c.directions or {}).items() if not k.startswith("set ")}
    return dataclasses.replace(rep, counts=dataclasses.replace(c, directions=dirs))


def split(boot, group, make_boot, back):
    """(the set views of the sets the boot completed, in order; the
    failure {"status", "why"} or None). make_boot(report) -> a boot; back:
    the host peer reflected (each set counted both ways)."""
    rep = boot.report
    g = rep.sender
    samples = {s.get("set"): s for s in ((g.samples if g is not None else None) or ())
               if s.get("app") == "reneg"}
    dirs = (rep.counts.directions if rep.counts is not None else None) or {}
    sets = rep.sender_result.get("sets") or ()
    done = []
    for k, text in enumerate(group.sets):
        s = samples.get(k)
        if s is None:
            break
        # a set sent USO datagrams where it negotiated HOST_USO
        uso = k < len(sets) and renegsets.uso_of(sets[k]) is not None
        mine, bad = set_directions(dirs, k, text, back,
                                   conform_plan.STREAM in group.kinds, uso)
        if bad is not None and boot.status != 0:
            break   # the guest's end is the failure (its result, if any, is partial)
        if bad is not None:
            return done, {"status": boot.status, "why": "set %d (%s) %s" % (k + 1, text, bad)}
        done.append(make_boot(set_report(rep, s, mine)))
    if boot.status != 0 or len(done) < len(group.sets):
        return done, {"status": boot.status, "why": boot.why or "the guest ended after %d of "
                      "%d sets" % (len(done), len(group.sets))}
    return done, None
