#!/usr/bin/python3
"""Split ring vs packed ring, and the split ring against an older image,
side by side in one run (issue 14).

Every point (backend, frame size) runs app=gen for --duration seconds,
the sides in turn within each repeat (A B C D A B C D: the host's drift
hits all alike):

  before   --before IMAGE (an image built from an older commit), split ring
  split    this tree's image, split ring (the device offers no packed ring)
  split'   the same again: the A/A pair, split'/split reads the noise
  packed   this tree's image, the device with packed=on (the driver takes it)
  direct   this tree's image, split ring, indirect=off (--sides only)
  direct'  direct again: direct'/direct, the A/A beside indirect/direct
  indirect the same with indirect=on: indirect/direct (issue 27)
  stream   this tree's image, split ring, gen sending --streams FILE instead
           of the point's --size (the file sets the sizes: give it the
           point's); stream/before and stream/split: a stream file against
           the config line's one stream (issue 29)
  stream2  the same with --streams2 FILE: stream2/stream, e.g. four streams
           against one (under --icount the instructions per frame, whose
           inverse is the rate)

--word KEY=VALUE (repeatable) gives every side's guest a config word
besides, e.g. --word flows=sport:1000-1015 to compare gen's flows= (the
shorthand's flow var) between images.

Figures per run: the guest's Mpps, its TSC cycles per frame (run time
over frames) and its own cycles per frame (the run less the time it waited
on a full TX ring: what the guest itself costs). Ratios are taken per
repeat between sides run back to back, then their median and min-max:
split/before (no regression), split'/split (A/A) and packed/split.

--icount runs QEMU with -icount shift=0,sleep=off: the guest's clock then
advances one nanosecond per guest instruction, whatever the host's load,
so the one figure is own_insn, the guest's own instructions per frame
(its own time in ns over frames). It is repeatable to about 1% (what
varies is how often the guest polls outside its full-ring waits), where
wall-clock cycles of one image vary up to 3x on a shared host; Mpps and
run cycles under -icount are virtual and not shown.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_ring.py \\
        [--before build-old/vnperf.elf] [--points hub:64,vhost-user:64,...] \\
        [--duration 3] [--repeat 3] [--machine pc] [--icount] [--json] \\
        [--streams bench/streams/one-var.toml --streams2 bench/streams/four-var.toml] \\
        [--word flows=sport:1000-1015]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402

DEFAULT_POINTS = "hub:64,hub:1514,vhost-user:64,vhost-user:1514,tap:64"
RATIOS = (("split/before", "split", "before"), ("split'/split", "split'", "split"),
          ("packed/split", "packed", "split"), ("indirect/direct", "indirect", "direct"),
          ("direct'/direct", "direct'", "direct"),
          ("stream/before", "stream", "before"), ("stream/split", "stream", "split"),
          ("stream2/stream", "stream2", "stream"))
# The guest config words of the sides that differ by one.
SIDE_WORDS = {"direct": ["indirect=off"], "direct'": ["indirect=off"],
              "indirect": ["indirect=on"]}
ICOUNT_ARGS = ["--qemu-arg=-icount", "--qemu-arg=shift=0,sleep=off"]


def figure_keys(icount):
    """The figures a run reports: under -icount only the instruction count."""
    return ("own_insn",) if icount else ("mpps", "cyc", "own_cyc")


def packed_args(machine):
    dev = "virtio-net-device" if machine == "microvm" else "virtio-net-pci"
    args = ["--qemu-arg=-global", "--qemu-arg=%s.packed=on" % dev]
    if machine == "microvm":
        args += ["--qemu-arg=-global", "--qemu-arg=virtio-mmio.force-legacy=false"]
    return args


def figures(rep, ring, icount=False):
    """Mpps and cycles per frame from one report (under -icount own
    instructions per frame), or {"why": line}."""
    if rep.get("status"):
        return {"why": "status %s: %s" % (rep.get("status"), rep.get("why"))}
    g = rep["guests"][-1]
    res = g.get("result") or {}
    vnet = res.get("vnet") or {}
    got = vnet.get("ring_format", "split")  # images older than the packed ring say nothing
    if got != ring:
        return {"why": "ran on a %s ring, not %s" % (got, ring)}
    tsc = (g.get("boot") or {}).get("tsc_hz")
    frames = vnet.get("tx", {}).get("packets")
    if not tsc or not frames or not res.get("duration_ns"):
        return {"why": "no frames, duration or TSC rate in the result"}
    cycles = res["duration_ns"] * tsc / 1e9
    own = max(0.0, cycles - vnet["tx"]["full_wait_cycles"])
    if icount:
        return {"own_insn": own * 1e9 / tsc / frames}
    return {"mpps": res["pps"] / 1e6, "cyc": cycles / frames, "own_cyc": own / frames}


class Side:
    def __init__(self, name, opts, image, ring, words=()):
        """words: guest config words every run of the side gets (--word)."""
        self.name, self.opts, self.image, self.ring = name, opts, image, ring
        self.words = list(words)

    def __call__(self, point):
        backend, size = point
        frames = (["--streams", self.opts.streams] if self.name == "stream" else
                  ["--streams", self.opts.streams2] if self.name == "stream2" else
                  ["--size", str(size)])
        args = ["--accel", "tcg", "--machine", self.opts.machine, "--backend", backend,
                "--app", "gen", "--duration", str(self.opts.duration),
                "--image", self.image] + frames
        if self.ring == "packed":
            args += packed_args(self.opts.machine)
        if self.opts.icount:
            args += ICOUNT_ARGS
        words = self.words + SIDE_WORDS.get(self.name, [])
        if words:
            args += ["--"] + words
        return figures(benchlib.vnperf_run(args, timeout=self.opts.duration + 90), self.ring,
                       self.opts.icount)


def parse_points(text):
    points = []
    for item in text.split(","):
        backend, _, size = item.partition(":")
        if not backend or not size.isdigit() or not 60 <= int(size) <= 1514:
            raise ValueError("--points: backend:size with size 60-1514, not %r" % item)
        points.append((backend, int(size)))
    return points


def run(points, sides, repeat, keys=figure_keys(False)):
    """{point: {side: {figure: Series}}} and {point: {ratio: {figure: Series}}}."""
    per, ratios = {}, {}
    for point in points:
        got = per.setdefault(point, {s.name: {} for s in sides})
        rat = ratios.setdefault(point, {})
        for r in range(repeat):
            fig = {}
            for s in sides:
                benchlib.progress("%s (%s, %d/%d)" % (benchlib.label_of(point), s.name, r + 1,
                                                      repeat))
                fig[s.name] = s(point)
                for k, v in fig[s.name].items():
                    if k == "why":
                        got[s.name].setdefault("_runs", benchlib.Series()).add(None, v)
                    else:
                        got[s.name].setdefault(k, benchlib.Series()).add(v)
            for label, a, b in RATIOS:
                if a in fig and b in fig:
                    for k in keys:
                        x = benchlib.ratio(fig[a].get(k), fig[b].get(k))
                        if x is not None:
                            rat.setdefault(label, {}).setdefault(k, benchlib.Series()).add(x)
    return per, ratios


def ratio_text(series):
    if not series or not series.values:
        return "-"
    return "%.3f (%s)" % (series.median(), benchlib.range_cell(series))


SHOW = {"mpps": lambda v: "%.3f" % v, "cyc": lambda v: "%.0f" % v,
        "own_cyc": lambda v: "%.0f" % v, "own_insn": lambda v: "%.1f" % v}


def table(points, sides, per, ratios, keys=figure_keys(False)):
    names = [s.name for s in sides]
    header = ["point", "figure"] + names + [label for label, a, b in RATIOS
                                            if a in names and b in names]
    rows = []
    for point in points:
        for k in keys:
            row = [benchlib.label_of(point), k]
            row += [benchlib.cell(benchlib.pick(per[point][n], k), SHOW[k]) for n in names]
            row += [ratio_text(ratios[point].get(label, {}).get(k))
                    for label, a, b in RATIOS if a in names and b in names]
            rows.append(row)
    benchlib.print_table(header, rows)
    for line in benchlib.failures([("%s %s" % (benchlib.label_of(p), n), per[p][n].get(
            "_runs", benchlib.Series())) for p in points for n in names]):
        print("failed: " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="an older image for the split/before column")
    ap.add_argument("--image", default=os.path.join(benchlib.ROOT, "build", "vnperf.elf"))
    ap.add_argument("--points", default=DEFAULT_POINTS, help="backend:size,... (default %s)" %
                    DEFAULT_POINTS)
    ap.add_argument("--sides", default=None,
                    help="which of before,split,split',packed,direct,direct',indirect to run "
                    "(default: before (with --before), split, split', packed)")
    ap.add_argument("--duration", type=int, default=3, help="whole seconds per run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--machine", default="pc", choices=("pc", "q35", "microvm"))
    ap.add_argument("--icount", action="store_true",
                    help="QEMU -icount shift=0,sleep=off: own instructions per frame only")
    ap.add_argument("--streams", metavar="FILE",
                    help="the stream side's stream file (docs/streams.md)")
    ap.add_argument("--streams2", metavar="FILE",
                    help="the stream2 side's stream file")
    ap.add_argument("--word", action="append", default=[], metavar="KEY=VALUE",
                    help="a guest config word for every side, e.g. flows=sport:1000-1015 "
                    "(repeatable)")
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    for w in opts.word:
        if not w.partition("=")[0] or "=" not in w:
            ap.error("--word: KEY=VALUE, not %r" % w)
    try:
        points = parse_points(opts.points)
    except ValueError as e:
        ap.error(str(e))
    wanted = (opts.sides or ("before,split,split',packed" if opts.before else
                             "split,split',packed")).split(",")
    rings = {"before": "split", "split": "split", "split'": "split", "packed": "packed",
             "direct": "split", "direct'": "split", "indirect": "split", "stream": "split",
             "stream2": "split"}
    needs = {"before": opts.before, "stream": opts.streams, "stream2": opts.streams2}
    bad = [w for w in wanted if w not in rings]
    unmet = [w for w in wanted if w in needs and not needs[w]]
    if bad or unmet:
        ap.error("--sides: before (with --before), split, split', packed, direct, direct', "
                 "indirect, stream (with --streams), stream2 (with --streams2); not %s" %
                 (",".join(bad) or "%s without --%s" % (unmet[0], {
                     "before": "before", "stream": "streams", "stream2": "streams2"}[unmet[0]])))
    for img in [opts.image] + ([opts.before] if "before" in wanted else []):
        if not os.path.isfile(img):
            ap.error("no image %s" % img)
    for side, path in (("stream", opts.streams), ("stream2", opts.streams2)):
        if side in wanted and not os.path.isfile(path):
            ap.error("no stream file %s" % path)
    sides = [Side(n, opts, opts.before if n == "before" else opts.image, rings[n], opts.word)
             for n in wanted]
    keys = figure_keys(opts.icount)
    per, ratios = run(points, sides, opts.repeat, keys)
    if opts.json:
        print(json.dumps({"icount": opts.icount, "points": [{
            "backend": p[0], "size": p[1],
            "sides": {n: {k: s.summary() for k, s in per[p][n].items()} for n in wanted},
            "ratios": {label: {k: s.summary() for k, s in r.items()}
                       for label, r in ratios[p].items()}} for p in points]}, indent=1))
    else:
        table(points, sides, per, ratios, keys)


if __name__ == "__main__":
    main()
