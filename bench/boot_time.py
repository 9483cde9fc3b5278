#!/usr/bin/python3
"""QEMU start to the guest's "ready" line, PVH vs UEFI (OVMF), and
against QEMU's own floor with 1 and 4 vCPUs, under TCG.

Boots app=selftest N times per case and prints the median (and the
spread) side by side. The clock starts just before QEMU is spawned and stops
when the @vnperf "ready" line arrives on the serial console, so it covers
QEMU start-up, firmware (UEFI only), the loader and kernel init. The last
column is the guest's own "ready" t_ns: from the first instruction it
controls (PVH entry, or the UEFI loader's entry) to ready.

The floor (build/floor.elf, bench/floor/floor.S) is the smallest PVH image:
it prints "ready" at its first instruction. Its cases and vnperf's
(microvm, -smp 1 and -smp 4 with vcpus=4) boot interleaved, and the
"over floor" column is vnperf's median minus the floor's with the same
-smp: what our boot adds to QEMU's (issue 25's goal: 10 ms with 1 vCPU,
20 ms with 4, under KVM).

--before IMG adds an older image's microvm cases (1 and 4 vCPUs) to the
same interleaved run, and a table of both images' "over floor" side by
side: an A/B of a boot change, on one host at one time.

    /usr/bin/python3 bench/boot_time.py [--boots 5] [--before IMG] [--json]
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
FLOOR = os.path.join(BUILD, "floor.elf")
OVMF = "/usr/share/ovmf/OVMF.fd"

# (label, boot path, machine). microvm is the runner's default PVH machine;
# q35 is the only one both paths share, so it is the fair comparison.
# (label, image, boot path, machine, vCPUs): vnperf's PVH microvm rows
# are read against the floor's with their vCPUs.
CASES = [("pvh microvm", IMAGE, "pvh", "microvm", 1), ("pvh q35", IMAGE, "pvh", "q35", 1),
         ("uefi q35", IMAGE, "uefi", "q35", 1), ("floor microvm", FLOOR, "pvh", "microvm", 1),
         ("pvh microvm x4", IMAGE, "pvh", "microvm", 4),
         ("floor microvm x4", FLOOR, "pvh", "microvm", 4)]
BEFORE_LABEL = "before microvm"


def cases(before):
    """CASES, and with an older image its microvm rows."""
    if before is None:
        return CASES
    return CASES + [(BEFORE_LABEL, before, "pvh", "microvm", 1),
                    (BEFORE_LABEL + " x4", before, "pvh", "microvm", 4)]


def one_boot(image, path, machine, smp, timeout):
    config = ["app=selftest"] + (["vcpus=%d" % smp] if smp > 1 else [])
    spec = qemucmd.GuestSpec(image, machine=machine, memory_mb=128, accel="tcg",
                             config=config, name="vnperf-boot-time",
                             extra=["-smp", str(smp)] if smp > 1 else [])
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
    ap.add_argument("--before", metavar="IMG",
                    help="an older vnperf.elf booted in the same run (microvm, 1 and 4 vCPUs)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    opts = ap.parse_args()
    if opts.boots < 1:
        ap.error("--boots must be at least 1")
    for f in (IMAGE, ESP, OVMF, FLOOR) + ((opts.before,) if opts.before else ()):
        if not os.path.isfile(f):
            ap.exit(2, "boot_time: %s missing (run make)\n" % f)
    all_cases = cases(opts.before)

    # interleaved: boot k of every case before boot k + 1 of any, so a
    # host that slows down mid-run slows the floor and vnperf alike
    boots = {c[0]: [] for c in all_cases}
    load = os.getloadavg()[0]
    for _ in range(opts.boots):
        for label, image, path, machine, smp in all_cases:
            boots[label].append(one_boot(image, path, machine, smp, opts.timeout))
    rows = []
    for label, image, path, machine, smp in all_cases:
        host, guest_s = zip(*boots[label])
        rows.append({"case": label, "boots": opts.boots, "vcpus": smp,
                     "before": label.startswith(BEFORE_LABEL),
                     "floor": image == FLOOR,
                     "pvh_microvm": (path, machine) == ("pvh", "microvm"),
                     "median_ms": statistics.median(host) * 1e3,
                     "min_ms": min(host) * 1e3, "max_ms": max(host) * 1e3,
                     "guest_ready_ms": statistics.median(guest_s) * 1e3})
    over_floor(rows)
    load = (load, os.getloadavg()[0])
    if opts.json:
        print(json.dumps({"type": "boot_time", "accel": "tcg", "rows": rows,
                          "ab": before_after(rows), "loadavg": load}))
        return 0
    print("QEMU start -> ready, app=selftest, TCG, %d boots each, interleaved; "
          "1-minute load average %.2f at the start, %.2f at the end" % ((opts.boots,) + load))
    print("%-14s %10s %10s %10s %16s %14s" % ("case", "median ms", "min ms", "max ms",
                                              "guest ready ms", "over floor ms"))
    for r in rows:
        over = "" if r.get("over_floor_ms") is None else "%+.1f" % r["over_floor_ms"]
        print("%-14s %10.1f %10.1f %10.1f %16.1f %14s" % (
            r["case"], r["median_ms"], r["min_ms"], r["max_ms"], r["guest_ready_ms"], over))
    ab = before_after(rows)
    if ab:
        print("\nover floor, ms    before      after   after-before   guest ready ms before/after")
        for a in ab:
            print("%-14s %9.1f %10.1f %14.1f %14.1f / %.1f" % (
                "%d vCPU%s" % (a["vcpus"], "s" if a["vcpus"] > 1 else ""), a["before_ms"],
                a["after_ms"], a["after_ms"] - a["before_ms"], a["before_ready_ms"],
                a["after_ready_ms"]))
    return 0


def before_after(rows):
    """Per vCPU count, the --before image's and this one's over_floor_ms
    (and guest ready) side by side; empty without --before."""
    out = []
    for old in (r for r in rows if r.get("before")):
        new = next(r for r in rows if r.get("over_floor_ms") is not None and not r.get("before")
                   and r["vcpus"] == old["vcpus"])
        out.append({"vcpus": old["vcpus"], "before_ms": old["over_floor_ms"],
                    "after_ms": new["over_floor_ms"], "before_ready_ms": old["guest_ready_ms"],
                    "after_ready_ms": new["guest_ready_ms"]})
    return out


def over_floor(rows):
    """Sets over_floor_ms on each of vnperf's PVH microvm rows: its median
    minus the floor's with the same vCPUs."""
    floor = {r["vcpus"]: r["median_ms"] for r in rows if r["floor"]}
    for r in rows:
        if not r["floor"] and r["pvh_microvm"]:
            r["over_floor_ms"] = r["median_ms"] - floor[r["vcpus"]]


if __name__ == "__main__":
    sys.exit(main())
