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
        [--backends tap,user] [--directions g2h,h2g] [--sessions 1,4] \\
        [--msg-sizes 512,1024,16384] [--duration 5] [--repeat 3] [--machine pc] \\
        [--aa] [--json] [-- vnperf config words]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402
import linuxguest  # noqa: E402


class VnperfSide:
    """vnperf's app=iperf through the runner."""

    def __init__(self, opts):
        self.opts = opts
        self.msg_size_key = True

    def args(self, point, with_msg):
        backend, direction, sessions, msg = point
        o = self.opts
        words = ["role=%s" % ("client" if direction == "g2h" else "server"),
                 "sessions=%d" % sessions]
        if with_msg:
            words.append("msg_size=%d" % msg)
        return ["--backend", backend, "--app", "iperf", "--machine", o.machine,
                "--duration", str(o.duration), "--"] + words + o.config

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
                                  msg_size=msg, machine=o.machine,
                                  duration=o.duration).execute()
        if res["status"]:
            return {"why": res["why"]}
        fig = {"gbps": res["gbps"], "sd": benchlib.sd_us_per_kb(res, res["bytes"])}
        fig.update(benchlib.cpu_figures(res))
        return fig


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
                    help="A/A: the Linux guest on both sides (the noise floor)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("config", nargs="*", help="vnperf config words (after --)")
    o = ap.parse_args(argv)
    for b in o.backends.split(","):
        if b not in ("tap", "vhost-net", "user"):
            ap.error("--backends: tap, vhost-net, user; not %r" % b)
    for d in o.directions.split(","):
        if d not in ("g2h", "h2g"):
            ap.error("--directions: g2h, h2g; not %r" % d)
    if o.duration < 1 or o.repeat < 1:
        ap.error("--duration and --repeat: at least 1")
    o.sessions_list = int_list(o.sessions, "--sessions")
    o.msg_list = int_list(o.msg_sizes, "--msg-sizes")
    return o


def main(argv=None):
    o = parse(argv)
    why = linuxguest.ensure_built()
    if why:
        print("bench_tcp_stream: no Linux baseline: %s" % why)
        return 3
    points = [(b, d, s, m) for b in o.backends.split(",") for d in o.directions.split(",")
              for s in o.sessions_list for m in o.msg_list]
    a = ("linux", LinuxSide(o)) if o.aa else ("vnperf", VnperfSide(o))
    sides = [a, ("linux" if not o.aa else "linux'", LinuxSide(o))]
    res, pairs = benchlib.interleave(points, sides, o.repeat, "tcp")
    if o.json:
        print(json.dumps(report_json(points, sides, res, pairs), indent=1))
    else:
        print_report(o, points, sides, res, pairs)
    return 0


def report_json(points, sides, res, pairs):
    out = []
    for p in points:
        row = {"backend": p[0], "direction": p[1], "sessions": p[2], "msg_size": p[3]}
        for name, _ in sides:
            row[name] = {k: v.summary() for k, v in res[p][name].items()}
        row["ratio"] = {k: v.summary() for k, v in pairs[p].items()}
        out.append(row)
    return {"bench": "tcp_stream", "sides": [n for n, _ in sides], "points": out}


def print_report(o, points, sides, res, pairs):
    (an, _), (bn, _) = sides
    vside = sides[0][1]
    own = isinstance(vside, VnperfSide) and not vside.msg_size_key
    print("TCP stream, %s vs %s: machine %s, TCG, %d s per run, %d repeats, Linux %s, "
          "host iperf 2 measures both" % (an, bn, o.machine, o.duration, o.repeat,
                                          linuxguest.kernel_release()))
    header = ["backend", "dir", "P", "l", an + " Gbit/s", bn + " Gbit/s", "ratio", "pairs",
              an + " SD", bn + " SD", "SD ratio", an + " CPU v/m/i", bn + " CPU v/m/i"]
    rows = []
    for p in points:
        A, B = res[p][an], res[p][bn]
        ga, gb = benchlib.pick(A, "gbps"), benchlib.pick(B, "gbps")
        sa, sb = benchlib.pick(A, "sd"), benchlib.pick(B, "sd")
        pr = pairs[p].get("gbps", benchlib.Series())
        rows.append([p[0], p[1], p[2], "%d%s" % (p[3], " (own)" if own else ""),
                     benchlib.cell(ga, "%.3f".__mod__), benchlib.cell(gb, "%.3f".__mod__),
                     benchlib.ratio_cell(ga.median(), gb.median()), benchlib.range_cell(pr),
                     benchlib.cell(sa, "%.2f".__mod__), benchlib.cell(sb, "%.2f".__mod__),
                     benchlib.ratio_cell(sa.median(), sb.median()),
                     benchlib.cpu_cell(A, ("vcpu", "main", "iperf")),
                     benchlib.cpu_cell(B, ("vcpu", "main", "iperf"))])
    benchlib.print_table(header, rows, left=4)
    print("ratio: %s/%s of the medians; pairs: min-max of the ratios of runs back to back; "
          "SD: host CPU us per KB (lower is better); CPU %%: vcpu/main/host iperf" % (an, bn))
    for line in benchlib.failures([("%s %s" % (benchlib.label_of(p), n), benchlib.pick(
            res[p][n], "gbps")) for p in points for n, _ in sides]):
        print("failed: " + line)


if __name__ == "__main__":
    sys.exit(main())
