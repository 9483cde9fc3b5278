"""--placement for one run: the measured threads its options make
(placement.threads), the plan over this host's CPUs, and its application
(sched_setaffinity of QEMU's vCPU threads, from QMP's query-cpus-fast, and
main loop, of the host peers; testpmd's lcores through its --lcores)."""

import os

from .. import topologies
from ..backends import tap, testpmd, vhostpeer
from ..topologies.host import PASST
from . import iperf, placement

# The guest config word the plan may choose (docs/config.md).
NOTIFY = "notify"


def host_cpus():
    """The CPUs this runner (and what it starts) may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except OSError:
        return list(range(os.cpu_count() or 1))


def why_unplanned(opts):
    """Why the runner places nothing for these options, or None."""
    if opts.placement == "none":
        return "--placement none"
    if opts.pin:
        return "--pin places the threads (it wins over the plan)"
    if opts.engine != "qemu":
        return "--engine %s: libvirtd starts the guest" % opts.engine
    guests = len(topologies.topology_for(opts).roles(opts))
    if guests > 1:
        return "--topology %s: %d guests; the planner places one guest's threads" % (
            opts.topology, guests)
    return None


def notify_given(opts):
    """The guest's notify= as given after -- (or by a sweep's axis)."""
    for w in opts.config:
        k, _, v = w.partition("=")
        if k == NOTIFY:
            return v
    return None


def _peers(opts):
    # app reneg's TCP streams (stream_s=): the host's iperf server beside its peer
    return _app_peers(opts) + (["iperf"] if iperf.reneg_stream_s(opts) else [])


def _app_peers(opts):
    app = opts.app
    if app == "iperf":
        return ["iperf"]
    if opts.backend in ("dgram", "socket"):
        return ["peer", "peer1"] if app == "fwd" else ["peer"]
    if opts.backend in ("tap", "vhost-net"):
        if app == "rr":
            return ["rrserver"]
        return ["peer"] if app in ("sink", "reflect") or tap.counts_flows(opts) else []
    if opts.backend in PASST:
        return ["peer"]
    return []


def threads_for(opts):
    """The measured threads of the run these options make."""
    n, b, q = opts.vcpus or 1, opts.backend, opts.queues or 1
    if b == "none":
        return placement.threads(n, backend_main=False)
    if b == "vhost-user":
        if opts.vhost_user_socket:
            # Your backend's threads are yours to place.
            return placement.threads(n, backend_main=False)
        mode, feed = testpmd.plan(opts)
        if vhostpeer.feeder(opts, feed) == "peer-dpdk":
            return placement.threads(n, ["peer-dpdk"], backend_main=False)
        fwd = testpmd.pmd_lcores(os.cpu_count() or 1, q)[1]
        return placement.threads(n, ["lcore%d" % (i + 1) for i in range(fwd)],
                                 backend_main=False, peers=["peer"] if feed else [],
                                 aux=["lcore0"])
    if b == "vhost-net":
        return placement.threads(n, ["vhost%d" % i for i in range(q)], backend_main=False,
                                 peers=_peers(opts))
    if b in PASST:
        return placement.threads(n, ["passt"], backend_main=False, peers=_peers(opts))
    return placement.threads(n, peers=_peers(opts))


def plan_for(opts):
    """The run's Plan (mode none when the runner places nothing) and why
    not (None when it does)."""
    why = why_unplanned(opts)
    mode = "none" if why else opts.placement
    return placement.plan(mode, host_cpus(), threads_for(opts), notify_given(opts),
                          irq_every_vcpu=opts.machine != "microvm"), why


def guest_words(plan):
    """Config words the plan gives the guest."""
    return ["%s=%s" % (NOTIFY, plan.notify)] if plan.notify else []


def _set(tid, cpu):
    os.sched_setaffinity(tid, {cpu})


def apply_qemu(plan, pid, vcpu_tids):
    """Places QEMU's main loop and vCPU threads ({index: tid}). Returns
    {thread: cpu} placed and {thread: why} not."""
    want = [("main", pid)] + [("vcpu%d" % i, t) for i, t in sorted(vcpu_tids.items())]
    return _apply(plan, want)


def apply_vhost(plan, pid):
    """Places vhost-net's workers (threads named vhost-PID, in QEMU's
    thread group since Linux 6.4; they exist once the guest's driver
    started the device) by their order, as apply_qemu."""
    names = sorted(n for n, _ in _names(plan, "vhost"))
    done, missed = _apply(plan, list(zip(names, vhost_workers(pid))))
    for name in names[len(done) + len(missed):]:
        missed[name] = "no vhost-%d thread in QEMU's thread group" % pid
    return done, missed


def _apply(plan, want):
    done, missed = {}, {}
    for name, tid in want:
        cpu = plan.cpu_of(name)
        if cpu is None:
            continue
        try:
            _set(tid, cpu)
            done[name] = cpu
        except OSError as e:
            missed[name] = "thread %d: %s" % (tid, e.strerror)
    return done, missed


def _names(plan, prefix):
    return [(t.name, c) for t, c in plan.places if t.name.startswith(prefix)]


def vhost_workers(pid):
    """QEMU's vhost worker threads (comm vhost-PID), by thread id."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                if f.read().strip() == "vhost-%d" % pid:
                    out.append(int(t))
        except OSError:
            continue
    return sorted(out)


def peer_name(plan, role, taken):
    """The planned thread a backend process of role is: role, then role1,
    ... as more come; None when the plan has none left for it."""
    for name in [role] + ["%s%d" % (role, i) for i in range(1, 8)]:
        if name not in taken and plan.cpu_of(name) is not None:
            return name
    return None


def apply_process(plan, name, pid):
    """Places every thread of a host process on name's CPU; returns it."""
    cpu = plan.cpu_of(name)
    for t in os.listdir("/proc/%d/task" % pid):
        _set(int(t), cpu)
    return cpu
