#!/usr/bin/python3
"""The Linux-guest baseline: Debian's stock kernel (linux-image-amd64) with
a busybox initramfs (tools/fetch-linux-guest.sh, `make linux-guest`) booted
on the same QEMU, accelerator, machine type and backend as vnperf, running
iperf 2 (TCP stream), pktgen (TX) or counting a host flood (RX), with the
host CPU of every thread next to each rate (docs/bench.md).

The backends are the runner's own (vnperflib.backends, through make() and
the Backend interface): the Linux guest gets the same -netdev, the same
addresses and the same host end as vnperf, plus `user-tcp`, slirp without
restrict=on so that the guest can reach the host's iperf, and for the
stream over passt the same passt command line as vnperf's with a TCP port
forwarded to the guest's iperf server.

    /usr/bin/python3 bench/linuxguest.py iperf --backend tap --direction g2h \\
        [--sessions 1] [--msg-size 16384] [--duration 5] [--machine microvm] [--json]
    /usr/bin/python3 bench/linuxguest.py pktgen --backend dgram [--size 64] [--burst 32]
    /usr/bin/python3 bench/linuxguest.py rx --backend dgram [--size 64] [--rate 100k]
    /usr/bin/python3 bench/linuxguest.py ready [--machine q35]

Run it under the QEMU lock (flock /tmp/vnperf-qemu.lock ...). Exit status
0 when the run worked, 1 when it failed (one line why), 2 for bad options,
3 when the Linux guest cannot be built here (no Debian archive)."""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from vnperflib import backends, exitcodes, options  # noqa: E402
from vnperflib.run import guest, orchestrate, pinning, ports, priority, qemucmd, scratch, udpsock  # noqa: E402
from vnperflib.analysis import hostcpu  # noqa: E402
from vnperflib.backends import passt  # noqa: E402
from vnperflib.backends.base import Backend, guest_mac, nic_props  # noqa: E402
from vnperflib.backends.passt import Passt  # noqa: E402
from vnperflib.run import iperf as vniperf  # noqa: E402
from vnperflib.errors import RunnerError, failed  # noqa: E402
from vnperflib.run.qmp import QmpError  # noqa: E402
from vnperflib.run.proc import Interrupted, Session, run_quiet  # noqa: E402

import testpmdlog  # noqa: E402

DIR = os.path.join(ROOT, "build", "linux-guest")
KERNEL = os.path.join(DIR, "vmlinuz")
INITRD = os.path.join(DIR, "initrd.img")
# The same initramfs with Debian's dpdk-testpmd and uio_pci_generic after it.
INITRD_DPDK = os.path.join(DIR, "initrd-dpdk.img")
FETCH = os.path.join(ROOT, "tools", "fetch-linux-guest.sh")
FETCH_DPDK = os.path.join(ROOT, "tools", "fetch-dpdk-guest.sh")
MEMORY_MB = 256
# testpmd's guest: its hugepages (lnx.hugepages, 2 MiB each) besides Linux.
DPDK_MEMORY_MB = 512
DPDK_HUGEPAGES = 96
PREFIX = "@lnx "
IPERF_PORT = 5001
# The kernel's own console noise stays off the serial line (it costs TCG
# time); the job's lines come from /init.
CMDLINE = "console=ttyS0 quiet loglevel=1 panic=-1"


def host_tsc_khz(cpuinfo="/proc/cpuinfo", cpufreq="/sys/devices/system/cpu/cpu0/cpufreq"):
    """The host's TSC rate in kHz when /proc/cpuinfo tells it (a constant
    TSC and no frequency scaling: "cpu MHz" is then the TSC's), else None.
    Under TCG the guest's TSC is the host's: handing the rate to the kernel
    (tsc_early_khz=) spares it the PIT calibration, which fails on a busy
    host and, on microvm (no HPET, no PM timer), then hangs the boot."""
    if os.path.exists(cpufreq):
        return None
    try:
        with open(cpuinfo) as f:
            text = f.read()
    except OSError:
        return None
    mhz = flags = None
    for line in text.splitlines():
        k, _, v = line.partition(":")
        k = k.strip()
        if k == "cpu MHz" and mhz is None:
            mhz = num(v.strip())
        elif k == "flags" and flags is None:
            flags = v.split()
    if not mhz or mhz <= 0 or not flags or "constant_tsc" not in flags:
        return None
    return int(round(mhz * 1000))


