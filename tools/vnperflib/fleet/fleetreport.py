"""What a fleet run amounts to: each instance's outcome, each pair's counts
from both guests, per group and for the whole fleet the sums (pps, Gbit/s,
packets, transactions), the loss over the pairs and the latency
percentiles of the merged histograms (histmerge.py); the tables, the JSON
report and the results directory `vnperf compare` reads.

The aggregate sums the measuring side only: the senders of pairs and the
groups without a partner. Receivers have their own group rows, and no
frame is counted twice."""

import dataclasses
import json
import os
import sys
import time
import types

from .. import exitcodes, result
from ..analysis import counts, histmerge, outcome
from ..analysis.stats import number as _num
from ..report import resultsdir
from ..report.tables import fmt_count, fmt_num, table
from ..run import runner, versions

SUM_METRICS = ("pps", "bps", "packets", "bytes", "tps", "transactions")
LATENCY = ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns")


# What every instance's entry has, a null too.
INSTANCE_KEYS = ("instance", "group", "app", "role", "uri", "partner", "domain", "config",
                 "status", "why", "started", "guest", "metrics")


def instance_report(f, i):
    """(result.FleetInstance, its merged latency histogram or None) of
    instance i: status and why, its guest report, its own metrics; a
    sender's pair's counts are build()'s."""
    base = result.FleetInstance(instance=i.label, group=i.group.name, app=i.group.app,
                                role=i.group.role, uri=(i.group.uri or f.spec.uri),
                                partner=i.partner.label if i.partner else None,
                                domain=i.g.name if i.g else None, config=tuple(i.words),
                                keys=INSTANCE_KEYS)
    if i.g is None or i.g.proc is None or not i.running:
        why = i.start_error or ("%s: never started: %s" % (
            i.label, i.wait_why or "the fleet's time ran out before its receiver was up"))
        status = exitcodes.RUNNER_NO_GUEST_EXIT if i.start_error else exitcodes.RUNNER_TIMEOUT
        return dataclasses.replace(base, status=status, why=why, started=False,
                                   metrics=result.Metrics()), None
    g = outcome.guest_report(i.g)
    status, why = outcome.overall_status(result.RunResult(guests=(g,)), None)
    m = _metrics(g.result)
    try:
        hist = histmerge.from_lines(i.g.console.all("hist"))
    except ValueError as e:
        hist = None
        if status == 0:
            status, why = exitcodes.RUNNER_PROTOCOL, "%s: %s" % (i.label, e)
    if hist is not None:
        m.update(_latency(hist))
    return base.but(status=status, why=why, started=True, guest=g,
                    ready_s=(i.ready_at - f.t0) if i.ready_at else None,
                    metrics=result.Metrics.from_dict(m)), hist


def _metrics(sent):
    """{metric: value} of a guest's result message (its own rates and
    counts, the duration)."""
    r = sent or {}
    m = {k: _num(r.get(k)) for k in SUM_METRICS if _num(r.get(k)) is not None}
    if _num(r.get("duration_ns")):
        m["duration_s"] = _num(r.get("duration_ns")) / 1e9
    return m


def pair_counts(sender, receiver, socket_drops=None):
    """The pair's merged counts (a result.Counts) of the sender's and the
    receiver's result.FleetInstance; socket_drops: the receiving QEMU's UDP
    socket drops (udp wire), None where not read."""
    rs = sender.guest.result if sender.guest is not None else None
    rr = receiver.guest.result if receiver.guest is not None else None
    if rs is None or rr is None:
        return None
    # Two QEMUs' UDP sockets (or a switch) between them: loss is possible.
    return counts.merge_guests(sender.app, rs, rr, lossless=False,
                               drops=outcome.receiver_socket_drops(socket_drops))


def _pair_loss(c):
    """(sent, lost) of the app-level direction of c (a result.Counts);
    None without counts."""
    d = ((c.directions if c is not None else None) or {}).get("tx guest->rx guest")
    if d is None or d.lost is None:
        return None
    return d.sent, d.lost


