"""Issue 6: the same kernel boots from UEFI firmware (OVMF, q35, TCG)
through build/vnperf.efi on build/esp.img, with the config from fw_cfg or
from the image's load options. Each OVMF boot costs about 4 s (9 s through
the EFI shell), so there are few of them."""

import os
import re
import subprocess

import pytest

import vnharness
from vnharness import guest, qemucmd
from vnperflib.run import peer as vnpeer

OVMF = "/usr/share/ovmf/OVMF.fd"
ESP = os.path.join(vnharness.BUILD, "esp.img")
EFI_APP = os.path.join(vnharness.BUILD, "vnperf.efi")

# guest exit codes, kernel/exit.h
OK, CONFIG, FAULT, OOM = 0, 2, 3, 5


def uefi_argv(argv, esp):
    """The PVH command line with -kernel swapped for firmware and the ESP.
    snapshot=on: the image is never written, so boots can share it."""
    i = argv.index("-kernel")
    return argv[:i] + ["-bios", OVMF, "-drive", "format=raw,file=%s,snapshot=on" % esp] + \
        argv[i + 2:]


def uefi_guest(config=(), esp=ESP, nics=(), memory=128):
    if isinstance(config, str):
        config = config.split()
    spec = qemucmd.GuestSpec(vnharness.IMAGE, machine="q35", memory_mb=memory, accel="tcg",
                             config=config, nics=nics, name="vnperf-uefi-test")
    g = guest.Guest(spec)
    g.argv = uefi_argv(g.argv, esp)
    return g


def uefi_boot(config=(), esp=ESP, timeout=60, memory=128):
    g = uefi_guest(config, esp, memory=memory)
    with vnharness.Session() as s:
        g.start(s)
        guest.pump([g], timeout)
    return vnharness.Boot(g)


@pytest.fixture(scope="module")
def esp():
    for f in (ESP, EFI_APP, OVMF):
        assert os.path.isfile(f), "%s missing: run make (and tools/deps.sh for OVMF)" % f
    return ESP


def shell_esp(tmp_path, command):
    """An ESP without EFI/BOOT/BOOTX64.EFI: OVMF falls back to its built-in
    shell, which runs startup.nsh, so the app gets real load options."""
    img = str(tmp_path / "shell-esp.img")
    nsh = tmp_path / "startup.nsh"
    nsh.write_text("fs0:\r\n%s\r\n" % command)
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1")
    subprocess.run(["truncate", "-s", "16M", img], check=True)
    subprocess.run(["mformat", "-i", img, "-T", "32768", "-h", "64", "-s", "32", "-c", "4", "::"],
                   check=True, env=env)
    subprocess.run(["mcopy", "-i", img, EFI_APP, "::/vnperf.efi"], check=True, env=env)
    subprocess.run(["mcopy", "-i", img, str(nsh), "::/startup.nsh"], check=True, env=env)
    return img


def test_boots_and_exits_ok(esp):
    b = uefi_boot("app=selftest", esp)
    assert b.code == OK, b.console
    boot = b.one("boot")
    assert boot["boot_path"] == "uefi"
    assert boot["acpi"] is True
    assert boot["ram_bytes"] > 100 * 2**20
    assert b.one("config") == {"type": "config", "source": "fw_cfg", "line": "app=selftest"}
    assert b.one("ready")["app"] == "selftest"
    assert b.one("result")["ok"] is True
    assert b.one("exit") == {"type": "exit", "code": 0, "reason": "ok"}


def test_bad_config_gives_config_error(esp):
    b = uefi_boot("size=12", esp)
    assert b.code == CONFIG, b.console
    err = b.one("error")
    assert err["reason"] == "config_error"
    assert "size=12" in err["message"]
    assert not b.msgs("ready")


def test_fault_dump(esp):
    b = uefi_boot("app=fault fault=pf", esp)
    assert b.code == FAULT, b.console
    err = b.one("error")
    assert err["vector"] == 14
    assert err["cr2"] == 0x7e0000000000
    assert "FAULT: vector 14" in b.console
    for reg in ("rip", "cr2", "rsp", "rax", "r15"):
        assert reg in b.console


def test_kernel_range_taken_is_a_clear_error(esp):
    """With 48 MiB OVMF keeps memory inside the kernel's link range (its own
    data, or vnperf.efi itself at about 1 MiB, depending on the image's
    size): the fixed-address allocation fails, the loader names the range
    and who holds it, and QEMU exits with code 5."""
    b = uefi_boot("app=selftest", esp, memory=48)
    assert b.code == OOM, b.console
    assert "vnperf.efi: error: kernel range 0x100000-" in b.console
    assert "is not free" in b.console
    assert re.search(r"vnperf\.efi:   0x[0-9A-F]+-0x[0-9A-F]+ is firmware memory \((LoaderCode|"
                     r"BootServicesData|BootServicesCode|LoaderData)\)", b.console), b.console
    assert not b.msgs("boot")


def test_gen_sends_exactly_n_frames_to_the_peer(esp, peer):
    """app=gen over virtio-net-pci (modern) under OVMF: the host peer counts
    exactly count= frames, in order, none lost or doubled."""
    n = 3000
    q, p = vnharness.free_udp_ports(2)
    nic = qemucmd.Nic(vnharness.dgram_netdev(q, p), "52:54:00:00:00:01")
    cfg = ["app=gen", "size=64", "count=%d" % n, "ip=" + vnpeer.GUEST_IP,
           "dst_ip=" + vnpeer.PEER_IP, "dst_mac=" + vnpeer.PEER_MAC]
    g = uefi_guest(cfg, esp, nics=[nic])
    with vnharness.Session() as s:
        pr = vnpeer.Peer(s, peer, "count", p, q)
        pr.start()
        g.start(s)
        guest.pump([g], 60)
        host = pr.finish()
    b = vnharness.Boot(g)
    assert b.code == OK, b.console
    assert b.one("boot")["boot_path"] == "uefi"
    res = b.one("result")
    assert res["packets"] == n
    assert res["vnet"]["dev"].endswith("modern"), res["vnet"]
    assert res["vnet"]["tx"]["dropped"] == 0
    assert host["vnperf"] == n, host
    assert host["sizes"].get("64") == n, host
    stream = host["streams"][0]
    assert (stream["unique"], stream["lost"], stream["dup"]) == (n, 0, 0), host


@pytest.mark.timeout_s(120)
def test_load_options_from_the_shell(esp, tmp_path):
    """The shell passes "vnperf.efi key=value ..."; the loader drops its own
    name and hands the rest over as the command line."""
    img = shell_esp(tmp_path, "vnperf.efi app=selftest seed=7")
    b = uefi_boot((), img, timeout=90)
    assert b.code == OK, b.console
    assert b.one("config") == {"type": "config", "source": "cmdline",
                               "line": "app=selftest seed=7"}
    assert b.one("boot")["boot_path"] == "uefi"


@pytest.mark.slow
@pytest.mark.timeout_s(120)
def test_loader_error_leaves_qemu_with_its_code(esp, tmp_path):
    """A loader error under QEMU ends the run with the kernel's exit codes
    instead of falling back to the firmware's boot menu."""
    img = shell_esp(tmp_path, "vnperf.efi app=selftest " + "x=y " * 300)
    b = uefi_boot((), img, timeout=90)
    assert b.code == CONFIG, b.console
    assert "vnperf.efi: error: command line longer than 1023 bytes" in b.console
    assert not b.msgs("boot")
