#!/usr/bin/python3
"""What halting does to reflect on two vCPUs (issue 25): notify=poll
against notify=hybrid, side by side in one run (poll, hybrid, poll,
hybrid, ...: the host's drift hits both alike), at each sender rate, with
the CPU of every QEMU thread and of the sender.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_mq_halt.py \\
        [--rates 2000,0] [--duration 4] [--repeat 2] [--app reflect]

The guest: q35, -smp 2, queues=2 vcpus=2, QEMU's rss=on; the sender and
the CPU figures are bench/bench_mq_sink.py's (16 UDP flows into a
multiqueue tap, rate 0 flat out; each thread's utime + stime over the
sending, % of one CPU). Per side: the app's pps and frames (and per
pair), each vCPU
thread's and QEMU's main loop's CPU, and from the guest each CPU's halts
and the share of the run it was halted. Needs root. Exit 0, or 1 when a
run failed."""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_mq_sink as mq  # noqa: E402

SIDES = ("poll", "hybrid")


def row(rate, side, r):
    if r is None:
        return "%-6s %-7s failed" % (rate or "max", side)
    cpu = r["cpu"]
    halts = "/".join(str(c["halts"]) for c in r["idle"].get("cpus", []))
    return "%-6s %-7s %9.0f %8d %13s %8d %6.0f %6.0f %6.0f %6.0f %12s %6.2f" % (
        rate or "max", side, r["pps"], r["packets"], "/".join(map(str, r["queues"])), r["sent"],
        cpu.get("vcpu0", 0),
        cpu.get("vcpu1", 0), cpu.get("main", 0), cpu.get("sender", 0), halts or "-",
        r["idle"].get("share", 0.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="2000,0",
                    help="sender frames a second, comma-separated (0: flat out)")
    ap.add_argument("--duration", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--app", default="reflect", choices=("reflect", "sink"))
    o = ap.parse_args()
    rates = [int(x) for x in o.rates.split(",")]
    subprocess.run(["ip", "tuntap", "add", "dev", mq.TAP, "mode", "tap", "multi_queue",
                    "vnet_hdr"], check=True)
    rows, ok = [], True
    try:
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % mq.TAP], check=True)
        subprocess.run(["ip", "link", "set", mq.TAP, "up"], check=True)
        for rate in rates:
            for _ in range(o.repeat):
                for side in SIDES:
                    r = mq.one(2, o.duration, "q35", o.app, ["notify=" + side], rate)
                    ok = ok and r is not None
                    rows.append(row(rate, side, r))
    finally:
        subprocess.run(["ip", "link", "del", mq.TAP])
    print("%-6s %-7s %9s %8s %13s %8s %6s %6s %6s %6s %12s %6s" % (
        "rate", "notify", "app_pps", "frames", "per_pair", "sent", "vcpu0%", "vcpu1%", "main%", "send%",
        "halts/cpu", "idle"))
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
