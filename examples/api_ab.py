#!/usr/bin/python3
"""An A/B of two images from Python (docs/api.md), A/A first: the same
image against itself (sweep --aa) must show no significant change before
A against B means anything. Both sweeps: gen over dgram, 2000 frames of 64
bytes, REPEAT runs per arm, interleaved.

    examples/api_ab.py OUTDIR [IMAGE_A [IMAGE_B [REPEAT]]]

IMAGE_A and IMAGE_B default ("" or absent) to build/vnperf.elf (B: a copy
of it, so the A/B is an A/A too); REPEAT to 3. Exit: 0, 1 when the A/A shows a significant change,
or the status of a refusal or failed run."""

import os
import shutil
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from vnperflib import api  # noqa: E402

POINT = dict(backend="dgram", app="gen", count=2000, size=64)


def show(title, cmp):
    print("%s:" % title)
    for row in cmp.rows:
        for col, c in row.columns.items():
            if c.pct is not None:
                print("  %-12s %-10s %12.4g -> %-12.4g %+6.1f%%%s" % (
                    " ".join("%s=%s" % kv for kv in row.params.items()) or "-", col, c.a, c.b,
                    c.pct, "  significant" if c.significant else ""))


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    out, image_a, image_b, repeat = (argv + [None] * 3)[:4]
    image_a = image_a or os.path.join(ROOT, "build", "vnperf.elf")
    repeat = int(repeat or 3)
    os.makedirs(out, exist_ok=True)
    if not image_b:
        image_b = os.path.join(out, "b.elf")
        shutil.copyfile(image_a, image_b)
    try:
        aa = api.sweep(os.path.join(out, "aa"), image=image_a, aa=True, repeat=repeat, **POINT)
        cal = api.compare(aa.directory, aa.directory, ab="aa")
        show("A/A (%s against itself)" % image_a, cal)
        if cal.significant():
            print("api_ab: the A/A shows a significant change: this host is too noisy for "
                  "an A/B", file=sys.stderr)
            return 1
        ab = api.sweep(os.path.join(out, "ab"), image=[image_a, image_b], repeat=repeat,
                       **POINT)
        cmp = api.compare(ab.directory, ab.directory, ab="image")
    except api.VnperfError as e:
        print("api_ab: %s (status %d)" % (e.line, e.status), file=sys.stderr)
        return e.status
    show("A/B (%s -> %s)" % (image_a, image_b), cmp)
    return aa.status or ab.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
