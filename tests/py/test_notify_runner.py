"""The runner's side of notification modes (issue 12): run-queue waits from
schedstat, the host CPU-bound verdict, the rr verdict, interrupts per
packet and the guest's idle share in metrics and the report."""

import os
import threading
import time

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.analysis import hostbound, hostcpu, outcome, verdict
from vnperflib.report import report
from vnperflib import result


def test_schedstat_gives_run_and_wait_the_first_two_fields():
    assert hostcpu.parse_schedstat("5816555643 13326313588 4330\n") == \
        (5816555643, 13326313588)


def test_schedstat_of_a_missing_file_is_none(tmp_path):
    assert hostcpu.thread_schedstat(str(tmp_path / "nope")) is None


def test_thread_cpu_time_resolves_a_few_milliseconds():
    """3 ms of this thread's CPU read back within 1 ms: clock ticks (10 ms)
    would read 0 or 10, the quantisation that made a 14 ms window's A/A
    read CPU% 102 -> 35 as significant. Each read follows a sleep: the
    kernel adds a running thread's time to schedstat when it stops."""
    tid = threading.get_native_id()
    time.sleep(0.002)
    before = hostcpu.thread_times(os.getpid())[tid][1]
    t0 = time.thread_time_ns()
    while time.thread_time_ns() - t0 < 3 * 10 ** 6:
        pass
    time.sleep(0.002)
    spent = hostcpu.thread_times(os.getpid())[tid][1] - before
    assert abs(spent - 3 * 10 ** 6) < 10 ** 6, spent


def test_the_meter_gives_each_threads_cpu_by_its_name():
    """Issue 25: every thread's CPU beside its role's, named as /proc names
    it (QEMU's "CPU 0/TCG", testpmd's lcores): a thread of this process
    that spins 30 ms in the window is there with its own name and id."""
    done, end = threading.Event(), threading.Event()
    seen = {}

    def spin():
        seen["tid"] = threading.get_native_id()
        with open("/proc/self/task/%d/comm" % seen["tid"], "w") as f:
            f.write("vn-spinner")
        seen["named"] = True
        done.wait()
        t0 = time.thread_time_ns()
        while time.thread_time_ns() - t0 < 30 * 10 ** 6:
            pass
        seen["spun"] = True
        end.wait()
    t = threading.Thread(target=spin)
    t.start()
    while "named" not in seen:
        time.sleep(0.001)
    m = hostcpu.CpuMeter()
    m.add_process("peer", os.getpid())
    m.start(time.monotonic())
    done.set()
    while "spun" not in seen:
        time.sleep(0.001)
    time.sleep(0.002)
    m.stop(time.monotonic())
    end.set()
    t.join()
    c = m.result()
    mine = [x for x in c.per_thread if x.tid == seen["tid"]]
    assert len(mine) == 1 and (mine[0].role, mine[0].name) == ("peer", "vn-spinner"), mine
    assert mine[0].cpu_s >= 0.029, mine
    assert {x.role for x in c.per_thread} == {"peer"}
    assert abs(sum(x.cpu_s for x in c.per_thread) - c.roles["peer"].cpu_s) < 1e-9
    assert c.roles["peer"].threads == len(c.per_thread)


def cpu(waits, pcts, cpus=2):
    roles = {k: {"pct": pcts.get(k, 0.0), "wait_pct": waits.get(k, 0.0), "cpu_s": 0.0,
                 "threads": 1} for k in set(waits) | set(pcts)}
    wait = sum(waits.values())
    total = sum(pcts.values())
    return result.Cpu.from_dict({"window_s": 1.0, "roles": roles, "total_pct": total,
                                 "total_cpu_s": total / 100, "wait_pct": wait,
                                 "runnable_avg": (total + wait) / 100.0, "cpus": cpus})


def test_host_cpu_bound_names_the_waiting_threads():
    c = cpu({"vcpu": 40.0, "peer": 25.0, "main": 3.0}, {"vcpu": 56, "peer": 89, "main": 44})
    v = hostbound.verdict(c)
    assert v.side == "host"
    assert "2.6 of the measured threads runnable on average for 2 CPUs" in v.why
    assert "vcpu 40%, peer 25%" in v.why and "main" not in v.why


