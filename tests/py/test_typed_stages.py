"""The run's report is assembled from typed parts (issue 30): each stage
(a guest's report, the CPU meter, the counts, the metrics, the topology's
part, the verdict) returns its result.* record, and Run.report makes the
result.RunResult of them; its JSON keeps every member the untyped report
had, nulls too."""

import json
import types

from vnpy import run_opts
from vnperflib import result
from vnperflib.analysis import hostcpu, outcome
from vnperflib.run import protocol, runner

CONSOLE = (b'@vnperf {"type":"boot","tsc_hz":1000000000}\n'
           b'@vnperf {"type":"config","source":"fw_cfg","line":"app=gen"}\n'
           b'@vnperf {"type":"ready","app":"gen"}\n'
           b'@vnperf {"type":"result","app":"gen","packets":1000,"bytes":64000,"pps":500.0,'
           b'"duration_ns":2000000000,"vnet":{"tx":{"packets":1000,"in_flight":0}}}\n'
           b'@vnperf {"type":"exit","code":0,"reason":"ok"}\n')


class Guest:
    """What outcome.guest_report reads of a guest that ran and exited 0."""

    label = "guest"
    argv = ["qemu-system-x86_64", "-machine", "microvm"]
    qemu_status = guest_code = 0
    timed_out = False
    stopped = False
    proc = object()
    wall_s, t_ready = 2.5, 0.2

    def __init__(self, words=("app=gen",)):
        self.console = protocol.Console()
        self.console.feed(CONSOLE, 0.1)
        self.console.close(0.2)
        self.spec = types.SimpleNamespace(config=list(words))

    def status(self):
        return 0

    def why_no_exit(self):
        return "exited"

    def stderr_text(self):
        return ""


def test_a_guests_report_is_typed_and_writes_every_member():
    g = outcome.guest_report(Guest())
    assert isinstance(g, result.GuestReport)
    assert (g.label, g.status_name, g.started, g.result["packets"]) == ("guest", "ok", True, 1000)
    d = g.to_dict()
    assert d["error"] is None and d["why_no_exit"] is None and d["argv"][0].startswith("qemu")
    assert set(d) == {f for f in result.GuestReport.__dataclass_fields__} - {"extra", "keys"}


def test_the_cpu_meter_gives_a_typed_cpu():
    m = hostcpu.CpuMeter()
    assert m.result() is None
    m._a, m._ta = {(1, 2): ("vcpu", 0, 0), (1, 1): ("main", 0, 0)}, 10.0
    m._b, m._tb = {(1, 2): ("vcpu", 10 ** 9, 10 ** 8), (1, 1): ("main", 0, 0)}, 12.0
    m._names = {(1, 2): "CPU 0/TCG", (1, 1): "qemu-system-x86"}
    c = m.result()
    assert isinstance(c.roles["vcpu"], result.CpuRole)
    assert (c.roles["vcpu"].pct, c.roles["vcpu"].wait_pct, c.roles["main"].threads) == \
        (50.0, 5.0, 1)
    assert [(t.role, t.name, t.tid, t.pct, t.wait_pct) for t in c.per_thread] == [
        ("main", "qemu-system-x86", 1, 0.0, 0.0), ("vcpu", "CPU 0/TCG", 2, 50.0, 5.0)]
    assert isinstance(c.per_thread[0], result.CpuThread)
    assert (c.total_pct, c.wait_pct, c.window_s) == (50.0, 5.0, 2.0)
    assert result.Cpu.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_given_writes_its_members_and_but_adds_them():
    q = result.QueuePair.given(queue=0, cpu=None)
    assert q.to_dict() == {"queue": 0, "cpu": None}
    assert q.but(why=None, agree=True).to_dict() == {"queue": 0, "cpu": None, "why": None,
                                                     "agree": True}
    assert result.QueuePair(queue=0, cpu=None).to_dict() == {"queue": 0}


def run_of(opts, guests, host):
    """A runner.Run after its guests ended: what report() reads."""
    run = runner.Run(None, opts, None, eng=types.SimpleNamespace(describe=lambda: "qemu"))
    run.roles = [(g.label, g.spec.config) for g in guests]
    run.guests = guests
    run.accel = types.SimpleNamespace(accel="tcg", why="no /dev/kvm")
    run.be = types.SimpleNamespace(lossless=True)
    run.t0 = 0.0
    return run


def test_the_run_report_is_assembled_typed_with_every_member():
    opts = run_opts(backend="dgram", app="gen", duration=2)
    res = run_of(opts, [Guest()], {"rx_packets": 1000, "rx_frames": 1000}).report(
        {"rx_packets": 1000, "rx_frames": 1000}, None)
    assert isinstance(res.counts, result.Counts) and isinstance(res.metrics, result.Metrics)
    assert isinstance(res.verdict, result.Verdict) and isinstance(res.guests[0],
                                                                  result.GuestReport)
    assert res.counts.directions["guest->host"].verdict == "agree"
    assert (res.status, res.why, res.metrics.pps, res.metrics.loss_pct) == (0, "ok", 500.0, 0.0)
    d = json.loads(res.to_json())
    # Every member the runner writes, a null too (no CPU window was measured).
    assert set(result.RunResult.RUN_KEYS) <= set(d) and d["cpu"] is None and d["waits"] == {}
    assert "queues" not in d and "streams" not in d and not res.extra
    assert result.RunResult.from_dict(d).to_dict() == d
