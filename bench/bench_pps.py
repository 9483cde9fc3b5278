#!/usr/bin/python3
"""Small-frame rates, vnperf against the Linux guest, side by side in one
run (issue 12's goal: 1.5x the Linux guest's rate on dgram and tap, 64 B;
issue 16's zero-loss RX rates start from the rx rows).

  tx  vnperf app=gen vs Linux pktgen (burst 32): frames per second the host
      end received (the peer's count, the tap's or testpmd's RX counter,
      over the guest's sending time), and each guest's own figure (gen's
      pps, pktgen's Result pps).
  rx  the host end's flood (the runner's sink sender: vnperf-peer, the
      tap's UDP sender, testpmd txonly), paced at --rate or flat out, into
      vnperf app=sink vs the Linux guest counting eth0's RX: the rate the
      guest received (first to last frame), and the loss between what the
      host end sent and what the guest counted (testpmd keeps sending
      after the guest stops: no loss figure over vhost-user).

Each repeat runs vnperf, then Linux (A B A B). --notify poll,hybrid runs
one vnperf side per notification mode (docs/driver.md), A B C A B C.
Columns: medians with the spread of the repeats, each side but Linux as a
ratio to Linux's median, the min-max of the ratios of the first side's
runs to Linux's run back to back, host CPU% of the vCPU thread, QEMU's
main loop and the host end (peer or testpmd), and for vnperf the
interrupts per frame and the share of the run its vCPU was halted.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_pps.py \\
        [--tests tx,rx] [--backends dgram,tap] [--size 64] [--rate 50k] \\
        [--duration 5] [--repeat 3] [--machine pc] [--notify poll,hybrid] [--aa] \\
        [--json] [-- vnperf words]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402
import linuxguest  # noqa: E402

BACKENDS = ("dgram", "socket", "tap", "vhost-user", "passt")
ROLES = ("vcpu", "main", "peer", "testpmd")
NOTIFY = ("poll", "irq", "hybrid")


def host_end_cpu(fig):
    """The host end's CPU% under one name (peer or testpmd)."""
    for r in ("peer", "testpmd", "passt"):
        if "cpu_" + r in fig:
            fig["cpu_host"] = fig["cpu_" + r]
            break
    return fig


def loss_pct(sent, got):
    if not sent or got is None:
        return None
    return max(0.0, 100.0 * (sent - got) / sent)


class VnperfSide:
    def __init__(self, opts, notify=None):
        self.opts = opts
        self.words = ["notify=" + notify] if notify else []

    def __call__(self, point):
        test, backend = point
        o = self.opts
        args = ["--backend", backend, "--app", "gen" if test == "tx" else "sink",
                "--size", str(o.size), "--duration", str(o.duration), "--machine", o.machine]
        if test == "rx" and o.rate:
            args += ["--rate", o.rate]
        rep = benchlib.vnperf_run(args + ["--"] + o.config + self.words, o.duration + 90)
        if rep.get("status"):
            return {"why": rep.get("why")}
        m, host = rep.get("metrics") or {}, rep.get("host") or {}
        fig = benchlib.cpu_figures(rep, ROLES)
        fig.update(irq_per_pkt=m.get("irq_per_packet"), idle_pct=m.get("idle_pct"))
        if test == "tx":
            frames, secs = host.get("rx_frames"), m.get("duration_s")
            fig.update(pps=frames / secs if frames is not None and secs else None,
                       own_pps=m.get("pps"))
        else:
            sent = host.get("tx_packets") if host.get("tx_packets") is not None \
                else host.get("tx_frames")
            fig.update(pps=m.get("pps"), own_pps=m.get("pps"),
                       loss_pct=None if backend == "vhost-user" else
                       loss_pct(sent, m.get("packets")))
        return host_end_cpu(fig)


