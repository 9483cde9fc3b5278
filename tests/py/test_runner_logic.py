"""Pure-logic tests of the runner library (no QEMU): exit-code mapping,
console/protocol parsing, QEMU command line, count merging, pinning specs,
/proc parsing."""

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import counts, exitcodes, hostcpu, pinning, protocol, qemucmd


@pytest.mark.parametrize("status,code", [(1, 0), (3, 1), (5, 2), (7, 3), (19, 9), (255, 127)])
def test_odd_qemu_status_is_guest_code(status, code):
    assert exitcodes.guest_code_from_qemu_status(status) == code


@pytest.mark.parametrize("status", [0, 2, 4, -9, -15, None])
def test_even_zero_or_signal_is_no_guest_exit(status):
    assert exitcodes.guest_code_from_qemu_status(status) is None


def test_runner_codes_do_not_collide_with_guest_codes():
    assert not set(exitcodes.RUNNER_CODES) & set(exitcodes.GUEST_CODES)
    assert exitcodes.status_name(2) == "config error"
    assert exitcodes.status_name(exitcodes.RUNNER_TIMEOUT).startswith("runner timeout")
    assert exitcodes.status_name(200) == "unknown (200)"
    # issue 13: the statuses the signal handler returns are all named
    import signal
    from vnperflib import proc
    for s in proc.Session.SIGNALS:
        assert proc.Interrupted(s).status in exitcodes.RUNNER_CODES, s


def test_console_splits_lines_across_chunks():
    c = protocol.Console()
    assert c.feed(b"hel") == []
    lines = c.feed(b'lo\r\n@vnperf {"type":"ready","app":"x","t_ns":5}\n@vnp')
    assert [l.text for l in lines] == ["hello", '@vnperf {"type":"ready","app":"x","t_ns":5}']
    assert lines[0].msg is None and lines[1].msg == {"type": "ready", "app": "x", "t_ns": 5}
    c.feed(b'erf {"type":"exit","code":0,"reason":"ok"}')
    last = c.close()
    assert last[0].msg["type"] == "exit"
    assert c.first("ready")["t_ns"] == 5 and c.last("exit")["code"] == 0
    assert c.problems(0) == []


@pytest.mark.parametrize("text,why", [
    ('@vnperf {"type":', "bad JSON"),
    ("@vnperf [1,2]", "not a JSON object"),
    ('@vnperf {"code":1}', 'no string "type"'),
    ('@vnperf {"type":3}', 'no string "type"'),
])
def test_bad_machine_lines_are_flagged(text, why):
    line = protocol.parse_line(text)
    assert line.msg is None and why in line.bad


def test_human_line_with_prefix_inside_is_human():
    assert protocol.parse_line('say @vnperf {"type":"x"}').msg is None


def test_invalid_utf8_does_not_break_parsing():
    c = protocol.Console()
    lines = c.feed(b"\xff\xfe boot\n")
    assert lines[0].msg is None and "boot" in lines[0].text


def test_problems_exit_line_must_match_qemu():
    c = protocol.Console()
    c.feed(b'@vnperf {"type":"exit","code":0,"reason":"ok"}\n')
    assert "QEMU reported 2" in c.problems(2)[0]
    assert c.problems(None) == []
    c2 = protocol.Console()
    assert "no exit line" in c2.problems(0)[0]
    c3 = protocol.Console()
    c3.feed(b'@vnperf {"type":"result"}\n@vnperf {"type":"result"}\n'
            b'@vnperf {"type":"exit","code":0}\n')
    assert "2 result lines" in c3.problems(0)[0]


def test_qemu_escape_doubles_commas():
    assert qemucmd.qemu_escape("a,b,,c") == "a,,b,,,,c"


