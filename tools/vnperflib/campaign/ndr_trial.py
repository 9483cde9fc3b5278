"""`vnperf ndr` and `vnperf sweep --search ndr|pdr=X%`: the RFC 2544 search
(search.py) at every point of a sweep (by default the RFC 2544 frame
sizes), each trial a complete `vnperf run` at a --rate (own backend, own
guests, own teardown), then latency trials at fractions of the rate found.
Results go to a sweep-shaped directory (compare reads it) with every trial's
report and a trials.csv."""

import dataclasses
import csv
import json
import math
import os
import time

from .. import exitcodes, optypes, result, topologies
from ..analysis import stats
from ..errors import RunnerError, usage
from ..report import resultsdir
from ..report.tables import fmt_num, table
from ..run import accel, runner, support
from ..run.proc import Interrupted, Session
from . import search, sweep

FCS = 4
RFC2544_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
# The frames carry no FCS on a virtual wire: the guest's size= is 4 less.
DEFAULT_SIZES = ",".join(str(s - FCS) for s in RFC2544_SIZES)
# --size imix: gen's imix=simple (64:7,594:4,1518:1 on the wire).
IMIX = "imix"
IMIX_WORD = "imix=simple"
LATENCY_AT = (10, 50, 90, 100)
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


def parse_search(text):
    """"ndr" -> 0.0; "pdr=0.5%" (or 0.5) -> 0.5: the loss allowed in %."""
    t = text.strip().lower()
    if t == "ndr":
        return 0.0
    if t.startswith("pdr="):
        v = t[4:].rstrip("%")
        try:
            pct = float(v)
        except ValueError:
            pct = -1.0
        if 0 < pct < 100:
            return pct
    raise usage("--search %r: ndr, or pdr=PCT with 0 < PCT < 100 (e.g. pdr=0.5%%)" % text)


def parse_resolution(text):
    """"1%" -> (0.01, True): a share of the rate found; "5k" -> (5000,
    False): pps."""
    t = text.strip().lower()
    try:
        if t.endswith("%"):
            v = float(t[:-1]) / 100.0
            if 0 < v < 1:
                return v, True
        else:
            mult = {"k": 1e3, "m": 1e6}.get(t[-1:], 1)
            v = float(t[:-1] if mult != 1 else t) * mult
            if 1 <= v < math.inf:
                return v, False
    except ValueError:
        pass
    raise usage("--resolution %r: a share of the rate found (1%%) or pps (5k, at least 1)"
                % text)


def parse_latency_at(text):
    """"10,50,90,100" -> [10, 50, 90, 100]; "none" -> []."""
    if text.strip().lower() == "none":
        return []
    out = []
    for p in text.split(","):
        try:
            v = float(p)
        except ValueError:
            v = -1
        if not 0 < v <= 100:
            raise usage("--latency-at %r: percentages of the rate found, 0 < p <= 100, or none"
                        % text)
        out.append(int(v) if v == int(v) else v)
    return out


def rfc2544_label(size):
    """The RFC 2544 name of a guest frame size (with the FCS)."""
    return str(int(size) + FCS) if str(size).isdigit() else str(size)


def _num(v):
    return float(v) if stats.is_number(v) else None


def sender_pps(res):
    """The rate the tester really sent at: gen's rate_achieved (or its pps
    flat out), else the host peer's send rate."""
    for g in res.guests or ():
        r = g.result or {}
        if r.get("app") == "gen":
            return _num(r.get("rate_achieved")) or _num(r.get("pps"))
    host = res.host or {}
    for key in ("peer", "peer_tx"):
        p = host.get(key)
        if isinstance(p, dict) and p.get("mode") == "send":
            return _num(p.get("pps"))
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


def parse_sizes(text):
    """The --size axis of a search: frame sizes and imix, [(label, value)]."""
    out = []
    for p in (p.strip() for p in text.split(",")):
        if p == IMIX:
            out.append((p, IMIX))
            continue
        try:
            v = int(p)
        except ValueError:
            v = 0
        if v <= 0:
            raise usage("--size: bad value %r: a frame size in bytes (without FCS) or imix" % p)
        out.append((p, v))
    if len({l for l, _ in out}) != len(out):
        raise usage("--size %r: a value is given twice" % text)
    return out


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
    vals = [fmt_num(_num(lat.get(k))) for k in ("p50_us", "p99_us", "p999_us", "max_us")]
    return "p50 %s us, p99 %s us, p99.9 %s us, max %s us (%s)" % tuple(vals + [lat["how"]])


