"""--placement (issue 25): the planner on synthetic hosts of 1, 2, 4 and 16
CPUs with 1..8 queue pairs, and what the runner makes of its plan (the
guest's notify=, testpmd's --lcores, the identity, --pin winning, the
sweep axis)."""

import pytest

from test_queues_runner import FakeEngine, FakeSession, built
from vnperflib.campaign import sweep
from vnperflib.run import identity, placeapply, placement, qemucmd, runner
from vnperflib.backends import testpmd

HOSTS = (1, 2, 4, 16)
QUEUES = range(1, 9)


def vhost_user_threads(q):
    """A guest of q vCPUs, a backend thread per queue pair (vhost workers,
    testpmd lcores), QEMU's main loop, a peer and a helper."""
    return placement.threads(q, ["lcore%d" % (i + 1) for i in range(q)], backend_main=False,
                             peers=["peer"], aux=["lcore0"])


def dgram_threads(q):
    """vCPUs, QEMU's main loop doing the backend's I/O, the host peer."""
    return placement.threads(q, peers=["peer"])


def cases():
    for ncpu in HOSTS:
        for q in QUEUES:
            for make in (vhost_user_threads, dgram_threads):
                yield ncpu, q, make


def load(plan):
    out = {}
    for _, c in plan.places:
        out[c] = out.get(c, 0) + 1
    return out


def partner_cpu(plan, t):
    for u, c in plan.places:
        if u.kind == "backend" and u.queue == t.queue:
            return c
    return None


@pytest.mark.parametrize("ncpu,q,make", list(cases()))
def test_every_thread_on_a_host_cpu_and_its_own_where_there_are_enough(ncpu, q, make):
    ts = make(q)
    cpus = [3 + 2 * i for i in range(ncpu)]   # not 0..n-1: the host's own list
    for mode in ("auto", "spread"):
        p = placement.plan(mode, cpus, ts)
        assert [t for t, _ in p.places] == list(ts)
        assert all(c in cpus for _, c in p.places)
        counts = load(p)
        if len(ts) <= ncpu:
            assert max(counts.values()) == 1 and p.short == 0, p.lines()
            assert p.notify is None and p.spinning_vcpus == []
        else:
            # every CPU used, none more than one thread above another
            assert set(counts) == set(cpus) and p.short == len(ts) - ncpu
            assert max(counts.values()) - min(counts.values()) <= 1, p.lines()


@pytest.mark.parametrize("ncpu,q,make", list(cases()))
def test_vcpu_i_never_on_backend_thread_is_cpu_unless_the_host_has_one(ncpu, q, make):
    p = placement.plan("auto", range(ncpu), make(q))
    for t, c in p.places:
        if t.kind == "vcpu" and partner_cpu(p, t) is not None and ncpu > 1:
            assert c != partner_cpu(p, t), p.lines()


@pytest.mark.parametrize("ncpu,q,make", list(cases()))
def test_shared_puts_vcpu_i_on_backend_thread_is_cpu(ncpu, q, make):
    p = placement.plan("shared", range(ncpu), make(q))
    paired = [(c, partner_cpu(p, t)) for t, c in p.places
              if t.kind == "vcpu" and partner_cpu(p, t) is not None]
    assert paired and all(a == b for a, b in paired), p.lines()
    assert p.notify is None


@pytest.mark.parametrize("ncpu,q,make", list(cases()))
def test_auto_halts_exactly_when_a_vcpu_shares_and_notify_was_not_given(ncpu, q, make):
    ts = make(q)
    p = placement.plan("auto", range(ncpu), ts)
    sharing = [t.name for t, c in p.places if t.kind == "vcpu" and load(p)[c] > 1]
    assert p.spinning_vcpus == sharing
    # MSI-X (q35, pc) reaches every vCPU: a guest of any size halts
    assert p.notify == ("hybrid" if sharing else None)
    given = placement.plan("auto", range(ncpu), ts, notify_given="poll")
    assert given.notify is None and given.places == p.places
    if sharing:
        assert "notify=poll as given" in given.lines()[-1]
        assert p.lines()[-1].startswith("placement: guest notify=hybrid (halting waits)")
    # microvm's one interrupt line reaches vCPU 0 only: only a one-vCPU guest halts
    mmio = placement.plan("auto", range(ncpu), ts, irq_every_vcpu=False)
    assert mmio.notify == ("hybrid" if sharing and q == 1 else None)
    if sharing and q > 1:
        assert "a guest of several vCPUs polls" in mmio.lines()[-1]
    assert placement.plan("spread", range(ncpu), ts).notify is None


