"""Issue 25's three-guest benchmark (bench/bench_mq_guests.py): what DPDK's
testpmd printed inside the Linux guest (bench/testpmdlog.py), pktgen's
per-queue lines added up, the host's per-queue counts turned into rates,
and the table's ratios."""

import os
import sys

import pytest

import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import bench_mq_guests  # noqa: E402
import benchlib  # noqa: E402
import linuxguest  # noqa: E402
import testpmdlog  # noqa: E402

# testpmd 22.11 txonly with two queues, non-interactive (--stats-period=1)
# and stopped by SIGINT, as /init prints it (its periodic block shortened).
GUEST_2Q = """@lnx type=ready uptime=30.10 mode=testpmd
@lnx type=testpmd-log begin
txonly packet forwarding - ports=1 - cores=2 - streams=2 - NUMA support enabled
\x1b[2J\x1b[1;1H
Port statistics ====================================
  ######################## NIC statistics for port 0  ########################
  TX-packets: 15906      TX-errors: 0          TX-bytes:  1017984

  Throughput (since last show)
  Rx-pps:            0          Rx-bps:            0
  Tx-pps:        15679          Tx-bps:      8028128
  ############################################################################
Port statistics ====================================
  Rx-pps:            0          Rx-bps:            0
  Tx-pps:       259468          Tx-bps:    132847616

Telling cores to stop...
Waiting for lcores to finish...

  ------- Forward Stats for RX Port= 0/Queue= 0 -> TX Port= 0/Queue= 0 -------
  RX-packets: 0              TX-packets: 591936         TX-dropped: 12

  ------- Forward Stats for RX Port= 0/Queue= 1 -> TX Port= 0/Queue= 1 -------
  RX-packets: 0              TX-packets: 680288         TX-dropped: 0

  ---------------------- Forward statistics for port 0  ----------------------
  RX-packets: 0              RX-dropped: 0             RX-total: 0
  TX-packets: 1272224        TX-dropped: 12            TX-total: 1272236
  ----------------------------------------------------------------------------

  +++++++++++++++ Accumulated forward statistics for all ports+++++++++++++++
  RX-packets: 0              RX-dropped: 0             RX-total: 0
  TX-packets: 1272224        TX-dropped: 12            TX-total: 1272236
  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++

Bye...
@lnx type=testpmd-log end
@lnx type=exit code=0"""


def test_guest_testpmd_log_is_the_text_between_its_lines():
    lines = GUEST_2Q.splitlines()
    text = testpmdlog.log_text(line + "\r" for line in lines)
    assert text.startswith("txonly packet forwarding") and text.endswith("Bye...")
    # no end line (the guest died in it): no log
    assert testpmdlog.log_text(lines[:-3]) is None
    assert testpmdlog.log_text(["@lnx type=testpmd-log end"]) is None


def test_guest_testpmd_figures_per_queue_and_in_total():
    f = testpmdlog.figures(testpmdlog.log_text(GUEST_2Q.splitlines()), 2)
    assert f == {"tx_packets": 1272224, "tx_dropped": 12, "tx_pps": [15679, 259468],
                 "queues": [{"queue": 0, "tx_packets": 591936},
                            {"queue": 1, "tx_packets": 680288}]}


def test_guest_testpmd_one_queue_is_the_port_and_nothing_is_none():
    one = "\n".join(line for line in GUEST_2Q.splitlines() if "Queue=" not in line)
    f = testpmdlog.figures(one, 1)
    assert f["queues"] == [{"queue": 0, "tx_packets": 1272224}]
    # a run that never stopped printed no forward statistics
    assert testpmdlog.figures("Tx-pps: 5\n", 1) == {
        "tx_packets": None, "tx_dropped": None, "queues": None, "tx_pps": [5]}
    # two queues but no stream blocks: no per-queue figures
    assert testpmdlog.figures(one, 2)["queues"] is None


def test_guest_testpmd_counters_are_checked_as_u64():
    with pytest.raises(Exception, match="u64"):
        testpmdlog.figures("Tx-pps: %d\n" % 2 ** 64, 1)


