"""Pure-logic tests of the Linux-guest baseline (bench/linuxguest.py,
docs/bench.md): its console lines, the backend's words turned into its
command line, iperf report totals, counter deltas, the host's TSC rate."""

import os
import sys

import vnpy

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
