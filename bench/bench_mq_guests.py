#!/usr/bin/python3
"""vhost-user TX 64 B with 1 and 2 queue pairs on 2 vCPUs, three guests in
one run: vnperf's gen, Linux's pktgen (a kernel thread per TX queue) and
DPDK's testpmd inside the same Linux guest (txonly, a forwarding lcore per
queue, the NIC on uio_pci_generic), each against the runner's vhost-user
backend (the host's testpmd in rxonly with --rxq/--txq N). The host's
testpmd counts what arrives on each queue: that count over the guest's
sending time is every guest's rate (issue 25's performance goal: vnperf
at least 3x DPDK-in-guest per queue pair).

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_mq_guests.py \\
        [--duration 10] [--repeat 2] [--json]

The three run in turn (vnperf, Linux, DPDK) for each repeat of each queue
count; cells are medians with the spread (max-min over the median) of
the repeats. All three: q35 (testpmd needs a PCI NIC), 2 vCPUs, the
runner's vhost-user NIC (mq=on; vectors=0: QEMU 7.2 under TCG crashes on
vhost-user with MSI-X), --placement none (the Linux guests get no plan).
The DPDK guest runs -cpu max (Debian's DPDK needs SSE4.2). Exit 0, 1
when a run failed, 3 when the Linux guest cannot be built."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402
import linuxguest  # noqa: E402

SIZE = 64
VCPUS = 2
MACHINE = "q35"
SIDES = ("vnperf", "linux", "dpdk")
# gen's flows: this set lands on both pairs of two (docs/apps.md).
FLOWS = "flows=sport:5000-5003,dport:9000-9003"
ROLES = ("vcpu", "main", "testpmd")


def host_figures(counts, secs):
    """Per-queue figures from the host's per-queue frame counts over the
    guest's sending seconds: pps (all queues), pps_per_qp (their mean)
    and qK_pps; {"why": ...} when either is missing."""
    if not counts or None in counts or not secs:
        return {"why": "no host count per queue (%s) or no sending time (%s)" % (counts, secs)}
    out = {"q%d_pps" % i: c / secs for i, c in enumerate(counts)}
    out["pps"] = sum(counts) / secs
    out["pps_per_qp"] = out["pps"] / len(counts)
    return out


def host_counts(host, queues):
    """The host testpmd's frames per queue: its per-stream counts with
    several queues, the port's RX-packets with one."""
    if queues == 1:
        return [host.get("rx_frames")]
    per = host.get("queues") or []
    return [q.get("rx_packets") for q in per] if len(per) == queues else None


def vnperf_figures(rep, queues):
    """A `vnperf run --json` report's figures: the host's counts per queue
    over gen's duration, and CPU% per role and per thread."""
    if rep.get("status"):
        return {"why": "status %s: %s" % (rep["status"], rep.get("why"))}
    secs = (rep.get("metrics") or {}).get("duration_s")
    out = host_figures(host_counts(rep.get("host") or {}, queues), secs)
    out.update(benchlib.cpu_figures(rep, ROLES))
    out.update(benchlib.thread_figures(rep, ROLES))
    return out


def linux_figures(res, queues):
    """A linuxguest pktgen or testpmd result's figures, as vnperf's."""
    if res.get("status"):
        return {"why": "status %s: %s" % (res["status"], res.get("why"))}
    out = host_figures(host_counts(res.get("host") or {}, queues), res.get("guest_seconds"))
    if res.get("guest_pps") is not None:
        out["guest_pps"] = res["guest_pps"]
    out.update(benchlib.cpu_figures(res, ROLES))
    out.update(benchlib.thread_figures(res, ROLES))
    return out


def run_vnperf(queues, duration):
    args = ["--backend", "vhost-user", "--app", "gen", "--size", str(SIZE), "--machine",
            MACHINE, "--queues", str(queues), "--vcpus", str(VCPUS), "--duration",
            str(duration), "--placement", "none", "--", FLOWS]
    return vnperf_figures(benchlib.vnperf_run(args, duration + 180), queues)


def run_linux(job, queues, duration):
    res = linuxguest.make_run(job, "vhost-user", machine=MACHINE, duration=duration,
                              queues=queues, smp=VCPUS, size=SIZE, burst=32,
                              timeout=duration + 180).execute()
    return linux_figures(res, queues)


def sides(duration):
    return [("vnperf", lambda p: run_vnperf(p[0], duration)),
            ("linux", lambda p: run_linux("pktgen", p[0], duration)),
            ("dpdk", lambda p: run_linux("testpmd", p[0], duration))]


def table(points, res):
    """Rows: per queue count and guest, the per-queue-pair rate, each
    queue's rate, vnperf's ratio to that guest (medians), CPU% by role
    (vCPU threads together, QEMU's main loop, the host's testpmd) and by
    thread (each vCPU, the main loop, each testpmd thread of 1% or more)."""
    rows = []
    for p in points:
        n = p[0]
        vn = res[p]["vnperf"].get("pps_per_qp", benchlib.Series()).median()
        for side in SIDES:
            per = res[p][side]
            qp = benchlib.pick(per, "pps_per_qp")
            queues = "/".join(benchlib.cell(per.get("q%d_pps" % i, benchlib.Series()))
                              for i in range(n))
            ratio = "-" if side == "vnperf" else benchlib.ratio_cell(vn, qp.median())
            rows.append((str(n), side, benchlib.cell(qp), queues, ratio,
                         benchlib.cpu_cell(per, ROLES),
                         benchlib.threads_cell(per, ROLES, always=("vcpu", "main"))))
    return rows


HEADER = ("queues", "guest", "pps per pair", "per queue", "vnperf/x", "cpu% vcpu/main/testpmd",
          "cpu% per thread")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--queues", default="1,2", help="queue pair counts (at most %d)" % VCPUS)
    ap.add_argument("--json", action="store_true")
    o = ap.parse_args(argv)
    try:
        counts = [int(q) for q in o.queues.split(",")]
    except ValueError:
        ap.error("--queues: whole numbers, comma-separated")
    if o.duration < 1 or o.repeat < 1 or not all(1 <= q <= VCPUS for q in counts):
        ap.error("--duration and --repeat at least 1, --queues 1..%d" % VCPUS)
    why = linuxguest.ensure_built(dpdk=True)
    if why:
        print("bench_mq_guests: " + why, file=sys.stderr)
        return 3
    points = [(q,) for q in counts]
    sd = sides(o.duration)
    res, pairs = benchlib.interleave(points, sd, o.repeat, "mq guests")
    if o.json:
        print(json.dumps(benchlib.report_json("mq_guests", ("queues",), points, sd, res, pairs),
                         indent=1))
    else:
        benchlib.print_table(HEADER, table(points, res))
        for line in benchlib.failures(
                [("%s q=%d" % (s, p[0]), benchlib.pick(res[p][s], "pps")) for p in points
                 for s in SIDES]):
            print("failed: " + line)
    failed = any(res[p][s].get("_runs") for p in points for s in SIDES)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
