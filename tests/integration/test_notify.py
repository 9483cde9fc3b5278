"""Notification modes end to end (issue 12; docs/driver.md, "Notification
modes"): exact frame counts both ways in notify=irq and notify=hybrid on
every transport (PCI modern on q35 and legacy on pc through MSI-X, MMIO
on microvm through the I/O APIC, its pin from the DSDT or, with
acpi=off, from the virtio_mmio.device= word), with the halts and
interrupts that prove the mode ran; txfull=wait halting until the TX
interrupt; the fallback to polling without MSI-X (vectors=0); EVENT_IDX
folding the device's RX notifications and, with TX completions asked for
delayed, the TX interrupts the guest takes under notify=irq; an idle
sink giving its host CPU back."""

import json

import pytest

import test_virtio as tv
import vnharness

MODES = ["irq", "hybrid"]
TRANSPORTS = ["modern", "legacy", "mmio"]


def check_mode(q, mode, halted=True):
    """q: the result's vnet.rx or vnet.tx. The mode ran and was used."""
    assert q["notify"] == mode and "notify_asked" not in q, q
    assert q["irq_vector"] >= 0x30 and q["interrupts"] > 0, q
    assert q["halts"] > 0 or not halted, q
    assert q["interrupts_per_1000"] > 0, q


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
def test_guest_to_host_exact(transport, mode):
    # TX-completion interrupts prove the mode. Whether the ring fills, so
    # that txfull=wait halts, depends on host load (once in three CI runs
    # microvm's backend kept up): the halt is asserted only when it filled.
    v = tv.guest_to_host(transport, ["notify=" + mode])
    check_mode(v["tx"], mode, halted=v["tx"]["ring_full"] > 0)
    assert v["tx"]["wait_timeouts"] == 0, v


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
def test_host_to_guest_exact(transport, mode):
    v = tv.host_to_guest(transport, ["notify=" + mode])
    check_mode(v["rx"], mode)


def test_mmio_legacy_pin_from_the_command_line():
    """microvm without ACPI: no MADT, no DSDT; the pin comes from the
    virtio_mmio.device= word and the I/O APIC from its default address."""
    v = tv.host_to_guest("mmio-legacy-noacpi", ["notify=hybrid"])
    check_mode(v["rx"], "hybrid")


def test_no_msix_falls_back_to_polling():
    """PCI with vectors=0 (what vhost-user needs under QEMU 7.2 TCG): one
    line saying why, the result says poll ran, and the counts hold."""
    b, host = tv.run_guest(["app=gen", "size=64", "count=%d" % tv.N_TX, "notify=hybrid"]
                           + tv.ADDR, "modern", {"vectors": "0"})
    assert b.code == tv.OK, b.console
    assert "rx and tx: no interrupts (no MSI-X capability (vectors=0?)): notify=poll" \
        in b.console, b.console
    v = tv.check_vnet(b.one("result"), "modern")
    for q in ("rx", "tx"):
        assert v[q]["notify"] == "poll" and v[q]["notify_asked"] == "hybrid", v
        assert v[q]["interrupts"] == 0 and v[q]["halts"] == 0, v
    assert host["vnperf"] == tv.N_TX, host