# virtio 1.2 s5.1.3 (net) and s6 (reserved) feature bits by number.
FEATURES = {0: "csum", 1: "guest_csum", 2: "ctrl_guest_offloads", 3: "mtu", 5: "mac",
            7: "guest_tso4", 8: "guest_tso6", 9: "guest_ecn", 10: "guest_ufo",
            11: "host_tso4", 12: "host_tso6", 13: "host_ecn", 14: "host_ufo",
            15: "mrg_rxbuf", 16: "status", 17: "ctrl_vq", 18: "ctrl_rx", 19: "ctrl_vlan",
            21: "guest_announce", 22: "mq", 23: "ctrl_mac_addr", 28: "indirect_desc",
            29: "event_idx", 32: "version_1", 33: "access_platform", 34: "ring_packed"}


def feature_names(bits):
    """The names of the bits set in sysfs's features string ('1' or '0'
    per bit, bit 0 first); unnamed bits as bitN."""
    return [FEATURES.get(i, "bit%d" % i) for i, c in enumerate(bits or "") if c == "1"]


def missing(initrd=None):
    """None when the kernel and initramfs (INITRD unless given) are built,
    else one line."""
    for p in (KERNEL, initrd or INITRD):
        if not os.path.isfile(p):
            return "Linux guest not built: %s missing (make linux-guest)" % p
    return None


def build(dpdk=False):
    """Builds (or checks) build/linux-guest, with DPDK's initramfs when
    dpdk; None or one line why not."""
    for script in [FETCH] + ([FETCH_DPDK] if dpdk else []):
        rc, out = run_quiet([script, DIR], timeout=900)
        if rc != 0:
            lines = [line for line in out.strip().splitlines() if line.strip()]
            return "%s failed: %s" % (os.path.basename(script),
                                      lines[-1] if lines else "status %d" % rc)
    return None


def kernel_release():
    try:
        with open(os.path.join(DIR, "root", "etc", "kernel-release")) as f:
            return f.read().strip()
    except OSError:
        return None


def parse_line(text):
    """'@lnx type=T k=v ...' -> {"type": T, k: v}; None for other lines."""
    text = text.rstrip("\r")
    if not text.startswith(PREFIX):
        return None
    out = {}
    for word in text[len(PREFIX):].split():
        k, sep, v = word.partition("=")
        if sep and k:
            out[k] = v
    return out if "type" in out else None


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def free_tcp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


class UserTcp(Backend):
    """slirp without restrict=on: 10.0.2.2 is the host's loopback (the
    guest's iperf client reaches the host's server on host_port there) and
    the host's fwd_port is forwarded to the guest's iperf server."""

    name = "user-tcp"
    GUEST_IP = "10.0.2.15"
    HOST_IP = "10.0.2.2"

    def __init__(self, opts):
        super().__init__(opts)
        self.host_port = free_tcp_port()
        self.fwd_port = free_tcp_port()
        while self.fwd_port == self.host_port:
            self.fwd_port = free_tcp_port()

    def nics(self, index):
        nd = "user,net=10.0.2.0/24,host=%s,hostfwd=tcp:127.0.0.1:%d-%s:%d" % (
            self.HOST_IP, self.fwd_port, self.GUEST_IP, IPERF_PORT)
        return [qemucmd.Nic(nd, guest_mac(index), nic_props(self.opts))]

    def guest_config(self, index):
        return ["ip=" + self.GUEST_IP, "gw=" + self.HOST_IP, "dst_ip=" + self.HOST_IP]


class PasstTcp(Passt):
    """passt for the stream, as UserTcp: 10.0.2.2 is the host's loopback
    (passt maps the gateway there; the host's server on host_port) and the
    host's fwd_port on 127.0.0.1 is forwarded to the guest's iperf server."""

    def start(self, session, nguests=1):
        self.host_port, self.fwd_port = ports.free_tcp_ports(2)
        self.spawn(session, tcp=(self.fwd_port, IPERF_PORT))

    def guest_config(self, index):
        return ["ip=" + passt.GUEST_IP, "gw=" + passt.GW_IP, "dst_ip=" + passt.GW_IP]


# Backends whose host iperf runs on the host's loopback, through ports.
LOOPBACK = (UserTcp, PasstTcp)


def make_backend(name, opts):
    if name in ("user", "user-tcp"):
        return UserTcp(opts)
    if name == "passt" and opts.app == "tcp":
        return PasstTcp(opts)
    return backends.make(name, opts)


