"""The guest's own account of the time its vCPU did not come round its
busy-poll loop ("stalls" in fwd, sink and gen results, apps/stall.h):
validated, worded for the waits line, and held against the time the
guest's RX ring covers at the offered rate. A stall longer than that
cover overflows the ring whatever the app's speed: the host took the
vCPU away (docs/runner-run.md, "PVP and PVVP"). The app's own pauses
(its sample lines on the console) are counted apart: a ring they
outlast is the guest's doing."""

import math

from ..report.tables import fmt_num

FIELDS = ("threshold_us", "max_us", "max_at_s", "over_1ms", "stalled_ms", "pause_max_us",
          "paused_ms")
COUNTS = ("threshold_us", "over_1ms")


def read(result):
    """(stalls, problem): the result's "stalls" as numbers, or None and a
    one-line problem. (None, None) when the guest reports none (an app
    that does not measure them, or an image older than the field)."""
    st = (result or {}).get("stalls")
    if st is None:
        return None, None
    if not isinstance(st, dict):
        return None, "the guest's \"stalls\" is not an object (%r): ignored" % (st,)
    out = {}
    for k in FIELDS:
        v = st.get(k)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
            and v >= 0 and (k not in COUNTS or v == int(v))
        if not ok:
            what = "missing" if k not in st else "%r, not a %s" % (
                v, "count" if k in COUNTS else "non-negative number")
            return None, "the guest's stalls.%s is %s: stalls ignored" % (k, what)
        out[k] = int(v) if k in COUNTS else float(v)
    return out, None


def ring_size(result, dev=0):
    """Entries of the guest's RX ring on NIC dev (vnet.rx.size), or None."""
    v = (result or {}).get("vnet" if dev == 0 else "vnet%d" % dev)
    rx = v.get("rx") if isinstance(v, dict) else None
    n = rx.get("size") if isinstance(rx, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def cover_ms(ring, pps):
    """How long ring frames last at pps; None when either is unknown."""
    if not ring or not isinstance(pps, (int, float)) or pps <= 0:
        return None
    return ring / pps * 1e3


def text(st, ring=None, pps=None):
    """"vCPU stalled up to 13.0 ms (3 stalls over 1 ms, the ring covers
    2.6 ms at 400k pps)"."""
    over = "%d stall%s over %s" % (st["over_1ms"], "" if st["over_1ms"] == 1 else "s",
                                   _threshold(st))
    cov = cover_ms(ring, pps)
    if cov is not None:
        over += ", the ring covers %.1f ms at %s pps" % (cov, _pps(pps))
    out = "vCPU stalled up to %.1f ms (%s)" % (st["max_us"] / 1e3, over)
    if st["paused_ms"]:
        out += "; its own sample lines paused it up to %.1f ms (%.1f ms in all)" % (
            st["pause_max_us"] / 1e3, st["paused_ms"])
    return out


def _pps(pps):
    return fmt_num(float(pps), 3 if pps >= 1e6 else 0)


def _threshold(st):
    t = st["threshold_us"]
    return "%g ms" % (t / 1e3) if t >= 1000 else "%d us" % t


def blame(name, st, ring, pps, who="guest"):
    """(side, note) for a loss at name's full RX ring: ("host", ...) when
    the guest's vCPU stalled longer than the ring covers at pps, ("guest",
    ...) when its own sample lines paused it that long, else (None, "").
    who: what the guest is (the forwarder, the sink)."""
    cov = cover_ms(ring, pps)
    if st is None or cov is None:
        return None, ""
    ring_at = "longer than its %d-entry RX ring covers at %s pps (%.1f ms)" % (ring, _pps(pps),
                                                                             cov)
    if st["max_us"] / 1e3 > cov:
        return "host", ("%s's vCPU stalled up to %.1f ms, %s: the loss is the host's (it took "
                        "the vCPU away), not the %s's speed" % (name, st["max_us"] / 1e3,
                                                                ring_at, who))
    if st["pause_max_us"] / 1e3 > cov:
        return "guest", ("%s's own sample lines paused it up to %.1f ms, %s: the loss is its "
                         "console output (interval_ms=), not the %s's speed"
                         % (name, st["pause_max_us"] / 1e3, ring_at, who))
    return None, ""


def waits_line(result, pps=None, dev=0):
    """The stall part of a guest's waits line: the text, the problem, or
    None when the guest reports no stalls."""
    st, bad = read(result)
    if bad:
        return bad
    return text(st, ring_size(result, dev), pps) if st else None


def _received_direction(res):
    """The result.Direction of the frames the host sent the guest of run
    res, or None."""
    dirs = (res.counts.directions if res.counts is not None else None) or {}
    for name in ("host->guest", "host->guest frames"):
        if dirs.get(name) is not None:
            return dirs[name]
    return None


def offered_pps(res):
    """Frames per second the host offered the main guest of run res (a
    result.RunResult): what it sent over the guest's time with traffic (a
    sink's first to last frame)."""
    d = _received_direction(res)
    sent = d.sent if d is not None else None
    dur = res.sender_result.get("duration_ns")
    if not isinstance(sent, int) or not isinstance(dur, (int, float)) or dur <= 0:
        return None
    return sent / (dur / 1e9)


def waits(res):
    """{label: line} of a run without a chain: each guest's stalls, the
    ring's cover at the offered rate for a receiving app (sink)."""
    out = {}
    for g in res.guests or ():
        r = g.result or {}
        pps = offered_pps(res) if r.get("app") == "sink" and g is res.sender else None
        line = waits_line(r, pps)
        if line:
            out[g.label] = line
    return out
