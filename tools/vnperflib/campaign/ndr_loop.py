"""The loop of `vnperf ndr` and `sweep --search`: the RFC 2544 search
(search.py) at every point of a sweep, repeat times, then its latency
trials, each search's result added to the Writer as it ends."""

import time

from ..run import runner
from . import search, sweep
from .ndr_trial import Trials, latency_skip, latency_trials, point_status, size_opts


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
