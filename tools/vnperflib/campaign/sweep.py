"""`vnperf sweep`: the cartesian product of the axes, each point run
--repeat times (each run with its own backend, guest and teardown; the
points interleaved round by round so that host drift hits all of them),
written as it goes to a results directory (resultsdir.py), then plotted
and shown as a table of medians and spread. `--aa` runs every point as two
identical arms and reports their comparison: the A/A calibration."""

import argparse
import dataclasses
import itertools
import os
import random
import shutil
import time

from .. import backends, exitcodes, options, optypes, result
from ..analysis import counts, stats
from ..backends import testpmd, vhostpeer
from ..errors import RunnerError, usage
from ..report import plots, report, resultsdir
from ..report.tables import fmt_num, table
from ..run import (accel, artifacts, nextroot, pinning, placement, qemucmd, runner, scratch,
                   support)
from ..run.proc import Interrupted, Session
from . import compare


def _count(v):
    n = int(v)
    if n < 0:
        raise ValueError("must be >= 0")
    return n


def _positive(v):
    n = int(v)
    if n <= 0:
        raise ValueError("must be > 0")
    return n


def _choice(*allowed):
    def conv(v):
        if v not in allowed:
            raise ValueError("one of %s" % ", ".join(allowed))
        return v
    return conv


def _qemu(v):
    """system, next (build/next: status 67 when `make next` has not run)
    or a binary; the label stays the word."""
    binary = nextroot.qemu(v)
    if shutil.which(binary) is None:
        raise ValueError("not an executable QEMU binary")
    return binary


def _pairs(v):
    n = _positive(v)
    if n > qemucmd.MAX_QUEUES:
        raise ValueError("at most %d" % qemucmd.MAX_QUEUES)
    return n


def _stream_file(v):
    """A stream file's path; its text is checked with the point's other
    options (options.with_streams: every error one line)."""
    if not os.path.isfile(v):
        raise ValueError("no such file")
    return v


def _backend(v):
    if v not in backends.names():
        raise ValueError("one of %s" % ", ".join(backends.names()))
    return v


# axis: (how it reaches the run, parser of one value). "config": a guest
# config word; "opt": the runner option of the same name (as `vnperf run`).
AXES = {
    "backend": ("opt", _backend),
    "size": ("opt", _positive),
    "sessions": ("config", _positive),
    "msg_size": ("config", _positive),
    "window": ("config", _positive),
    "kick_batch": ("config", _count),
    "rx_refill": ("config", _positive),
    "ring": ("config", _count),
    "queues": ("opt", _pairs),
    "event_idx": ("features", _choice("on", "off")),
    "txfull": ("config", _choice("wait", "drop")),
    "notify": ("config", _choice("poll", "irq", "hybrid")),
    "rate": ("opt", str),
    "pin": ("opt", pinning.parse),
    "placement": ("opt", _choice(*placement.MODES)),
    "fwd_mode": ("opt", _choice(*testpmd.FWD_MODES)),
    "pmd_burst": ("opt", _positive),
    "pmd_rxd": ("opt", _positive),
    "pmd_txd": ("opt", _positive),
    "feeder": ("opt", _choice(*vhostpeer.FEEDERS)),
    "streams": ("opt", _stream_file),
    "image": ("opt", str),     # checked with the other files (artifacts.py)
    "qemu": ("opt", _qemu),
}
# Options that are an axis only when given a comma list (the A/B of two
# builds); one value is the plain option of `vnperf run`.
BUILD_AXES = ("image", "qemu")

# Runs per point when --repeat is not given: enough for the test of
# compare to see a 10% change on this kind of host, few enough to keep a
# sweep short (docs/runner-compare.md, "Statistics").
DEFAULT_REPEAT = 5
ORDERS = ("interleave", "random", "sequential")
# --aa: the arm axis, two identical arms of every point.
AA_AXIS = "aa"
AA_ARMS = ("a", "b")


def flag(name):
    return "--" + name.replace("_", "-")