def test_other_processes_are_named_when_ours_fit():
    c = cpu({"vcpu": 30.0, "main": 25.0}, {"vcpu": 50, "main": 40})
    assert "other host processes" in hostbound.verdict(c).why


def test_no_host_verdict_below_the_threshold_or_without_schedstat():
    assert hostbound.verdict(cpu({"vcpu": 10.0, "peer": 10.0}, {"vcpu": 90, "peer": 90})) is None
    assert hostbound.verdict(result.Cpu(roles={}, total_pct=0)) is None
    assert hostbound.verdict(None) is None


def rep(app, sent, c=None, backend="dgram"):
    return result.RunResult(app=app, backend=backend, config=(), cpu=c, counts=result.Counts(),
                            guests=(result.GuestReport(result=sent, boot={"tsc_hz": 1e9}),))


def test_host_cpu_bound_comes_before_the_side_verdicts():
    c = cpu({"vcpu": 60.0}, {"vcpu": 60, "main": 95})
    r = {"pps": 1.0, "duration_ns": 1e9, "vnet": {"tx": {"full_wait_cycles": 9e8}}}
    assert verdict.bottleneck(rep("gen", r, c)).side == "host"
    assert verdict.bottleneck(rep("gen", r, cpu({}, {"main": 50}))).side == "backend"


def test_rr_has_a_verdict():
    v = verdict.bottleneck(rep("rr", {"p50_us": 120.0}, cpu({"vcpu": 1.0}, {"vcpu": 50})))
    assert v.side == "neither" and "latency-bound" in v.why and "p50 120 us" in v.why
    assert v.why.endswith("no host thread saturated, and CPUs to spare")
    # Measured over tap (TCP, 4 sessions): the threads waited 42% of the
    # run with 2.1 runnable on 2 CPUs; "CPUs to spare" contradicted the
    # report's own "waited for a CPU" line.
    busy = cpu({"main": 31.0, "rrserver": 7.0, "vcpu": 4.0},
               {"main": 45, "rrserver": 35, "vcpu": 91})
    v = verdict.bottleneck(rep("rr", {"p50_us": 135.2}, busy))
    assert v.side == "neither" and "CPUs to spare" not in v.why, v
    assert v.why.endswith("but its threads waited for a CPU 42% of the run, part of each "
                             "round trip"), v
    hot = cpu({"vcpu": 1.0}, {"vcpu": 50, "main": 97})
    assert verdict.bottleneck(rep("rr", {}, hot)) == result.Verdict(side="backend",
                                                                why="main at 97% CPU")
    assert verdict.bottleneck(rep("rr", {}, None, backend="none")).side == "unknown"


def guest_result(shared):
    return {"packets": 2000, "pps": 1.0, "idle": {"share": 0.8, "halts": 10},
            "vnet": {"rx": {"notify": "hybrid", "interrupts": 100, "interrupts_per_1000": 50.0},
                     "tx": {"notify": "poll", "interrupts": 100 if shared else 0,
                            "irq_shared": shared, "interrupts_per_1000": 0.0}}}


def test_metrics_count_a_shared_line_once():
    for shared in (False, True):
        m = outcome.metrics(rep("sink", guest_result(shared)))
        assert m.irq_per_packet == 0.05 and m.idle_pct == 80.0


def test_polled_guest_has_no_interrupt_metric():
    m = outcome.metrics(rep("sink", {"packets": 5, "vnet": {"rx": {}, "tx": {}}}))
    assert m.irq_per_packet is None and m.idle_pct is None


def test_report_line_shows_modes_interrupts_and_idle():
    line = report.guest_notify_line(rep("sink", guest_result(False)))
    assert line == "rx hybrid 0.05 interrupts/frame, vCPU halted 80% of the run"
    assert report.guest_notify_line(rep("sink", {"vnet": {"rx": {"notify": "poll"}},
                                                 "idle": {"share": 0, "halts": 0}})) is None