def point_status(result):
    """The exit status a search gives its point."""
    if result["status"] == search.OK and not result.get("latency_failed"):
        return 0
    failed = [t for t in result["trials"] if t.get("status")]
    if failed:
        return failed[-1]["status"]
    return exitcodes.RUNNER_NO_RATE


SEARCH_METRICS = ("ndr_pps", "pdr_pps", "ndr_bps", "pdr_bps", "unverified_pps", "offered_pps",
                  "forwarded_pps", "trials", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns",
                  "cpu_pct")


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


def search_metrics(result, size):
    """The point's numbers of one search, for the summary and compare: the
    flat-out trial's offered and forwarded rates and the trials of every
    search; ndr_pps (or pdr_pps), its bit rate (frames without FCS, like
    every vnperf bps) and the latency at 50% of a search that succeeded
    only; a search without a verified rate gives unverified_pps instead (no
    column of compare reads it)."""
    m = {"offered_pps": result.get("offered_pps"), "forwarded_pps": result.get("forwarded_pps"),
         "trials": len(result["trials"])}
    if point_status(result) != 0:
        if not result.get("verified"):
            m["unverified_pps"] = best_unverified(result)
        return {k: v for k, v in m.items() if v is not None}
    rate = result.get("rate_pps")
    if rate is not None:
        key = result["mode"]
        m[key + "_pps"] = float(rate)
        if str(size).isdigit():
            m[key + "_bps"] = float(rate) * int(size) * 8
    for e in result.get("latency") or ():
        if e["pct"] == LATENCY_MAIN and e["latency"]:
            for k in ("p50", "p90", "p99", "p999", "max"):
                v = _num(e["latency"].get(k + "_us"))
                if v is not None:
                    m[k + "_ns"] = v * 1e3
            if e.get("cpu_pct") is not None:
                m["cpu_pct"] = e["cpu_pct"]
    return {k: v for k, v in m.items() if v is not None}


class Writer(resultsdir.Writer):
    """The sweep's results directory with searches as its runs: each
    trial's report in runs/, every trial a row of trials.csv, each
    search's result in results.json under its point."""

    TRIAL_FIELDS = ("repeat", "kind", "target_pps", "achieved_pps", "rate_error", "missed",
                    "sent", "received", "lost", "loss_pct", "passed", "load", "load_passed",
                    "status", "why", "where", "run")

    def __init__(self, outdir, axes, repeat, fixed, spec_info):
        super().__init__(outdir, axes, repeat, fixed)
        self.results["vnperf_search"] = 1
        self.results["search"] = spec_info
        self.trial_rows = []
        self._metrics = {}

    def save_report(self, res):
        """res: a trial's result.RunResult, written as runs/NNN.json."""
        self._n += 1
        name = "runs/%03d.json" % self._n
        with open(os.path.join(self.outdir, name), "w") as f:
            f.write(res.to_json())
        return name

    def add_search(self, point, repeat, result, size):
        point.setdefault("searches", []).append(result)
        status = point_status(result)
        point["statuses"].append(status)
        point["why"].append(result["why"])
        point["runs"] += [t["run"] for t in result["trials"] if t.get("run")]
        if status == 0:
            point["ok"] += 1
        self._metrics.setdefault(id(point), []).append(search_metrics(result, size))
        point["summary"] = stats.summarize_runs(self._metrics[id(point)])
        for t in result["trials"] + [dict(e, kind="latency %s%%" % e["pct"])
                                     for e in result.get("latency") or ()]:
            row = dict(point["params"], repeat=repeat)
            row.update({k: t.get(k) for k in self.TRIAL_FIELDS if k in t})
            if t.get("load"):
                row["load_passed"] = result["loads"][t["load"] - 1]["passed"]
            self.trial_rows.append(row)

    def save(self):
        """results.json, results.csv (a row per point: the medians, min and
        max of the search metrics) and trials.csv (a row per trial)."""
        path = os.path.join(self.outdir, resultsdir.SUMMARY)
        with open(path + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1, default=str)
        os.replace(path + ".tmp", path)
        names = list(self.results["axes"])
        rows = []
        for p in self.results["points"]:
            row = dict(p["params"], runs_ok=p["ok"], runs=len(p["statuses"]))
            for m, s in p["summary"].items():
                row.update({m + "_median": s["median"], m + "_min": s["min"],
                            m + "_max": s["max"]})
            rows.append(row)
        _csv(os.path.join(self.outdir, "results.csv"), names + ["runs_ok", "runs"] + [
            "%s_%s" % (m, s) for m in SEARCH_METRICS for s in ("median", "min", "max")], rows)
        _csv(os.path.join(self.outdir, "trials.csv"), names + list(self.TRIAL_FIELDS),
             self.trial_rows)