def backend_opts(app, machine, duration, size=None, rate=None, count=None, feeder=None,
                 queue_size=None, sock_rcvbuf=None, queues=1):
    """The runner options the backends read (queues: pairs, as --queues)."""
    return options.build(app=app, machine=machine, duration=duration, size=size, rate=rate,
                         count=count, queue_size=queue_size, feeder=feeder,
                         sock_rcvbuf=sock_rcvbuf, queues=queues if queues > 1 else None)


def lnx_words(config):
    """The backend's guest config words as /init's lnx.* words."""
    out = []
    for w in config:
        k, _, v = w.partition("=")
        if k == "ip":
            out.append("lnx.ip=%s/24" % v)
        elif k == "gw":
            out.append("lnx.gw=" + v)
        elif k == "dst_ip":
            out.append("lnx.peer=" + v)
        elif k == "dst_mac":
            out.append("lnx.peer_mac=" + v)
        elif k == "dst_port":
            out.append("lnx.dport=" + v)
    return out


class HostIperf:
    """iperf 2 on the host end: server (-s) for a guest client, client (-c
    with -P and -l) for a guest server; inside the backend's namespace when
    it has one. Its CSV reports are the stream's measured figures."""

    def __init__(self, session, be, role, target, port, duration, sessions, msg_size):
        self.session = session
        tmp = scratch.mkdtemp(session, "lnx-iperf")
        self.out = open(os.path.join(tmp, "out"), "w+b")
        session.on_close(self.out.close, what="close iperf output")
        argv = ["ip", "netns", "exec", be.netns] if be.netns else []
        argv += ["iperf", "-y", "C", "-p", str(port)]
        if role == "server":
            argv += ["-s"] + ([] if be.netns else ["-B", "127.0.0.1"])
        else:
            argv += ["-c", target, "-t", str(duration), "-P", str(sessions),
                     "-l", str(msg_size), "--connect-retries", "20"]
        self.role = role
        self.argv = argv
        self.proc = None

    def start(self):
        self.proc = self.session.spawn(self.argv, name="iperf", stdout=self.out,
                                       stderr=subprocess.STDOUT)

    def text(self):
        self.out.seek(0)
        return self.out.read().decode("utf-8", "replace")

    def finish(self):
        """Stops a server (its last report is out once the guest's client
        ended), waits for a client; returns its stream reports."""
        if self.proc is None:
            return []
        if self.role == "server" and self.proc.poll() is None:
            time.sleep(0.3)
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.session.stop(self.proc)
        return vniperf.parse_csv_reports(self.text())


def stream_total(reports):
    """(bytes, seconds, bit/s) over per-stream iperf reports: all bytes over
    the longest stream interval."""
    total = sum(r["bytes"] for r in reports)
    secs = 0.0
    for r in reports:
        a, _, b = r["interval"].partition("-")
        if num(b) is not None and num(a) is not None:
            secs = max(secs, num(b) - num(a))
    return total, secs, (total * 8 / secs if secs > 0 else None)


class HostEnd:
    """The sender of a job: the host end's senders (on_ready), started by
    the orchestrator once the Linux guest's NIC is up."""

    label = "host end"


