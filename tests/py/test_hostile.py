"""vnperf hostile without QEMU: the runner's catalogue against the
guest's, the verdict logic on synthetic outcomes (exit statuses, signals,
CPU spin, counts), the refusals and the table."""

import argparse
import dataclasses
import json
import os
import re

import pytest

from vnpy import ROOT, run_vnperf
from vnperflib import exitcodes
from vnperflib.campaign import hostile, hostile_cases, hostile_verdict


def guest_table():
    with open(os.path.join(ROOT, "apps", "hostile_cases.c")) as f:
        text = f.read()
    return re.findall(r'\{"(\w+)",\s*"([^"]*)"', text)


def test_the_runner_knows_the_guests_cases_in_order():
    assert [(n, s) for n, s, _ in hostile_cases.CASES] == guest_table()


def test_docs_list_every_case():
    with open(os.path.join(ROOT, "docs", "hostile.md")) as f:
        doc = f.read()
    missing = [n for n in hostile_cases.NAMES if "| `%s` |" % n not in doc]
    assert not missing


def line(**kw):
    g = {"type": "hostile", "case": "x", "spec": "s", "allows": "a", "build": 0, "status": 7,
         "needs_reset": False, "used": 1, "bufs": 1, "restart": 0, "sent": 32, "completed": 32}
    g.update(kw)
    return "@vnperf " + json.dumps(g)


def report(hline=None, qemu_status=1, roles=None, peer=None, stderr="", before=(), **guest):
    """The run's report as hostile reads it from `vnperf run --json`."""
    g = {"qemu_status": qemu_status, "stderr_tail": stderr, **guest,
         "console_tail": list(before) + ["vnperf: booted",
                                         hline if hline else "@vnperf {\"type\":\"ready\"}"]}
    rep = {"vnperf_report": 1, "guests": [g],
           "cpu": {"roles": roles or {"main": {"pct": 2.0}, "vcpu": {"pct": 99.0}}}}
    if peer is not None:
        rep["counts"] = {"host": {"peer": {"packets": peer}}}
    return hostile.report_of(json.dumps(rep))


def judge(rep, status=0, killed=False, uses=True):
    return hostile_verdict.verdict(hostile_verdict.outcome(rep, status, killed), uses)