def parse_axis(name, text):
    """"64,128" -> [(label, value)]; pin separates its settings with ';'
    since one setting holds commas."""
    _, conv = AXES[name]
    parts = text.split(";") if name == "pin" else text.split(",")
    out = []
    for p in (p.strip() for p in parts):
        if not p:
            raise usage("%s %r: empty value" % (flag(name), text))
        try:
            out.append((p, conv(p)))
        except ValueError as e:
            raise usage("%s: bad value %r: %s" % (flag(name), p, e))
    labels = [l for l, _ in out]
    if len(set(labels)) != len(labels):
        raise usage("%s %r: a value is given twice" % (flag(name), text))
    return out


def axes_from(ns, but=()):
    """{axis: [(label, value)]} for the axes given, in AXES order, but
    those the caller parses itself (ndr's sizes); with --aa the two arms
    last (they vary fastest: each point's arms run side by side)."""
    axes = {n: parse_axis(n, getattr(ns, n)) for n in AXES
            if n not in but and getattr(ns, n) is not None}
    for n in BUILD_AXES:
        if len(axes.get(n, ())) == 1:
            del axes[n]
    if ns.aa:
        axes[AA_AXIS] = [(arm, arm) for arm in AA_ARMS]
    return axes


def points(axes):
    """[{axis: (label, value)}] over the cartesian product; the last axis
    varies fastest."""
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def with_feature_off(words, feature):
    """Config words with -feature added to the features= word (kept when
    the user gave other features already)."""
    out, done = [], False
    for w in words:
        k, _, v = w.partition("=")
        if k == "features":
            items = [x for x in v.split(",") if x]
            if "-" + feature not in items:
                items.append("-" + feature)
            w, done = "features=" + ",".join(items), True
        out.append(w)
    if not done:
        out.append("features=-" + feature)
    return out


def point_opts(base, point):
    """The runner options of one point: base plus the axis values."""
    config = list(base.config)
    opt = {}
    for name, (label, value) in point.items():
        if name == AA_AXIS:
            continue
        how, _ = AXES[name]
        if how == "config":
            config.append("%s=%s" % (name, label))
        elif how == "features":
            # The guest leaves the feature unnegotiated: same effect on
            # every backend, whatever the device offers.
            if value == "off":
                config = with_feature_off(config, "event_idx")
        else:
            opt[name] = value
    # as `run --queues N`: a vCPU per pair unless --vcpus says otherwise
    o = options.with_vcpus(dataclasses.replace(base, config=tuple(config), **opt))
    # as `run --streams FILE`: the file checked and encoded for the guest
    return options.with_streams(o) if "streams" in opt else o


def base_opts(ns, but=(), **fields):
    """The options every point starts from: the sweep's own options minus
    the axes (the first arm of a build axis: checks before the first run,
    the KVM probe, use it), points of 5 s; fields: the caller's own
    (ndr's app). but: as axes_from."""
    fields = dict(options.run_fields(ns), **fields)
    for name in AXES:
        if name in fields:
            del fields[name]
    for name in BUILD_AXES:
        if getattr(ns, name) is not None:
            fields[name] = getattr(ns, name).split(",")[0].strip()
    named = [v.strip() for v in ns.backend.split(",")] if ns.backend else []
    fields["backend"] = backends.implied(ns, named) or "dgram"
    # --out is the sweep's directory, not a run's.
    fields.update(json=False, csv=False, out=None, quiet=not ns.verbose,
                  duration=ns.duration or 5)
    base = options.build(**fields)
    clash = [w.partition("=")[0] for w in base.config
             if w.partition("=")[0] in AXES and w.partition("=")[0] not in but
             and getattr(ns, w.partition("=")[0]) is not None]
    if clash:
        raise usage("%s is both an axis and a config word" % clash[0])
    return base


def check_host(base, axes):
    """Every backend of the sweep must be there before the first run, and
    then every file of build/ it needs (artifacts.py). What the options
    alone refuse (--memory) and a full or unusable TMPDIR come first, before
    the results directory exists, as a run refuses them."""
    too_big = qemucmd.check_memory(base.memory)
    if too_big:
        raise usage(too_big)
    scratch.root()
    names = [v for _, v in axes.get("backend", [])] or [base.backend]
    bes = []
    for name in names:
        bes.append(backends.make(name, dataclasses.replace(base, backend=name)))
        bes[-1].check()
    images = [v for _, v in axes.get("image", [])] or [base.image]
    artifacts.check(base, bes, images=images)


