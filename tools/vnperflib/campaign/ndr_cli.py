"""`vnperf ndr` and `vnperf sweep --search ndr|pdr=X%`: the search's
arguments, their values parsed and checked, and the command itself: the RFC
2544 search (search.py) at every point of a sweep (by default the RFC 2544
frame sizes), each trial a complete `vnperf run` at a --rate (ndr_trial.py),
then latency trials at fractions of the rate found (ndr_loop.py). Results go
to a sweep-shaped directory (ndr_write.py; compare reads it) with every
trial's report and a trials.csv; the tables are ndr_render.py's."""

import json
import math
import os
import time

from .. import optypes, topologies
from ..errors import RunnerError, usage
from ..report import resultsdir
from ..run import accel, runner, support
from ..run.proc import Interrupted, Session
from . import search, sweep
from .ndr_loop import run
from .ndr_render import render, render_trials
from .ndr_trial import DEFAULT_SIZES, IMIX, gen_sends, size_opts
from .ndr_write import Writer

LATENCY_AT = (10, 50, 90, 100)


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