@pytest.mark.parametrize("rep,status,killed,uses,want,needle", [
    (report(qemu_status=-6, stderr="qemu-system-x86_64: assertion\n"),
     exitcodes.RUNNER_NO_GUEST_EXIT, False, True, "crashed", "SIGABRT"),
    (report(qemu_status=0), exitcodes.RUNNER_NO_GUEST_EXIT, False, True, "crashed",
     "without a guest exit"),
    (hostile.report_of('{"vnperf_report": 1, "why": "testpmd died"}'),
     exitcodes.RUNNER_BACKEND_FAILED, False, True, "crashed",
     "testpmd died"),
    (None, -15, True, True, "stalled", "timeout"),
    # The runner's own SIGKILL: at the timeout, or once the backend died
    # (passt leaves on a runt frame): not QEMU's crash.
    (report(qemu_status=-9, timed_out=True), exitcodes.RUNNER_TIMEOUT, False, True, "stalled",
     "timeout"),
    (report(qemu_status=-9, stopped=True).but(why="passt (pid 7) ended during the run"),
     exitcodes.RUNNER_BACKEND_FAILED, False, True, "crashed", "backend failed: passt (pid 7)"),
    # QEMU's own signal stays a crash when the backend then died too.
    (report(qemu_status=-11, stopped=False), exitcodes.RUNNER_BACKEND_FAILED, False, True,
     "crashed", "SIGSEGV"),
    (report(), exitcodes.RUNNER_TIMEOUT, False, True, "stalled", "timeout"),
    (report(), 4, False, True, "stalled", "before the case's line (status 4)"),
    (report(line(), roles={"main": {"pct": 99.5}}), 0, False, True, "host-cpu-spin", "QEMU"),
    (report(line(), roles={"iothread": {"pct": 95.0}}), 0, False, True, "host-cpu-spin",
     "QEMU"),
    (report(line(), roles={"passt": {"pct": 97.0}}), 0, False, True, "host-cpu-spin", "passt"),
    (report(line(), roles={"testpmd": {"pct": 100.0}}), 0, False, True, "handled", "exact"),
    (report(line(restart=-5)), 0, False, True, "stalled", "did not come back"),
    (report(line(completed=0)), 0, False, True, "stalled", "0 of 32"),
    (report(line(completed=20)), 0, False, True, "corrupted", "20 of 32"),
    (report(line(), peer=31), 0, False, True, "corrupted", "host got 31"),
    (report(line(), peer=34), 0, False, True, "corrupted", "host got 34"),
    (report(line(), peer=33), 0, False, True, "handled", "exact"),
    (report(line(status=0x47, needs_reset=True, used=0)), 0, False, True, "needs-reset",
     "DEVICE_NEEDS_RESET"),
    (report(line(used=0)), 0, False, True, "stalled", "without DEVICE_NEEDS_RESET"),
    (report(line(used=0)), 0, False, False, "handled", "exact"),
    (report(line(bufs=0, used=0)), 0, False, True, "handled", "exact"),
    (report(line(bufs=0, used=0)), 0, False, "rx", "handled", "not reached"),
    (report(line(bufs=0, used=1)), 0, False, "rx", "handled", "traffic exact"),
    (report(line(offered=False, needs="ctrl_vq,mq", used=0, bufs=0)), 0, False, True,
     "not-offered", "did not offer ctrl_vq,mq"),
    (report(line(offered=False, needs="ring_reset", completed=0)), 0, False, True,
     "not-offered", "did nothing"),
    (report(line(offered=False), qemu_status=-11), exitcodes.RUNNER_NO_GUEST_EXIT, False, True,
     "crashed", "SIGSEGV"),
    (report(line(offered=True, ack="err")), 0, False, True, "handled", "ack ERR; traffic"),
    (report(line(offered=True, ack="none", used=0)), 0, False, True, "stalled",
     "ack none; the queue stopped"),
    (report(line(offered=True, ack="ok", status=0x47, needs_reset=True)), 0, False, True,
     "needs-reset", "ack OK; DEVICE_NEEDS_RESET"),
    (report(line(build=-5)), 0, False, True, "handled", "step refused (-5); traffic exact"),
    # a case with no feature to need that found nothing to break: the guest says why
    (report(line(offered=False, needs="", skip="no disabled queue", used=0, bufs=0)), 0, False,
     True, "not-offered", "not applicable: no disabled queue"),
])
def test_verdicts(rep, status, killed, uses, want, needle):
    v, why = judge(rep, status, killed, uses)
    assert (v, needle in why) == (want, True), why
    assert v in hostile_verdict.VERDICTS


NEVER = hostile_cases.NEVER


@pytest.mark.parametrize("rep,uses,want,needle", [
    (report(line(offered=False, needs="ring_packed", used=0)), NEVER, "not-offered",
     "did not offer ring_packed"),
    (report(line(offered=True, bufs=0, used=0)), NEVER, "handled", "exact"),
    (report(line(offered=True, bufs=0, used=1)), NEVER, "corrupted",
     "used 1 descriptors the driver did not make available"),
    (report(line(offered=True, bufs=0, used=0), peer=33), NEVER, "corrupted", "host got 33"),
    (report(line(offered=True, bufs=0, used=1, status=0x4f, needs_reset=True)), NEVER,
     "needs-reset", "DEVICE_NEEDS_RESET"),
    (report(line(offered=True, used=1)), True, "handled", "exact"),
])
def test_a_case_that_makes_nothing_available(rep, uses, want, needle):
    v, why = judge(rep, uses=uses)
    assert (v, needle in why) == (want, True), why


def test_the_packed_cases_need_the_packed_ring():
    assert [c[0] for c in hostile_cases.PACKED_CASES] == \
        [n for n in hostile_cases.NAMES if n.startswith("packed_")]
    for name, _, uses in hostile_cases.PACKED_CASES:
        assert hostile_cases.NEEDS[name] == ("ring_packed",)
        assert uses == (NEVER if name in ("packed_wrap_wrong", "packed_flags_used") else True)


