#!/usr/bin/python3
"""QEMU start to the guest's "ready" line, PVH vs UEFI (OVMF), under TCG.

Boots app=selftest N times per boot path and prints the median (and the
spread) side by side. The clock starts just before QEMU is spawned and stops
when the @vnperf "ready" line arrives on the serial console, so it covers
QEMU start-up, firmware (UEFI only), the loader and kernel init. The last
column is the guest's own "ready" t_ns: from the first instruction it
controls (PVH entry, or the UEFI loader's entry) to ready.

    /usr/bin/python3 bench/boot_time.py [--boots 5] [--json]
"""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from vnperflib.run import guest, qemucmd  # noqa: E402
from vnperflib.run.proc import Session  # noqa: E402

BUILD = os.path.join(ROOT, "build")
IMAGE = os.path.join(BUILD, "vnperf.elf")
ESP = os.path.join(BUILD, "esp.img")
OVMF = "/usr/share/ovmf/OVMF.fd"

# (label, boot path, machine). microvm is the runner's default PVH machine;
# q35 is the only one both paths share, so it is the fair comparison.
CASES = [("pvh microvm", "pvh", "microvm"), ("pvh q35", "pvh", "q35"),
         ("uefi q35", "uefi", "q35")]


def one_boot(path, machine, timeout):
    spec = qemucmd.GuestSpec(IMAGE, machine=machine, memory_mb=128, accel="tcg",
                             config=["app=selftest"], name="vnperf-boot-time")
    g = guest.Guest(spec)
    if path == "uefi":
        i = g.argv.index("-kernel")
        g.argv[i:i + 2] = ["-bios", OVMF, "-drive", "format=raw,file=%s,snapshot=on" % ESP]
    with Session() as s:
        g.start(s)
        guest.pump([g], timeout)
    if g.guest_code != 0 or g.t_ready is None:
        raise RuntimeError("%s/%s boot failed (code %s, timed out %s):\n%s" % (
            path, machine, g.guest_code, g.timed_out, g.console.text()[-2000:]))
    ready = g.console.all("ready")[0]
    return g.t_ready, ready["t_ns"] / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boots", type=int, default=5, help="boots per path (default 5)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per boot")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    opts = ap.parse_args()
    if opts.boots < 1:
        ap.error("--boots must be at least 1")
    for f in (IMAGE, ESP, OVMF):
        if not os.path.isfile(f):
            ap.exit(2, "boot_time: %s missing (run make)\n" % f)

    rows = []
    for label, path, machine in CASES:
        host, guest_s = zip(*(one_boot(path, machine, opts.timeout) for _ in range(opts.boots)))
        rows.append({"case": label, "boots": opts.boots,
                     "median_ms": statistics.median(host) * 1e3,
                     "min_ms": min(host) * 1e3, "max_ms": max(host) * 1e3,
                     "guest_ready_ms": statistics.median(guest_s) * 1e3})
    if opts.json:
        print(json.dumps({"type": "boot_time", "accel": "tcg", "rows": rows}))
        return 0
    print("QEMU start -> ready, app=selftest, TCG, %d boots each" % opts.boots)
    print("%-12s %10s %10s %10s %16s" % ("path", "median ms", "min ms", "max ms",
                                         "guest ready ms"))
    for r in rows:
        print("%-12s %10.0f %10.0f %10.0f %16.1f" % (r["case"], r["median_ms"], r["min_ms"],
                                                     r["max_ms"], r["guest_ready_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