def test_cmdline_has_config_serial_and_debug_exit():
    spec = qemucmd.GuestSpec("/x.elf", machine="q35", memory_mb=64, accel="tcg",
                             config=["app=gen", "imix=64:7,594:4"],
                             nics=[qemucmd.Nic("user,restrict=on", "52:54:00:00:00:01",
                                               {"vectors": 0})])
    argv = qemucmd.build(spec, "qemu")
    s = " ".join(argv)
    assert argv[:5] == ["qemu", "-M", "q35", "-accel", "tcg"]
    assert "-fw_cfg name=opt/vnperf/config,string=app=gen imix=64:7,,594:4" in s
    assert "-serial stdio" in s and "-nodefaults" in s and "-no-reboot" in s
    assert "isa-debug-exit,iobase=0xf4,iosize=0x04" in argv
    assert "-netdev user,restrict=on,id=n0" in s
    assert "virtio-net-pci,netdev=n0,id=nic0,mac=52:54:00:00:00:01,vectors=0" in argv
    assert argv[argv.index("-kernel") + 1] == "/x.elf"


def test_microvm_uses_virtio_mmio_and_no_fwcfg_when_empty():
    spec = qemucmd.GuestSpec("/x.elf", nics=[qemucmd.Nic("hubport,hubid=0", "52:54:00:00:00:02")])
    argv = qemucmd.build(spec)
    assert "-fw_cfg" not in argv
    assert "virtio-net-device,netdev=n0,id=nic0,mac=52:54:00:00:00:02" in argv


def test_shared_memory_backend_for_vhost_user():
    spec = qemucmd.GuestSpec("/x.elf", memory_mb=256, shared_mem=True)
    s = " ".join(qemucmd.build(spec))
    assert "memory-backend-memfd,id=mem,size=256M,share=on" in s and "node,memdev=mem" in s


@pytest.mark.parametrize("kw,msg", [({"machine": "isapc"}, "machine"), ({"accel": "hvf"}, "accel"),
                                    ({"memory_mb": 4}, "memory")])
def test_bad_spec_is_rejected(kw, msg):
    with pytest.raises(ValueError, match=msg):
        qemucmd.GuestSpec("/x.elf", **kw)


@pytest.mark.parametrize("word", ["noequals", "=v", "a=b c"])
def test_bad_config_words(word):
    with pytest.raises(ValueError):
        qemucmd.config_string([word])


def test_merge_config_later_wins_order_kept():
    assert qemucmd.merge_config(["app=gen", "size=64"], ["size=128", "rate=1k"]) == \
        ["app=gen", "size=128", "rate=1k"]


def test_counts_agree_on_lossless_gen():
    m = counts.merge("gen", {"packets": 1000, "bytes": 64000}, {"rx_packets": 1000,
                                                                 "rx_bytes": 64000}, True)
    assert m["agree"] and m["directions"]["guest->host"]["verdict"] == "agree"
    assert "host->guest" not in m["directions"]


def test_counts_locate_loss():
    m = counts.merge("gen", {"packets": 1000}, {"rx_packets": 900,
                                                "rx_drops": {"peer socket buffer": 60}})
    d = m["directions"]["guest->host"]
    assert not m["agree"] and d["lost"] == 100 and d["verdict"] == "lossy"
    assert "60 at peer socket buffer" in d["why"] and "40 in between" in d["why"]


def test_counts_loss_fully_located_is_lossy_not_disagree():
    m = counts.merge("sink", {"packets": 90}, {"tx_packets": 100,
                                               "tx_drops": {"QEMU socket": 10}}, lossless=True)
    d = m["directions"]["host->guest"]
    assert d["verdict"] == "lossy" and d["located"] == 10 and m["agree"] is False


def test_counts_wire_level_from_driver_counters():
    res = {"packets": 10, "vnet": {"tx": {"packets": 11}, "rx": {"packets": 2}}}
    m = counts.merge("gen", res, {"rx_packets": 10, "rx_frames": 11, "tx_frames": 2}, True)
    assert set(m["directions"]) == {"guest->host", "guest->host frames", "host->guest frames"}
    assert m["agree"] is True


def test_counts_without_host_side_is_unknown():
    assert counts.merge("gen", {"packets": 10}, {})["agree"] is None


def test_counts_two_guests():
    m = counts.merge_guests("gen", {"packets": 5, "vnet": {"tx": {"packets": 6}}},
                            {"packets": 4, "vnet": {"rx": {"packets": 5}}},
                            lossless=False, drops={"rx socket": 1})
    d = m["directions"]["tx guest->rx guest"]
    assert d["lost"] == 1 and d["located"] == 1 and d["verdict"] == "lossy"