class Job:
    """One Linux guest boot against one backend; subclasses are the jobs:
    the host's receivers (before_boot), then the guest, then the host's
    senders once its NIC is up (orchestrate.py, as `vnperf run`)."""

    mode = "ready"
    app = "none"        # what the backend's host end prepares for
    dpdk = False        # boots the DPDK initramfs
    memory_mb = MEMORY_MB
    cpu_model = []      # QEMU's default CPU model

    @property
    def initrd(self):
        """The initramfs, read from the module's names when the job runs."""
        return INITRD_DPDK if self.dpdk else INITRD

    def __init__(self, backend, machine="microvm", duration=5.0, timeout=None, pins=None,
                 nice=None, queues=1, smp=1):
        if queues < 1 or smp < 1:
            raise ValueError("queues %d, smp %d: at least 1" % (queues, smp))
        self.backend_name = backend
        self.queues = queues        # queue pairs (mq=on, vhost-user queues=N)
        self.smp = smp              # vCPUs (-smp)
        self.pins = pins or {}      # pinning.parse(): vcpu, main, qemu, backend
        self.nice = nice or {}      # priority.parse(): guest, backend
        self.placed = {}
        self.machine = machine
        self.duration = duration
        self.timeout = timeout or duration + 60
        self.lines = {}
        self.meter = hostcpu.CpuMeter()
        self.be = None
        self.g = None
        self.vcpus = {}
        self.host_end = HostEnd()
        self.orch = None
        self.session = None
        self.backend_dead = None

    # Hooks for the jobs.
    def opts(self):
        return backend_opts(self.app, self.machine, self.duration, queues=self.queues)

    def words(self):
        return []

    def before_boot(self):
        """Host side that must be up before the guest (a server)."""

    def on_ready(self):
        """Host side that starts once the guest is ready (senders)."""

    def after(self):
        """Host side ends; returns the job's figures."""
        return {}

    def _on_line(self, g, line):
        m = parse_line(line.text)
        if m is None:
            return
        self.lines.setdefault(m["type"], m)
        if m["type"] == "ready":
            # /init says ready once eth0 is up (its net_up).
            self.orch.net_up(self.g)
        elif m["type"] == "after":
            self.meter.stop(time.monotonic())

    def _start(self, x):
        """The orchestrator's start: the guest, then the host end."""
        if x is self.g:
            self._boot()
            return
        self.be.on_guest_ready(0)
        self.on_ready()
        procs = self.be.processes() + self.extra_processes()
        for role, pid in procs:
            self.meter.add_process(role, pid)
        self.placed = place(self.pins, self.nice, self.g.pid, self.vcpus,
                            [pid for _, pid in procs])
        self.meter.start(time.monotonic())

    def _boot(self):
        self.g.start(self.session, netns=self.be.netns)
        self.meter.add_qemu("linux", self.g.pid)
        if not self.pins:
            return
        try:
            # The vCPU threads as the runner finds them (QMP).
            self.vcpus = orchestrate.open_vcpus(self.g, self.session)
        except (QmpError, OSError, ValueError) as e:
            raise failed("Linux guest: --pin needs its vCPU threads: %s" % e)

    def extra_processes(self):
        return []

    def _on_tick(self, elapsed):
        self.be.tick()
        self.meter.tick()
        self.orch.tick()
        if self.backend_dead is None:
            self.backend_dead = self.be.healthy()

    def spec(self):
        cfg = self.be.guest_config(0)
        khz = host_tsc_khz()
        words = [CMDLINE] + (["tsc_early_khz=%d" % khz] if khz else [])
        words += ["lnx.mode=" + self.mode] + lnx_words(cfg) + self.words()
        qmp = os.path.join(scratch.mkdtemp(self.session, "lnx"), "qmp.sock")
        return qemucmd.GuestSpec(KERNEL, machine=self.machine, memory_mb=self.memory_mb,
                                 accel="tcg", nics=self.be.nics(0),
                                 shared_mem=self.be.needs_shared_mem, name="vnperf-linux",
                                 cmdline=" ".join(words), qmp_path=qmp, smp=self.smp,
                                 extra=self.be.qemu_extra(0) + ["-initrd", self.initrd]
                                 + self.cpu_model)

    def execute(self):
        """Runs the job; returns the result dict (status 0 and figures, or a
        non-zero status and a one-line why)."""
        why = missing(self.initrd)
        if why:
            return {"system": "linux", "status": exitcodes.RUNNER_BACKEND_MISSING, "why": why}
        try:
            with Session() as s:
                return self._execute(s)
        except RunnerError as e:
            return {"system": "linux", "status": e.status, "why": e.line}

    def _execute(self, session):
        self.session = session
        self.be = make_backend(self.backend_name, self.opts())
        self.be.check()
        self.be.start(session)
        self.before_boot()
        self.g = guest.Guest(self.spec(), label="linux")
        self.orch = orchestrate.Orchestrator([(self.host_end, [self.g])], self._start)
        self.orch.begin()
        guest.pump([self.g], self.timeout, self._on_line, self._on_tick, tick_s=0.1)
        self.be.finish()
        figures = self.after()
        return self.result(figures)

    def result(self, figures):
        g = self.g
        code = exitcodes.guest_code_from_qemu_status(g.qemu_status)
        cpu = self.meter.result()
        res = {"system": "linux", "kernel": kernel_release(), "backend": self.backend_name,
               "machine": self.machine, "mode": self.mode, "lines": self.lines,
               "queues": self.queues, "smp": self.smp,
               "features": feature_names(self.lines.get("net", {}).get("features")),
               "host": self.be.collect(), "cpu": cpu.to_dict() if cpu else None, "wall_s": g.wall_s,
               "placed": self.placed}
        res.update(figures)
        if self.backend_dead:
            res.update(status=exitcodes.RUNNER_BACKEND_FAILED, why=self.backend_dead)
        elif g.timed_out:
            res.update(status=exitcodes.RUNNER_TIMEOUT, why="Linux guest: no exit within %gs"
                       % self.timeout)
        elif code is None or "exit" not in self.lines:
            # Status 1 is also QEMU's own failure (a bad option): without
            # /init's exit line it was QEMU.
            res.update(status=exitcodes.RUNNER_NO_GUEST_EXIT, why=g.why_no_exit())
        elif code != 0:
            err = self.lines.get("error", {}).get("msg", "").replace("_", " ")
            res.update(status=code, why="Linux guest: exit %d: %s" % (code, err))
        else:
            res.update(status=0, why="ok")
        if res["status"]:
            res["console_tail"] = [line.text for line in g.console.lines[-15:]]
        add_cpu_figures(res)
        return res