def test_outcome_keeps_qemus_own_lines_and_ignores_forged_ones():
    rep = report(line(), stderr="vnperf: x\nqemu-system-x86_64: Looped descriptor\n",
                 before=['@vnperf {"type":"hostile"'])  # cut short
    o = hostile_verdict.outcome(rep, 0, False)
    assert o.qemu_errors == ("qemu-system-x86_64: Looped descriptor",)
    assert o.guest["case"] == "x" and o.signal is None


def test_the_outcome_is_a_frozen_record_and_its_host_part_is_written():
    """The per-case outcome is a frozen dataclass read by attribute (issue
    30); the case's "host" in hostile's JSON is its HOST members, lists and
    objects as before."""
    rep = report(line(), qemu_status=-6, stderr="qemu-system-x86_64: boom\n", peer=33,
                 roles={"main": {"pct": 3.0}, "vcpu": {"pct": 98.0}, "passt": {"pct": 5.0}})
    o = hostile_verdict.outcome(rep, exitcodes.RUNNER_NO_GUEST_EXIT, False)
    assert dataclasses.is_dataclass(o) and o.signal == "SIGABRT"
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.signal = None
    c = hostile.case_result(opts(), "runt", rep, exitcodes.RUNNER_NO_GUEST_EXIT, False, 1.0)
    assert json.loads(json.dumps(c["host"])) == c["host"] == {
        "run_status": exitcodes.RUNNER_NO_GUEST_EXIT, "qemu_status": -6, "signal": "SIGABRT",
        "killed_by_runner": False, "qemu_errors": ["qemu-system-x86_64: boom"],
        "qemu_pct": 3.0, "vcpu_pct": 98.0, "backend_pct": {"passt": 5.0}, "host_frames": 33}


def test_what_is_no_report_is_none():
    """A run that died before its report printed nothing, or half of it."""
    assert hostile.report_of("") is None and hostile.report_of('{"vnperf_report": 1, "gu') \
        is None
    assert hostile.report_of('{"guests": []}') is None
    assert hostile.report_of('{"vnperf_report": 1, "why": "x"}').why == "x"


def opts(**kw):
    base = dict(backend="dgram", case="all", qemu=None, machine=None, accel=None, testpmd=None,
                timeout=60, allow_host_kernel=False, list=False, json=False)
    base.update(kw)
    return argparse.Namespace(**base)


@pytest.mark.parametrize("kw,needle", [
    (dict(backend="vhost-net"), "--allow-host-kernel"),
    (dict(backend="nope"), "unknown backend"),
    (dict(backend=None), "--backend"),
    (dict(case="runt,nope"), "'nope'"),
    (dict(timeout=5), "at least 10"),
])
def test_refusals(kw, needle):
    with pytest.raises(hostile.RunnerError) as e:
        hostile.check(opts(**kw))
    assert e.value.status == exitcodes.RUNNER_USAGE and needle in e.value.line


def test_vhost_net_runs_only_when_asked():
    assert hostile.check(opts(backend="vhost-net", allow_host_kernel=True, case="runt")) == \
        ["runt"]


def test_the_run_of_a_case_and_its_reproducer():
    o = opts(qemu="next", case="runt")
    argv = hostile.run_argv(o, "runt")
    assert argv[-2:] == ["--", "case=runt"] and argv[argv.index("--qemu") + 1] == "next"
    assert hostile.repro(argv).startswith("tools/vnperf run --backend dgram --app hostile")


def test_notify_disabled_queue_boots_with_the_control_queue_left_off():
    """QEMU's virtio-net has its control queue whatever the driver does:
    with CTRL_VQ negotiated away the driver leaves it disabled, and the
    reproducer says so too."""
    argv = hostile.run_argv(opts(case="notify_disabled_queue"), "notify_disabled_queue")
    assert argv[-3:] == ["--", "case=notify_disabled_queue", "features=-ctrl_vq"]
    assert hostile.run_argv(opts(), "notify_bad_queue")[-2:] == ["--", "case=notify_bad_queue"]
    assert hostile_cases.USES_BUFFER["notify_disabled_queue"] is True
    assert set(hostile_cases.GUEST_WORDS) <= set(hostile_cases.NAMES)


