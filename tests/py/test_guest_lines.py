"""What the guest prints, checked against docs/protocol.md by the runner
driving a stand-in QEMU (a script that prints chosen console lines and
exits as isa-debug-exit would): a number outside the protocol, a line
nested too deep or a run without its boot/config/ready lines is status 69
and one line naming the member, never a traceback or a silent status 0."""

import os

import pytest

from vnpy import run_vnperf, standin_image
from vnperflib import exitcodes
from vnperflib.run import protocol

BOOT = ('@vnperf {"type":"boot","boot_path":"pvh","tsc_hz":2600000000,"tsc_method":"pit",'
        '"acpi":true,"ram_bytes":133823488,"arena_free_bytes":1000}')
CONFIG = '@vnperf {"type":"config","source":"fw_cfg","line":"app=selftest"}'
READY = '@vnperf {"type":"ready","app":"selftest","t_ns":27682293}'
RESULT = ('@vnperf {"type":"result","app":"selftest","ok":true,"packets":%s,"bytes":0,'
          '"pps":%s,"bps":0,"duration_ns":%s}')
EXIT = '@vnperf {"type":"exit","code":0,"reason":"ok"}'


def run_console(tmp_path, lines):
    """tools/vnperf run with a QEMU that prints lines and exits with the
    guest's code 0 (QEMU status 1)."""
    console = tmp_path / "console"
    console.write_text("".join(l + "\n" for l in lines))
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\ncat '%s'\nexit 1\n" % console)
    os.chmod(qemu, 0o755)
    return run_vnperf(["run", "--accel", "tcg", "--app", "selftest", "--image",
                       standin_image(tmp_path), "--qemu", str(qemu)], timeout=60)


def result(packets="0", pps="0", duration="213352496"):
    return RESULT % (packets, pps, duration)


def config_error_qemu(tmp_path):
    """A stand-in QEMU whose guest refuses its config (code 2) after boot."""
    console = tmp_path / "console"
    console.write_text(BOOT + "\n" + '@vnperf {"type":"error","code":2,"reason":"config_error",'
                       '"message":"unknown key bogus"}\n@vnperf {"type":"exit","code":2,'
                       '"reason":"config_error"}\n')
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\ncat '%s'\nexit 5\n" % console)
    os.chmod(qemu, 0o755)
    return qemu


def test_a_console_by_the_protocol_is_ok(tmp_path):
    r = run_console(tmp_path, [BOOT, CONFIG, READY, result()[:-1] + ',"vnet":{"tx":{"kicks":3,'
                               '"irq_vector":-1,"irq_shared":true,"interrupts_per_1000":913.333}},'
                               '"idle":{"share":0.25}}', EXIT])
    assert r.returncode == 0, r.stderr
    assert "result duration_ns  213352496" in r.stdout


@pytest.mark.parametrize("line,needle", [
    (result(packets="NaN"), "result.packets: NaN is not a finite number"),
    (result(pps="Infinity"), "result.pps: Infinity is not a finite number"),
    (result(pps="-Infinity"), "result.pps: -Infinity is not a finite number"),
    (result(pps="1e400"), "result.pps: Infinity is not a finite number"),
    (result(duration="-1"), "result.duration_ns is -1: want an integer 0..2^64-1"),
    (result(packets='"many"'), 'result.packets is "many": want an integer 0..2^64-1'),
    (result(packets="true"), "result.packets is true: want an integer 0..2^64-1"),
    (result(packets="1.5"), "result.packets is 1.5: want an integer 0..2^64-1"),
    (result(pps="-3"), "result.pps is -3: want a number >= 0"),
    (result(packets="9" * 401), "result.packets: a 401-digit integer is beyond 64 bits"),
    (result(packets="18446744073709551616"), "a 20-digit integer is beyond 64 bits"),
    ('@vnperf {"type":"result","vnet":{"tx":{"kicks":NaN}}}', "result.vnet.tx.kicks: NaN"),
    ("@vnperf " + "[" * 50000, "JSON nested deeper than 16"),
    ('@vnperf {"type":"ready","app":"selftest","t_ns":"soon"}', 'ready.t_ns is "soon"'),
    ('@vnperf {"type":"boot","acpi":1}', "boot.acpi is 1: want true or false"),
    ('@vnperf {"type":"result","vnet":{"tx":{"kicks":-5,"irq_vector":-1}}}',
     "result.vnet.tx.kicks is -5: want an integer 0..2^64-1"),
    ('@vnperf {"type":"result","vnet":{"rx":{"interrupts_per_1000":-1}}}',
     "result.vnet.rx.interrupts_per_1000 is -1: want a number >= 0"),
    ('@vnperf {"type":"result","mem":{"lwip":{"pbuf":0.5}}}',
     "result.mem.lwip.pbuf is 0.5: want an integer"),
    ('@vnperf {"type":"result","idle":{"share":-0.5}}',
     "result.idle.share is -0.5: want a number >= 0"),
], ids=lambda v: v[:48])
def test_numbers_outside_the_protocol_are_status_69_naming_the_member(tmp_path, line, needle):
    lines = [BOOT, CONFIG, READY, result(), EXIT]
    lines[3 if line.startswith('@vnperf {"type":"result"') or "[[[" in line else
          {"ready": 2, "boot": 0}[line.split('"')[3]]] = line
    r = run_console(tmp_path, lines)
    err = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_PROTOCOL, r.stderr
    assert len(err) == 1 and needle in err[0], err
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize("drop", ["boot", "config", "ready"])
def test_an_ok_exit_needs_boot_config_and_ready(tmp_path, drop):
    lines = [l for l in [BOOT, CONFIG, READY, result(), EXIT] if '"%s"' % drop not in l]
    r = run_console(tmp_path, lines)
    err = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_PROTOCOL, r.stderr
    assert len(err) == 1 and "exited ok without a %s line" % drop in err[0], err


