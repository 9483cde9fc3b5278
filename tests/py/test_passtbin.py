"""passtbin.py: which passt the runner starts (build/passt/passt before
the machine's) and the version gate of the stream over passt: bookworm's
0.0~git20230309 stalls lwIP's TCP, so iperf over it is refused (status 64,
one line) with how to get trixie's; a new enough passt runs it."""


import pytest

from vnpy import run_opts
from vnperflib import backends, exitcodes
from vnperflib.run import passtbin, support
from vnperflib.backends import passt
from vnperflib.errors import RunnerError


def fake_passt(tmp_path, says, name="passt"):
    """A passt that prints `says` for --version, as passt does."""
    p = tmp_path / name
    p.write_text("#!/bin/sh\necho '%s'\necho 'Copyright Red Hat'\n" % says)
    p.chmod(0o755)
    return str(p)


@pytest.mark.parametrize("version,date", [
    ("0.0~git20230309.7c7625d-1", 20230309),
    ("0.0~git20250503.587980c", 20250503),
    ("0.0~git20250503.587980c-2+deb13u1", 20250503),
    ("2025_05_03.587980c", 20250503),
    ("unknown", None), (None, None), ("", None),
    ("0.0~git20251399.abc", None),   # no such month
    ("12025_05_031", None),          # digits run on: not a tag's date
])
def test_snapshot_date(version, date):
    assert passtbin.snapshot_date(version) == date


def test_new_passt_carries_the_stream(tmp_path):
    assert passtbin.stream_refusal(fake_passt(tmp_path, "passt 0.0~git20250503.587980c"),
                                   "WHY") is None


@pytest.mark.parametrize("says", ["passt 0.0~git20230309.7c7625d", "passt unknown version",
                                  "passt 2024_12_31.aaaaaaa"])
def test_old_or_unknown_passt_is_refused_with_how_to_get_a_new_one(tmp_path, says):
    binary = fake_passt(tmp_path, says)
    why = passtbin.stream_refusal(binary, "WHY")
    assert why.startswith("WHY; found " + binary) and "make passt" in why, why
    assert "\n" not in why


def test_the_built_passt_comes_first(tmp_path, monkeypatch):
    built = fake_passt(tmp_path, "passt 0.0~git20250503.587980c")
    assert passtbin.path(built) == built
    monkeypatch.setattr(passtbin, "BUILT", built)
    assert passt.argv("/s", tcp=(5000, 5001))[:1] == [built]
    assert passtbin.describe() == "0.0~git20250503.587980c " + built
    assert passtbin.path(str(tmp_path / "absent")) != str(tmp_path / "absent")


def test_argv_forwards(monkeypatch):
    monkeypatch.setattr(passtbin, "path", lambda: "/x/passt")
    a = passt.argv("/s", tcp=(5000, 5001))
    assert a[0] == "/x/passt" and a[a.index("-t") + 1] == "127.0.0.1/5000:5001"
    assert a[a.index("-u") + 1] == "none" and a[a.index("-s") + 1] == "/s"
    a = passt.argv("/s", udp=(6000, 9000))
    assert a[a.index("-t") + 1] == "none" and a[a.index("-u") + 1] == "6000:9000"


def opts(app):
    return run_opts(backend="passt", app=app)


def test_runner_refuses_iperf_over_an_old_passt(tmp_path, monkeypatch):
    monkeypatch.setattr(passtbin, "path", lambda: fake_passt(tmp_path, "passt 0.0~git20230309"))
    with pytest.raises(RunnerError) as e:
        support.check(opts("iperf"))
    assert e.value.status == exitcodes.RUNNER_USAGE
    assert support.PASST_STREAM in str(e.value) and "make passt" in str(e.value)
    support.check(opts("sink"))  # the datagram apps do not care


def test_runner_takes_iperf_over_a_new_passt(tmp_path, monkeypatch):
    monkeypatch.setattr(passtbin, "path", lambda: fake_passt(tmp_path, "passt 0.0~git20250503"))
    support.check(opts("iperf"))


def doctor_passt_row(monkeypatch, binary):
    from vnperflib.run import doctor
    monkeypatch.setattr(passtbin, "path", lambda: binary)
    o = run_opts(machine="microvm", app="gen")
    rows, ready, _ = doctor.backend_rows(o)
    return dict(rows)["backend passt"], ready