def run_point_once(opts, resolver):
    """One run: the runner's result.RunResult, or a stand-in one for a
    host-side failure that is not the sweep's fault."""
    try:
        with Session() as s:
            res = runner.run_one(s, opts, resolver)
        return res.with_teardown_errors(s.errors)
    except RunnerError as e:
        if e.status in (exitcodes.RUNNER_USAGE, exitcodes.RUNNER_BACKEND_MISSING):
            raise
        return result.RunResult.failed(e.status, e.line)


def describe(params):
    return " ".join("%s=%s" % kv for kv in params.items())


def writer(base, axes, repeat, outdir, order, seed):
    w = resultsdir.Writer(outdir, axes={n: [l for l, _ in v] for n, v in axes.items()},
                          repeat=repeat, fixed=resultsdir.fixed_params(base, axes))
    w.results.update(order=order, seed=seed)
    return w


def schedule(npoints, repeat, order, rng):
    """[(point index, repeat index)] in running order. interleave: round
    by round, every other round in reverse (A B, B A, ...: a steady drift
    of the host cancels out between neighbours); random: every round
    shuffled; sequential: all repeats of a point, then the next."""
    if order == "sequential":
        return [(i, r) for i in range(npoints) for r in range(repeat)]
    out = []
    for r in range(repeat):
        idx = list(range(npoints))
        if order == "random":
            rng.shuffle(idx)
        elif r % 2:
            idx.reverse()
        out += [(i, r) for i in idx]
    return out


def point_identity(opts, params, accel):
    """What defines every run of this point (identity.py), the A/A arm
    included."""
    ident = runner.run_identity(opts, accel)
    if AA_AXIS in params:
        ident[AA_AXIS] = params[AA_AXIS]
    return ident


def run(base, axes, repeat, out, resolver, log=None, order="interleave", seed=1):
    """Runs the sweep into out (a resultsdir.Writer); returns the status: 0
    when every run passed, else the first failed run's. A guest config
    error stops the sweep (the same error would repeat at every point)."""
    log = log or (lambda line: runner.log(base, line))
    accel_used = resolver.choice.accel if resolver.choice else base.accel
    plan = []
    for pt in points(axes):
        params = {n: l for n, (l, _) in pt.items()}
        opts = point_opts(base, pt)
        plan.append((params, opts, out.add_point(params, point_identity(opts, params,
                                                                        accel_used))))
    order_ = schedule(len(plan), repeat, order, random.Random(seed))
    start = time.monotonic()
    status = 0
    for k, (i, r) in enumerate(order_, 1):
        params, opts, point = plan[i]
        t0 = time.monotonic()
        res = run_point_once(opts, resolver)
        out.add_run(point, r + 1, res)
        now = time.monotonic()
        log("sweep %d/%d: %s%s: %s, %.1f s%s" % (
            k, len(order_), describe(params), " #%d" % (r + 1) if repeat > 1 else "",
            run_outcome(res), now - t0,
            "; about %.0f s to go" % ((now - start) / k * (len(order_) - k))
            if k < len(order_) else ""))
        out.save()
        if res.status == exitcodes.GUEST_CONFIG_ERROR:
            raise RunnerError(exitcodes.GUEST_CONFIG_ERROR, "sweep stopped at %s: %s" % (
                describe(params), res.why))
        status = status or res.status
    try:
        out.set_plots(plots.plot_sweep(out.results, out.outdir))
    except Exception as e:  # the measurements are saved; plots are extra
        log("sweep: no plots: matplotlib failed: %s: %s" % (type(e).__name__, e))
    out.save()
    return status


def run_outcome(res):
    """A run's part of its progress line (res: result.RunResult): its app's
    leading figure (lead_figure), said to be the guest's own count where
    nothing else counted, or why it failed."""
    if res.status != 0:
        return "failed: %s" % res.why
    return "%s%s" % (lead_figure(res.metrics.as_dict(), res.app),
                     "" if res.host_counted else " (guest only)")