def sink_run(extra_args, words, duration=3):
    r = vnharness.run_vnperf(["run", "--json", "--quiet", "--app", "sink",
                              "--duration", str(duration)] + extra_args + ["--"] + words,
                             timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_event_idx_folds_notifications_under_irq():
    """Host -> guest, 1000 frames at RX_RATE, notify=irq.
    QEMU traces every used buffer notification its device sends
    (virtio_notify). Without EVENT_IDX (the flag stays clear) that is one
    per buffer; with it the device notifies only when its used index passes
    used_event, so buffers used before the guest took the previous ones
    share one. (What the guest takes can differ less: under TCG, QEMU
    folds the notifications that reach a vCPU still waking into one
    interrupt either way; at 10k pps the interrupt per frame without
    EVENT_IDX also slows the guest enough to lose frames.)"""
    n, per = 1000, {}
    for ev in ("on", "off"):
        cfg = ["app=sink", "count=%d" % n, "duration=30", "notify=irq"] + tv.ADDR
        args = ["--count", str(n), "--size", "64", "--rate", str(tv.RX_RATE),
                "--src-mac", tv.vnpeer.PEER_MAC, "--dst-mac", "52:54:00:00:00:01",
                "--src-ip", tv.vnpeer.PEER_IP, "--dst-ip", tv.vnpeer.GUEST_IP]
        b, host = tv.run_guest(cfg, "modern-traced", {"event_idx": ev}, "send", args,
                               start_peer_late=True)
        assert b.code == tv.OK, b.console
        res = b.one("result")
        v = tv.check_vnet(res, "modern-traced")
        # Halted before the first frame too: a share of the whole run.
        assert 0.0 < res["idle"]["share"] <= 1.0, res["idle"]
        assert ("event_idx" in v["features"]) == (ev == "on"), v
        assert v["rx"]["packets"] == n, v
        check_mode(v["rx"], "irq")
        sent = sum(1 for line in b.stderr.splitlines() if line.startswith("virtio_notify "))
        used = v["rx"]["packets"] + v["tx"]["packets"]  # lwIP's ARP frames complete too
        if ev == "off":
            assert sent == used, (sent, v)
            assert v["rx"]["used_event_suppressed"] == 0, v
        else:
            assert sent < used and v["rx"]["used_event_suppressed"] > 0, (sent, v)
        per[ev] = sent / n
    assert per["on"] < per["off"], per


def test_event_idx_cuts_tx_interrupts_under_irq():
    """Guest -> host, notify=irq txfull=wait: the interrupts the guest
    takes per frame. The TX queue asks for its notification delayed, at
    3/4 of what is out (Linux's virtqueue_enable_cb_delayed), which only
    EVENT_IDX can say: without it every completion may interrupt. The
    device completes 8 frames per tick of its TX timer (tx=timer,
    x-txburst=8: completions apart in time, as a NIC's are). With QEMU's
    default (a bottom half, 256 a round) the whole ring completes under
    one lock hold or in rounds the vCPU may not get between, and TCG folds
    the notifications into about one interrupt per ring either way."""
    per = {}
    for ev in ("on", "off"):
        words = ["notify=irq", "txfull=wait"] + ([] if ev == "on" else ["features=-event_idx"])
        v = tv.guest_to_host("modern", words, {"tx": "timer", "x-txburst": "8"})
        assert ("event_idx" in v["features"]) == (ev == "on"), v
        check_mode(v["tx"], "irq", halted=v["tx"]["ring_full"] > 0)
        assert v["tx"]["wait_timeouts"] == 0, v
        per[ev] = v["tx"]["interrupts_per_1000"]
    assert per["on"] * 2 < per["off"], per


def test_idle_sink_gives_the_cpu_back():
    """Next to no traffic (the peer sends 10 frames a second over dgram):
    hybrid halts, its vCPU thread uses under 10% of a host CPU (the
    runner's per-thread figure); the polled sink on the same setup spins."""
    pct = {}
    for mode in ("hybrid", "poll"):
        rep = sink_run(["--backend", "dgram", "--rate", "10"], ["notify=" + mode])
        pct[mode] = rep["cpu"]["roles"]["vcpu"]["pct"]
        idle = rep["guests"][-1]["result"]["idle"]
        if mode == "hybrid":
            assert idle["share"] > 0.9 and idle["halts"] > 0, idle
    assert pct["hybrid"] < 10.0, pct
    assert pct["poll"] > 30.0, pct


def test_rx_coalesce_folds_wakes_and_bounds_the_halt():
    """rx_coalesce= (docs/driver.md, "Notification modes"), over dgram on
    microvm (virtio-mmio, EVENT_IDX). At 20k pps a hybrid sink without it
    wakes on an interrupt every few frames; with rx_coalesce=64 the
    interrupt comes 64 frames on, and the 1 ms limit ends most halts
    first: under a quarter of the interrupts per frame. At 50 pps with
    rx_coalesce=512 the interrupt never comes (half the ring is the cap:
    fewer frames than that in the run), so every frame is taken by a halt
    that rx_coalesce_us=2000 ended: hundreds of halts a second, none lost."""
    per = {}
    for words in (["notify=hybrid"], ["notify=hybrid", "rx_coalesce=64"]):
        rep = sink_run(["--backend", "dgram", "--rate", "20k", "--size", "60"], words)
        rx = rep["guests"][-1]["result"]["vnet"]["rx"]
        assert rx["packets"] > 10000, rx
        per[len(words)] = rx["interrupts_per_1000"]
    assert rx["notify"] == "hybrid" and rx["halts"] > 0, rx
    # each interrupt comes 64 frames after the halt armed it: a bound
    assert per[2] <= 1000 / 64, per
    # a starved vCPU finds many frames per wake without rx_coalesce too
    # (CI beside builds: 10.9 per 1000): the fold shows where it did not
    if per[1] > 2 * 1000 / 64:
        assert per[2] * 4 < per[1], per
    rep = sink_run(["--backend", "dgram", "--rate", "50", "--size", "60"],
                   ["notify=hybrid", "rx_coalesce=512", "rx_coalesce_us=2000"])
    res = rep["guests"][-1]["result"]
    rx = res["vnet"]["rx"]
    v = res["vnet"]
    assert v["rx_coalesce"] == 512 and v["rx_coalesce_us"] == 2000, v
    h2g = rep["counts"]["directions"]["host->guest"]
    assert h2g["sent"] >= 100 and h2g["lost"] == 0 and rx["packets"] == h2g["sent"], h2g
    assert rx["interrupts"] <= 2, rx  # the line is shared with TX (virtio-mmio)
    assert rx["halts"] > 300 * res["duration_ns"] / 1e9, (rx, res["duration_ns"])


@pytest.mark.parametrize("transport", ["modern", "mmio"])
def test_oneshot_timer_rate_from_the_boots_window(transport):
    """TCG's default CPU has no TSC-deadline: the one-shot timer's rate is
    counted over the boot's TSC calibration window, not a wait of its own
    when the first queue asks for interrupts; QEMU's local APIC counts at
    1 GHz (divide by 1)."""
    b, _ = tv.run_guest(["app=gen", "size=64", "count=%d" % tv.N_TX, "notify=hybrid"] + tv.ADDR,
                        transport)
    assert b.code == 0, b.console
    line = [l for l in b.console.splitlines() if l.startswith("irq: timer")]
    assert len(line) == 1 and line[0].endswith(" Hz (from the boot's TSC window)"), line
    hz = int(line[0].split()[3])
    assert abs(hz / 1e9 - 1) < 0.001, line