def test_no_machine_line_but_an_exit_is_status_69(tmp_path):
    r = run_console(tmp_path, ["just a human line", EXIT])
    err = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_PROTOCOL
    assert err == ["vnperf: guest: the guest exited ok without a boot/config/ready line"]


def test_a_failing_guest_keeps_its_code_without_ready(tmp_path):
    """A config error stops the guest before its config/ready lines: its
    code (2) is the story, not the protocol."""
    qemu = config_error_qemu(tmp_path)
    r = run_vnperf(["run", "--accel", "tcg", "--app", "selftest", "--image",
                    standin_image(tmp_path), "--qemu", str(qemu)], timeout=60)
    assert r.returncode == 2, r.stderr
    assert "unknown key bogus" in r.stderr


def test_a_guest_message_cannot_break_the_runners_one_line(tmp_path):
    """The error line's message goes into the runner's one line: its
    control characters (a newline, a terminal escape) are escaped. Found by
    test_pyfuzz_console (seed 08-error-escapes)."""
    with open(os.path.join(os.path.dirname(__file__), "seeds", "console",
                           "08-error-escapes.txt")) as f:
        console = f.read()
    (tmp_path / "console").write_text(console)
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\ncat '%s'\nexit 5\n" % (tmp_path / "console"))
    os.chmod(qemu, 0o755)
    r = run_vnperf(["run", "--accel", "tcg", "--app", "selftest", "--image",
                    standin_image(tmp_path), "--qemu", str(qemu)], timeout=60)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "vnperf: guest: exit 2 (config error): config: bad value 'a\\x0ab\\x1b[2J' for key "
        "'notify'"]


def test_a_member_named_with_control_characters_is_escaped(tmp_path):
    """The line naming a bad member uses the guest's own keys: a NUL or a
    newline in them is escaped. Found by test_pyfuzz_console (input 627484
    of 10^6: `"type":"\\u0000exit","code":NaN`)."""
    r = run_console(tmp_path, [BOOT, CONFIG, READY, result(),
                               '@vnperf {"type":"\\u0000exit","code":NaN}', EXIT])
    assert r.returncode == exitcodes.RUNNER_PROTOCOL
    assert r.stderr.splitlines()[0].endswith(": \\x00exit.code: NaN is not a finite number")
    assert len(r.stderr.splitlines()) == 1


def test_an_endless_line_is_cut_flagged_and_costs_no_memory():
    """A guest that never ends its line: past MAX_LINE it is ended there
    and flagged, the rest dropped up to its newline; the lines after it
    parse (before, the Console kept it all and copied it on every chunk)."""
    c = protocol.Console()
    chunk = b"x" * 65536
    out = []
    for _ in range(160):  # 10 MiB, the size of QEMU's reads
        out += c.feed(chunk)
        assert len(c._partial) <= protocol.MAX_LINE + len(chunk)
    out += c.feed(b"tail\n" + EXIT.encode() + b"\n")
    assert [l.bad for l in out] == ["line longer than %d bytes" % protocol.MAX_LINE, None]
    assert out[0].text == "x" * 80 and c.last("exit")["code"] == 0


def test_an_endless_line_through_the_runner_is_status_69(tmp_path):
    console = tmp_path / "console"
    console.write_text("".join(l + "\n" for l in [BOOT, CONFIG, READY, result(), EXIT]))
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\nhead -c 3000000 /dev/zero | tr '\\0' x\necho\ncat '%s'\nexit 1\n"
                    % console)
    os.chmod(qemu, 0o755)
    r = run_vnperf(["run", "--accel", "tcg", "--app", "selftest", "--image",
                    standin_image(tmp_path), "--quiet", "--qemu", str(qemu)], timeout=60)
    err = r.stderr.strip().splitlines()
    assert r.returncode == exitcodes.RUNNER_PROTOCOL, r.stderr[-300:]
    assert len(err) == 1 and "line longer than 262144 bytes" in err[0], err


def test_a_refused_config_prints_its_status_and_no_counts(tmp_path):
    """The guest refused its config (code 2): its app never ran, so the
    report shows the status line and what was asked, no counts, host CPU
    or bottleneck that would describe nothing (issue 26)."""
    qemu = config_error_qemu(tmp_path)
    r = run_vnperf(["run", "--accel", "tcg", "--backend", "user", "--image",
                    standin_image(tmp_path), "--qemu", str(qemu), "--", "bogus=1"], timeout=60)
    assert r.returncode == 2, r.stderr
    table = r.stdout[r.stdout.index("status  "):].splitlines()
    assert [l.split("  ")[0] for l in table] == ["status", "app", "backend", "machine / accel",
                                                 "config"], r.stdout
    assert "2 (config error)" in table[0] and "unknown key bogus" in table[0]
