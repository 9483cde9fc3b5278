"""Pure-logic tests of the runner library (no QEMU): exit-code mapping,
console/protocol parsing, QEMU command line, pinning specs, /proc parsing
(count merging: test_counts.py; verdicts: test_verdict.py)."""

import shutil

import pytest

from vnpy import run_opts
from vnperflib import exitcodes, result
from vnperflib.analysis import hostcpu
from vnperflib.run import pinning, protocol, qemucmd, runner
from vnperflib.errors import RunnerError


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
    from vnperflib.run import proc
    for s in proc.Session.SIGNALS:
        assert proc.Interrupted(s).status in exitcodes.RUNNER_CODES, s


def test_console_splits_lines_across_chunks():
    c = protocol.Console()
    assert c.feed(b"hel") == []
    lines = c.feed(b'lo\r\n@vnperf {"type":"ready","app":"x","t_ns":5}\n@vnp')
    assert [l.text for l in lines] == ["hello", '@vnperf {"type":"ready","app":"x","t_ns":5}']
    assert lines[0].msg is None and lines[1].msg == {"type": "ready", "app": "x", "t_ns": 5}
    c.feed(b'erf {"type":"boot"}\n@vnperf {"type":"config"}\n')
    c.feed(b'@vnperf {"type":"exit","code":0,"reason":"ok"}')
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


def test_pin_parse():
    assert pinning.parse("vcpu=0,main=0") == {"vcpu": {0}, "main": {0}}
    with pytest.raises(ValueError, match="role"):
        pinning.parse("gpu=0")
    with pytest.raises(ValueError, match="outside"):
        pinning.parse("vcpu=4096")
    with pytest.raises(ValueError, match="not a CPU"):
        pinning.parse("vcpu=x")
    # a digit int() refuses is no CPU either ("invalid literal" before)
    for bad in ("vcpu=\u00b2", "vcpu=0-\u00b2"):
        with pytest.raises(ValueError, match="not a CPU"):
            pinning.parse(bad)


def test_pin_one_guest_over_all_guests():
    pins = pinning.parse("vcpu=0+1,vcpu@fwd1=0,qemu@tester=1,backend=1")
    assert pinning.labels(pins) == ["fwd1", "tester"]
    assert pinning.for_guest(pins, "fwd1") == {"vcpu": {0}, "backend": {1}}
    assert pinning.for_guest(pins, "tester") == {"vcpu": {0, 1}, "qemu": {1}, "backend": {1}}
    assert pinning.for_guest(pins, "fwd2") == {"vcpu": {0, 1}, "backend": {1}}
    for bad in ("backend@fwd1=0", "vcpu@=0", "vcpu@Fwd1=0", "gpu@fwd1=0"):
        with pytest.raises(ValueError, match="role"):
            pinning.parse(bad)


def test_pin_of_a_guest_the_run_lacks_is_refused():
    runner.check_pin_labels(pinning.parse("vcpu@fwd1=0"), ["fwd1", "tester"])
    with pytest.raises(RunnerError, match=r"no guest fwd2 in this run \(its guests: fwd1, tester\)"):
        runner.check_pin_labels(pinning.parse("vcpu@fwd2=0"), ["fwd1", "tester"])


def test_proc_stat_parse_with_odd_comm():
    line = "123 (CPU 0/T) (x)) R 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0"
    assert hostcpu.parse_stat(line) == ("CPU 0/T) (x)", 300)


def test_service_demand():
    sd = hostcpu.service_demand(2.0, 1000000, 1024 * 1000, 4000)
    assert sd["us_per_packet"] == pytest.approx(2.0) and sd["us_per_kb"] == pytest.approx(2000.0)
    assert sd["us_per_transaction"] == pytest.approx(500.0)
    assert hostcpu.service_demand(1.0, 0, 0) == {"us_per_packet": None, "us_per_kb": None,
                                                 "us_per_transaction": None}


@pytest.mark.parametrize("rate,size,pps", [("250k", 64, 250000), ("1.5mpps", 64, 1500000),
                                           ("100000", 64, 100000), ("1gbps", 1000, 125000),
                                           ("100mbit", 125, 100000), ("max", 64, None),
                                           (None, 64, None)])
def test_rate_for_host_sender(rate, size, pps):
    from vnperflib.run import peer
    assert peer.rate_pps(rate, size) == pps


def test_bad_rate_is_refused():
    from vnperflib.run import peer
    with pytest.raises(ValueError, match="expected"):
        peer.rate_pps("fast", 64)