def _csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def search_point(opts, resolver, spec, latency_at, save, log):
    """One search at one point: its result dict, with latency entries."""
    trials = Trials(opts, resolver, save, log)
    result = search.Search(spec, trials, log).run()
    result["latency"] = []
    if result["status"] == search.OK and latency_at:
        result["latency"], why = latency_trials(result, trials, spec, latency_at, log)
        if why:
            result["latency_failed"] = why
            result["why"] += "; " + why
    return result


def run(base, axes, repeat, out, resolver, spec, latency_at, log=None):
    """Every point's search, repeat times; the status: 0 when each found
    and verified a rate, else the first failure's."""
    log = log or (lambda line: runner.log(base, line))
    skip = latency_skip(base) if latency_at else None
    if skip:
        log("latency: skipped, %s" % skip)
        out.results["search"]["latency_skipped"] = skip
        latency_at = []
    pts = sweep.points(axes)
    status = 0
    for k, pt in enumerate(pts):
        params = {n: l for n, (l, _) in pt.items()}
        opts = size_opts(sweep.point_opts(base, pt))
        accel = resolver.choice.accel if getattr(resolver, "choice", None) else base.accel
        point = out.add_point(params, sweep.point_identity(opts, params, accel))
        for r in range(repeat):
            head = "search %d/%d: %s%s" % (k + 1, len(pts), sweep.describe(params),
                                           " #%d" % (r + 1) if repeat > 1 else "")
            t0 = time.monotonic()
            result = search_point(opts, resolver, spec, latency_at, out.save_report,
                                  lambda line: log("%s: %s" % (head, line)))
            out.add_search(point, r + 1, result, params["size"])
            out.save()
            log("%s: %s, %d trials, %.0f s" % (head, result["why"], len(result["trials"]),
                                               time.monotonic() - t0))
            status = status or point_status(result)
    return status


def render_trials(results):
    """One row per trial of every search. results: a result.SweepResult or
    its JSON object (the Writer's)."""
    results = result.SweepResult.from_dict(results)
    names = list(results.axes)
    rows = []
    for p in results.points:
        for r, s in enumerate(p.searches or ()):
            for t in s["trials"]:
                rows.append([p.params[n] for n in names] + [
                    r + 1, t["kind"], "max" if t.get("target_pps") is None else t["target_pps"],
                    fmt_num(t.get("achieved_pps")),
                    "-" if t.get("rate_error") is None else "%+.2f" % (100 * t["rate_error"]),
                    t.get("sent"), t.get("received"), t.get("lost"),
                    "-" if t.get("loss_pct") is None else "%.4f" % t["loss_pct"],
                    "-" if "passed" not in t else "pass" if t["passed"] else "fail",
                    _load_text(s, t)])
    return table(names + ["#", "trial", "target pps", "sent pps", "err%", "sent", "received",
                          "lost", "loss%", "", "load"], rows,
                 align=["<"] * (len(names) + 2) + [">"] * 8 + ["<", "<"])


def _load_text(search_result, t):
    """A trial's load: its number in the search and how it was classified
    ("3 pass"), "-" before it was."""
    load = search_result["loads"][t["load"] - 1] if t.get("load") else None
    if load is None or load["passed"] is None:
        return "-"
    return "%d %s" % (t["load"], "pass" if load["passed"] else "fail")