# Table columns: (header, metric, scale, format).
TABLE_METRICS = (("pps", "pps", 1.0, None), ("Gbit/s", "bps", 1e-9, "%.3f"),
                 ("loss%", "loss_pct", 1.0, "%.2f"), ("TX drops", "tx_dropped", 1.0, None),
                 ("CPU%", "cpu_pct", 1.0, "%.0f"), ("vCPU%", "vcpu_pct", 1.0, "%.0f"),
                 ("irq/pkt", "irq_per_packet", 1.0, "%.3f"), ("idle%", "idle_pct", 1.0, "%.0f"),
                 ("SD us/KB", "sd_us_per_kb", 1.0, "%.2f"),
                 ("SD us/tx", "sd_us_per_tx", 1.0, "%.1f"),
                 ("p99 us", "p99_ns", 1e-3, "%.1f"), ("tps", "tps", 1.0, None),
                 ("kicks/pkt", "kicks_per_packet", 1.0, "%.3g"),
                 ("supp%", "suppressed_pct", 1.0, "%.1f"),
                 ("batch", "backend_batch", 1.0, "%.1f"))


# Each app's own measure leads its table (report.app_kind; docs/runner-run.md,
# "Headline figures"); report.MISLEADING are left out.
LEAD_METRICS = {
    "stream": (("goodput Gbit/s", "goodput_bps", 1e-9, "%.3f"),),
    "rr": (("tps", "tps", 1.0, None), ("p50 us", "p50_ns", 1e-3, "%.1f"),
           ("p99 us", "p99_ns", 1e-3, "%.1f")),
    "frames": (("pps", "pps", 1.0, None), ("Gbit/s w/o FCS", "bps", 1e-9, "%.3f")),
    "other": TABLE_METRICS[:2],
}

# Columns left out when every point has 0 there.
QUIET_WHEN_ZERO = ("tx_dropped", "irq_per_packet", "idle_pct")


def _cell(s, scale, fmt):
    """A result.Summary's median as a cell."""
    if s is None:
        return "-"
    v = s.median * scale
    if fmt is None:
        return "0" if v == 0 else fmt_num(v)
    return fmt % v


# Marks the guest's own rates (counts.GUEST_RATES) where no host-side count
# checked them.
GUEST_ONLY = "*"


def guest_only_note(results):
    """The footnote of GUEST_ONLY cells, naming their backends; None when
    every point was counted on the host side too (or is from before
    host_counted was recorded)."""
    results = result.SweepResult.from_dict(results)
    pts = [p for p in results.points if p.host_counted is False]
    if not pts:
        return None
    fixed = (results.fixed or {}).get("backend")
    names = sorted({(p.identity or p.params).get("backend", fixed) or "?" for p in pts})
    return ("%s guest only (%s): nothing on the host end counted these runs' frames, so the "
            "rate is the guest's own count, not one delivered; what the backend dropped is "
            "not counted (loss -)" % (GUEST_ONLY, ", ".join(names)))


def _batch_cell(s):
    """Frames per burst, or its bounds where testpmd's shares do not pin
    it (outcome.batch_metrics): the medians of the runs' bounds."""
    if s.get("backend_batch") is not None or s.get("backend_batch_lo") is None:
        return _cell(s.get("backend_batch"), 1.0, "%.1f")
    return "%.3g..%.3g" % (s["backend_batch_lo"].median, s["backend_batch_hi"].median)


def columns(results, kind):
    """(header, metric, scale, format) of the table: the app's own figures
    first, then the others some point has (not those all zero)."""
    pts = result.SweepResult.from_dict(results).points
    lead = LEAD_METRICS[kind]
    rest = [c for c in TABLE_METRICS if c[1] not in [m for _, m, _, _ in lead]
            and c[1] not in report.MISLEADING.get(kind, ())]

    def has(metric):
        return any(metric in p.summary for p in pts)

    return [c for c in list(lead) + rest
            if (has(c[1]) or c[1] == "backend_batch" and has("backend_batch_lo"))
            and (c[1] not in QUIET_WHEN_ZERO
                 or any(c[1] in p.summary and p.summary[c[1]].max for p in pts))]