def test_counts_lossless_path_with_loss_disagrees():
    m = counts.merge("sink", {"packets": 5}, {"tx_packets": 7}, lossless=True)
    assert m["directions"]["host->guest"]["verdict"] == "disagree"


def test_counts_more_received_than_sent_disagrees():
    m = counts.merge("gen", {"packets": 5}, {"rx_packets": 7})
    assert m["directions"]["guest->host"]["verdict"] == "disagree"


def test_counts_app_level_is_packets_wire_level_is_tx_rx_members():
    res = {"packets": 3, "tx_packets": 4, "rx_packets": 5, "vnet": {"tx": {"packets": 9}}}
    assert counts.guest_counts("reflect", res)[::2] == (3, 3)
    assert counts.guest_counts("gen", res)[::2] == (3, None)
    assert counts.guest_counts("rr", res)[::2] == (None, None)
    assert counts.vnet_count(res, "tx") == 4 and counts.vnet_count(res, "rx") == 5
    assert counts.vnet_count({"vnet": {"tx": {"packets": 9}}}, "tx") == 9


def test_pin_parse():
    assert pinning.parse("vcpu=0,main=0") == {"vcpu": {0}, "main": {0}}
    with pytest.raises(ValueError, match="role"):
        pinning.parse("gpu=0")
    with pytest.raises(ValueError, match="outside"):
        pinning.parse("vcpu=4096")
    with pytest.raises(ValueError, match="not a CPU"):
        pinning.parse("vcpu=x")


def test_proc_stat_parse_with_odd_comm():
    line = "123 (CPU 0/T) (x)) R 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0"
    assert hostcpu.parse_stat(line) == ("CPU 0/T) (x)", 300)


def test_service_demand():
    sd = hostcpu.service_demand(2.0, 1000000, 1024 * 1000)
    assert sd["us_per_packet"] == pytest.approx(2.0) and sd["us_per_kb"] == pytest.approx(2000.0)
    assert hostcpu.service_demand(1.0, 0, 0) == {"us_per_packet": None, "us_per_kb": None}


def test_counts_frames_left_on_tx_ring_are_located():
    res = {"packets": 100, "tx_packets": 101, "vnet": {"tx": {"in_flight": 30}}}
    m = counts.merge("gen", res, {"rx_packets": 70, "rx_frames": 71}, lossless=True)
    for name in ("guest->host", "guest->host frames"):
        d = m["directions"][name]
        assert d["lost"] == 30 and d["located"] == 30 and d["verdict"] == "lossy", d


@pytest.mark.parametrize("rate,size,pps", [("250k", 64, 250000), ("1.5mpps", 64, 1500000),
                                           ("100000", 64, 100000), ("1gbps", 1000, 125000),
                                           ("100mbit", 125, 100000), ("max", 64, None),
                                           (None, 64, None)])
def test_rate_for_host_sender(rate, size, pps):
    from vnperflib import peer
    assert peer.rate_pps(rate, size) == pps


def test_bad_rate_is_refused():
    from vnperflib import peer
    with pytest.raises(ValueError, match="expected"):
        peer.rate_pps("fast", 64)


def _rep(app, result, roles=None, config=(), directions=None, boot=None):
    cpu = {"roles": {k: {"pct": v, "cpu_s": 0, "threads": 1} for k, v in (roles or {}).items()}}
    return {"app": app, "backend": "dgram", "config": list(config), "cpu": cpu,
            "counts": {"directions": directions or {}},
            "guests": [{"result": result, "boot": boot or {"tsc_hz": 1000000000}}]}


def test_verdict_gen_ring_full_is_backend_bound():
    from vnperflib import verdict
    r = _rep("gen", {"duration_ns": 10 ** 9, "vnet": {"tx": {"full_wait_cycles": 5 * 10 ** 8}}},
             {"vcpu": 100, "main": 40})
    v = verdict.bottleneck(r)
    assert v["side"] == "backend" and "50%" in v["why"]


