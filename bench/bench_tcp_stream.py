#!/usr/bin/python3
"""TCP stream, vnperf (app=iperf) against the Linux guest (iperf 2), side
by side in one run (issue 10's goal: 1.5x the Linux guest's Gbit/s over
tap, with a lower service demand; at least its Gbit/s over slirp).

For every point (backend, direction, streams, write size) each repeat runs
vnperf, then the Linux guest (A B A B: the host's drift hits both). Both are
measured by the same tool, the host's iperf 2: Gbit/s is the host iperf's
bytes of all streams over the longest stream interval; service demand (SD)
is the host CPU of QEMU and the host iperf, in microseconds per KB of it.
Columns: the medians with the spread of the repeats (max-min over median),
the ratio vnperf/Linux of the medians with the min-max of the ratios of
the pairs run back to back, CPU% vcpu/main/iperf. g2h: the guest is the
iperf client (host iperf -s); h2g: the host iperf client (-P, -l) sends.

vnperf gets `msg_size=` (issue 10's key) while its image knows the key;
an image that refuses it runs without it, and the table says `own`: its
writes are lwiperf's (g2h) and the host client's default (h2g).

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_tcp_stream.py \\
        [--backends tap,user,passt] [--directions g2h,h2g] [--sessions 1,4] \\
        [--msg-sizes 512,1024,16384] [--duration 5] [--repeat 3] [--machine pc] \\
        [--aa] [--no-offloads] [--notify poll,hybrid] [--pin vcpu=1,main=0,backend=0]
        [--nice guest=-10,backend=-10] [--json] [-- vnperf config words]

--no-offloads adds a third side between the two: vnperf with every
offload refused (features=-csum,-guest_csum,-host_tso4,...), the same
image, so offloads on, offloads off and Linux run side by side.
--notify poll,hybrid runs one vnperf side per guest notify= mode (a
polling vCPU takes a host CPU whole; a halting one leaves it to QEMU's
main loop and the host iperf), each with its CPU and SD columns; the
pairs column is the first mode's. --aa --notify MODE is vnperf's A/A:
that mode on both sides, no Linux guest.

--pin and --nice place both guests alike (opt-in: they change what is
measured, and the table's title says them): the runner's options of those
names for vnperf, the same affinity and priority applied by
bench/linuxguest.py to the Linux guest's QEMU threads (vCPU by thread name)
and the host iperf. Roles: vcpu, main, qemu, backend (the host iperf);
--nice guest=N (QEMU), backend=N. On a shared 2-CPU host they keep the
other helpers' work and the scheduler's moves out of the comparison.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402
import linuxguest  # noqa: E402
from vnperflib.run import pinning, priority  # noqa: E402


# vnperf's offload features (docs/driver.md), all refused by --no-offloads
NO_OFFLOADS = "features=-csum,-guest_csum,-host_tso4,-host_tso6,-guest_tso4,-guest_tso6"
NOTIFY = ("poll", "irq", "hybrid")  # the guest's notify= (docs/driver.md)


class VnperfSide:
    """vnperf's app=iperf through the runner; extra: config words of this
    side only."""

    def __init__(self, opts, extra=()):
        self.opts = opts
        self.extra = list(extra)
        self.msg_size_key = True

    def args(self, point, with_msg):
        backend, direction, sessions, msg = point
        o = self.opts
        words = ["role=%s" % ("client" if direction == "g2h" else "server"),
                 "sessions=%d" % sessions]
        if with_msg:
            words.append("msg_size=%d" % msg)
        return ["--backend", backend, "--app", "iperf", "--machine", o.machine,
                "--duration", str(o.duration)] + placement_args(o) + ["--"] + words + \
            o.config + self.extra

    def __call__(self, point):
        o = self.opts
        rep = benchlib.vnperf_run(self.args(point, self.msg_size_key), o.duration + 90)
        if rep.get("status") == 2 and "msg_size" in rep.get("why", "") and self.msg_size_key:
            self.msg_size_key = False
            benchlib.progress("vnperf: this image has no msg_size= key: its own write sizes")
            rep = benchlib.vnperf_run(self.args(point, False), o.duration + 90)
        if rep.get("status"):
            return {"why": rep.get("why")}
        streams = ((rep.get("host") or {}).get("iperf") or {}).get("streams") or []
        nbytes, _, bps = linuxguest.stream_total(streams)
        if not bps:
            return {"why": "the host iperf reported no stream"}
        fig = {"gbps": bps / 1e9, "sd": benchlib.sd_us_per_kb(rep, nbytes)}
        fig.update(benchlib.cpu_figures(rep))
        return fig


class LinuxSide:
    """The Linux guest's iperf 2 (bench/linuxguest.py)."""

    def __init__(self, opts):
        self.opts = opts

    def __call__(self, point):
        backend, direction, sessions, msg = point
        o = self.opts
        res = linuxguest.make_run("iperf", backend, direction=direction, sessions=sessions,
                                  msg_size=msg, machine=o.machine, duration=o.duration,
                                  pins=o.pins, nice=o.nice_map).execute()
        if res["status"]:
            return {"why": res["why"]}
        fig = {"gbps": res["gbps"], "sd": benchlib.sd_us_per_kb(res, res["bytes"])}
        fig.update(benchlib.cpu_figures(res))
        return fig


