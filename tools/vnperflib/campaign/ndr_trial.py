"""The trials of `vnperf ndr` and `sweep --search`: each a complete `vnperf
run` at a --rate (own backend, own guests, own teardown) read as a search
trial, the latency trials at fractions of the rate found, and what a
search's result amounts to (its status, its best unverified rate)."""

import dataclasses

from .. import exitcodes, topologies
from ..analysis import stats
from ..errors import RunnerError
from ..optypes import digits
from ..report.tables import fmt_num
from . import search, sweep

FCS = 4
RFC2544_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
# The frames carry no FCS on a virtual wire: the guest's size= is 4 less.
DEFAULT_SIZES = ",".join(str(s - FCS) for s in RFC2544_SIZES)
# --size imix: gen's imix=simple (64:7,594:4,1518:1 on the wire).
IMIX = "imix"
IMIX_WORD = "imix=simple"
# The fraction whose latency is the point's p50_ns..max_ns (compare's p99%).
LATENCY_MAIN = 50

# The direction of the merged counts (counts.py, topologies/pvp.py) that is
# the tester's frames out and in, most specific first.
END_TO_END = ("end to end", "tx guest->rx guest", "host->guest", "guest->host")
# --rate of the flat-out trial: the paced sender at its own top speed, on
# the same path as every other trial (no --rate would put testpmd's txonly,
# which reports no rate, in front of a sink over vhost-user).
FLAT_OUT = "max"
# A trial's guests print no sample line while it runs: each is ~400 bytes
# through the emulated 16550, one port access and one host write() per
# byte with QEMU's lock held, 1.2 ms of the forwarder's vCPU on average
# (1.9 ms at most) under TCG, when its RX ring holds 5 ms at 200k pps.
# interval_ms= is the guest's largest; the counts are in the result line.
QUIET_INTERVAL_WORD = "interval_ms=60000"


def trial_config(words):
    """A trial's guest config words: QUIET_INTERVAL_WORD unless the user
    set interval_ms= (after --)."""
    if any(w.partition("=")[0] == "interval_ms" for w in words):
        return list(words)
    return list(words) + [QUIET_INTERVAL_WORD]


def rfc2544_label(size):
    """The RFC 2544 name of a guest frame size (with the FCS)."""
    return str(int(size) + FCS) if digits(str(size)) else str(size)


def num(v):
    """v as a float when it is a number, else None."""
    return float(v) if stats.is_number(v) else None


def sender_pps(res):
    """The rate the tester really sent at: gen's rate_achieved (or its pps
    flat out), else the host peer's send rate."""
    for g in res.guests or ():
        r = g.result or {}
        if r.get("app") == "gen":
            return num(r.get("rate_achieved")) or num(r.get("pps"))
    host = res.host or {}
    for key in ("peer", "peer_tx"):
        p = host.get(key)
        if isinstance(p, dict) and p.get("mode") == "send":
            return num(p.get("pps"))
    return None


def latency_of(res):
    """The latency of the frames that came back, {"how", "count", "p50_us",
    "p99_us", "p999_us", "max_us"}, or None: the host peer's one-way figures
    (stamped and read with the host TSC), or gen's round trip (its TSC)."""
    keys = ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")
    lat = ((res.host or {}).get("peer_rx") or {}).get("latency")
    if isinstance(lat, dict) and lat.get("count"):
        out = {k: lat.get(k) for k in keys}
        out.update(how="one-way, host TSC (peer send -> peer count)", count=lat["count"])
        return out
    for g in res.guests or ():
        r = g.result or {}
        rx = r.get("rx")
        if r.get("app") == "gen" and isinstance(rx, dict) and rx.get("packets"):
            out = {k: rx.get(k) for k in keys}
            out.update(how="round trip, gen's TSC", count=rx["packets"])
            return out
    return None


def trial_from_report(res):
    """A run's result.RunResult as a search trial: status, why, both sides'
    counts of the tester's frames, the rate sent, loss per hop, latency,
    host CPU."""
    t = {"status": res.status, "why": res.why,
         "achieved_pps": sender_pps(res), "latency": latency_of(res)}
    dirs = (res.counts.directions if res.counts else None) or {}
    t["hops"] = {n: {"sent": d.sent, "received": d.received, "lost": d.lost,
                     "verdict": d.verdict, "why": d.why} for n, d in dirs.items()}
    for name in END_TO_END:
        d = dirs.get(name)
        if d and isinstance(d.sent, int) and isinstance(d.received, int):
            t["counted"] = name
            # A gen sender's own drops (txfull=drop) are in sent already.
            t["sent"] = d.sent
            t["received"] = d.received
            t["where"] = d.why
            break
    cpu = res.cpu
    if cpu:
        t["cpu_pct"] = cpu.total_pct
        t["cpu_roles"] = {k: round(v.pct, 1) for k, v in (cpu.roles or {}).items()}
    return t