def lead_figure(rep_metrics, app):
    """The app's leading figure of one run, for the sweep's log line."""
    head, m, scale, fmt = LEAD_METRICS[report.app_kind(app)][0]
    v = rep_metrics.get(m)
    if v is None:
        return "- " + head
    return "%s %s" % (fmt % (v * scale) if fmt else fmt_num(v * scale), head)


def render(results):
    """Medians per point, the leading figure's min-max and spread; metric
    columns that no point has are left out. The guest's own rates of a
    point without a host-side count carry GUEST_ONLY and a footnote.
    results: a result.SweepResult or its JSON object (the Writer's)."""
    results = result.SweepResult.from_dict(results)
    kind = report.app_kind(results.app)
    names = list(results.axes)
    cols = columns(results, kind)
    head, lead, scale, fmt = LEAD_METRICS[kind][0]
    show = (lambda v: fmt % (v * scale)) if fmt else (lambda v: fmt_num(v * scale))
    headers = names + ["ok"] + [c[0] for c in cols] + [head + " min-max", "spread"]
    rows = []
    for p in results.points:
        s = p.summary or {}
        first = s.get(lead)
        sp = stats.spread_pct(first.to_dict()) if first and first.n > 1 else None
        mark = GUEST_ONLY if p.host_counted is False else ""
        rows.append([p.params[n] for n in names]
                    + ["%d/%d" % (p.ok, len(p.statuses))]
                    + [_batch_cell(s) if m == "backend_batch" else _cell(s.get(m), sc, f)
                       + (mark if m in counts.GUEST_RATES and m in s else "")
                       for _, m, sc, f in cols]
                    + ["%s-%s" % (show(first.min), show(first.max)) if first else "-",
                       "%.1f%%" % sp if sp is not None else "-"])
    text = table(headers, rows, align=["<"] * len(names) + [">"] * (len(headers) - len(names)))
    note = guest_only_note(results)
    return text + "\n" + note if note else text


# Re-splits of the A/A calibration: enough that the table rate's 95%
# interval is within +-1% (200 left +-3.6%; docs/runner-compare.md).
AA_ROUNDS = 5000


def aa_report(results, method="welch", alpha=stats.ALPHA, rounds=AA_ROUNDS, seed=1):
    """The A/A comparison of a --aa sweep (arm a against arm b) and its
    calibration: (text, result.Comparison, calibration dict)."""
    pts = compare.typed({"params": p["identity"], "summary": p["summary"],
                         "statuses": p["statuses"], "why": p["why"]}
                        for p in results["points"])
    a = [p for p in pts if p.params.get(AA_AXIS) == "a"]
    b = [p for p in pts if p.params.get(AA_AXIS) == "b"]
    cmp = compare.compare(a, b, ab={AA_AXIS}, method=method, alpha=alpha)
    cal = calibration(cmp, a, b, method, alpha, rounds, seed)
    cells = [c for _, _, c in compare.named_cells(cmp)]
    sig = sum(c.significant for c in cells)
    mde = [c.mde_pct for c in cells if c.mde_pct is not None]
    lines = [compare.render(cmp, "arm a", "arm b"),
             "A/A: %d of %d tested cells significant (expected: none; at most %g%% of A/A "
             "tables show one)%s." % (
                 sig, cmp.tests, 100 * alpha,
                 "; the smallest changes they could have seen (mde%%): %.1f..%.1f%%" % (
                     min(mde), max(mde)) if mde else ""),
             "Calibration, %d random re-splits of these runs into two arms: single tests "
             "significant in %.1f%% (95%% CI %.1f..%.1f; the test promises %g%%), whole "
             "tables in %.1f%% (95%% CI %.1f..%.1f; promise: at most %g%%)." % (
                 rounds, 100 * cal["cell_rate"], 100 * cal["cell_ci"][0],
                 100 * cal["cell_ci"][1], 100 * alpha, 100 * cal["table_rate"],
                 100 * cal["table_ci"][0], 100 * cal["table_ci"][1], 100 * alpha)]
    return "\n".join(lines), cmp, cal