def place(pins, nice, qemu_pid, vcpus, procs):
    """The runner's --pin and --nice for this guest (label "guest", as the
    runner's single guest; vcpus: {index: thread id} from QMP) and the host
    end's processes (backend), so both guests of a bench run are placed
    alike; {"pinned": ..., "nice": ...}."""
    out = {}
    if pins:
        out["pinned"] = pinning.apply(pins, qemu_pid, vcpus)
        for pid in procs if "backend" in pins else ():
            out["pinned"]["backend"] = pinning.apply_process(pins, pid)
    for who, n in sorted(nice.items()):
        for pid in [qemu_pid] if who == "guest" else procs:
            priority.apply(pid, n)
        out.setdefault("nice", {})[who] = n
    return out


def add_cpu_figures(res):
    """Per-role CPU% and the run's service demand (host CPU us per KB)."""
    cpu = res.get("cpu")
    if not cpu:
        return
    res["cpu_pct"] = {k: v["pct"] for k, v in cpu["roles"].items()}
    res["cpu_total_pct"] = cpu["total_pct"]
    if res.get("bytes"):
        res["sd_us_per_kb"] = hostcpu.service_demand(cpu["total_cpu_s"], None,
                                                     res["bytes"])["us_per_kb"]


class Ready(Job):
    """Boots, brings eth0 up, prints ready, exits: the smoke test."""


class Iperf(Job):
    """TCP stream with iperf 2: g2h (guest client, host server) or h2g
    (host client, guest server); the host iperf's reports are the figures
    (the same tool measures both systems in bench_tcp_stream)."""

    mode = None
    app = "tcp"

    def __init__(self, backend, direction="g2h", sessions=1, msg_size=16384, **kw):
        super().__init__(backend, **kw)
        if direction not in ("g2h", "h2g"):
            raise ValueError("direction: g2h or h2g, not %r" % direction)
        self.direction = direction
        self.sessions = sessions
        self.msg_size = msg_size
        self.mode = "iperf-c" if direction == "g2h" else "iperf-s"
        self.host = None

    def words(self):
        w = ["lnx.P=%d" % self.sessions, "lnx.l=%d" % self.msg_size]
        if self.direction == "g2h":
            port = self.be.host_port if isinstance(self.be, LOOPBACK) else IPERF_PORT
            w += ["lnx.t=%d" % self.duration, "lnx.port=%d" % port]
        else:
            w += ["lnx.t=%d" % (self.duration + 20), "lnx.port=%d" % IPERF_PORT]
        return w

    def before_boot(self):
        if self.direction == "g2h":
            port = self.be.host_port if isinstance(self.be, LOOPBACK) else IPERF_PORT
            self.host = HostIperf(self.session, self.be, "server", None, port, 0, 0, 0)
            self.host.start()

    def on_ready(self):
        if self.direction == "h2g":
            loopback = isinstance(self.be, LOOPBACK)
            target = "127.0.0.1" if loopback else self._guest_ip()
            port = self.be.fwd_port if loopback else IPERF_PORT
            self.host = HostIperf(self.session, self.be, "client", target, port,
                                  self.duration, self.sessions, self.msg_size)
            self.host.start()

    def _guest_ip(self):
        for w in self.be.guest_config(0):
            if w.startswith("ip="):
                return w[3:]
        raise RunnerError(exitcodes.RUNNER_USAGE, "%s: no guest address" % self.backend_name)

    def extra_processes(self):
        return [("iperf", self.host.proc.pid)] if self.host and self.host.proc else []

    def after(self):
        reports = self.host.finish() if self.host else []
        nbytes, secs, bps = stream_total(reports)
        guest_reports = vniperf.parse_csv_reports(
            "\n".join(v for k, v in self._guest_csv()))
        gbytes, _, gbps = stream_total(guest_reports)
        return {"direction": self.direction, "sessions": self.sessions,
                "msg_size": self.msg_size, "bytes": nbytes, "seconds": secs,
                "gbps": bps / 1e9 if bps else None, "streams": len(reports),
                "guest_bytes": gbytes, "guest_gbps": gbps / 1e9 if gbps else None,
                "host_iperf_tail": self.host.text().strip().splitlines()[-3:] if self.host
                else []}

    def _guest_csv(self):
        return [("csv", line.text[len(PREFIX):].split("csv=", 1)[1])
                for line in self.g.console.lines
                if line.text.startswith(PREFIX + "type=iperf csv=")]

    def result(self, figures):
        res = super().result(figures)
        # Mean frame size at the host end (tap): TSO/GRO show as frames
        # far above the MTU.
        host = res.get("host") or {}
        way = "rx" if self.direction == "g2h" else "tx"
        if host.get(way + "_frames"):
            res["host_bytes_per_frame"] = host[way + "_bytes"] / host[way + "_frames"]
        if res["status"] == 0 and not res.get("bytes"):
            res.update(status=exitcodes.RUNNER_BACKEND_FAILED,
                       why="host iperf reported no stream: %s"
                       % " | ".join(res.get("host_iperf_tail") or ["no output"]))
        return res


