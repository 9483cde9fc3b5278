"""Issue 25, the SMP guest: application processors from the ACPI MADT,
started with INIT-SIPI-SIPI on microvm, q35 and pc (PVH) and under OVMF
(UEFI), vcpus= and its default, and the two ways a start fails: more
CPUs than the machine has (config error, status 2) and an AP that never
answers (vcpu_test=nosipi: INIT without SIPI; status 10 within the
timeout, not a hang)."""

import time

import pytest

import test_uefi
import vnharness
from vnharness import guest

OK, CONFIG, CPU = 0, 2, 10  # kernel/exit.h


def boot(config, machine="microvm", smp=2):
    return vnharness.boot(config, machine=machine, timeout=60, extra=["-smp", str(smp)])


def check_up(b, n, listed):
    assert b.code == OK, b.console
    smp = b.one("smp")
    assert smp["listed"] == listed and smp["up"] == n, smp
    cpus = smp["cpus"]
    assert [c["cpu"] for c in cpus] == list(range(n))
    assert len({c["apic_id"] for c in cpus}) == n
    assert cpus[0]["start_cycles"] == 0
    # INIT to the AP's first store: measured, and well inside the 2 s timeout.
    assert all(0 < c["start_ns"] < 2 * 10**9 for c in cpus[1:]), cpus
    assert "smp: %d of %d CPUs up" % (n, listed) in b.console


@pytest.mark.parametrize("machine", ["microvm", "q35", "pc"])
def test_two_cpus_up(machine):
    check_up(boot("app=selftest vcpus=2", machine), 2, 2)


def test_default_is_every_listed_cpu_capped_by_queues():
    check_up(boot("app=selftest", smp=2), 1, 2)
    check_up(boot("app=selftest queues=2", smp=3), 2, 3)
    check_up(boot("app=selftest queues=4", machine="q35", smp=3), 3, 3)


def test_aps_started_at_once():
    """Every AP's INIT goes out before any AP is waited for: each kick_ns
    (first INIT to its own) is under the first AP's start, which holds
    the two SIPI gaps (2 x 200 us)."""
    b = boot("app=selftest vcpus=4", smp=4)
    check_up(b, 4, 4)
    cpus = b.one("smp")["cpus"]
    assert cpus[1]["kick_ns"] == 0
    assert all(c["kick_ns"] < min(c["start_ns"] for c in cpus[1:]) for c in cpus[1:]), cpus


def test_more_vcpus_than_the_machine_has_is_refused():
    b = boot("app=selftest vcpus=3", smp=2)
    assert b.code == CONFIG, b.console
    assert b.one("error")["message"] == "vcpus=3: the machine has 2 CPUs (ACPI MADT; QEMU -smp)"
    assert "smp" not in [l.msg["type"] for l in b.lines if l.msg]


def test_an_ap_that_never_answers_is_status_10_not_a_hang():
    t0 = time.monotonic()
    b = boot("app=selftest vcpus=2 vcpu_test=nosipi", machine="q35")
    assert b.code == CPU, b.console
    err = b.one("error")
    assert err["reason"] == "cpu_error"
    assert "CPU 1 (APIC id 1) did not answer INIT-SIPI-SIPI within 2000 ms" in err["message"]
    assert [l for l in b.console.splitlines() if l.startswith("FATAL")] == \
        ["FATAL: " + err["message"]]
    assert time.monotonic() - t0 < 50


def test_uefi_two_cpus_up(esp):
    g = test_uefi.uefi_guest("app=selftest vcpus=2", esp)
    g.argv = g.argv + ["-smp", "2"]
    with vnharness.Session() as s:
        g.start(s)
        guest.pump([g], 90)
    b = vnharness.Boot(g)
    assert b.one("boot")["boot_path"] == "uefi"
    check_up(b, 2, 2)


esp = test_uefi.esp