def test_pktgen_queue_lines_add_up_and_the_longest_thread_is_the_time():
    per = [{"type": "pktgenq", "q": "0", "sofar": "100", "usec": "2000000", "pps": "50",
            "errors": "0"},
           {"type": "pktgenq", "q": "1", "sofar": "90", "usec": "2500000", "pps": "36",
            "errors": "1"}]
    f = linuxguest.pktgen_figures(per, 64, 32)
    assert (f["guest_packets"], f["guest_pps"], f["guest_seconds"], f["tx_errors"]) == (
        190, 86, 2.5, 1)
    assert f["guest_queues"] == [{"queue": 0, "packets": 100, "pps": 50},
                                 {"queue": 1, "packets": 90, "pps": 36}]
    assert linuxguest.pktgen_figures([], 64, 32)["guest_packets"] is None


def test_testpmd_job_asks_for_its_queues_and_refuses_a_machine_without_pci():
    job = linuxguest.Testpmd("vhost-user", machine="q35", duration=7, queues=2, smp=2)
    assert job.words() == ["lnx.size=64", "lnx.burst=32", "lnx.t=7", "lnx.queues=2",
                           "lnx.hugepages=%d" % linuxguest.DPDK_HUGEPAGES]
    assert job.initrd == linuxguest.INITRD_DPDK and job.cpu_model == ["-cpu", "max"]
    with pytest.raises(ValueError, match="PCI"):
        linuxguest.Testpmd("vhost-user", machine="microvm")
    with pytest.raises(ValueError):
        linuxguest.Pktgen("vhost-user", queues=0)
    assert "lnx.queues=2" in linuxguest.Pktgen("vhost-user", queues=2).words()


def test_host_counts_per_queue_become_rates_per_pair():
    host = {"rx_frames": 1001, "queues": [{"queue": 0, "rx_packets": 600},
                                          {"queue": 1, "rx_packets": 400}]}
    assert bench_mq_guests.host_counts(host, 2) == [600, 400]
    assert bench_mq_guests.host_counts(host, 1) == [1001]
    assert bench_mq_guests.host_counts({"rx_frames": 5}, 2) is None
    f = bench_mq_guests.host_figures([600, 400], 2.0)
    assert f == {"q0_pps": 300.0, "q1_pps": 200.0, "pps": 500.0, "pps_per_qp": 250.0}
    assert "why" in bench_mq_guests.host_figures(None, 2.0)
    assert "why" in bench_mq_guests.host_figures([600, None], 2.0)
    assert "why" in bench_mq_guests.host_figures([600], None)


def test_each_guests_report_gives_the_same_figures():
    rep = {"status": 0, "metrics": {"duration_s": 4.0},
           "host": {"queues": [{"rx_packets": 400}, {"rx_packets": 800}]},
           "cpu": {"roles": {"vcpu": {"pct": 150.0}, "testpmd": {"pct": 50.0}}}}
    f = bench_mq_guests.vnperf_figures(rep, 2)
    assert (f["pps_per_qp"], f["q1_pps"], f["cpu_vcpu"], f["cpu_total"]) == (150, 200, 150, 200)
    res = {"status": 0, "guest_seconds": 2.0, "guest_pps": 99.0, "host": {"rx_frames": 300},
           "cpu_pct": {"vcpu": 90.0, "main": 1.0}}
    f = bench_mq_guests.linux_figures(res, 1)
    assert (f["pps"], f["pps_per_qp"], f["guest_pps"], f["cpu_main"]) == (150, 150, 99, 1)
    assert bench_mq_guests.vnperf_figures({"status": 70, "why": "x"}, 1) == {
        "why": "status 70: x"}
    assert "why" in bench_mq_guests.linux_figures({"status": 1, "why": "boom"}, 2)


PER_THREAD = [{"role": "main", "name": "qemu-system-x86", "tid": 10, "pct": 0.4},
              {"role": "qemu-other", "name": "qemu-system-x86", "tid": 11, "pct": 0.1},
              {"role": "testpmd", "name": "dpdk-testpmd", "tid": 20, "pct": 0.2},
              {"role": "testpmd", "name": "rte-worker-1", "tid": 21, "pct": 97.0},
              {"role": "testpmd", "name": "rte_mp_handle", "tid": 22, "pct": 0.0},
              {"role": "vcpu", "name": "CPU 0/TCG", "tid": 12, "pct": 99.0},
              {"role": "vcpu", "name": "CPU 1/TCG", "tid": 13, "pct": 55.5}]