@pytest.mark.parametrize("ncpu,q,make", list(cases()))
def test_one_plan_line_per_thread_saying_whom_it_shares_with(ncpu, q, make):
    ts = make(q)
    p = placement.plan("auto", range(ncpu), ts)
    lines = p.lines()
    assert lines[0].startswith("placement auto: %d threads on %d CPU" % (len(ts), ncpu))
    per = [l for l in lines[1:] if not l.startswith("placement: guest notify")]
    assert len(per) == len(ts)
    for t, line in zip(ts, per):
        assert line.split()[1] == t.name and "CPU %d " % p.cpu_of(t.name) in line
        others = p.sharing(t.name)
        assert ("shares CPU" in line) == bool(others)
        assert all(o in line for o in others)


def test_the_two_cpu_dgram_host_of_the_issue():
    """gen over dgram here: vCPU, QEMU's main loop (dgram's I/O), the
    peer: 3 threads on 2 CPUs. The main loop gets a CPU of its own, the
    peer joins the vCPU, which then halts (notify=hybrid)."""
    p = placement.plan("auto", [0, 1], dgram_threads(1))
    assert p.describe() == "auto vcpu0=1,main=0,peer=1"
    assert p.notify == "hybrid" and p.spinning_vcpus == ["vcpu0"]
    assert placement.plan("shared", [0, 1], dgram_threads(1)).describe() == \
        "shared vcpu0=0,main=0,peer=1"


def test_one_cpu_host_shares_everything_and_halts():
    p = placement.plan("auto", [5], vhost_user_threads(1))
    assert set(c for _, c in p.places) == {5} and p.notify == "hybrid"
    p = placement.plan("auto", [5], vhost_user_threads(2))
    assert set(c for _, c in p.places) == {5} and p.notify == "hybrid"  # MSI-X: both vCPUs
    assert "CPU 5 shared (6 more threads than CPUs)" in p.lines()[0]
    p = placement.plan("auto", [5], vhost_user_threads(2), irq_every_vcpu=False)
    assert p.notify is None  # microvm: vCPU 1 takes no interrupts, so both poll


def test_sixteen_cpus_eight_queues_every_thread_its_own():
    ts = vhost_user_threads(7)   # 7 + 7 + main + peer + lcore0 = 17 > 16
    p = placement.plan("auto", range(16), ts)
    assert p.spinning_vcpus and p.notify == "hybrid"   # seven vCPUs, each on its MSI-X vectors
    p = placement.plan("auto", range(16), ts, irq_every_vcpu=False)
    assert p.spinning_vcpus and p.notify is None   # microvm: seven vCPUs poll
    ts = vhost_user_threads(6)   # 15 threads
    p = placement.plan("auto", range(16), ts)
    assert p.notify is None and len(set(c for _, c in p.places)) == 15


def test_none_places_nothing_and_bad_input_is_refused():
    p = placement.plan("none", [0, 1], dgram_threads(1))
    assert p.places == () and p.describe() == "none" and p.lcores() is None
    with pytest.raises(ValueError, match="one of auto, none, spread, shared"):
        placement.plan("everywhere", [0], dgram_threads(1))
    with pytest.raises(ValueError, match="no host CPU"):
        placement.plan("auto", [], dgram_threads(1))


def test_testpmd_lcores_follow_the_plan():
    p = placement.plan("auto", [0, 1, 2, 3, 4, 5], vhost_user_threads(2))
    assert p.lcores() == "0@%d,1@%d,2@%d" % (p.cpu_of("lcore0"), p.cpu_of("lcore1"),
                                             p.cpu_of("lcore2"))
    assert p.cpu_of("lcore1") != p.cpu_of("vcpu0")


