"""One shared boot of `vnperf conform` (conform_plan.Group with sets): app
reneg runs each combination as one set (the device reset and negotiated
again, virtio 1.2 s2.4, s3.1.1), and the boot is cut into one view per set
for conform_checks.judge: the set's driver counters (its sample line,
docs/apps.md) and its frames as the host peer counted its stream. A set
completes when its sample came and its stream was counted exactly; the
first that did not ends what the boot decides (conform_plan.execute
reruns it and the rest fresh)."""

import dataclasses

from .. import result


def reneg_traffic(traffic, group, count):
    """The traffic tuple (name, option changes, words) of a group's boot:
    app reneg with the kind's frame size, the group's sets and line words."""
    name, change, extra = traffic
    return (name, dict(app="reneg", size=change["size"], count=count, rate=None, duration=None,
                       sets="/".join(group.sets)), tuple(extra))


def _stream_bad(stream, sent):
    """Why a set's stream was not counted exactly (None when it was)."""
    if stream is None:
        return "the host peer counted no frame of its stream"
    got = (stream.get("unique"), stream.get("lost"), stream.get("dup"))
    if got != (sent, 0, 0):
        return "%d sent, the host peer counted %s unique, %s lost, %s duplicated" % (
            (sent,) + got)
    return None


def set_report(rep, sample):
    """The boot's report as one set saw it: the sender's result holds the
    set's driver counters, no console (another set's lines are not its),
    and the one direction its stream was counted exactly."""
    guest = dataclasses.replace(rep.sender, result={"vnet": sample["vnet"],
                                                    "packets": sample["packets"]},
                                console_tail=(), samples=(sample,))
    n = sample["packets"]
    d = result.Direction(verdict="agree", sent=n, received=n, lost=0,
                         why="guest->host: set %d's stream: %d sent, %d received, none lost"
                         % (sample["set"] + 1, n, n))
    return dataclasses.replace(rep, guests=rep.guests[:-1] + (guest,),
                               counts=result.Counts(directions={"guest->host": d}, agree=True))


def split(boot, group, make_boot):
    """(the set views of the sets the boot completed, in order; the
    failure {"status", "why"} or None). make_boot(report) -> a boot."""
    rep = boot.report
    g = rep.sender
    samples = {s.get("set"): s for s in ((g.samples if g is not None else None) or ())
               if s.get("app") == "reneg"}
    peer = (rep.host or {}).get("peer") or {}
    streams = {s.get("id"): s for s in peer.get("streams") or ()}
    done = []
    for k, text in enumerate(group.sets):
        s = samples.get(k)
        if s is None:
            break
        bad = _stream_bad(streams.get(k), s["packets"])
        if bad is not None:
            return done, {"status": boot.status,
                          "why": "set %d (%s): %s" % (k + 1, text, bad)}
        done.append(make_boot(set_report(rep, s)))
    if boot.status != 0 or len(done) < len(group.sets):
        return done, {"status": boot.status, "why": boot.why or "the guest ended after %d of "
                      "%d sets" % (len(done), len(group.sets))}
    return done, None