def test_each_thread_of_the_roles_is_a_figure_of_its_own():
    """Issue 25: CPU per thread beside every rate (each vCPU thread, QEMU's
    main loop, each testpmd thread), from the runner's accounting
    (cpu.per_thread) in vnperf's report and the Linux guest's result."""
    rep = {"status": 0, "metrics": {"duration_s": 1.0}, "host": {"rx_frames": 5},
           "cpu": {"roles": {"vcpu": {"pct": 154.5}}, "per_thread": PER_THREAD}}
    f = bench_mq_guests.vnperf_figures(rep, 1)
    threads = {k: v for k, v in f.items() if k.startswith("thread:")}
    assert threads == {"thread:main:qemu-system-x86": 0.4, "thread:testpmd:dpdk-testpmd": 0.2,
                       "thread:testpmd:rte-worker-1": 97.0,
                       "thread:testpmd:rte_mp_handle": 0.0,
                       "thread:vcpu:CPU 0/TCG": 99.0, "thread:vcpu:CPU 1/TCG": 55.5}
    res = {"status": 0, "guest_seconds": 1.0, "host": {"rx_frames": 5},
           "cpu": {"roles": {}, "per_thread": PER_THREAD}}
    assert {k: v for k, v in bench_mq_guests.linux_figures(res, 1).items()
            if k.startswith("thread:")} == threads
    # two threads of one name in a role: numbered in thread id order
    two = [{"role": "vcpu", "name": "CPU 0/KVM", "tid": t, "pct": p} for t, p in ((7, 1), (9, 2))]
    assert benchlib.thread_figures({"cpu": {"per_thread": two}}, ("vcpu",)) == {
        "thread:vcpu:CPU 0/KVM": 1, "thread:vcpu:CPU 0/KVM#2": 2}
    assert benchlib.thread_figures({"cpu": None}, ("vcpu",)) == {}


def test_the_thread_cell_names_each_vcpu_the_main_loop_and_busy_testpmd_threads():
    per = {"thread:vcpu:CPU 1/TCG": series(50, 60), "thread:vcpu:CPU 0/TCG": series(99, 97),
           "thread:main:qemu-system-x86": series(0.4, 0.2),
           "thread:testpmd:rte-worker-1": series(97, 95),
           "thread:testpmd:rte_mp_handle": series(0.0, 0.1), "cpu_vcpu": series(150)}
    assert benchlib.threads_cell(per, bench_mq_guests.ROLES, always=("vcpu", "main")) == \
        "CPU 0/TCG 98, CPU 1/TCG 55, main 0, rte-worker-1 96"
    assert benchlib.threads_cell({}, bench_mq_guests.ROLES) == "-"


def series(*values):
    s = benchlib.Series()
    for v in values:
        s.add(v)
    return s


def test_table_has_a_row_per_guest_with_vnperfs_ratio_to_it():
    def side(qp, q0, q1=None):
        d = {"pps_per_qp": series(*qp), "q0_pps": series(*q0), "cpu_vcpu": series(100, 120)}
        if q1:
            d["q1_pps"] = series(*q1)
        return d
    failed = {"_runs": benchlib.Series()}
    failed["_runs"].add(None, "status 1: testpmd exited")
    res = {(2,): {"vnperf": side((900e3, 1.1e6), (800e3, 1e6), (1e6, 1.2e6)),
                  "linux": side((100e3, 100e3), (100e3, 100e3), (100e3, 100e3)),
                  "dpdk": failed}}
    res[(2,)]["vnperf"]["thread:vcpu:CPU 0/TCG"] = series(90, 100)
    rows = bench_mq_guests.table([(2,)], res)
    assert rows[0] == ("2", "vnperf", "1M ±20%", "900k ±22%/1.1M ±18%", "-", "110/-/-",
                       "CPU 0/TCG 95")
    assert rows[1] == ("2", "linux", "100k ±0%", "100k ±0%/100k ±0%", "10.00x", "110/-/-", "-")
    assert rows[2] == ("2", "dpdk", "FAIL", "-/-", "-", "-/-/-", "-")
    assert len(bench_mq_guests.HEADER) == len(rows[0])