def test_iperf_csv_reports_skip_client_sums():
    from vnperflib.run import iperf
    text = ("20260101000000,10.0.0.1,1,10.0.0.2,5001,1,0.0-3.0,100,266\n"
            "20260101000000,10.0.0.1,2,10.0.0.2,5001,2,0.0-3.0,200,533\n"
            "20260101000000,10.0.0.1,0,10.0.0.2,5001,-1,0.0-3.0,300,800\n"
            "connect failed: Connection refused\n")
    assert [s["bytes"] for s in iperf.parse_csv_reports(text)] == [100, 200]


def test_echo_strips_firmware_terminal_escapes():
    import io
    from vnperflib.run import echo as vecho
    out = io.StringIO()
    opts = run_opts()
    echo = vecho.Echo(opts, False)
    echo.out = out
    echo(None, protocol.parse_line("\x1b[2J\x1b[01;01H\x1b[=3hBdsDxe: loading Boot0001\x1bc"))
    assert out.getvalue() == "BdsDxe: loading Boot0001\n"
    raw = vecho.Echo(run_opts(raw=True), False)
    raw.out = out = io.StringIO()
    raw(None, protocol.parse_line("\x1b[2Jx"))
    assert out.getvalue() == "\x1b[2Jx\n"


@pytest.mark.parametrize("duration,sends", [(2, "2"), (1, "1"), (None, "10")])
def test_the_host_iperf_client_sends_for_the_duration_asked(duration, sends):
    """A guest server (role=server) times each stream from its accept to
    the client's FIN: the host's client sends for --duration, so that
    `--duration 2 -- role=server` measures 2 s, not 1 (issue 26)."""
    from vnperflib.run import iperf, proc
    if shutil.which("iperf") is None:
        pytest.skip("no iperf 2 (Debian iperf)")
    opts = run_opts(config=["role=server", "sessions=2"], duration=duration)
    with proc.Session() as s:
        argv = iperf.HostIperf(s, None, "127.0.0.1", opts, port=5201).argv
    assert argv[argv.index("-t") + 1] == sends
    assert argv[argv.index("-P") + 1] == "2" and argv[argv.index("-c") + 1] == "127.0.0.1"


def test_iperf_streams_reset_are_counted_and_named_in_the_failure():
    from vnperflib.run import iperf
    from vnperflib.analysis import outcome
    text = ("20260101000000,10.0.0.1,1,10.0.0.2,5001,1,0.0-3.0,100,266\n"
            "tcp write failed: Connection reset by peer\n"
            "tcp write failed: Connection reset by peer\n")
    assert iperf.count_resets(text) == 2
    assert iperf.count_resets("connect failed: Connection refused\n") == 0
    guest = {"label": "guest", "status": 1, "problems": [], "guest_code": 1,
             "error": {"message": "iperf: 6 of sessions=8 client streams finished"}}
    rep = {"guests": [guest], "host": {"iperf": {"streams_reset": 2}}}
    status, why = outcome.overall_status(result.RunResult.from_dict(rep), None)
    assert status == 1
    assert why.endswith("finished; the backend reset 2 of the host's iperf streams before "
                        "the guest accepted them (host iperf: Connection reset by peer)"), why
    rep["host"]["iperf"]["streams_reset"] = 0
    assert outcome.overall_status(result.RunResult.from_dict(rep), None)[1].endswith(
        "client streams finished")


def run(guest):
    """A run of one guest (a result.RunResult)."""
    return result.RunResult.from_dict({"guests": [guest]})


def test_guest_iperf_streams_aborted_fail_the_run_and_are_named():
    from vnperflib.run import iperf
    from vnperflib.analysis import outcome
    assert iperf.guest_aborted({"aborted": 2, "finished": 2}) == 2
    assert iperf.guest_aborted({"role": "client"}) == 0
    assert iperf.guest_aborted(None) == 0 and iperf.guest_aborted({"aborted": True}) == 0
    guest = {"label": "guest", "status": 1, "problems": [], "guest_code": 1, "error": None,
             "result": {"app": "iperf", "role": "server", "finished": 3, "aborted": 1}}
    status, why = outcome.overall_status(run(guest), None)
    assert status == 1
    assert why == ("guest: exit 1 (test failed); 1 of the guest's iperf streams were aborted "
                   "(reset) before the client's FIN"), why
    # A guest that exited 0 with a stream aborted still fails, with the reason.
    guest.update(status=0, guest_code=0)
    status, why = outcome.overall_status(run(guest), None)
    assert status == 1 and why.endswith("aborted (reset) before the client's FIN"), why
    guest["result"]["aborted"] = 0
    assert outcome.overall_status(run(guest), None) == (0, "ok")