def summarize(reps, hists):
    """A result.GroupSummary of instances reps (result.FleetInstance) and
    their histograms: sums, loss and merged latency."""
    out = {"instances": len(reps), "ok": sum(1 for r in reps if r.status == 0)}
    measured = [r.metrics.as_dict() for r in reps if r.metrics is not None]
    for k in SUM_METRICS:
        vals = [m[k] for m in measured if k in m]
        if vals:
            out[k] = sum(vals)
    pairs = [_pair_loss(r.counts) for r in reps]
    pairs = [p for p in pairs if p is not None]
    if pairs:
        sent = sum(p[0] for p in pairs)
        out["sent"], out["lost"] = sent, sum(p[1] for p in pairs)
        out["loss_pct"] = 100.0 * out["lost"] / sent if sent else 0.0
    out.update(_latency(histmerge.merged(hists)))
    return result.GroupSummary(**out)


def _latency(h):
    """The percentiles of a histogram; "count" named for what it counts."""
    lat = h.summary()
    if lat:
        lat["latency_samples"] = lat.pop("count")
    return lat


def _with_pair(r, c):
    """Sender r's result.FleetInstance with its pair's counts c and their
    loss."""
    loss = _pair_loss(c)
    m = dataclasses.replace(r.metrics, loss_pct=100.0 * loss[1] / loss[0] if loss[0] else 0.0) \
        if loss else r.metrics
    return r.but(counts=c, metrics=m)


def build(f):
    """The fleet's result.FleetResult; the teardown's members and the
    status are finish()'s."""
    made = [instance_report(f, i) for i in f.insts]
    hists = {r.instance: h for r, h in made}
    by_label = {r.instance: r for r, _ in made}
    reps = [_with_pair(r, pair_counts(r, by_label[i.partner.label],
                                      f.socket_drops.get(i.partner.label)))
            if i.sender else r for i, (r, _) in zip(f.insts, made)]
    groups = {}
    for g in f.spec.groups:
        mine = [r for r in reps if r.group == g.name]
        groups[g.name] = summarize(mine, [hists[r.instance] for r in mine]).but(
            app=g.app, role=g.role, wire=":".join(x for x in g.wire if x),
            receives_from=g.sender.name if g.sender else None,
            sends_to=g.to.name if g.to else None)
    measuring = [r for i, r in zip(f.insts, reps) if i.sender or i.partner is None]
    failed = tuple(result.FleetFailure(instance=r.instance, status=r.status, why=r.why)
                   for r in reps if r.status != 0)
    return result.FleetResult.given(
        vnperf_fleet=1, spec=f.spec.path, name=f.spec.name,
        time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), accel=f.accel,
        engines=tuple(e.describe() for e in f.engines.values()), instances=tuple(reps),
        groups=types.MappingProxyType(groups),
        aggregate=summarize(measuring, [hists[r.instance] for r in measuring]),
        wall_s=f.wall_s, created_s=f.t_created, startup_s=f.t_all_ready, failed=failed)


def status_of(rep):
    """(status, why) of rep (a result.FleetResult): the first failed
    instance's, then domains left."""
    if rep.failed:
        first = rep.failed[0]
        return first.status, "%d of %d instances failed; first: %s" % (
            len(rep.failed), len(rep.instances), first.why)
    if rep.not_destroyed:
        return exitcodes.RUNNER_BACKEND_FAILED, "could not destroy %s" % ", ".join(
            n for n, _ in rep.not_destroyed)
    return 0, "ok"


def finish(f, session, out):
    """After the session closed (every domain destroyed or named): the
    report's last members, the results directory, the output. Returns the
    exit status."""
    rep = build(f).but(
        not_destroyed=tuple((n, why) for e in f.engines.values() for n, why in e.not_destroyed),
        teardown_errors=tuple(session.errors))
    status, why = status_of(rep)
    rep = rep.but(status=status, why=why, status_name=exitcodes.status_name(status))
    write_results(rep, out)
    if f.opts.json:
        print(json.dumps(rep.to_dict(), indent=1, sort_keys=True, default=str))
    else:
        print(render(rep))
        print("results: %s (fleet.json, results.json, results.csv, runs.csv, runs/)" % out)
    if rep.status != 0:
        runner.log(f.opts, "fleet: " + rep.why)
    return rep.status


# What a group's run report (runs/NNN.json) always has.
GROUP_RUN_KEYS = ("vnperf_report", "schema_version", "metrics", "status", "why")