def resplit_pools(cmp, a, b):
    """Per row of the comparison, its tested cells' (column, arm a values,
    arm b values); a, b: the arms' result.Points. A row's metrics come from
    the same runs: calibration re-splits runs, not values."""
    key = cmp.key
    ia, ib = compare.index(a, key, "A"), compare.index(b, key, "B")
    rows = []
    for r in cmp.rows:
        k = tuple(r.params[n] for n in key)
        rows.append([(col, list(ia[k].summary[c.metric].values),
                      list(ib[k].summary[c.metric].values))
                     for col, c in r.columns.items() if c.p is not None])
    return rows


def resplit(rows, rng, method, averaged=()):
    """One round: each row's runs pooled and dealt into two arms again by
    one random permutation for all its cells (so BW and pps of a run stay
    together, as in a real table); the p-values of the table, with those
    of the average row's columns named in averaged (compare's)."""
    ps, dealt_cols = [], {}
    for cells in rows:
        perm = list(range(max((len(va) + len(vb) for _, va, vb in cells), default=0)))
        rng.shuffle(perm)
        for col, va, vb in cells:
            pool = va + vb
            # A cell with fewer values (a metric some runs lack) takes the
            # same order restricted to its own: still a uniform deal.
            dealt = [pool[i] for i in perm if i < len(pool)]
            res = stats.test(dealt[:len(va)], dealt[len(va):], method, level=None)
            if res is not None:
                ps.append(res["p"])
            dealt_cols.setdefault(col, []).append((dealt[:len(va)], dealt[len(va):]))
    for col in averaged:
        res = stats.mean_change(dealt_cols.get(col, ()), level=None)
        if res is not None:
            ps.append(res["p"])
    return ps


def calibration(cmp, a, b, method, alpha, rounds, seed):
    """False-positive rates of the test on this host's own noise: the runs
    of both arms of each point pooled and split at random into two arms
    again, rounds times (the time order is lost, the shape of the noise is
    kept), with their 95% intervals."""
    rng = random.Random(seed)
    rows = resplit_pools(cmp, a, b)
    averaged = [col for col, c in cmp.average.items() if c.p is not None]
    cells = cell_hits = table_hits = 0
    for _ in range(rounds):
        ps = resplit(rows, rng, method, averaged)
        cells += len(ps)
        cell_hits += sum(p < alpha for p in ps)
        table_hits += any(p < alpha for p in stats.holm(ps))
    return {"rounds": rounds, "cells": sum(len(r) for r in rows),
            "cell_rate": cell_hits / cells if cells else 0.0,
            "cell_ci": stats.wilson(cell_hits, cells),
            "table_rate": table_hits / rounds, "table_ci": stats.wilson(table_hits, rounds)}


