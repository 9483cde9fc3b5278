"""Host CPU time per thread from /proc, grouped by role: the QEMU vCPU
threads, its main loop, iothreads, vhost workers, and backend processes
(testpmd, passt, the peer). Gives CPU% and netperf-style service demand,
and how long each thread was runnable but waited for a CPU (schedstat):
the sign of a host with more runnable threads than CPUs."""

import os
import types

from .. import result

CLK_TCK = os.sysconf("SC_CLK_TCK")


def parse_stat(text):
    """(comm, utime+stime ticks) from a /proc/.../stat line; comm may hold
    spaces and parentheses, so split at the last ')'."""
    lpar = text.index("(")
    rpar = text.rindex(")")
    comm = text[lpar + 1:rpar]
    rest = text[rpar + 2:].split()
    # rest[0] is field 3 (state); utime and stime are fields 14 and 15.
    return comm, int(rest[11]) + int(rest[12])


def parse_schedstat(text):
    """(run, wait) nanoseconds from a /proc/.../schedstat line (run,
    wait, timeslices): time on a CPU, and runnable on a run queue waiting
    for one."""
    run, wait = text.split()[:2]
    return int(run), int(wait)


def thread_schedstat(path):
    """A thread's (run_ns, wait_ns), None where schedstat is not there
    (a kernel without CONFIG_SCHED_INFO) or the thread is gone."""
    try:
        with open(path) as f:
            return parse_schedstat(f.read())
    except (OSError, ValueError):
        return None


def thread_times(pid):
    """{tid: (comm, cpu_ns, wait_ns)} for every thread of pid; {} once it
    is gone. CPU time comes from schedstat, in nanoseconds (a running
    thread's share lands at its next scheduler tick or switch): utime and
    stime count 10 ms clock ticks, which a short run's window cannot
    resolve (2000 frames last 14 ms) and an A/A would read as a change."""
    out = {}
    base = "/proc/%d/task" % pid
    try:
        tids = os.listdir(base)
    except OSError:
        return out
    for t in tids:
        try:
            with open("%s/%s/stat" % (base, t)) as f:
                comm, ticks = parse_stat(f.read())
        except (OSError, ValueError):
            continue
        sched = thread_schedstat("%s/%s/schedstat" % (base, t))
        cpu_ns, wait_ns = sched if sched else (ticks * 10 ** 9 // CLK_TCK, 0)
        out[int(t)] = (comm, cpu_ns, wait_ns)
    return out


def host_cpus():
    """CPUs this process (and what it starts) may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except OSError:
        return os.cpu_count() or 1


def qemu_role(tid, comm, pid, vcpu_tids):
    if tid in vcpu_tids or comm.startswith("CPU "):
        return "vcpu"
    if tid == pid:
        return "main"
    if comm.startswith("vhost"):
        return "vhost"
    if comm.startswith("IO "):
        return "iothread"
    return "qemu-other"


class CpuMeter:
    """Marks two points in time and attributes the CPU used in between."""

    def __init__(self):
        self.procs = []  # (label, pid, kind, vcpu_tids)
        self._a = self._b = None
        self._last = {}
        self._names = {}  # (pid, tid): the thread's name as last read
        self._ta = self._tb = None

    def add_qemu(self, label, pid, vcpu_tids=()):
        self.procs.append((label, pid, "qemu", set(vcpu_tids)))

    def add_process(self, role, pid):
        self.procs.append((role, pid, "proc", set()))

    def set_vcpus(self, pid, tids):
        for label, p, kind, v in self.procs:
            if p == pid:
                v.update(tids)

    def _snap(self):
        snap = {}
        for label, pid, kind, vcpus in self.procs:
            for tid, (comm, cpu_ns, wait) in thread_times(pid).items():
                if kind == "qemu":
                    role = qemu_role(tid, comm, pid, vcpus)
                    key = role if len([p for p in self.procs if p[2] == "qemu"]) == 1 \
                        else "%s:%s" % (label, role)
                else:
                    key = label
                snap[(pid, tid)] = (key, cpu_ns, wait)
                self._names[(pid, tid)] = comm
        return snap

    def start(self, t):
        self._a, self._ta = self._snap(), t
        self._last = dict(self._a)

    def tick(self):
        """Periodic snapshot while measuring: threads that are gone by
        stop() (QEMU tears its vCPU down as the guest exits) keep their
        last value."""
        if self._a is not None and self._b is None:
            # Latest value of every thread ever seen: processes that end
            # inside the window (a sender done early) still count.
            self._last.update(self._snap())

    def stop(self, t):
        if self._a is not None and self._b is None:
            b = self._snap()
            for k, v in self._last.items():
                b.setdefault(k, v)
            self._b, self._tb = b, t

    def _spent(self):
        """{(pid, tid): (role, cpu_s, wait_s)} over the window."""
        out = {}
        for k, (role, tb, wb) in self._b.items():
            _, ta, wa = self._a.get(k, (role, 0, 0))
            out[k] = (role, (tb - ta) / 1e9, max(0, wb - wa) / 1e9)
        return out

    def _per_thread(self, spent, window):
        """Each thread's result.CpuThread, by role, name and thread id."""
        rows = sorted((role, self._names.get(k, ""), k[1], c, w)
                      for k, (role, c, w) in spent.items())
        return tuple(result.CpuThread(role=role, name=name, tid=tid, cpu_s=c, wait_s=w,
                                      pct=100.0 * c / window, wait_pct=100.0 * w / window)
                     for role, name, tid, c, w in rows)

    def result(self):
        """The window's result.Cpu (each role's CPU and run-queue wait,
        each thread's, the total, the wait of all roles, the threads
        running or waiting for a CPU on average, the host's CPUs), or
        None."""
        if self._a is None or self._b is None or self._tb <= self._ta:
            return None
        window = self._tb - self._ta
        spent = self._spent()
        used = {}
        for role, c, w in spent.values():
            cpu_s, wait_s, threads = used.get(role, (0.0, 0.0, 0))
            used[role] = (cpu_s + c, wait_s + w, threads + 1)
        roles = {role: result.CpuRole(cpu_s=c, wait_s=w, threads=n, pct=100.0 * c / window,
                                      wait_pct=100.0 * w / window)
                 for role, (c, w, n) in used.items()}
        total = sum(c for c, _, _ in used.values())
        wait = sum(w for _, w, _ in used.values())
        return result.Cpu.given(window_s=window, roles=types.MappingProxyType(roles),
                                per_thread=self._per_thread(spent, window),
                                total_cpu_s=total, total_pct=100.0 * total / window,
                                wait_pct=100.0 * wait / window,
                                runnable_avg=(total + wait) / window, cpus=host_cpus())


def service_demand(cpu_s, packets, nbytes, transactions=None):
    """Microseconds of host CPU per packet, per KB and per transaction
    (netperf's SD; the last for request/response runs)."""
    sd = {"us_per_packet": None, "us_per_kb": None, "us_per_transaction": None}
    if packets:
        sd["us_per_packet"] = cpu_s * 1e6 / packets
    if nbytes:
        sd["us_per_kb"] = cpu_s * 1e6 / (nbytes / 1024.0)
    if transactions:
        sd["us_per_transaction"] = cpu_s * 1e6 / transactions
    return sd