def gen_sends(opts):
    """Whether the tester is a gen guest (it has imix=); else the host peer
    sends (one size)."""
    return topologies.topology_for(opts).gen_sends(opts)


def size_opts(o):
    """Options of a point whose size is imix: gen's imix=, no size=."""
    if o.size == IMIX:
        return dataclasses.replace(o, size=None, config=o.config + (IMIX_WORD,))
    return o


class Trials:
    """Runs trials at one point: each a `vnperf run` with --rate, its
    report written through save(rep) -> name."""

    def __init__(self, opts, resolver, save, log):
        self.opts, self.resolver, self.save, self.log = opts, resolver, save, log

    def __call__(self, target, kind):
        o = dataclasses.replace(self.opts, rate=FLAT_OUT if target is None else "%d" % int(target),
                                config=tuple(trial_config(self.opts.config)))
        res = sweep.run_point_once(o, self.resolver)
        t = trial_from_report(res)
        t["run"] = self.save(res)
        if res.status == exitcodes.GUEST_CONFIG_ERROR:
            raise RunnerError(res.status, "search stopped: %s" % res.why)
        return t


def latency_skip(opts):
    """Why latency trials cannot measure at these options, or None: the
    receiver is a sink (the host topology's device under test, or the
    partner of a gen sender with --topology guests), so no frame comes back
    to be timed; only pvp and pvvp return the tester's frames."""
    if topologies.topology_for(opts).receiver_app(opts) != "sink":
        return None
    return "the sink returns no frames; use --topology pvp or pvvp"


def latency_trials(result, trials, spec, latency_at, log):
    """Trials at latency_at % of the rate found; 100% is the verification
    trial itself. Returns (entries, failure line or None)."""
    out = []
    rate = result["rate_pps"]
    verify = result["trials"][-1]
    for pct in latency_at:
        target = max(1, int(round(rate * pct / 100.0)))
        if target == rate:
            t = verify
        else:
            t = dict(trials(target, "latency"))
            t.update(target_pps=target, kind="latency")
            if t["status"] != 0:
                return out, "latency trial at %d%% (%d pps) failed: %s" % (pct, target,
                                                                           t.get("why"))
            search.judge(t, spec)
        lat = t.get("latency")
        log("latency at %s%% (%d pps): %s" % (pct, target, _lat_text(lat)))
        out.append({"pct": pct, "target_pps": target, "achieved_pps": t.get("achieved_pps"),
                    "lost": t.get("lost"), "latency": lat, "cpu_pct": t.get("cpu_pct"),
                    "cpu_roles": t.get("cpu_roles"), "run": t.get("run")})
    return out, None


def _lat_text(lat):
    if not lat:
        return "no frames came back (a topology with a return path measures it: pvp, pvvp)"
    vals = [fmt_num(num(lat.get(k))) for k in ("p50_us", "p99_us", "p999_us", "max_us")]
    return "p50 %s us, p99 %s us, p99.9 %s us, max %s us (%s)" % tuple(vals + [lat["how"]])


def point_status(result):
    """The exit status a search gives its point."""
    if result["status"] == search.OK and not result.get("latency_failed"):
        return 0
    failed = [t for t in result["trials"] if t.get("status")]
    if failed:
        return failed[-1]["status"]
    return exitcodes.RUNNER_NO_RATE


def best_unverified(result):
    """The highest rate whose load passed on its target below every failed
    verification: what a search without a verified rate had reached (not
    a result), or None."""
    refuted = [x["target_pps"] for x in result["loads"]
               if x.get("kind") == "verify" and x.get("passed") is False]
    rates = [x["target_pps"] for x in result["loads"]
             if x.get("passed") and x.get("target_pps") and not x.get("missed")
             and all(x["target_pps"] < r for r in refuted)]
    return float(max(rates)) if rates else None