def test_cpu_list():
    assert placement.cpu_list([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"


# The runner's side, on a host made to have 2 CPUs.

@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setattr(placeapply, "host_cpus", lambda: [0, 1])
    monkeypatch.setattr(placeapply.os, "cpu_count", lambda: 2)


def guest_config(o):
    s = FakeSession()
    r = runner.Run(s, o, None, eng=FakeEngine())
    r.be = runner.backends.make(o.backend, o)
    r.be.ports = [(40000, 40001)]   # dgram's, as its start() picks them
    r.roles = runner.guest_roles(o)
    r.accel = type("A", (), {"accel": "tcg"})()
    try:
        r.make_guests()
    finally:
        s.close()
    argv = qemucmd.build(r.guests[-1])
    return argv[argv.index("-fw_cfg") + 1]


def test_runner_gives_the_guest_halting_waits_and_records_the_plan(two_cpus):
    o = built(backend="dgram", app="gen", duration=2)
    assert o.placement == "auto"
    assert "notify=hybrid" in guest_config(o).split()
    ident = runner.run_identity(o, "tcg")
    assert ident["placement"] == "auto" and ident["notify"] == "hybrid"


def test_none_pin_and_a_given_notify_keep_todays_run(two_cpus):
    for o in (built(backend="dgram", app="gen", placement="none"),
              built(backend="dgram", app="gen", pin={"vcpu": {0}})):
        assert "notify=" not in guest_config(o)
        ident = runner.run_identity(o, "tcg")
        assert (ident["placement"], ident["notify"]) == ("none", "poll")
        # as results recorded before --placement read
        old = {k: v for k, v in ident.items() if k not in ("placement", "notify")}
        assert identity.recorded(old) == ident
    assert placeapply.plan_for(built(backend="dgram", app="gen", pin={"vcpu": {0}}))[1] \
        .startswith("--pin places the threads")
    o = built(backend="dgram", app="gen", config=["notify=poll"])
    assert "notify=poll" in guest_config(o).split() and "notify=hybrid" not in guest_config(o)
    with pytest.raises(Exception, match="--placement sideways: one of"):
        built(backend="dgram", placement="sideways")


def test_testpmd_runs_on_the_plans_lcores(two_cpus):
    o = built(backend="vhost-user", app="gen", queues=2)
    be = testpmd.VhostUser(o)
    plan, _ = placeapply.plan_for(o)
    be.place(plan)
    argv = be._argv()
    assert argv[argv.index("--lcores") + 1] == plan.lcores() == "0@1,1@0"
    assert "-l" not in argv and be.placed() == {"lcore0": 1, "lcore1": 0}
    be = testpmd.VhostUser(built(backend="vhost-user", app="gen", placement="none"))
    be.place(placeapply.plan_for(be.opts)[0])
    assert "--lcores" not in be._argv() and "-l" in be._argv()


def test_placement_is_a_sweep_axis():
    assert [v for _, v in sweep.parse_axis("placement", "spread,shared")] == ["spread", "shared"]
    with pytest.raises(Exception, match="bad value"):
        sweep.parse_axis("placement", "spread,apart")
    base = built(backend="dgram", app="gen")
    pt = sweep.point_opts(base, {"placement": ("none", "none")})
    assert pt.placement == "none"


@pytest.mark.parametrize("kw,names", [
    ({"backend": "none", "app": "selftest"}, ["vcpu0", "main"]),
    ({"backend": "dgram", "app": "gen"}, ["vcpu0", "main", "peer"]),
    # gen over a multiqueue tap: the host peer counts what it sends by flow
    ({"backend": "tap", "app": "gen", "queues": 2}, ["vcpu0", "vcpu1", "main", "peer"]),
    ({"backend": "tap", "app": "sink"}, ["vcpu0", "main", "peer"]),
    ({"backend": "tap", "app": "rr"}, ["vcpu0", "main", "rrserver"]),
    ({"backend": "tap", "app": "iperf"}, ["vcpu0", "main", "iperf"]),
    ({"backend": "vhost-net", "app": "gen", "queues": 2},
     ["vcpu0", "vcpu1", "vhost0", "vhost1", "main", "peer"]),
    ({"backend": "passt", "app": "gen"}, ["vcpu0", "passt", "main", "peer"]),
    ({"backend": "vhost-user", "app": "gen"}, ["vcpu0", "lcore1", "main", "lcore0"]),
    ({"backend": "vhost-user", "app": "sink", "rate": "10k"}, ["vcpu0", "peer-dpdk", "main"]),
])
def test_the_threads_each_backend_runs(two_cpus, kw, names):
    ts = placeapply.threads_for(built(**kw))
    assert [t.name for t in ts] == names
    # QEMU's main loop is the backend's thread where a NIC's backend has none
    main = next(t for t in ts if t.name == "main")
    others = any(t.kind == "backend" and t.name != "main" for t in ts)
    assert (main.kind == "backend") == (kw["backend"] != "none" and not others)


def test_backend_processes_take_their_planned_threads_in_turn():
    p = placement.plan("auto", range(4), placement.threads(1, peers=["peer", "peer1"]))
    assert placeapply.peer_name(p, "peer", {}) == "peer"
    assert placeapply.peer_name(p, "peer", {"peer": 2}) == "peer1"
    assert placeapply.peer_name(p, "peer", {"peer": 2, "peer1": 3}) is None
    assert placeapply.peer_name(p, "testpmd", {}) is None