def counter_delta(lines, key):
    a = num(lines.get("before", {}).get(key))
    b = num(lines.get("after", {}).get(key))
    return None if a is None or b is None else b - a


class Pktgen(Job):
    """pktgen TX of size-byte frames (no FCS, as vnperf's --size) towards
    the backend's host end for the duration; pktgen's own figure and what
    the host end received."""

    mode = "pktgen"
    app = "gen"

    def __init__(self, backend, size=64, burst=32, **kw):
        super().__init__(backend, **kw)
        self.size = size
        self.burst = burst

    def opts(self):
        return backend_opts(self.app, self.machine, self.duration, size=self.size,
                            queues=self.queues)

    def words(self):
        return ["lnx.size=%d" % self.size, "lnx.burst=%d" % self.burst,
                "lnx.t=%d" % self.duration, "lnx.count=0", "lnx.queues=%d" % self.queues]

    def after(self):
        per = [parse_line(line.text) for line in self.g.console.lines
               if line.text.startswith(PREFIX + "type=pktgenq ")]
        return pktgen_figures(per, self.size, self.burst)

    def result(self, figures):
        res = super().result(figures)
        host = res.get("host") or {}
        # Frames at the host end; passt's peer sees UDP datagrams only.
        got = host.get("rx_frames", host.get("rx_packets"))
        res["host_packets"] = got
        if got is not None and res.get("guest_seconds"):
            res["host_pps"] = got / res["guest_seconds"]
        res["pps"] = res.get("host_pps")
        if res.get("guest_packets"):
            res["bytes"] = res["guest_packets"] * self.size
        add_cpu_figures(res)
        return res


def pktgen_figures(per_queue, size, burst):
    """The run's figures from /init's pktgenq lines (one per TX queue, its
    thread's sofar, usec, pps, errors): packets and pps added up, the
    longest thread's seconds."""
    usecs = [num(q.get("usec")) for q in per_queue]
    secs = max(usecs) / 1e6 if usecs and None not in usecs else None
    return {"size": size, "burst": burst,
            "guest_packets": sum_or_none(num(q.get("sofar")) for q in per_queue),
            "guest_pps": sum_or_none(num(q.get("pps")) for q in per_queue),
            "guest_seconds": secs,
            "tx_errors": sum_or_none(num(q.get("errors")) for q in per_queue),
            "guest_queues": [{"queue": int(q["q"]), "packets": num(q.get("sofar")),
                              "pps": num(q.get("pps"))} for q in per_queue]}


def sum_or_none(values):
    values = list(values)
    return None if not values or None in values else sum(values)


