"""Issue 2: the image boots on every machine type, reads its config from
both places, reports faults, bad config and out of memory with their exit
codes, and measures the TSC right."""

import pytest

import vnharness

# guest exit codes, kernel/exit.h
OK, CONFIG, FAULT, OOM = 0, 2, 3, 5


@pytest.mark.parametrize("machine", ["microvm", "q35", "pc"])
def test_boots_and_exits_ok(machine):
    b = vnharness.boot("app=selftest", machine=machine, timeout=60)
    assert b.code == OK, b.console
    boot = b.one("boot")
    assert boot["boot_path"] == "pvh"
    assert boot["ram_bytes"] > 100 * 2**20
    ready = b.one("ready")
    assert ready["app"] == "selftest"
    res = b.one("result")
    assert res["ok"] is True
    assert res["heap_bytes_allocated"] > 0
    assert b.one("exit") == {"type": "exit", "code": 0, "reason": "ok"}
    assert b.one("config")["source"] == "fw_cfg"


def test_config_from_command_line():
    b = vnharness.boot((), append="app=selftest seed=7", timeout=30)
    assert b.code == OK, b.console
    cfg = b.one("config")
    assert cfg["source"] == "cmdline"
    assert cfg["line"] == "app=selftest seed=7"


def test_command_line_too_long_refused():
    """Issue 13 F1: a line past 1023 bytes was cut (duration=30 ran as
    duration=3); now it is refused with one line and exit 2."""
    b = vnharness.boot((), append=" " * 1013 + "duration=30", timeout=30)
    assert b.code == CONFIG, b.console
    assert "longer than 1023 bytes" in b.one("error")["message"]
    b = vnharness.boot((), append=" " * 10000 + "app=gen", timeout=30)
    assert b.code == CONFIG, b.console


def test_command_line_of_1023_bytes_taken_whole():
    line = "app=selftest" + " " * (1023 - len("app=selftestseed=7")) + "seed=7"
    assert len(line) == 1023
    b = vnharness.boot((), machine="q35", append=line, timeout=30)
    assert b.code == OK, b.console
    assert b.one("config")["line"] == line


def test_fw_cfg_wins_and_says_so():
    b = vnharness.boot("app=selftest", append="app=fault", timeout=30)
    assert b.code == OK, b.console
    assert "fw_cfg wins" in b.console
    assert b.one("config")["line"] == "app=selftest"


@pytest.mark.parametrize("line,words", [
    ("app=nosuch", ["app=nosuch", "no such app", "selftest"]),
    ("size=12", ["size=12", "out of range", "60..65535"]),
    ("txfull=sometimes", ["txfull=sometimes", "wait|drop"]),
    ("color=blue", ["unknown key", "color"]),
    ("ring=1000", ["ring=1000", "power of two"]),
    ("dst_ip=10.1.2", ["dst_ip=10.1.2", "IPv4"]),
    # issue 13 F2: wrapped to 290448384 bit/s; cut to 1 pps
    ("app=gen rate=18446744074gbps", ["18446744074gbps", "above 1gpps / 1tbps"]),
    ("app=gen rate=1.5", ["rate 1.5", "not a whole number of packets"]),
])
def test_config_error(line, words):
    b = vnharness.boot(line, timeout=30)
    assert b.code == CONFIG, b.console
    err = b.one("error")
    assert err["reason"] == "config_error"
    for w in words:
        assert w in err["message"], err
    assert "ready" not in [m["type"] for m in (l.msg for l in b.lines) if m]


@pytest.mark.parametrize("kind,vector", [("pf", 14), ("ud", 6), ("gp", 13), ("de", 0)])
def test_fault_dump(kind, vector):
    b = vnharness.boot("app=fault fault=%s" % kind, timeout=30)
    assert b.code == FAULT, b.console
    err = b.one("error")
    assert err["vector"] == vector
    assert "FAULT: vector %d" % vector in b.console
    for reg in ("rip", "cr2", "rsp", "rax", "r15"):
        assert reg in b.console
    if kind == "pf":
        assert err["cr2"] == 0x7e0000000000


def test_tsc_matches_host_clock():
    """The guest waits 3 s by its TSC; the host times the two marker lines."""
    b = vnharness.boot("app=selftest duration=3", machine="q35", timeout=60)
    assert b.code == OK, b.console
    marks = {l.msg["name"]: l for l in b.lines if l.msg and l.msg["type"] == "mark"}
    host_s = marks["wait_end"].t - marks["wait_start"].t
    guest_s = (marks["wait_end"].msg["t_ns"] - marks["wait_start"].msg["t_ns"]) / 1e9
    assert abs(guest_s - 3.0) < 0.01
    assert abs(host_s / guest_s - 1.0) < 0.05, (host_s, guest_s, b.one("boot"))


@pytest.mark.parametrize("machine", ["microvm", "q35"])
def test_tsc_calibration_method(machine):
    b = vnharness.boot("app=selftest", machine=machine, timeout=30)
    boot = b.one("boot")
    # microvm has no PM timer: PIT channel 0; q35 has an ACPI PM timer.
    assert boot["tsc_method"] == ("pit" if machine == "microvm" else "acpi_pm_timer")
    assert 100e6 < boot["tsc_hz"] < 10e9


def test_heap_stress_and_large_allocation():
    b = vnharness.boot("app=alloc alloc_mb=64", memory=128, timeout=30)
    assert b.code == OK, b.console
    assert b.one("result")["allocated_mb"] == 64


def test_out_of_memory():
    b = vnharness.boot("app=alloc alloc_mb=200", memory=64, timeout=30)
    assert b.code == OOM, b.console
    err = b.one("error")
    assert err["reason"] == "out_of_memory"
    assert "heap exhausted" in err["message"]


def test_minimum_memory():
    """The -m lower bound documented in the README boots."""
    b = vnharness.boot("app=selftest", memory=16, timeout=30)
    assert b.code == OK, b.console
