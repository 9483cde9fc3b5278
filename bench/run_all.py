#!/usr/bin/python3
"""`make bench`: every benchmark of bench/ once, with short settings (a
smoke run of the benchmarks and a first look at the ratios, not numbers to
quote: those come from each script with its own defaults, docs/bench.md).

Every bench_*.py and boot_time.py runs in turn with the arguments of SHORT
(its own defaults when it has no entry), its output as it comes. A script
that cannot run here (the Linux baseline cannot be fetched: status 3) is
reported as skipped. Exit status: 0 when every script ran or was skipped,
else 1, after all of them ran.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/run_all.py [--only NAME,...] [--list]
"""

import argparse
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
SKIPPED = 3

SHORT = {
    "boot_time.py": ["--boots", "3"],
    "bench_kick_batch.py": ["--duration", "1", "--batches", "1,32"],
    "bench_tcp_stream.py": ["--duration", "3", "--repeat", "1", "--sessions", "1",
                            "--msg-sizes", "16384"],
    "bench_pps.py": ["--duration", "3", "--repeat", "1"],
    "bench_ring.py": ["--duration", "1", "--repeat", "1", "--points", "hub:64"],
}


def scripts():
    found = sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "bench_*.py")))
    return ["boot_time.py"] + found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="comma-separated script names")
    ap.add_argument("--list", action="store_true", help="print the scripts and their args")
    o = ap.parse_args(argv)
    todo = scripts()
    if o.only:
        want = [n if n.endswith(".py") else n + ".py" for n in o.only.split(",")]
        unknown = [n for n in want if n not in todo]
        if unknown:
            ap.error("--only: no such benchmark: %s (one of %s)" % (", ".join(unknown),
                                                                    ", ".join(todo)))
        todo = want
    if o.list:
        for name in todo:
            print(name, " ".join(SHORT.get(name, ["(its defaults)"])))
        return 0
    summary = []
    for name in todo:
        argv = [PYTHON, os.path.join(HERE, name)] + SHORT.get(name, [])
        print("==== %s" % " ".join(["bench/" + name] + SHORT.get(name, [])), flush=True)
        t0 = time.monotonic()
        rc = subprocess.call(argv, stdin=subprocess.DEVNULL)
        what = {0: "ok", SKIPPED: "skipped"}.get(rc, "FAILED (status %d)" % rc)
        summary.append((name, what, time.monotonic() - t0))
    print("==== summary")
    for name, what, secs in summary:
        print("%-22s %-20s %5.0f s" % (name, what, secs))
    return 0 if all(w in ("ok", "skipped") for _, w, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
