"""Issue 31: the fw_cfg config file's bytes as an attacker writes them. A
NUL inside cut the config silently (F8); a newline was echoed raw and could
forge a machine line ahead of the real exit line (F11)."""

import pytest

import vnharness

OK, CONFIG = 0, 2  # kernel/exit.h


def boot_file(tmp_path, data, timeout=30):
    """Boots with data as the fw_cfg file opt/vnperf/config, byte for byte."""
    path = tmp_path / "config"
    path.write_bytes(data)
    assert "," not in str(path)  # QEMU's option syntax
    return vnharness.boot((), extra=("-fw_cfg", "name=opt/vnperf/config,file=%s" % path),
                          timeout=timeout)


def fatal_lines(b):
    return [l.text for l in b.lines if l.text.startswith("FATAL:")]


def assert_refused(b, message):
    """Exit 2, one error line with exactly this message, no app run."""
    assert b.code == CONFIG, b.console
    assert fatal_lines(b) == ["FATAL: " + message], b.console
    err = b.one("error")
    assert err["reason"] == "config_error" and err["message"] == message, err
    assert not b.msgs("ready"), b.console
    assert b.one("exit") == {"type": "exit", "code": CONFIG, "reason": "config_error"}
    assert b.problems == [], b.problems


@pytest.mark.parametrize("data,offset", [
    (b"app=selftest\0 bogus=1", 12),   # ran, exit 0, bogus never seen
    (b"\0app=gen duration=5", 0),      # an empty config: selftest ran
    (b"app=selftest seed=7\0", 19),
])
def test_nul_byte_refused(tmp_path, data, offset):
    b = boot_file(tmp_path, data)
    assert_refused(b, "config: a NUL byte at offset %d (the config is text: key=value words)"
                   % offset)


def test_newline_separated_file_runs(tmp_path):
    """A file as an editor or echo writes it: newlines separate words."""
    b = boot_file(tmp_path, b"app=selftest\nseed=7\n")
    assert b.code == OK, b.console
    assert b.one("config")["line"] == "app=selftest\nseed=7\n"
    assert b.one("exit")["code"] == OK


FORGED = b'@vnperf {"type":"exit","code":0,"reason":"ok"}'


def machine_lines(b):
    return [l for l in b.lines if l.text.startswith(vnharness.protocol.PREFIX.rstrip())]


def assert_not_forged(b):
    """Every machine line is the guest's own: the one exit line is the real
    one, nothing outside text wrote starts a line."""
    assert [l.msg["type"] for l in machine_lines(b)] == ["boot", "error", "exit"], b.console
    assert b.one("exit") == {"type": "exit", "code": CONFIG, "reason": "config_error"}
    assert b.problems == [], b.problems


def test_newline_cannot_forge_a_line(tmp_path):
    """F11: 'app=selftest\\n@vnperf {...exit 0...}' echoed raw put a forged
    exit line ahead of the real one (exit 2)."""
    b = boot_file(tmp_path, b"app=selftest\n" + FORGED + b"\n")
    assert_not_forged(b)
    assert ('config (fw_cfg): app=selftest\\n@vnperf {"type":"exit","code":0,"reason":"ok"}\\n'
            in b.console.splitlines()), b.console
    assert fatal_lines(b) == ["FATAL: config: '@vnperf' is not a key=value word"], b.console


def test_controls_in_a_value_escaped(tmp_path):
    """A bad value quoted in the error line: a carriage return, an
    escape sequence, a vertical tab and a UTF-8 line separator, escaped in
    the FATAL line and the error line alike."""
    b = boot_file(tmp_path, b"txfull=x\x1b[2J\x0b\xe2\x80\xa8\r" + FORGED)
    assert b.code == CONFIG, b.console
    msg = b.one("error")["message"]
    assert msg == ("config: txfull=x\\x1b[2J\\x0b\\xe2\\x80\\xa8 is not allowed "
                   "(allowed wait|drop)"), msg
    assert fatal_lines(b) == ["FATAL: " + msg], b.console
    raw = b.console.encode()
    for c in (b"\x1b", b"\x0b", b"\xe2\x80\xa8"):
        assert c not in raw, b.console
    assert_not_forged(b)


def test_command_line_newline_cannot_forge_a_line():
    """The kernel command line is echoed the same way."""
    b = vnharness.boot((), append="app=selftest\n" + FORGED.decode(), timeout=30)
    assert_not_forged(b)
    assert ('config (cmdline): app=selftest\\n@vnperf {"type":"exit","code":0,"reason":"ok"}'
            in b.console.splitlines()), b.console
