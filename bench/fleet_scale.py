#!/usr/bin/python3
"""Fleets through libvirt on this host: start-up and aggregate throughput.

Start-up: `vnperf fleet` of N appliances, the wall time from the fleet's
start to every domain created (created_s: libvirt's part, domains paused)
and to every instance's ready line (startup_s), N = 1, 4, 16 by default, side by side with one QEMU started by the runner itself (the
guest's own share: QEMU start to ready). Two kinds of appliance: selftest
(ends right after ready: what libvirt costs per domain) and sink (stays up
polling on a slirp NIC of its own: the fleet competes with its running
guests for the CPUs). A failed fleet ends the script with one line, status 1;
bad options: one line, status 2.

Throughput: N gen -> N sink pairs over udp wires, gen unpaced, for
--duration seconds; the fleet row's pps and Gbit/s (the senders' sum), what
the sinks received, and the loss over the pairs.

Every point --repeat times; the table shows the median and min-max. Needs
libvirt (the tests' helper starts libvirtd when none runs). Run it under
the host's QEMU lock.

    /usr/bin/python3 bench/fleet_scale.py [--startup 1,4,16] [--pairs 1,2,4]
        [--repeat 3] [--duration 5] [--json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import libvirtd  # noqa: E402
from vnperflib.run import guest, qemucmd  # noqa: E402
from vnperflib.run.proc import Session  # noqa: E402

VNPERF = os.path.join(ROOT, "tools", "vnperf")
IMAGE = os.path.join(ROOT, "build", "vnperf.elf")


def fleet(spec_text, tmp):
    """Runs one fleet; its JSON report."""
    spec = os.path.join(tmp, "spec.toml")
    with open(spec, "w") as f:
        f.write(spec_text)
    out = tempfile.mkdtemp(dir=tmp)
    r = subprocess.run([sys.executable, VNPERF, "fleet", spec, "--json", "-q", "--out", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        raise RuntimeError("fleet failed without a report: %s" % r.stderr[-2000:])
    if rep["status"] != 0:
        raise RuntimeError("fleet status %d: %s" % (rep["status"], rep["why"]))
    return rep


def startup_spec(n, app):
    # A sink without a partner needs a NIC of its own: slirp, no host peer.
    extra = 'config = ["duration=5"]\nwire = "user"\n' if app == "sink" else ""
    return ('[fleet]\naccel = "tcg"\nparallel = 4\n[[group]]\nname = "a"\napp = "%s"\n'
            'count = %d\n%s' % (app, n, extra))


def pairs_spec(n, duration):
    return ('[fleet]\naccel = "tcg"\nduration = %d\n'
            '[[group]]\nname = "sinks"\napp = "sink"\ncount = %d\n'
            '[[group]]\nname = "gens"\napp = "gen"\ncount = %d\nto = "sinks"\n'
            'config = ["size=64"]\n' % (duration, n, n))


def qemu_ready_s():
    """One QEMU the runner starts itself, q35 like the fleet's: start to ready."""
    spec = qemucmd.GuestSpec(IMAGE, machine="q35", accel="tcg", config=["app=selftest"])
    g = guest.Guest(spec)
    with Session() as s:
        g.start(s)
        guest.pump([g], 60)
    return g.t_ready


def spread(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def cell(s, fmt="%.2f", scale=1.0):
    return "%s (%s..%s)" % (fmt % (s["median"] * scale), fmt % (s["min"] * scale),
                            fmt % (s["max"] * scale))


def counts(ap, name, text):
    """A comma list of fleet sizes (positive integers), or one usage line."""
    try:
        ns = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        ns = []
    if not ns or min(ns) < 1:
        ap.error("%s %s: a comma list of counts of at least 1, e.g. 1,4,16" % (name, text))
    return ns


def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--startup", default="1,4,16", help="fleet sizes for start-up")
    ap.add_argument("--pairs", default="1,2,4", help="pair counts for throughput")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5, help="seconds of traffic per pair")
    ap.add_argument("--json", action="store_true")
    o = ap.parse_args(argv)
    if o.repeat < 1 or o.duration < 1:
        ap.error("--repeat and --duration: at least 1")
    o.sizes = counts(ap, "--startup", o.startup)
    o.pair_counts = counts(ap, "--pairs", o.pairs)
    return o


def main(argv=None):
    o = options(argv)
    d = libvirtd.Daemons().start()
    res = {"startup": [], "pairs": []}
    try:
        measure(o, o.sizes, o.pair_counts, res)
    except RuntimeError as e:
        print("fleet_scale: %s" % e, file=sys.stderr)
        return 1
    finally:
        d.stop()
    report(o, res)
    return 0


def measure(o, sizes, pairs, res):
    """Every point o.repeat times into res; RuntimeError on a failed fleet."""
    with tempfile.TemporaryDirectory(prefix="vnperf-bench-fleet-") as tmp:
        res["qemu_ready_s"] = spread([qemu_ready_s() for _ in range(o.repeat)])
        for app in ("selftest", "sink"):
            for n in sizes:
                reps = [fleet(startup_spec(n, app), tmp) for _ in range(o.repeat)]
                res["startup"].append({
                    "app": app, "n": n,
                    "created_s": spread([r["created_s"] for r in reps]),
                    "startup_s": spread([r["startup_s"] for r in reps])})
        for n in pairs:
            reps = [fleet(pairs_spec(n, o.duration), tmp) for _ in range(o.repeat)]
            res["pairs"].append({
                "n": n, "pps": spread([r["aggregate"]["pps"] for r in reps]),
                "gbps": spread([r["aggregate"]["bps"] / 1e9 for r in reps]),
                "rx_pps": spread([r["groups"]["sinks"]["pps"] for r in reps]),
                "loss_pct": spread([r["aggregate"]["loss_pct"] for r in reps])})


def report(o, res):
    if o.json:
        print(json.dumps(res, indent=1))
        return
    print("one QEMU started by the runner (q35, selftest), start to ready: %s s"
          % cell(res["qemu_ready_s"]))
    print("\nfleet start to every domain created (libvirt) and to every instance ready, s: "
          "median (min..max) of %d" % o.repeat)
    print("%-9s %5s  %-24s %-24s" % ("app", "N", "created s", "all ready s"))
    for r in res["startup"]:
        print("%-9s %5d  %-24s %-24s" % (r["app"], r["n"], cell(r["created_s"]),
                                         cell(r["startup_s"])))
    print("\nN gen -> N sink over udp, unpaced, 64 B, %d s: median (min..max) of %d"
          % (o.duration, o.repeat))
    print("%3s  %-30s %-24s %-30s %-20s" % ("N", "senders' pps", "Gbit/s", "sinks' pps",
                                            "loss %"))
    for r in res["pairs"]:
        print("%3d  %-30s %-24s %-30s %-20s" % (r["n"], cell(r["pps"], "%.0f"),
                                                cell(r["gbps"], "%.4f"),
                                                cell(r["rx_pps"], "%.0f"),
                                                cell(r["loss_pct"], "%.2f")))

if __name__ == "__main__":
    sys.exit(main())