class Rx(Job):
    """The host end's flood (the runner's sink sender: vnperf-peer, tap's
    UDP sender, vhost-user's vnperf-peer-dpdk or testpmd txonly) into the Linux guest for the duration (or
    count frames), paced at rate or flat out; counts what eth0 received and
    where frames were dropped."""

    mode = "rx"
    app = "sink"

    def __init__(self, backend, size=64, rate=None, count=None, feeder=None, queue_size=None,
                 sock_rcvbuf=None, **kw):
        super().__init__(backend, **kw)
        self.size = size
        self.rate = rate
        self.count = count
        self.feeder = feeder
        self.queue_size = queue_size
        self.sock_rcvbuf = sock_rcvbuf

    def opts(self):
        return backend_opts(self.app, self.machine, self.duration, size=self.size,
                            rate=self.rate, count=self.count, feeder=self.feeder,
                            queue_size=self.queue_size, sock_rcvbuf=self.sock_rcvbuf)

    def words(self):
        # Like vnperf's sink: counts for the duration from ready (the host
        # sender stops half a second before), or until count frames.
        return ["lnx.t=%d" % self.duration, "lnx.count=%d" % (self.count or 0), "lnx.idle=2"]

    def after(self):
        lines = self.lines
        rx = lines.get("rx", {})
        out = {"size": self.size, "rate": self.rate}
        for k in ("rx_packets", "rx_bytes", "rx_dropped", "rx_missed_errors",
                  "softnet_dropped", "udp_NoPorts", "udp_InDatagrams", "udp_RcvbufErrors",
                  "udp_InErrors"):
            out[k] = counter_delta(lines, k)
        n, cs = num(rx.get("window_packets")), num(rx.get("window_cs"))
        secs = cs / 100 if cs else None
        out["guest_pps"] = n / secs if n and secs else None
        out["pps"] = out["guest_pps"]
        out["bytes"] = out["rx_bytes"]
        return out

    def result(self, figures):
        res = super().result(figures)
        host = res.get("host") or {}
        sent = host.get("tx_packets") if host.get("tx_packets") is not None \
            else host.get("tx_frames")
        res["sent"] = sent
        got = res.get("rx_packets")
        if sent and got is not None:
            res["loss_pct"] = max(0.0, 100.0 * (sent - got) / sent)
        return res


class Testpmd(Pktgen):
    """DPDK's testpmd inside the Linux guest (Debian's dpdk-testpmd, the
    NIC on uio_pci_generic: a PCI machine) sending size-byte frames with
    txonly, a forwarding lcore per queue, for the duration from its first
    forwarding; its own count and what the host end received, as Pktgen."""

    mode = "testpmd"
    dpdk = True
    memory_mb = DPDK_MEMORY_MB
    # Debian's DPDK needs SSE4.2 (qemu64's CPU model has none: SIGILL).
    cpu_model = ["-cpu", "max"]

    def __init__(self, backend, **kw):
        super().__init__(backend, **kw)
        if self.machine == "microvm":
            raise ValueError("testpmd in the guest drives a PCI NIC: --machine q35 or pc")

    def words(self):
        return ["lnx.size=%d" % self.size, "lnx.burst=%d" % self.burst,
                "lnx.t=%d" % self.duration, "lnx.queues=%d" % self.queues,
                "lnx.hugepages=%d" % DPDK_HUGEPAGES]

    def after(self):
        text = testpmdlog.log_text(line.text for line in self.g.console.lines)
        f = testpmdlog.figures(text or "", self.queues)
        cs = num(self.lines.get("window", {}).get("window_cs"))
        secs = cs / 100 if cs else None
        sent = f["tx_packets"]
        return {"size": self.size, "burst": self.burst, "guest_packets": sent,
                "guest_seconds": secs, "guest_pps": sent / secs if sent and secs else None,
                "tx_dropped": f["tx_dropped"], "guest_pps_periodic": f["tx_pps"],
                "guest_queues": f["queues"]}


JOBS = {"ready": Ready, "iperf": Iperf, "pktgen": Pktgen, "rx": Rx, "testpmd": Testpmd}


def make_run(job, backend, **kw):
    return JOBS[job](backend, **kw)


def ensure_built(dpdk=False):
    """None when the guest is there (built or brought up to date now, or
    built before when the archive cannot be reached), else one line."""
    why = build(dpdk)
    if why and missing(INITRD_DPDK if dpdk else INITRD) is None:
        print("linuxguest: %s; using the guest built before" % why, file=sys.stderr)
        return None
    return why


