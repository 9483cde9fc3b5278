#!/usr/bin/python3
"""make soak: long runs of gen -> sink, rr and iperf through tools/vnperf,
checked for drift of the guests' memory counters (the "mem" object of every
sample and result, docs/protocol.md), loss on a lossless path and
disagreement between the two ends. SOAK_TIME seconds in all (default 3600),
split evenly between the phases. One line per check, the counters at start
and end, exit 1 on any failure (docs/runner-soak.md, "Soak")."""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VNPERF = os.path.join(ROOT, "tools", "vnperf")

# Constant once the app runs: anything else is a leak or a bug.
STATIC = ("heap_in_use", "heap_top", "dma_bytes", "arena_free")
# Go up and down with traffic: may not trend upwards.
DYNAMIC = ("tx_in_flight",)
# The share of a phase's samples that is warm-up: static counters may step
# there (a one-time allocation on first use, such as newlib's printf filling
# its free list of big numbers, which stepped the rr client's heap_in_use by
# 240 B some seconds in until the kernel primed it at boot), and are
# compared with the first sample after it from then on.
WARMUP = 0.25

PHASES = (
    ("gen -> sink", ["--topology", "guests", "--backend", "dgram", "--app", "gen",
                     "--rate", "2k"], []),
    ("rr", ["--topology", "guests", "--backend", "dgram", "--app", "rr"], ["proto=tcp"]),
    ("iperf", ["--backend", "tap", "--app", "iperf"], ["role=client", "sessions=4"]),
)


def flat(mem):
    """{"name": value} of one mem object, lwIP's pools as lwip.NAME."""
    out = {k: mem[k] for k in STATIC + DYNAMIC}
    out.update(("lwip." + k, v) for k, v in mem["lwip"].items())
    return out


def warmup(n):
    """Samples of warm-up among n (at least the first two)."""
    return max(2, int(n * WARMUP))


def drift(label, samples, result_mem):
    """Failure lines for one guest: static counters that changed after the
    warm-up (from the first sample after it to the result: a leak keeps
    growing, a one-time allocation stays inside the warm-up), dynamic ones
    whose floor in the last third is above their peak in the first third (a
    leak raises the floor; traffic only moves the peaks)."""
    every = [flat(s["mem"]) for s in samples if "mem" in s]
    series = every[1:]
    if len(every) - warmup(len(every)) < 3:
        return ["%s: %d samples, too few to judge drift" % (label, len(every))]
    bad = []
    end = flat(result_mem)
    steady = every[warmup(len(every)):]
    for k in series[0]:
        vals = [s[k] for s in series]
        if k in STATIC or k == "lwip.heap_err":
            after = [s[k] for s in steady] + [end[k]]
            if len(set(after)) != 1:
                moved = next(v for v in after if v != after[0])
                bad.append("%s: %s changed after the warm-up: %s, then %s, result %s"
                           % (label, k, after[0], moved, end[k]))
            continue
        third = max(1, len(vals) // 3)
        if min(vals[-third:]) > max(vals[:third]):
            bad.append("%s: %s grew: at most %s in the first third, at least %s in the last"
                       % (label, k, max(vals[:third]), min(vals[-third:])))
    return bad


def agreement(name, rep):
    """Failure lines for loss on the lossless path and the two ends'
    counts."""
    res = [g["result"] or {} for g in rep["guests"]]
    if name == "gen -> sink":
        rx, tx = res
        out = ["sink: %s %d, not 0" % (k, rx.get(k, 0)) for k in ("lost", "dup", "stale")
               if rx.get(k, 0)]
        if rx.get("packets") != tx.get("packets"):
            out.append("gen sent %s, sink counted %s" % (tx.get("packets"), rx.get("packets")))
        return out
    if name == "rr":
        server, client = res
        diff = abs(client.get("transactions", 0) - server.get("transactions", 0))
        if not client.get("transactions") or diff > client.get("sessions", 1):
            return ["rr: client %s, server %s transactions" % (client.get("transactions"),
                                                               server.get("transactions"))]
        return []
    out = []
    for d in rep["counts"]["directions"].values():
        sent, got = d.get("sent", 0), d.get("received", 0)
        if not sent or abs(sent - got) > 0.01 * sent:
            out.append("iperf: guest %s bytes, host %s" % (sent, got))
    return out


def run_phase(name, args, words, seconds):
    cmd = [sys.executable, VNPERF, "run", "--json", "--quiet", "--duration", str(seconds),
           "--timeout", str(seconds + 120)] + args + (["--"] + words if words else [])
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return None, ["%s: no report (status %d): %s" % (name, r.returncode, r.stderr.strip())]
    if rep["status"] != 0:
        return rep, ["%s: status %d: %s" % (name, rep["status"], rep["why"])]
    bad = agreement(name, rep)
    for g in rep["guests"]:
        bad += drift("%s %s" % (name, g["label"]), g.get("samples") or [], g["result"]["mem"])
    return rep, bad


def show(name, rep):
    """Per guest, each counter at the first sample, the end of the warm-up,
    the last sample and the result."""
    for g in rep["guests"]:
        samples = [s for s in g.get("samples") or [] if "mem" in s]
        if len(samples) < 3:
            continue
        w = samples[warmup(len(samples))]
        a, m = flat(samples[0]["mem"]), flat(w["mem"])
        b, e = flat(samples[-1]["mem"]), flat(g["result"]["mem"])
        keys = [k for k in a if a[k] or m[k] or b[k] or e[k]]
        print("  %s %s: t=%.0f s, warm at %.0f s .. %.0f s: %s" % (
            name, g["label"], samples[0]["t"], w["t"], samples[-1]["t"],
            ", ".join("%s %s, %s..%s (end %s)" % (k, a[k], m[k], b[k], e[k]) for k in keys)))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--time", type=int, default=int(os.environ.get("SOAK_TIME", "3600")),
                   help="seconds in all (SOAK_TIME, default 3600)")
    opts = p.parse_args(argv)
    each = max(10, opts.time // len(PHASES))
    failed = checked = 0
    for name, args, words in PHASES:
        if "tap" in args and os.geteuid() != 0:
            print("soak: %s: skipped: the tap backend needs root" % name)
            continue
        rep, bad = run_phase(name, args, words, each)
        checked += 1
        print("soak: %s, %d s: %s" % (name, each, "ok" if not bad else "FAILED"))
        for line in bad:
            print("  " + line)
        if rep is not None and rep.get("guests"):
            show(name, rep)
        failed += bool(bad)
    print("soak: %d phases, %d failed" % (checked, failed))
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
