"""Pure-logic tests of the Linux-guest baseline (bench/linuxguest.py,
docs/bench.md): its console lines, the backend's words turned into its
command line, iperf report totals, counter deltas, the host's TSC rate."""

import os
import sys
import types

import vnpy
from vnperflib import exitcodes
from vnperflib.backends.base import Backend

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import linuxguest  # noqa: E402


def test_lnx_lines_parse_to_words():
    m = linuxguest.parse_line("@lnx type=after rx_packets=12 softnet_dropped=0\r")
    assert m == {"type": "after", "rx_packets": "12", "softnet_dropped": "0"}
    assert linuxguest.parse_line("[    0.28] PCI: Fatal: No config space") is None
    assert linuxguest.parse_line("@lnx rx_packets=12") is None
    assert linuxguest.parse_line("@vnperf {\"type\":\"ready\"}") is None


def test_backend_config_becomes_lnx_words():
    words = linuxguest.lnx_words(["ip=10.0.2.15", "gw=10.0.2.2", "dst_ip=10.0.2.2",
                                  "dst_mac=02:00:00:00:00:01", "dst_port=9000"])
    assert words == ["lnx.ip=10.0.2.15/24", "lnx.gw=10.0.2.2", "lnx.peer=10.0.2.2",
                     "lnx.peer_mac=02:00:00:00:00:01", "lnx.dport=9000"]


def test_stream_total_is_all_bytes_over_the_longest_interval():
    reports = [{"id": 3, "interval": "0.0-5.0", "bytes": 500, "bps": 800},
               {"id": 4, "interval": "0.0-4.0", "bytes": 300, "bps": 600}]
    assert linuxguest.stream_total(reports) == (800, 5.0, 1280.0)
    assert linuxguest.stream_total([]) == (0, 0.0, None)


def test_rx_counters_are_deltas_of_before_and_after():
    lines = {"before": {"rx_packets": "10"}, "after": {"rx_packets": "25"}}
    assert linuxguest.counter_delta(lines, "rx_packets") == 15
    assert linuxguest.counter_delta(lines, "rx_dropped") is None


def test_host_tsc_rate_only_from_a_constant_tsc_without_cpufreq(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\ncpu MHz\t\t: 2095.993\nflags\t\t: fpu tsc constant_tsc\n"
                    "processor\t: 1\ncpu MHz\t\t: 1800.000\n")
    nofreq = str(tmp_path / "no-cpufreq")
    assert linuxguest.host_tsc_khz(str(info), nofreq) == 2095993
    assert linuxguest.host_tsc_khz(str(info), str(tmp_path)) is None
    info.write_text("cpu MHz\t\t: 2095.993\nflags\t\t: fpu tsc\n")
    assert linuxguest.host_tsc_khz(str(info), nofreq) is None
    assert linuxguest.host_tsc_khz(str(tmp_path / "none"), nofreq) is None


def test_feature_bits_are_named_bit_zero_first():
    on = {0, 1, 11, 15, 29, 32}
    bits = "".join("1" if i in on else "0" for i in range(64))
    assert linuxguest.feature_names(bits) == ["csum", "guest_csum", "host_tso4", "mrg_rxbuf",
                                              "event_idx", "version_1"]
    assert linuxguest.feature_names("00001") == ["bit4"]
    assert linuxguest.feature_names(None) == []


class FakeGuest:
    """What Run.result reads of a finished vnperflib Guest."""

    def __init__(self, qemu_status, timed_out=False):
        self.qemu_status = qemu_status
        self.timed_out = timed_out
        self.wall_s = 0.5
        self.console = types.SimpleNamespace(lines=[])

    def why_no_exit(self):
        return "linux: QEMU exited with status %s without a guest exit" % self.qemu_status


def finished_run(qemu_status, lines, timed_out=False):
    r = linuxguest.Ready("hub")
    r.g = FakeGuest(qemu_status, timed_out)
    r.be = Backend(None)
    r.lines = lines
    return r.result({})


def test_qemu_failing_with_status_1_is_no_guest_exit_not_code_0():
    res = finished_run(1, {})
    assert res["status"] == exitcodes.RUNNER_NO_GUEST_EXIT
    assert "without a guest exit" in res["why"]
    assert finished_run(1, {"exit": {"type": "exit", "code": "0"}})["status"] == 0


def test_guest_error_line_and_timeout_give_their_status():
    res = finished_run(5, {"exit": {"code": "2"}, "error": {"msg": "bad_lnx.ip_x"}})
    assert res["status"] == 2 and res["why"] == "Linux guest: exit 2: bad lnx.ip x"
    assert finished_run(None, {}, timed_out=True)["status"] == exitcodes.RUNNER_TIMEOUT