def test_cases_that_need_a_feature_are_the_runners_and_known():
    assert set(hostile_cases.NEEDS) <= set(hostile_cases.NAMES)
    assert {f for n in hostile_cases.NEEDS.values() for f in n} <= set(hostile.FEATURE_PROPS)
    assert "not-offered" in hostile_verdict.VERDICTS


@pytest.mark.parametrize("needs,machine,props,want", [
    ((), "microvm", {"mq"}, []),
    (("ctrl_vq", "mq"), "microvm", {"ctrl_vq", "mq"},
     ["-global", "virtio-net-device.ctrl_vq=on", "-global", "virtio-net-device.mq=on"]),
    (("ctrl_vq", "rss"), "q35", {"ctrl_vq", "rss"},
     ["-global", "virtio-net-pci.ctrl_vq=on", "-global", "virtio-net-pci.rss=on"]),
    (("notification_data",), "q35", {"queue_reset"}, []),  # QEMU 7.2: no such property
    (("notification_data",), "microvm", {"notification_data"},
     ["-global", "virtio-mmio.force-legacy=false", "-global",
      "virtio-net-device.notification_data=on"]),
    (("ring_reset",), "microvm", {"queue_reset"},
     ["-global", "virtio-mmio.force-legacy=false", "-global", "virtio-net-device.queue_reset=on"]),
    (("ring_packed",), "microvm", {"packed", "mq"},
     ["-global", "virtio-mmio.force-legacy=false", "-global", "virtio-net-device.packed=on"]),
    (("ring_packed",), "q35", {"packed"}, ["-global", "virtio-net-pci.packed=on"]),
])
def test_a_case_runs_on_a_device_that_offers_what_it_needs(needs, machine, props, want):
    assert hostile.offer_args(needs, machine, frozenset(props)) == want


def test_the_run_of_a_feature_case_carries_its_offer(monkeypatch):
    monkeypatch.setattr(hostile.qemucmd, "device_props", lambda qemu, driver: frozenset(
        {"mq", "ctrl_vq", "queue_reset"}))
    argv = hostile.run_argv(opts(machine="q35"), "ctrl_mq_pairs0")
    assert argv[-4:] == ["--qemu-arg=-global", "--qemu-arg=virtio-net-pci.mq=on", "--",
                         "case=ctrl_mq_pairs0"]
    assert "--qemu-arg=virtio-mmio.force-legacy=false" in hostile.run_argv(opts(), "qreset_active")
    assert not any(a.startswith("--qemu-arg") for a in hostile.run_argv(opts(), "runt"))


def test_the_run_of_a_packed_case_offers_the_packed_ring(monkeypatch):
    asked = []

    def device_props(qemu, driver):
        asked.append((qemu, driver))
        return frozenset({"packed"})
    monkeypatch.setattr(hostile.qemucmd, "device_props", device_props)
    argv = hostile.run_argv(opts(), "packed_id_twice")
    assert argv[-6:] == ["--qemu-arg=-global", "--qemu-arg=virtio-mmio.force-legacy=false",
                         "--qemu-arg=-global", "--qemu-arg=virtio-net-device.packed=on", "--",
                         "case=packed_id_twice"]
    assert asked == [("qemu-system-x86_64", "virtio-net-device")]


def test_table_prints_the_reproducer_of_a_crash():
    o = opts()
    crash = hostile.case_result(o, "runt", report(qemu_status=-11), 66, False, 1.0)
    fine = hostile.case_result(o, "len_zero", report(line(), peer=33), 0, False, 1.0)
    text = hostile.table({"backend": "dgram", "cases": [crash, fine], "wall_s": 2.0})
    assert "%-21s crashed" % "runt" in text and "QEMU killed by SIGSEGV" in text
    assert "    reproduce: tools/vnperf run --backend dgram --app hostile --timeout 60 -- " \
        "case=runt" in text
    assert "%-21s handled" % "len_zero" in text


def test_command_refuses_in_one_line():
    r = run_vnperf(["hostile", "--backend", "vhost-net"], timeout=30)
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.count("\n") == 1 and "host kernel" in r.stderr
    r = run_vnperf(["hostile", "--list"], timeout=30)
    assert r.returncode == 0 and r.stdout.split()[0] == "chain_loop"