def test_doctor_says_an_old_passt_refuses_iperf_and_why(tmp_path, monkeypatch):
    """doctor called passt "ready" while iperf over it was refused (issue
    26): the row says which passt, why and how to get one that works."""
    old = fake_passt(tmp_path, "passt 0.0~git20230309.7c7625d")
    row, ready = doctor_passt_row(monkeypatch, old)
    assert row.startswith("ready; app=iperf refused: " + support.PASST_STREAM), row
    assert "found " + old in row and "make passt" in row
    assert "passt (not iperf)" in ready


def test_doctor_calls_a_new_passt_ready(tmp_path, monkeypatch):
    row, ready = doctor_passt_row(monkeypatch, fake_passt(tmp_path, "passt 0.0~git20250503.5"))
    assert row == "ready" and "passt" in ready


def fake_passt_help(tmp_path, help_lines, status):
    """A passt whose --help prints these option lines and ends with status,
    as passt's usage() does (bookworm's ends --help with 1)."""
    p = tmp_path / "passt"
    p.write_text("#!/bin/sh\necho 'passt 0.0~git20250503.587980c'\n%s\nexit %d\n" % (
        "\n".join("echo '%s'" % ln for ln in help_lines), status))
    p.chmod(0o755)
    return str(p)


@pytest.mark.parametrize("lines,status,has", [
    (["  -s, --socket, --socket-path PATH\tUNIX domain socket path",
      "  --vhost-user\t\tEnable vhost-user mode"], 0, True),
    (["  -s, --socket PATH\tUNIX domain socket path", "  -1, --one-off\tQuit after one"], 1,
     False),
    # A word in another option's text is not the option.
    (["  --print-capabilities\tprint back-end capabilities in JSON (--vhost-user)"], 0, False),
])
def test_which_passt_has_a_vhost_user_mode(tmp_path, lines, status, has):
    assert passtbin.has_vhost_user(fake_passt_help(tmp_path, lines, status)) is has


def test_passt_vhost_user_backend_wires_qemu_to_passts_socket(monkeypatch):
    monkeypatch.setattr(passtbin, "path", lambda: "/x/passt")
    o = run_opts(backend="passt-vhost-user", app="gen")
    be = backends.make("passt-vhost-user", o)
    assert be.needs_shared_mem and not backends.make("passt", o).needs_shared_mem
    be.sock = "/t/1.sock"
    nic, = be.nics(0)
    assert nic.netdev == "vhost-user,chardev=vu0"
    assert be.qemu_extra(0) == ["-chardev", "socket,id=vu0,path=/t/1.sock"]
    # passt refuses a legacy device: microvm's virtio-mmio is made version 2.
    mv = backends.make("passt-vhost-user", run_opts(backend="passt-vhost-user", app="gen",
                                                     machine="microvm"))
    mv.sock = "/t/1.sock"
    assert mv.qemu_extra(0)[2:] == ["-global", "virtio-mmio.force-legacy=false"]
    a = passt.argv("/t/1.sock", udp=(6000, 9000), vhost_user=True)
    assert "--vhost-user" in a and "--vhost-user" not in passt.argv("/t/1.sock")
    # No ARP answer reaches the guest (passt's DATA_VALID header): it is
    # given passt's MAC, which passt is told to use.
    assert a[a.index("-M") + 1] == passt.VU_MAC
    be.port = 6000
    assert "dst_mac=" + passt.VU_MAC in be.guest_config(0)
    plain = backends.make("passt", o)
    plain.port = 6000
    assert not any(w.startswith("dst_mac=") for w in plain.guest_config(0))
    assert support.why_not("sink", "passt-vhost-user", "host").startswith("passt 0.0~git2025")
    assert support.why_not("gen", "passt-vhost-user", "host") is None


def test_passt_vhost_user_is_refused_over_a_passt_without_it(tmp_path, monkeypatch):
    old = fake_passt_help(tmp_path, ["  -s, --socket PATH\tUNIX domain socket path"], 1)
    monkeypatch.setattr(passtbin, "path", lambda: old)
    be = backends.make("passt-vhost-user", run_opts(backend="passt-vhost-user", app="gen"))
    with pytest.raises(RunnerError) as e:
        be.check()
    assert e.value.status == exitcodes.RUNNER_BACKEND_MISSING
    assert "has no --vhost-user" in e.value.line and "make passt" in e.value.line
    assert "\n" not in e.value.line