class LinuxSide:
    def __init__(self, opts):
        self.opts = opts

    def __call__(self, point):
        test, backend = point
        o = self.opts
        kw = {"machine": o.machine, "duration": o.duration, "size": o.size}
        if test == "tx":
            res = linuxguest.make_run("pktgen", backend, burst=o.burst, **kw).execute()
        else:
            res = linuxguest.make_run("rx", backend, rate=o.rate, **kw).execute()
        if res["status"]:
            return {"why": res["why"]}
        fig = benchlib.cpu_figures(res, ROLES)
        if test == "tx":
            fig.update(pps=res.get("host_pps"), own_pps=res.get("guest_pps"))
        else:
            fig.update(pps=res.get("guest_pps"), own_pps=res.get("guest_pps"),
                       loss_pct=None if backend == "vhost-user" else res.get("loss_pct"))
        return host_end_cpu(fig)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", default="tx,rx")
    ap.add_argument("--backends", default="dgram,tap")
    ap.add_argument("--size", type=int, default=64, help="frame bytes without FCS (default 64)")
    ap.add_argument("--rate", default=None, help="rx: the host end's rate (50k, 1m; "
                    "default flat out)")
    ap.add_argument("--burst", type=int, default=32, help="pktgen burst (default 32)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per run (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side and point (default 3)")
    ap.add_argument("--machine", default="pc", choices=("microvm", "q35", "pc"))
    ap.add_argument("--notify", default=None,
                    help="one vnperf side per notification mode: poll,irq,hybrid")
    ap.add_argument("--aa", action="store_true",
                    help="A/A: the Linux guest on both sides (the noise floor)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("config", nargs="*", help="vnperf config words (after --)")
    o = ap.parse_args(argv)
    for t in o.tests.split(","):
        if t not in ("tx", "rx"):
            ap.error("--tests: tx, rx; not %r" % t)
    for b in o.backends.split(","):
        if b not in BACKENDS:
            ap.error("--backends: %s; not %r" % (", ".join(BACKENDS), b))
    for m in (o.notify or "poll").split(","):
        if m not in NOTIFY:
            ap.error("--notify: %s; not %r" % (", ".join(NOTIFY), m))
    if o.aa and o.notify:
        ap.error("--aa and --notify: one at a time")
    if not 60 <= o.size <= 1514:
        ap.error("--size: 60..1514")
    if o.duration < 2 or o.repeat < 1 or o.burst < 1:
        ap.error("--duration: at least 2; --repeat, --burst: at least 1")
    return o


def main(argv=None):
    o = parse(argv)
    why = linuxguest.ensure_built()
    if why:
        print("bench_pps: no Linux baseline: %s" % why)
        return 3
    points = [(t, b) for t in o.tests.split(",") for b in o.backends.split(",")]
    if o.aa:
        first = [("linux", LinuxSide(o))]
    elif o.notify:
        first = [("vnperf " + m, VnperfSide(o, m)) for m in o.notify.split(",")]
    else:
        first = [("vnperf", VnperfSide(o))]
    sides = first + [("linux'" if o.aa else "linux", LinuxSide(o))]
    res, pairs = benchlib.interleave(points, sides, o.repeat, "pps")
    if o.json:
        print(json.dumps(benchlib.report_json("pps", ("test", "backend"), points, sides, res,
                                              pairs), indent=1))
    else:
        print_report(o, points, sides, res, pairs)
    return 0


def print_report(o, points, sides, res, pairs):
    """One row per point: each side's pps, every side but the last (Linux)
    as a ratio to it; pairs: the first side's ratios of runs back to back."""
    names = [n for n, _ in sides]
    ref = names[-1]
    vn = [n for n, fn in sides if isinstance(fn, VnperfSide)]
    print("%d-byte frames, %s: machine %s, TCG, %d s per run, %d repeats, Linux %s, "
          "pktgen burst %d, rx %s" % (o.size, " vs ".join(names), o.machine, o.duration,
                                      o.repeat, linuxguest.kernel_release(), o.burst,
                                      "at " + o.rate if o.rate else "flat out"))
    header = ["test", "backend"] + [n + " pps" for n in names] + \
        ["%s/%s" % (n, ref) for n in names[:-1]] + ["pairs"] + [n + " own" for n in names] + \
        [n + " loss%" for n in names] + [n + " CPU v/m/h" for n in names] + \
        [n + " irq/pkt" for n in vn] + [n + " idle%" for n in vn]
    rows = []
    for p in points:
        pps = [benchlib.pick(res[p][n], "pps") for n in names]
        pr = pairs[p].get("pps", benchlib.Series())
        rows.append([p[0], p[1]] + [benchlib.cell(x) for x in pps]
                    + [benchlib.ratio_cell(x.median(), pps[-1].median()) for x in pps[:-1]]
                    + [benchlib.range_cell(pr)]
                    + [benchlib.cell(benchlib.pick(res[p][n], "own_pps")) for n in names]
                    + [benchlib.cell(benchlib.pick(res[p][n], "loss_pct"), "%.2f".__mod__)
                       for n in names]
                    + [benchlib.cpu_cell(res[p][n], ("vcpu", "main", "host")) for n in names]
                    + [benchlib.cell(benchlib.pick(res[p][n], "irq_per_pkt"), "%.3f".__mod__)
                       for n in vn]
                    + [benchlib.cell(benchlib.pick(res[p][n], "idle_pct"), "%.0f".__mod__)
                       for n in vn])
    benchlib.print_table(header, rows)
    print("pps: tx what the host end received, rx what the guest received; own: the guest's "
          "own figure (gen, pktgen; rx: the same); ratios of the medians; pairs: min-max "
          "of the ratios %s/%s of runs back to back; CPU %%: vcpu/main/host end; irq/pkt: "
          "interrupts the guest took per frame; idle%%: its vCPU halted" % (names[0], ref))
    for line in benchlib.failures([("%s %s" % (benchlib.label_of(p), n), benchlib.pick(
            res[p][n], "pps")) for p in points for n in names]):
        print("failed: " + line)


if __name__ == "__main__":
    sys.exit(main())
