"""The runner against the real image: exit-code mapping, timeout, Ctrl-C,
bad options. Each boot is a fraction of a second under TCG."""

import json
import os
import signal
import subprocess
import time

import pytest

import vnharness
from vnharness import exitcodes, run_vnperf

TCG = ["run", "--accel", "tcg", "--quiet"]


@pytest.mark.parametrize("machine", ["microvm", "q35", "pc"])
def test_selftest_exits_ok_with_json_report(image, machine):
    r = run_vnperf(TCG + ["--machine", machine, "--json"])
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    g = rep["guests"][0]
    assert rep["status"] == 0 and rep["accel"] == "tcg" and rep["machine"] == machine
    assert g["qemu_status"] == 1 and g["guest_code"] == 0 and g["problems"] == []
    assert g["exit"] == {"type": "exit", "code": 0, "reason": "ok"}
    assert g["result"]["app"] == "selftest" and g["ready"]["app"] == "selftest"
    assert "-M" in g["argv"] and machine in g["argv"]


def test_result_table_on_stdout(image):
    r = run_vnperf(TCG)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["status", "0", "(ok)"]
    assert any(l.split()[:2] == ["app", "selftest"] for l in lines)


def test_console_is_echoed_unless_quiet(image):
    loud = run_vnperf(["run", "--accel", "tcg"])
    assert loud.returncode == 0 and "TSC" in loud.stdout and "@vnperf" not in loud.stdout
    raw = run_vnperf(["run", "--accel", "tcg", "--raw"])
    assert '@vnperf {"type":"exit"' in raw.stdout
    quiet = run_vnperf(TCG)
    assert "TSC" not in quiet.stdout


def test_guest_config_error_is_runner_status_2(image):
    r = run_vnperf(TCG + ["--", "size=1"])
    assert r.returncode == 2, r.stderr
    assert "size" in r.stderr and "config error" in r.stderr


def test_guest_fault_is_runner_status_3(image):
    r = run_vnperf(TCG + ["--app", "fault", "--json", "--", "fault=ud"])
    assert r.returncode == 3, r.stderr
    rep = json.loads(r.stdout)
    assert rep["guests"][0]["exit"]["code"] == 3


def test_out_of_memory_is_runner_status_5(image):
    r = run_vnperf(TCG + ["--app", "alloc", "--memory", "64", "--", "alloc_mb=1024"])
    assert r.returncode == 5, r.stdout + r.stderr


def test_timeout_kills_qemu_and_returns_runner_timeout(image, no_leftovers):
    t0 = time.monotonic()
    # -S: QEMU starts with the vCPU stopped, so the guest never exits.
    r = run_vnperf(TCG + ["--qemu-arg=-S", "--timeout", "1"])
    assert r.returncode == exitcodes.RUNNER_TIMEOUT, r.stderr
    assert time.monotonic() - t0 < 10
    assert "timeout" in r.stderr
    assert vnharness.tagged_pids(no_leftovers) == []


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_to_runner_leaves_no_qemu(image, no_leftovers, sig, status):
    p = subprocess.Popen([vnharness.PYTHON, vnharness.VNPERF] + TCG +
                         ["--qemu-arg=-S", "--timeout", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        qemu = []
        while not qemu and time.monotonic() < deadline:
            qemu = [x for x in vnharness.tagged_pids(no_leftovers)
                    if "qemu-system" in vnharness.proc_cmdline(x)]
            time.sleep(0.05)
        assert qemu, "QEMU never started"
        p.send_signal(sig)
        out, err = p.communicate(timeout=15)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == status, err
    assert "torn down" in err
    assert vnharness.wait_gone(qemu) == []


def test_runner_killed_with_sigkill_takes_qemu_along(image, no_leftovers, tmp_path):
    # A SIGKILLed runner cannot remove its temp dir: keep it in tmp_path.
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.Popen([vnharness.PYTHON, vnharness.VNPERF] + TCG +
                         ["--qemu-arg=-S", "--timeout", "60"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 10
    qemu = []
    while not qemu and time.monotonic() < deadline:
        qemu = [x for x in vnharness.tagged_pids(no_leftovers)
                if "qemu-system" in vnharness.proc_cmdline(x)]
        time.sleep(0.05)
    p.kill()
    p.wait()
    assert qemu, "QEMU never started"
    assert vnharness.wait_gone(qemu) == [], "QEMU outlived a SIGKILLed runner"


def test_qemu_failing_to_start_is_no_guest_exit(image):
    r = run_vnperf(TCG + ["--qemu-arg=-nosuchoption"])
    assert r.returncode == exitcodes.RUNNER_NO_GUEST_EXIT
    assert "nosuchoption" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["run", "--machine", "isapc"], "invalid choice"),
    (["run", "--timeout", "-1"], "must be > 0"),
    (["run", "--memory", "lots"], "not a whole number"),
    (["run", "--pin", "gpu=0"], "role"),
    (["run", "--backend", "carrier-pigeon"], "unknown backend"),
    (["run", "--", "novalue"], "not key=value"),
    (["run", "--image", "/nonexistent.elf"], "not found"),
    (["run", "--backend", "hub", "--topology", "guests"], "need a wire between them"),
    (["run", "--backend", "dgram", "--topology", "guests", "--app", "sink"],
     "pairs gen with a sink"),
    (["run", "--backend", "dgram", "--rate", "fast"], "expected <number>"),
    (["frobnicate"], "invalid choice"),
    ([], "no command"),
])
def test_bad_options_one_line_and_usage_status(args, needle):
    r = run_vnperf(args, timeout=30)
    assert r.returncode == exitcodes.RUNNER_USAGE, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert r.stdout == ""


def test_harness_boot_helper(image):
    b = vnharness.boot("app=selftest", timeout=30)
    assert b.code == 0 and b.problems == [] and b.one("ready")["app"] == "selftest"
    b = vnharness.boot("app=nosuch", timeout=30)
    assert b.code == 2 and "app" in b.one("error").get("message", b.console)


def test_csv_report(image):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--csv"])
    assert r.returncode == 0, r.stderr
    header, row = r.stdout.splitlines()
    cols = dict(zip(header.split(","), row.split(",")))
    assert cols["status"] == "0" and cols["app"] == "selftest" and cols["accel"] == "tcg"


def test_accel_auto_probes_kvm_and_says_why_it_falls_back(image):
    r = run_vnperf(["run", "--accel", "auto", "--quiet", "--json"])
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["accel"] in ("kvm", "tcg") and rep["accel_why"]
    notes = [l for l in r.stderr.splitlines() if l.startswith("vnperf: accel")]
    if rep["accel"] == "tcg":
        assert len(notes) == 1 and rep["accel_why"] in notes[0]
    else:
        assert notes == [] and "KVM probe guest ran selftest" in rep["accel_why"]


def test_temp_files_of_killed_runners_are_removed(image, tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale_dir = tmp_path / ("vnperf-%d-run-x" % dead.pid)
    stale_dir.mkdir()
    (stale_dir / "qmp0.sock").write_text("")
    stale_sock = tmp_path / ("vnperf-%d-passt-1.sock" % dead.pid)
    stale_sock.write_text("")
    live = tmp_path / ("vnperf-%d-run-y" % os.getpid())
    live.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp_path))
    r = run_vnperf(TCG, env=env)
    assert r.returncode == 0, r.stderr
    assert not stale_dir.exists() and not stale_sock.exists() and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name]