def placement_args(o):
    """The runner's --pin/--nice for the vnperf sides."""
    out = ["--pin", pinning.describe(o.pins)] if o.pins else []
    return out + (["--nice", priority.describe(o.nice_map)] if o.nice_map else [])


def placement_text(o):
    """The title's words for --pin/--nice ("unpinned" without)."""
    words = ["pin " + pinning.describe(o.pins)] if o.pins else ["unpinned"]
    return ", ".join(words + (["nice " + priority.describe(o.nice_map)] if o.nice_map else []))


def parse_placement(ap, o):
    """--pin (no per-guest roles: one placement for both) and --nice
    (guest, backend) parsed into o.pins, o.nice_map."""
    try:
        o.pins = pinning.parse(o.pin) if o.pin else {}
        o.nice_map = priority.parse(o.nice) if o.nice else {}
    except ValueError as e:
        ap.error(str(e))
    if pinning.labels(o.pins):
        ap.error("--pin: roles vcpu, main, qemu, backend (both guests alike), not role@GUEST")
    bad = sorted(set(o.nice_map) - {"guest", priority.BACKEND})
    if bad:
        ap.error("--nice %s: guest=N or backend=N" % bad[0])


def int_list(text, what):
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        raise SystemExit("bench_tcp_stream: %s: comma-separated integers, not %r" % (what, text))
    if not out or min(out) < 1:
        raise SystemExit("bench_tcp_stream: %s: positive integers" % what)
    return out


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="tap,user")
    ap.add_argument("--directions", default="g2h,h2g")
    ap.add_argument("--sessions", default="1,4")
    ap.add_argument("--msg-sizes", default="512,1024,16384")
    ap.add_argument("--duration", type=int, default=5, help="seconds per run (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side and point (default 3)")
    ap.add_argument("--machine", default="pc", choices=("microvm", "q35", "pc"))
    ap.add_argument("--aa", action="store_true",
                    help="A/A: the Linux guest on both sides (the noise floor); with "
                         "--notify MODE, vnperf in that mode on both")
    ap.add_argument("--no-offloads", dest="no_offloads", action="store_true",
                    help="also vnperf with every offload refused (a third side)")
    ap.add_argument("--notify", default=None,
                    help="one vnperf side per guest notify= mode: poll,irq,hybrid")
    ap.add_argument("--pin", default=None,
                    help="both guests' thread affinity: vcpu=1,main=0,backend=0 (runner's --pin)")
    ap.add_argument("--nice", default=None,
                    help="both guests' priority: guest=-10,backend=-10 (runner's --nice)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("config", nargs="*", help="vnperf config words (after --)")
    o = ap.parse_args(argv)
    for b in o.backends.split(","):
        if b not in ("tap", "vhost-net", "user", "passt"):
            ap.error("--backends: tap, vhost-net, user, passt; not %r" % b)
    for d in o.directions.split(","):
        if d not in ("g2h", "h2g"):
            ap.error("--directions: g2h, h2g; not %r" % d)
    if o.duration < 1 or o.repeat < 1:
        ap.error("--duration and --repeat: at least 1")
    o.notify = [m for m in (o.notify or "").split(",") if m] or None
    bad = [m for m in o.notify or () if m not in NOTIFY]
    if bad or (o.notify is not None and len(set(o.notify)) != len(o.notify)):
        ap.error("--notify %s: distinct modes of %s" % (",".join(o.notify), ", ".join(NOTIFY)))
    if o.no_offloads and (o.aa or o.notify):
        ap.error("--no-offloads with --aa or --notify: one at a time")
    if o.aa and o.notify and len(o.notify) != 1:
        ap.error("--aa --notify: one mode (vnperf in it on both sides)")
    parse_placement(ap, o)
    o.sessions_list = int_list(o.sessions, "--sessions")
    o.msg_list = int_list(o.msg_sizes, "--msg-sizes")
    return o


def make_sides(o):
    """[(name, fn(point) -> figures)]: the vnperf sides (one per --notify
    mode, or with and without offloads), the Linux guest last."""
    if o.aa and o.notify:
        name, word = "vnperf " + o.notify[0], ["notify=" + o.notify[0]]
        return [(name, VnperfSide(o, word)), (name + "'", VnperfSide(o, word))]
    if o.aa:
        return [("linux", LinuxSide(o)), ("linux'", LinuxSide(o))]
    if o.notify:
        vn = [("vnperf " + m, VnperfSide(o, ["notify=" + m])) for m in o.notify]
    else:
        vn = [("vnperf", VnperfSide(o))]
    if o.no_offloads:
        vn.append(("vnperf-off", VnperfSide(o, [NO_OFFLOADS])))
    return vn + [("linux", LinuxSide(o))]


def main(argv=None):
    o = parse(argv)
    why = linuxguest.ensure_built()
    if why:
        print("bench_tcp_stream: no Linux baseline: %s" % why)
        return 3
    points = [(b, d, s, m) for b in o.backends.split(",") for d in o.directions.split(",")
              for s in o.sessions_list for m in o.msg_list]
    sides = make_sides(o)
    res, pairs = benchlib.interleave(points, sides, o.repeat, "tcp")
    if o.json:
        keys = ("backend", "direction", "sessions", "msg_size")
        print(json.dumps(benchlib.report_json("tcp_stream", keys, points, sides, res, pairs),
                         indent=1))
    else:
        print_report(o, points, sides, res, pairs)
    return 0


def print_report(o, points, sides, res, pairs):
    """One row per point: each side's Gbit/s, SD and CPU, every side but
    the last (the reference) as a ratio to it; pairs: the first side's
    ratios of runs back to back."""
    names = [n for n, _ in sides]
    ref = names[-1]
    vside = sides[0][1]
    own = isinstance(vside, VnperfSide) and not vside.msg_size_key
    print("TCP stream, %s: machine %s, TCG, %d s per run, %d repeats, %s, Linux %s, "
          "host iperf 2 measures all" % (" vs ".join(names), o.machine, o.duration, o.repeat,
                                         placement_text(o), linuxguest.kernel_release()))
    header = ["backend", "dir", "P", "l"] + [n + " Gbit/s" for n in names] + \
        ["%s/%s" % (n, ref) for n in names[:-1]] + ["pairs"] + [n + " SD" for n in names] + \
        ["SD %s/%s" % (n, ref) for n in names[:-1]] + [n + " CPU v/m/i" for n in names]
    rows = []
    for p in points:
        g = [benchlib.pick(res[p][n], "gbps") for n in names]
        sd = [benchlib.pick(res[p][n], "sd") for n in names]
        pr = pairs[p].get("gbps", benchlib.Series())
        rows.append([p[0], p[1], p[2], "%d%s" % (p[3], " (own)" if own else "")]
                    + [benchlib.cell(x, "%.3f".__mod__) for x in g]
                    + [benchlib.ratio_cell(x.median(), g[-1].median()) for x in g[:-1]]
                    + [benchlib.range_cell(pr)]
                    + [benchlib.cell(x, "%.2f".__mod__) for x in sd]
                    + [benchlib.ratio_cell(x.median(), sd[-1].median()) for x in sd[:-1]]
                    + [benchlib.cpu_cell(res[p][n], ("vcpu", "main", "iperf")) for n in names])
    benchlib.print_table(header, rows, left=4)
    print("ratios: of the medians; pairs: min-max of the ratios %s/%s of runs back to back; "
          "SD: host CPU us per KB (lower is better); CPU %%: vcpu/main/host iperf"
          % (names[0], ref))
    for line in benchlib.failures([("%s %s" % (benchlib.label_of(p), n), benchlib.pick(
            res[p][n], "gbps")) for p in points for n in names]):
        print("failed: " + line)

if __name__ == "__main__":
    sys.exit(main())