def summary(res):
    """One human line for a result."""
    if res["status"]:
        return "linux %s: FAILED (%d): %s" % (res.get("mode"), res["status"], res["why"])
    cpu = " ".join("%s %.0f%%" % kv for kv in sorted((res.get("cpu_pct") or {}).items()))
    if res["mode"] in ("iperf-c", "iperf-s"):
        return "linux %s %s P=%d l=%d: %.3f Gbit/s (guest %s), SD %.2f us/KB, %s B/frame " \
            "at the host end, CPU %s" % (
                res["backend"], res["direction"], res["sessions"], res["msg_size"], res["gbps"],
                "%.3f" % res["guest_gbps"] if res.get("guest_gbps") else "-",
                res.get("sd_us_per_kb") or 0, fmt(res.get("host_bytes_per_frame")), cpu)
    if res["mode"] in ("pktgen", "testpmd"):
        return "linux %s %s %d B, %d queue(s): %s pps, host got %s pps (%s frames), CPU %s" % (
            res["backend"], res["mode"], res["size"], res["queues"], fmt(res.get("guest_pps")),
            fmt(res.get("host_pps")), fmt(res.get("host_packets")), cpu)
    if res["mode"] == "rx":
        return "linux %s rx %d B: %s pps, got %s of %s sent (loss %s%%), CPU %s" % (
            res["backend"], res["size"], fmt(res.get("guest_pps")), fmt(res.get("rx_packets")),
            fmt(res.get("sent")), "%.2f" % res["loss_pct"] if res.get("loss_pct") is not None
            else "-", cpu)
    return "linux %s: ready at %ss (uptime)" % (res["backend"], res["lines"]["ready"]["uptime"])


def fmt(v):
    if v is None:
        return "-"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return "%.3f%s" % (v / div, suf)
    return "%.0f" % v


def rcvbuf_size(text):
    """--sock-rcvbuf's bytes (udpsock.parse_size), for argparse."""
    try:
        return udpsock.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("job", choices=sorted(JOBS))
    ap.add_argument("--backend", default="hub", help="runner backend, or user (slirp for TCP)")
    ap.add_argument("--machine", default="microvm", choices=qemucmd.MACHINES)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--direction", default="g2h", choices=("g2h", "h2g"))
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--msg-size", type=int, default=16384)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--burst", type=int, default=32)
    ap.add_argument("--rate", default=None, help="rx: the host sender's rate (100k, 1m)")
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--queues", type=int, default=1,
                    help="pktgen, testpmd: queue pairs (mq=on), a TX thread or lcore each")
    ap.add_argument("--smp", type=int, default=1, help="the guest's vCPUs (-smp)")
    ap.add_argument("--feeder", choices=("peer-dpdk", "testpmd"), default=None,
                    help="rx over vhost-user: the host sender (default peer-dpdk)")
    ap.add_argument("--sock-rcvbuf", type=rcvbuf_size, default=None, metavar="BYTES",
                    help="rx over dgram: QEMU's UDP socket made by the runner with this "
                    "receive buffer (4M; default: QEMU's own)")
    ap.add_argument("--pin", default=None, help="the runner's --pin: vcpu=1,main=0,backend=0")
    ap.add_argument("--nice", default=None, help="the runner's --nice: guest=-5,backend=-5")
    ap.add_argument("--json", action="store_true")
    o = ap.parse_args(argv)
    if o.sock_rcvbuf and (o.job != "rx" or o.backend != "dgram"):
        ap.error("--sock-rcvbuf: the rx job over --backend dgram only")
    try:
        pins = pinning.parse(o.pin) if o.pin else {}
        nice = priority.parse(o.nice) if o.nice else {}
    except ValueError as e:
        ap.error(str(e))
    if o.queues < 1 or o.smp < 1:
        ap.error("--queues and --smp: at least 1")
    why = ensure_built(o.job == "testpmd")
    if why:
        print("linuxguest: " + why, file=sys.stderr)
        return 3
    kw = {"machine": o.machine, "duration": o.duration, "pins": pins, "nice": nice,
          "queues": o.queues, "smp": o.smp}
    if o.job == "iperf":
        kw.update(direction=o.direction, sessions=o.sessions, msg_size=o.msg_size)
    elif o.job in ("pktgen", "testpmd"):
        kw.update(size=o.size, burst=o.burst)
    elif o.job == "rx":
        kw.update(size=o.size, rate=o.rate, count=o.count, feeder=o.feeder,
                  sock_rcvbuf=o.sock_rcvbuf)
    try:
        res = make_run(o.job, o.backend, **kw).execute()
    except ValueError as e:
        ap.error(str(e))
    except Interrupted as e:
        return e.status
    print(json.dumps(res, indent=1) if o.json else summary(res))
    return 0 if res["status"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