def render(results):
    """One row per point: the rate found (median of the repeats), its bit
    rate, the flat-out trial's offered and forwarded rates (RFC 2544 s26.3:
    what arrived), trials, latency at 50% and the spread. results: a
    result.SweepResult or its JSON object (the Writer's)."""
    results = result.SweepResult.from_dict(results)
    names = list(results.axes)
    spec = results.search or {}
    mode = spec["mode"]
    rows = []
    for p in results.points:
        s = p.summary or {}
        rate = s.get(mode + "_pps")
        spread = stats.spread_pct(rate.to_dict()) if rate and rate.n > 1 else None
        lat = [_median(s, k, 1e3) for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns")]
        rows.append([p.params[n] for n in names]
                    + ([rfc2544_label(p.params["size"])] if "size" in names else [])
                    + ["%d/%d" % (p.ok, len(p.statuses)), _median(s, mode + "_pps"),
                       "%.3f" % (s[mode + "_bps"].median / 1e9) if mode + "_bps" in s else "-",
                       _median(s, "offered_pps"), _median(s, "forwarded_pps"),
                       "%.0f" % s["trials"].median if "trials" in s else "-"] + lat
                    + ["%.1f%%" % spread if spread is not None else "-"])
    head = names + (["rfc2544"] if "size" in names else []) + [
        "ok", "%s pps" % mode.upper(), "Gbit/s", "offered", "forwarded", "trials", "p50 us",
        "p99 us", "p99.9 us", "max us", "spread"]
    lines = [table(head, rows, align=["<"] * len(names) + [">"] * (len(head) - len(names)))]
    lines.append("offered: the sender's rate flat out; forwarded: what arrived of it, per "
                 "second (RFC 2544 s26.3's forwarding rate); latency at %d%% of the rate found; "
                 "rfc2544: the frame size with the 4-byte FCS the virtual wire does not carry"
                 % LATENCY_MAIN)
    k = spec.get("trials_per_load", 1)
    if k > 1:
        lines.append("each rate a load of up to %d trials, failed when more than %g of them "
                     "lost frames (--trials-per-load, --exceed-ratio)"
                     % (k, spec["exceed_ratio"] * k))
    if spec.get("latency_skipped"):
        lines.append("latency: skipped, %s" % spec["latency_skipped"])
    for p in results.points:
        for w, st, s in zip(p.why, p.statuses, p.searches or ()):
            if st != 0:
                best = None if s.get("verified") else best_unverified(s)
                lines.append("%s: %s%s" % (sweep.describe(p.params), w, "" if best is None
                                           else "; highest passing trial %s pps, not verified"
                                           % fmt_num(best)))
    return "\n".join(lines)


def _median(summary, metric, per=1):
    """A metric's median (a result.Summary), divided by per, in the
    table's number format."""
    return fmt_num(summary[metric].median / per) if metric in summary else "-"


def add_arguments(p, default_search=None):
    s = p.add_argument_group("search (RFC 2544 throughput)")
    s.add_argument("--search", default=default_search, metavar="ndr|pdr=PCT%",
                   help="each point is a search: ndr (no loss) or pdr=0.5%% (at most that "
                   "loss)" + (" (default %s)" % default_search if default_search else ""))
    s.add_argument("--resolution", default="1%", help="stop when the bracket above the rate "
                   "found is this narrow: a share of that rate (1%%, default) or pps (5k)")
    s.add_argument("--floor", default="1", metavar="PPS",
                   help="lowest rate searched (default 1)")
    s.add_argument("--latency-at", default=",".join(str(x) for x in LATENCY_AT),
                   metavar="PCTS", help="latency trials at these %% of the rate found "
                   "(default 10,50,90,100; none: no latency trials)")
    s.add_argument("--max-trials", type=int, help="trial budget per search (default 40 "
                   "clean loads' worth: 40 x (K - floor(R*K)), 40 with one trial per load)")
    s.add_argument("--trials-per-load", type=int, default=1, metavar="K",
                   help="up to K trials at each rate searched (default 1); with "
                   "--exceed-ratio, a rate passes unless its lossy trials exceed that share")
    s.add_argument("--exceed-ratio", type=optypes.finite_float, default=0.0, metavar="R",
                   help="the share of a rate's K trials that may lose frames beyond the "
                   "allowed loss, 0 <= R < 1 (default 0; 0.5: at most half)")


def spec_from(opts):
    loss = parse_search(opts.search)
    res, relative = parse_resolution(opts.resolution)
    try:
        floor, relative_floor = parse_resolution(opts.floor)
    except RunnerError:
        relative_floor = True
    if relative_floor:
        raise usage("--floor %r: a rate in pps, at least 1 (e.g. 10k)" % opts.floor)
    if opts.max_trials is not None and opts.max_trials < 3:
        raise usage("--max-trials %d: at least 3 (flat out, one step, verification)"
                    % opts.max_trials)
    if opts.trials_per_load < 1:
        raise usage("--trials-per-load %d: at least 1" % opts.trials_per_load)
    if not 0 <= opts.exceed_ratio < 1:
        raise usage("--exceed-ratio %g: a share of a load's trials, 0 <= R < 1 (e.g. 0.5)"
                    % opts.exceed_ratio)
    return search.Spec(loss_pct=loss, resolution=res, relative=relative, floor_pps=floor,
                       max_trials=opts.max_trials, trials_per_load=opts.trials_per_load,
                       exceed_ratio=opts.exceed_ratio)


def main(opts):
    """`vnperf ndr` / `vnperf sweep --search`: returns the exit status."""
    # A search is many trials already: one per point unless asked.
    repeat = opts.repeat or 1
    spec = spec_from(opts)
    latency_at = parse_latency_at(opts.latency_at)
    if opts.rate is not None:
        raise usage("--rate: the search chooses the rate of every trial")
    if opts.vhost_user_socket:
        # Its trials pace the runner's sender into a sink, or count gen's
        # frames at the app level: neither exists behind your backend.
        raise usage("--vhost-user-socket: no throughput search over your own backend (its "
                    "trials need the runner's paced sender or an app-level host count)")
    sizes = parse_sizes(opts.size or DEFAULT_SIZES)
    axes = dict(size=sizes, **sweep.axes_from(opts, but=("size",)))
    # The device under test: the sink receiving, or the chain forwarding.
    base = sweep.base_opts(opts, but=("size",), app=opts.app or
                           topologies.topology_for(opts).device_app())
    support.check_axes(base, axes)
    for pt in sweep.points(axes):
        support.check(size_opts(sweep.point_opts(base, pt)))
    if any(v == IMIX for _, v in sizes) and not gen_sends(base):
        raise usage("--size imix: the host peer sends one size; imix needs a gen tester "
                    "(--topology guests, or --topology pvp|pvvp over vhost-user)")
    sweep.check_host(base, axes)
    outdir = opts.out or os.path.join("results", time.strftime("ndr-%Y%m%d-%H%M%S"))
    if os.path.exists(os.path.join(outdir, resultsdir.SUMMARY)):
        raise usage("%s already holds results; choose another --out" % outdir)
    resolver = accel.Resolver(base.accel, base.image, base.machine, base.qemu)
    with Session() as s:
        choice = resolver.resolve(s, lambda line: runner.log(base, line))
    info = {"mode": spec.mode, "loss_pct": spec.loss_pct, "resolution": opts.resolution,
            "floor": opts.floor, "latency_at": latency_at, "trial_s": base.duration,
            "trials_per_load": spec.trials_per_load, "exceed_ratio": spec.exceed_ratio,
            "app": base.app, "topology": base.topology}
    runner.log(base, "%s search: %d points x %d, %d s trials, accel %s, results in %s" % (
        spec.mode.upper(), len(sweep.points(axes)), repeat, base.duration, choice.accel,
        outdir))
    out = Writer(outdir, {n: [l for l, _ in v] for n, v in axes.items()}, repeat,
                 resultsdir.fixed_params(base, axes), info)
    try:
        status = run(base, axes, repeat, out, resolver, spec, latency_at)
    except (Interrupted, KeyboardInterrupt):
        out.save()
        print(render(out.results))
        print("results so far: %s" % outdir)
        raise
    if opts.json:
        print(json.dumps(out.results, indent=1, sort_keys=True, default=str))
    else:
        print(render_trials(out.results))
        print()
        print(render(out.results))
        print("results: %s (results.json, results.csv, trials.csv, runs/)" % outdir)
    return status