def add_arguments(p):
    a = p.add_argument_group("axes (comma-separated values; the sweep runs their product)")
    a.add_argument("--backend", help="e.g. dgram,hub,vhost-user")
    a.add_argument("--size", help="frame sizes, e.g. 64,512,1514")
    a.add_argument("--sessions", help="parallel sessions (rr, iperf), e.g. 1,2,4")
    a.add_argument("--msg-size", dest="msg_size",
                   help="iperf write sizes (netperf -m), e.g. 512,1024,16384")
    a.add_argument("--window",
                   help="the guest iperf server's TCP receive window per stream, bytes "
                        "(iperf -w, netperf -S), e.g. 262144,4194304")
    a.add_argument("--kick-batch", dest="kick_batch", help="TX frames per kick, e.g. 1,32")
    a.add_argument("--rx-refill", dest="rx_refill", help="RX buffers per refill, e.g. 16,64")
    a.add_argument("--queues", help="queue pairs, e.g. 1,2,4 (tap, vhost-net, vhost-user; "
                   "the guest's vCPUs follow unless --vcpus is given)")
    a.add_argument("--ring", help="virtqueue sizes, e.g. 64,256 (above 256 needs --queue-size)")
    a.add_argument("--event-idx", dest="event_idx",
                   help="on,off (off: the guest config features=-event_idx)")
    a.add_argument("--txfull", help="TX-full policy: wait,drop")
    a.add_argument("--notify", help="notification modes: poll,irq,hybrid (docs/driver.md)")
    a.add_argument("--rate", help="send rates, e.g. 10k,100k or 100mbps,1gbps")
    a.add_argument("--pin", help="pinnings separated by ';', e.g. 'vcpu=0,main=0;vcpu=0,main=1'")
    a.add_argument("--placement", help="the runner's thread plans, e.g. spread,shared (vCPU i "
                   "apart from or on backend thread i's CPU) or auto,none (default: auto)")
    a.add_argument("--fwd-mode", dest="fwd_mode", help="vhost-user: testpmd forward modes, "
                   "e.g. rxonly,io")
    a.add_argument("--pmd-burst", dest="pmd_burst", help="vhost-user: testpmd --burst, e.g. "
                   "1,16,32,64")
    a.add_argument("--pmd-rxd", dest="pmd_rxd", help="vhost-user: testpmd --rxd, e.g. 256,1024")
    a.add_argument("--pmd-txd", dest="pmd_txd", help="vhost-user: testpmd --txd, e.g. 256,1024")
    a.add_argument("--streams", help="gen: stream files (docs/streams.md), e.g. "
                   "one.toml,four.toml; beside --size or --rate refused, as in run")
    a.add_argument("--feeder", help="vhost-user sink with a rate: peer-dpdk (default), testpmd")
    # --image and --qemu (guest options): a comma list is an axis too.
    p.add_argument("--repeat", type=_repeat, default=None,
                   help="runs per point (median, spread, the test of compare; default %d; "
                   "searches: 1)" % DEFAULT_REPEAT)
    p.add_argument("--order", choices=ORDERS, default="interleave",
                   help="running order: interleave (round by round, every other round "
                   "reversed; default), random (each round shuffled, --seed), sequential")
    p.add_argument("--seed", type=int, default=1, help="seed of --order random")
    p.add_argument("--aa", action="store_true", help="A/A calibration: every point twice, as "
                   "two identical arms (axis aa=a,b), then their comparison")
    p.add_argument("--out", type=optypes.out_dir, default=None, help="results directory (default results/sweep-TIME)")
    p.add_argument("--verbose", "-v", action="store_true", help="echo the guests' consoles")


def _repeat(v):
    try:
        return _positive(v)
    except ValueError:
        raise argparse.ArgumentTypeError("%r: a whole number > 0" % v)


def main(opts):
    """`vnperf sweep`: returns the exit status."""
    repeat = opts.repeat or DEFAULT_REPEAT
    axes = axes_from(opts)
    if not axes:
        raise usage("sweep: no axis given (e.g. --size 64,512,1514 --backend dgram)")
    base = base_opts(opts)
    support.check_axes(base, axes)
    for pt in points(axes):
        support.check(point_opts(base, pt))
    check_host(base, axes)
    outdir = opts.out or os.path.join("results", time.strftime("sweep-%Y%m%d-%H%M%S"))
    if os.path.exists(os.path.join(outdir, resultsdir.SUMMARY)):
        raise usage("sweep: %s already holds results; choose another --out" % outdir)
    try:
        out = writer(base, axes, repeat, outdir, opts.order, opts.seed)
    except OSError as e:
        raise usage("sweep: cannot create the results directory %s: %s" % (outdir, e.strerror))
    resolver = accel.Resolver(base.accel, base.image, base.machine, base.qemu)
    with Session() as s:
        choice = resolver.resolve(s, lambda line: runner.log(base, line))
    runner.log(base, "sweep: %d points x %d runs (%s), accel %s, results in %s" % (
        len(points(axes)), repeat, opts.order, choice.accel, outdir))
    try:
        status = run(base, axes, repeat, out, resolver, order=opts.order, seed=opts.seed)
    except (Interrupted, KeyboardInterrupt):
        # What was measured so far stays, and is shown.
        out.save()
        print(render(out.results))
        print("results so far: %s (results.json, results.csv, runs.csv, runs/)" % outdir)
        raise
    print(render(out.results))
    if opts.aa:
        text, cmp, cal = aa_report(out.results)
        cells = compare.named_cells(cmp)
        out.results["aa"] = {"calibration": cal,
                             "significant": ["%s %s" % (row, col) for row, col, c in cells
                                             if c.significant],
                             "mde_pct": {"%s %s" % (row, col): c.mde_pct
                                         for row, col, c in cells}}
        out.save()
        print(text)
    print("results: %s (%s)" % (outdir, resultsdir.describe_files(out.results)))
    return status
