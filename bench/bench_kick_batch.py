#!/usr/bin/python3
"""64-byte TX rate of the virtio-net driver per kick batch (issue 4).

For each kick_batch (default 1 8 32 64 256) app=gen sends 64-byte frames
for --duration seconds, in bursts of 256, into:
  null   QEMU's own device and nothing else: two -netdev hubport on one hub,
         the NIC on one, nothing on the other (one port alone refuses
         frames and TX stalls), so the hub drops every frame;
  dgram  the host peer (build/tools/vnperf-peer count) over -netdev dgram.
Columns: Mpps, guest TSC cycles per packet (run time / packets), the
guest's own cycles per packet (the run less the time it waited for a full
ring, over packets: what the guest itself costs), kicks per packet, the
fraction of the run the TX ring was full (the driver's full_wait_cycles
over the run) and the fraction spent in kicks (under TCG a kick waits for
QEMU's global lock, held while QEMU's TX bottom half runs): their sum near
1 means QEMU, not the guest, is the bottleneck. The reference is measured
in the same run: the Linux guest of bench/linuxguest.py (Debian 6.1,
1 vCPU, same machine) with pktgen (burst 32, 64-byte frames) into the same
null sink; the goal is twice its rate (--no-linux leaves it out).

    /usr/bin/python3 bench/bench_kick_batch.py [--duration 3] [--machine pc]
        [--transport modern|legacy] [--batches 1,8,32,64,256] [--sinks null,dgram]
        [--no-linux] [--json]
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from vnperflib.run import guest, qemucmd  # noqa: E402
from vnperflib.run import peer as vnpeer  # noqa: E402
from vnperflib.run.proc import Session  # noqa: E402
import vnharness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linuxguest  # noqa: E402

ADDR = ["ip=" + vnpeer.GUEST_IP, "dst_ip=" + vnpeer.PEER_IP, "dst_mac=" + vnpeer.PEER_MAC]


def one_run(sink, kick_batch, opts):
    cfg = ["app=gen", "size=64", "burst=256", "duration=%g" % opts.duration,
           "kick_batch=%d" % kick_batch] + ADDR
    props = {"disable-modern": "on"} if opts.transport == "legacy" else {}
    extra = []
    if sink == "null":
        nic = qemucmd.Nic("hubport,hubid=0", "52:54:00:00:00:01", props)
        extra = ["-netdev", "hubport,id=nullport,hubid=0"]
    else:
        q, p = vnharness.free_udp_ports(2)
        nic = qemucmd.Nic(vnharness.dgram_netdev(q, p), "52:54:00:00:00:01", props)
    spec = qemucmd.GuestSpec(vnharness.IMAGE, machine=opts.machine, memory_mb=256, accel="tcg",
                             config=cfg, nics=[nic], extra=extra, name="vnperf-bench")
    g = guest.Guest(spec)
    host = None
    with Session() as s:
        pr = None
        if sink == "dgram":
            pr = vnpeer.Peer(s, vnharness.PEER, "count", p, q)
            pr.start()
        g.start(s)
        guest.pump([g], opts.duration + 60)
        if pr:
            host = pr.finish()
    res = g.console.all("result")
    if g.guest_code != 0 or not res:
        raise RuntimeError("%s kick_batch=%d: guest code %s\n%s" % (
            sink, kick_batch, g.guest_code, g.console.text()[-3000:]))
    res = res[0]
    tsc_hz = g.console.all("boot")[0]["tsc_hz"]
    tx = res["vnet"]["tx"]
    run_cycles = res["duration_ns"] * tsc_hz / 1e9
    row = {
        "sink": sink,
        "kick_batch": kick_batch,
        "transport": res["vnet"]["transport"],
        "packets": tx["packets"],
        "mpps": res["pps"] / 1e6,
        "cycles_per_packet": run_cycles / max(tx["packets"], 1),
        "own_cycles_per_packet": max(0.0, run_cycles - tx["full_wait_cycles"]) /
        max(tx["packets"], 1),
        "kicks_per_packet": tx["kicks"] / max(tx["packets"], 1),
        "ring_full_fraction": min(1.0, tx["full_wait_cycles"] / run_cycles),
        "kick_fraction": min(1.0, tx["kick_cycles"] / run_cycles),
    }
    if host is not None:
        row["host_packets"] = host["packets"]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per run (default 3)")
    ap.add_argument("--machine", default="pc", help="QEMU machine (default pc)")
    ap.add_argument("--transport", choices=("modern", "legacy"), default="modern")
    ap.add_argument("--batches", default="1,8,32,64,256", help="kick_batch values")
    ap.add_argument("--sinks", default="null,dgram", help="null and/or dgram")
    ap.add_argument("--no-linux", action="store_true", help="no Linux pktgen reference")
    ap.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    opts = ap.parse_args()
    try:
        batches = [int(b) for b in opts.batches.split(",")]
    except ValueError:
        ap.error("--batches: comma-separated integers")
    sinks = opts.sinks.split(",")
    for s in sinks:
        if s not in ("null", "dgram"):
            ap.error("--sinks: null and/or dgram, not %r" % s)
    if not opts.json:
        print("%-6s %-7s %5s %8s %8s %8s %10s %10s %10s" % (
            "sink", "transp", "kick", "Mpps", "cyc/pkt", "own cyc", "kicks/pkt", "ring full",
            "in kicks"))
    for sink in sinks:
        for kb in batches:
            row = one_run(sink, kb, opts)
            if opts.json:
                print(json.dumps(row), flush=True)
            else:
                print("%-6s %-7s %5d %8.3f %8.0f %8.0f %10.4f %9.1f%% %9.1f%%" % (
                    sink, row["transport"], kb, row["mpps"], row["cycles_per_packet"],
                    row["own_cycles_per_packet"], row["kicks_per_packet"],
                    100 * row["ring_full_fraction"],
                    100 * row["kick_fraction"]), flush=True)
    if not opts.no_linux:
        linux_reference(opts)


def linux_reference(opts):
    """The Linux guest's pktgen into the same null sink, same machine."""
    why = linuxguest.ensure_built()
    res = {"status": 3, "why": why} if why else linuxguest.make_run(
        "pktgen", "hub", machine=opts.machine, duration=max(1, int(round(opts.duration))),
        size=64, burst=32).execute()
    if opts.json:
        print(json.dumps({"sink": "null", "linux_pktgen": {k: res.get(k) for k in (
            "status", "why", "guest_pps", "guest_packets", "kernel")}}), flush=True)
    elif res["status"]:
        print("reference: Linux pktgen: not measured: %s" % res["why"])
    else:
        mpps = res["guest_pps"] / 1e6
        print("reference: Linux %s pktgen burst=32 into the null sink, same machine, this run: "
              "%.3f Mpps; goal %.3f Mpps" % (res["kernel"], mpps, 2 * mpps))


if __name__ == "__main__":
    main()
