#!/usr/bin/python3
"""sink's receive rate with 1 and 2 queue pairs over a multiqueue tap, in
one run, each point twice (A/A: the spread of the same command is the
noise), with the CPU of every QEMU thread and of the sender.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_mq_sink.py \\
        [--duration 4] [--repeat 2] [--machine q35]

The guest: -smp N, queues=N vcpus=N (N = 1, 2), QEMU's rss=on, app=sink.
The sender: this host, a raw socket on the tap sending 16 UDP flows
(dport 6000..6015, vnperf's payload header) flat out from one process;
QEMU's RSS spreads them over the pairs by the Toeplitz hash, sink counts
each pair on its own CPU (docs/apps.md). CPU is each thread's utime +
stime (/proc/PID/task/TID/stat) over the sending, as % of one CPU: the
vCPU threads ("CPU 0/TCG", ...), QEMU's main loop and the rest, and the
sender. Needs root (the tap). Exit 0, or 1 when a run failed."""

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import test_mq_apps  # noqa: E402  (the frames and the Toeplitz prediction)
from vnperflib.run import guest, qemucmd  # noqa: E402
from vnperflib.run import peer as vnpeer  # noqa: E402
from vnperflib.run.proc import Session  # noqa: E402

IMAGE = os.path.join(ROOT, "build", "vnperf.elf")
TAP = "vnmqbench"
TICK = os.sysconf("SC_CLK_TCK")

# argv: tap, seconds, frames a second (0: flat out)
SENDER = r"""
import socket, sys, time, pickle
frames = pickle.load(sys.stdin.buffer)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
t0 = time.monotonic()
end, rate, n = t0 + float(sys.argv[2]), float(sys.argv[3]), 0
while time.monotonic() < end:
    for f in frames:
        if rate:
            ahead = t0 + n / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        try:
            s.send(f)
            n += 1
        except OSError:
            pass
print(n)
"""


def threads(pid):
    """{tid: (name, cpu ticks)} of a process."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        out[tid] = (name, int(fields[11]) + int(fields[12]))
    return out


def roles(before, after, secs):
    """CPU % by role: vcpuK, main (the QEMU process's first thread), other."""
    pct = {}
    for tid, (name, t) in after.items():
        used = t - before.get(tid, (name, 0))[1]
        role = ("vcpu" + name.split()[1].split("/")[0] if name.startswith("CPU ")
                else "main" if name.startswith("qemu-system") else "other")
        pct[role] = pct.get(role, 0) + 100.0 * used / TICK / secs
    return pct


def one(n, duration, machine, app="sink", words=(), rate=0):
    """One boot of app (sink, or reflect: its console line names the CPUs
    too) with config words: N pairs on N CPUs, the sender at rate frames a
    second (0: flat out); the result, per-queue packets, sent, CPU % by
    role."""
    frames, _, _, _ = test_mq_apps.traffic()
    props = dict(qemucmd.mq_props(2, machine), rss="on")
    extra = ["-smp", str(n)] + (["-global", "virtio-mmio.force-legacy=false"]
                                if machine == "microvm" else [])
    nic = qemucmd.Nic("tap,ifname=%s,script=no,downscript=no,queues=2,vhost=off" % TAP,
                      "52:54:00:00:00:01", props)
    spec = qemucmd.GuestSpec(IMAGE, machine=machine, memory_mb=128, accel="tcg",
                             config=["app=" + app, "duration=%d" % (duration + 3),
                                     "queues=%d" % n, "vcpus=%d" % n,
                                     "ip=" + vnpeer.GUEST_IP] + list(words), nics=[nic],
                             name="vnperf-bench", extra=extra)
    g = guest.Guest(spec)
    st = {}

    def on_line(gg, line):
        if "sender" not in st and "CPU" in line.text and app + ":" in line.text:
            import pickle
            st["sender"] = subprocess.Popen(
                [sys.executable, "-c", SENDER, TAP, str(duration), str(rate)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE)
            st["sender"].stdin.write(pickle.dumps(frames))
            st["sender"].stdin.close()
            st["t0"], st["q0"], st["s0"] = time.monotonic(), threads(g.pid), threads(
                st["sender"].pid)

    def on_tick(elapsed):
        s = st.get("sender")
        if s and "q1" not in st and time.monotonic() - st["t0"] >= duration - 0.2:
            st["q1"], st["s1"] = threads(g.pid), threads(s.pid)
            st["t1"] = time.monotonic()

    with Session() as s:
        g.start(s)
        guest.pump([g], duration + 60, on_line=on_line, on_tick=on_tick, tick_s=0.1)
    sent = 0
    if "sender" in st:
        sent = int(st["sender"].stdout.read() or 0)
        st["sender"].wait()
    res = g.console.all("result")
    if not res or "q1" not in st:
        return None
    secs = st["t1"] - st["t0"]
    cpu = roles(st["q0"], st["q1"], secs)
    cpu["sender"] = roles(st["s0"], st["s1"], secs).get("other", 0)
    r = res[0]
    return {"pps": r["pps"], "packets": r["packets"], "sent": sent,
            "queues": [q["packets"] for q in r.get("queues", [])], "cpu": cpu,
            "idle": r.get("idle", {}), "vnet": r.get("vnet", {})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--machine", default="q35", choices=("q35", "microvm"))
    o = ap.parse_args()
    subprocess.run(["ip", "tuntap", "add", "dev", TAP, "mode", "tap", "multi_queue",
                    "vnet_hdr"], check=True)
    rows, ok = [], True
    try:
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % TAP], check=True)
        subprocess.run(["ip", "link", "set", TAP, "up"], check=True)
        for rep in range(o.repeat):
            for n in (1, 2):
                r = one(n, o.duration, o.machine)
                ok = ok and r is not None
                rows.append((rep, n, r))
    finally:
        subprocess.run(["ip", "link", "del", TAP])
    print("%-4s %-6s %10s %10s %-16s %s" % ("run", "queues", "sink_pps", "sent", "per_queue",
                                            "cpu% (vcpuK, main, other, sender)"))
    for rep, n, r in rows:
        if r is None:
            print("%-4d %-6d failed" % (rep + 1, n))
            continue
        cpu = " ".join("%s=%.0f" % (k, v) for k, v in sorted(r["cpu"].items()))
        print("%-4d %-6d %10.0f %10d %-16s %s" % (rep + 1, n, r["pps"], r["sent"],
                                                  "/".join(map(str, r["queues"])), cpu))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