def test_verdict_gen_ring_rarely_full_is_guest_bound_and_vcpu_never_counts():
    from vnperflib import verdict
    r = _rep("gen", {"duration_ns": 10 ** 9, "vnet": {"tx": {"full_wait_cycles": 10 ** 7}}},
             {"vcpu": 100, "testpmd": 100, "main": 30})
    assert verdict.bottleneck(r)["side"] == "guest"


def test_verdict_saturated_backend_thread():
    from vnperflib import verdict
    r = _rep("gen", {"duration_ns": 10 ** 9, "vnet": {"tx": {"full_wait_cycles": 0}}},
             {"vcpu": 100, "main": 97})
    assert verdict.bottleneck(r) == {"side": "backend", "why": "main at 97% CPU"}


def test_verdict_paced_gen_is_neither():
    from vnperflib import verdict
    r = _rep("gen", {"rate_target": 10000, "rate_achieved": 9990.0, "duration_ns": 10 ** 9})
    assert verdict.bottleneck(r)["side"] == "neither"
    assert verdict.bottleneck(r)["why"].endswith("of 10000 pps)")


def test_verdict_paced_by_bit_rate_says_bits():
    """Issue 13 F2: a bit rate's verdict said pps."""
    from vnperflib import verdict
    r = _rep("gen", {"rate_unit": "bps", "rate_target": 10 ** 9, "rate_achieved": 999999000.0,
                     "duration_ns": 10 ** 9})
    assert verdict.bottleneck(r)["why"] == \
        "paced at the requested rate (999999000 of 1000000000 bit/s)"


def test_verdict_sink_drops_in_front_of_guest_is_guest_bound():
    from vnperflib import verdict
    d = {"host->guest": {"located": 10, "why": "host->guest: 10 of 100 lost (10%): 10 at X"}}
    assert verdict.bottleneck(_rep("sink", {}, {"vcpu": 100}, directions=d))["side"] == "guest"
    assert verdict.bottleneck(_rep("sink", {}, {"vcpu": 100}, config=["rate=10k"]))["side"] \
        == "neither"


def test_counts_fwd_locates_forwarder_drops():
    res = {"a_to_b": {"packets": 90, "tx_dropped": 10, "runts": 0}}
    m = counts.merge_fwd(res, {"tx_packets": 100, "rx_packets": 90}, lossless=True)
    assert m["directions"]["host->guest a"]["verdict"] == "agree"
    assert m["directions"]["guest b->host"]["verdict"] == "agree"
    e2e = m["directions"]["end to end"]
    assert e2e["lost"] == 10 and e2e["located"] == 10 and e2e["verdict"] == "lossy"


def test_iperf_csv_reports_skip_client_sums():
    from vnperflib import iperf
    text = ("20260101000000,10.0.0.1,1,10.0.0.2,5001,1,0.0-3.0,100,266\n"
            "20260101000000,10.0.0.1,2,10.0.0.2,5001,2,0.0-3.0,200,533\n"
            "20260101000000,10.0.0.1,0,10.0.0.2,5001,-1,0.0-3.0,300,800\n"
            "connect failed: Connection refused\n")
    assert [s["bytes"] for s in iperf.parse_csv_reports(text)] == [100, 200]


def test_echo_strips_firmware_terminal_escapes():
    import io
    import types
    from vnperflib import echo as vecho
    out = io.StringIO()
    opts = types.SimpleNamespace(quiet=False, raw=False, json=False, csv=False)
    echo = vecho.Echo(opts, False)
    echo.out = out
    echo(None, protocol.parse_line("\x1b[2J\x1b[01;01H\x1b[=3hBdsDxe: loading Boot0001\x1bc"))
    assert out.getvalue() == "BdsDxe: loading Boot0001\n"
    raw = vecho.Echo(types.SimpleNamespace(quiet=False, raw=True, json=False, csv=False), False)
    raw.out = out = io.StringIO()
    raw(None, protocol.parse_line("\x1b[2Jx"))
    assert out.getvalue() == "\x1b[2Jx\n"