def test_rx_over_vhost_user_is_fed_like_the_sink():
    """The Linux guest's flood over vhost-user comes from the same feeder as
    vnperf's sink: vnperf-peer-dpdk, or testpmd when asked."""
    from vnperflib.backends import testpmd, vhostpeer
    run = linuxguest.make_run("rx", "vhost-user", size=60, rate="100k")
    assert type(linuxguest.make_backend("vhost-user", run.opts())) is vhostpeer.VhostUserPeer
    run = linuxguest.make_run("rx", "vhost-user", size=60, rate="100k", feeder="testpmd")
    assert type(linuxguest.make_backend("vhost-user", run.opts())) is testpmd.VhostUser


def test_rx_queue_size_is_the_nics():
    """bench_ndr_sink --queue-size: the Linux guest's NIC gets QEMU's
    rx_queue_size/tx_queue_size as vnperf's does."""
    from vnperflib.backends.base import nic_props
    run = linuxguest.make_run("rx", "vhost-user", size=60, rate="100k", queue_size=1024)
    props = nic_props(run.opts())
    assert props["rx_queue_size"] == 1024 and props["tx_queue_size"] == 1024
    assert "rx_queue_size" not in nic_props(linuxguest.make_run("rx", "dgram").opts())


def test_place_pins_the_vcpu_main_loop_and_host_end_and_nices_them(monkeypatch):
    monkeypatch.setattr(linuxguest.os, "listdir", lambda path: ["20", "21"])
    pinned, niced = {}, {}
    monkeypatch.setattr(linuxguest.pinning.os, "sched_setaffinity",
                        lambda tid, cpus: pinned.__setitem__(tid, set(cpus)))
    monkeypatch.setattr(linuxguest.priority, "apply", lambda pid, n: niced.__setitem__(pid, n))
    pins = {"vcpu": {1}, "main": {0}, "backend": {0}}
    # The vCPU thread ids as the runner's QMP lookup gives them.
    out = linuxguest.place(pins, {"guest": -5, "backend": -3}, 10, {0: 11}, [20])
    assert pinned == {10: {0}, 11: {1}, 20: {0}, 21: {0}}
    assert niced == {10: -5, 20: -3}
    assert out == {"pinned": {"main": [0], "vcpu": [1], "backend": [0]},
                   "nice": {"backend": -3, "guest": -5}}
    assert linuxguest.place({}, {}, 10, {0: 11}, [20]) == {}


def standin_job(tmp_path, monkeypatch, **kw):
    """A ready job whose QEMU is a script: the Linux guest's boot, ready
    (eth0 up) and exit lines, then QEMU's status for exit code 0."""
    for name in ("KERNEL", "INITRD"):
        p = tmp_path / name.lower()
        p.write_bytes(b"\0")
        monkeypatch.setattr(linuxguest, name, str(p))
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\necho '@lnx type=boot uptime=0.5'\n"
                    "echo '@lnx type=ready uptime=1.0 mode=ready'\n"
                    "echo '@lnx type=exit code=0'\nexit 1\n")
    os.chmod(qemu, 0o755)
    real = linuxguest.guest.Guest
    monkeypatch.setattr(linuxguest.guest, "Guest",
                        lambda spec, label: real(spec, qemu=str(qemu), label=label))
    run = linuxguest.make_run("ready", "hub", duration=1, **kw)
    events = []
    run.on_ready = lambda: events.append(("host end", run.g.proc is not None,
                                          "ready" in run.lines))
    return run, events


def test_a_job_boots_the_guest_then_starts_the_host_end_once_its_nic_is_up(tmp_path,
                                                                          monkeypatch):
    run, events = standin_job(tmp_path, monkeypatch)
    res = run.execute()
    assert res["status"] == 0, res["why"]
    # The orchestrator started the host end once, after the guest's ready line.
    assert events == [("host end", True, True)]
    assert run.g.spec.qmp_path.endswith("qmp.sock")


def test_a_pinned_job_without_qmp_fails_in_one_line(tmp_path, monkeypatch):
    run, events = standin_job(tmp_path, monkeypatch, pins={"vcpu": {0}})
    res = run.execute()
    assert res["status"] == exitcodes.RUNNER_BACKEND_FAILED
    assert res["why"].startswith("Linux guest: --pin needs its vCPU threads: cannot connect "
                                 "to QMP at ")
    assert "\n" not in res["why"] and events == []