def write_results(rep, out):
    """The sweep's results directory: one point per group and one for the
    fleet ("group": "fleet"), each with one run, the group's report. rep:
    a result.FleetResult or its JSON object."""
    rep = result.FleetResult.from_dict(rep)
    names = list(rep.groups or ()) + ["fleet"]
    fixed = {"fleet": rep.name, "engine": "libvirt"}
    w = resultsdir.Writer(out, axes={"group": names}, repeat=1, fixed=fixed)
    for name in names:
        summary = rep.aggregate if name == "fleet" else rep.groups[name]
        mine = [r for r in rep.instances if name == "fleet" or r.group == name]
        bad = [r for r in mine if r.status != 0]
        metrics = {k: v for k, v in summary.to_dict().items()
                   if k in resultsdir.METRICS or k in SUM_METRICS or k in LATENCY}
        group = {"vnperf_fleet_group": name, "summary": summary.to_dict(),
                 "instances": [r.to_dict() for r in mine]}
        w.add_run(w.add_point({"group": name}, fleet_identity(rep, fixed, name)), 1,
                  result.RunResult(status=bad[0].status if bad else 0,
                                   why=bad[0].why if bad else "ok",
                                   metrics=result.Metrics.from_dict(metrics),
                                   extra=types.MappingProxyType(group), keys=GROUP_RUN_KEYS))
    w.save()
    with open(os.path.join(out, "fleet.json"), "w") as fh:
        json.dump(rep.to_dict(), fh, indent=1, sort_keys=True, default=str)


def fleet_identity(rep, fixed, name):
    """What defines a group's point (compare pairs on it): the fleet, the
    group and its app, role and wire, the accelerator and the host. rep:
    a result.FleetResult."""
    g = (rep.groups or {}).get(name) or result.GroupSummary()
    ident = dict(fixed, group=name, accel=", ".join(sorted(set(rep.accel.values()))),
                 host_cpus=str(versions.host_cpus()), host_kernel=versions.host_kernel())
    ident.update({k: str(v) for k, v in (("app", g.app), ("role", g.role), ("wire", g.wire))
                  if v is not None})
    return ident


def _s(v):
    return "-" if v is None else "%.1f s" % v


def _us(ns):
    return None if ns is None else "%.1f" % (ns / 1e3)


def _gbps(bps):
    return None if bps is None else "%.3f" % (bps / 1e9)


def _pct(v):
    return None if v is None else "%.2f" % v


def render(rep):
    """Three tables: instances, groups, the fleet. rep: a
    result.FleetResult or its JSON object (build()'s)."""
    rep = result.FleetResult.from_dict(rep)
    rows = []
    for r in rep.instances:
        m = r.metrics or result.Metrics()
        rows.append([r.instance, r.app if r.app not in ("rr", "iperf")
                     else "%s %s" % (r.app, r.role), r.status,
                     fmt_num(m.pps), _gbps(m.bps), fmt_count(m.packets),
                     _pct(m.loss_pct), fmt_num(m.tps), _us(m.p50_ns),
                     _us(m.p99_ns), "%.1f" % r.ready_s if r.ready_s else None])
    out = [table(["instance", "app", "status", "pps", "Gbit/s", "packets", "loss%", "tps",
                  "p50 us", "p99 us", "ready s"], rows, align=["<", "<"] + [">"] * 9), ""]
    grows = [_summary_row(n, g) for n, g in (rep.groups or {}).items()]
    grows.append(_summary_row("fleet", rep.aggregate))
    out.append(table(["group", "ok", "pps", "Gbit/s", "packets", "loss%", "tps", "p50 us",
                      "p99 us", "p999 us"], grows))
    out.append("")
    out.append("fleet: wall clock %.1f s; every domain created after %s, every instance ready "
               "after %s; %d failed" % (rep.wall_s, _s(rep.created_s), _s(rep.startup_s),
                                        len(rep.failed)))
    out.append("(the fleet row sums the senders of pairs and the groups without a partner; "
               "latency percentiles come from the merged histograms)")
    for x in rep.failed:
        out.append("  failed: %s: status %d (%s): %s" % (
            x.instance, x.status, exitcodes.status_name(x.status), x.why))
    for n, why in rep.not_destroyed:
        out.append("  NOT DESTROYED: domain %s: %s" % (n, why))
    return "\n".join(out)


def _summary_row(name, g):
    """A group's row (a result.GroupSummary)."""
    return [name, "%s/%s" % (g.ok, g.instances), fmt_num(g.pps), _gbps(g.bps),
            fmt_count(g.packets), _pct(g.loss_pct), fmt_num(g.tps), _us(g.p50_ns),
            _us(g.p99_ns), _us(g.p999_ns)]


def log_progress(opts, line):
    if not opts.quiet:
        print("vnperf: fleet: " + line, file=sys.stderr, flush=True)
