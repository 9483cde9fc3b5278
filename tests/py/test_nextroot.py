"""nextroot.py: --qemu next and --testpmd next run build/next's Debian 13
QEMU and DPDK through tools/next/run, `system` names the machine's, and
without `make next` the runner refuses in one line with status 67; the run
identity names the root's versions (issue 27)."""

import os
import shutil
import subprocess

import pytest

from vnpy import run_opts
from test_support import load_cli
from vnperflib import exitcodes, options
from vnperflib.run import identity, nextroot, qemucmd, versions
from vnperflib.campaign import sweep
from vnperflib.backends import testpmd
from vnperflib.errors import RunnerError

STAMP = "dpdk-dev 24.11.8-0+deb13u1\nqemu-system-x86 1:10.0.13+ds-0+deb13u1\n"
QEMU_NEXT = os.path.join(nextroot.WRAPPERS, "qemu-system-x86_64")
TESTPMD_NEXT = os.path.join(nextroot.WRAPPERS, "dpdk-testpmd")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A stamp as `make next` writes it (the wrappers are in the tree)."""
    path = tmp_path / "next.stamp"
    path.write_text(STAMP)
    monkeypatch.setattr(nextroot, "STAMP", str(path))
    monkeypatch.setattr(nextroot, "DRIVERS", "/usr/lib")
    return path


@pytest.fixture
def absent(tmp_path, monkeypatch):
    monkeypatch.setattr(nextroot, "STAMP", str(tmp_path / "next.stamp"))


def test_words_resolve_to_binaries(installed):
    assert nextroot.qemu("system") == qemucmd.DEFAULT_QEMU
    assert nextroot.testpmd("system") == "dpdk-testpmd"
    assert nextroot.qemu("next") == QEMU_NEXT
    assert nextroot.testpmd("next") == TESTPMD_NEXT
    assert nextroot.qemu("/opt/qemu/bin/qemu-system-x86_64") == "/opt/qemu/bin/qemu-system-x86_64"
    for w in (QEMU_NEXT, TESTPMD_NEXT):
        assert os.access(w, os.X_OK) and os.path.realpath(w).endswith("tools/next/run")


def test_testpmd_next_below_a_world_writable_folder_is_67(installed, tmp_path, monkeypatch):
    """DPDK 24.11 loads no driver whose real path has a world-writable
    folder above it: testpmd exited at start (68) with EAL's last line."""
    opened = tmp_path / "open"
    opened.mkdir()
    opened.chmod(0o777)
    monkeypatch.setattr(nextroot, "DRIVERS", str(opened / "next" / "usr"))
    with pytest.raises(RunnerError) as e:
        nextroot.testpmd("next")
    assert e.value.status == exitcodes.RUNNER_BACKEND_MISSING
    assert e.value.line == ("--testpmd next: DPDK 24.11 loads no driver below the world-writable "
                            "%s: put the tree (build/next) elsewhere" % opened)
    assert nextroot.qemu("next") == QEMU_NEXT


@pytest.mark.parametrize("text", ["", "qemu-system-x86 1:10.0\n", "dpdk-dev\nqemu-system-x86 1\n",
                                  "half written"])
def test_a_stamp_that_is_not_make_nexts_is_no_root(tmp_path, monkeypatch, text):
    path = tmp_path / "next.stamp"
    path.write_text(text)
    monkeypatch.setattr(nextroot, "STAMP", str(path))
    assert nextroot.stamp() is None
    with pytest.raises(RunnerError):
        nextroot.qemu("next")


def test_next_without_make_next_is_status_67_naming_it(absent):
    for fn, flag in ((nextroot.qemu, "--qemu"), (nextroot.testpmd, "--testpmd")):
        with pytest.raises(RunnerError) as e:
            fn("next")
        assert e.value.status == exitcodes.RUNNER_BACKEND_MISSING
        assert e.value.line == flag + " next: build/next is not installed: run make next"
    assert nextroot.qemu("system") == qemucmd.DEFAULT_QEMU
    assert nextroot.describe().startswith("absent: make next installs")


@pytest.mark.parametrize("argv", [
    ["run", "--qemu", "next"],
    ["run", "--backend", "vhost-user", "--testpmd", "next"],
    ["sweep", "--qemu", "system,next", "--backend", "dgram"],
    ["sweep", "--qemu", "next", "--backend", "dgram", "--size", "64"],
    ["sweep", "--testpmd", "next", "--backend", "vhost-user", "--size", "64"],
    ["doctor", "--qemu", "next"],
])
def test_the_runner_refuses_next_before_starting_anything(absent, monkeypatch, capsys, tmp_path,
                                                          argv):
    cli = load_cli()

    def no_child(self, *a, **kw):
        raise AssertionError("started %r" % (a[0] if a else kw.get("args"),))

    monkeypatch.setattr(subprocess.Popen, "__init__", no_child)
    extra = ["--out", str(tmp_path / "o")] if argv[0] == "sweep" else []
    status = cli.main(argv + extra)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == exitcodes.RUNNER_BACKEND_MISSING, err
    assert len(err) == 1 and err[0].endswith("build/next is not installed: run make next"), err
    assert not (tmp_path / "o").exists()


def test_sweep_axis_keeps_the_words_as_labels(installed):
    axis = sweep.parse_axis("qemu", "system,next")
    assert axis == [("system", qemucmd.DEFAULT_QEMU), ("next", QEMU_NEXT)]


def test_identity_names_the_roots_versions_not_the_machines(installed):
    assert nextroot.package(QEMU_NEXT) == ("qemu-system-x86", "1:10.0.13+ds-0+deb13u1")
    assert nextroot.package(TESTPMD_NEXT) == ("dpdk-dev", "24.11.8-0+deb13u1")
    assert nextroot.package("/usr/bin/qemu-system-x86_64") is None
    assert versions.testpmd(TESTPMD_NEXT) == \
        "%s (Debian dpdk-dev 24.11.8-0+deb13u1)" % TESTPMD_NEXT
    opts = run_opts(backend="vhost-user", machine="microvm", image="/nonexistent",
                    testpmd=TESTPMD_NEXT)
    ident = identity.of_run(opts, ["app=gen"], "tcg")
    assert ident["backend_version"] == versions.testpmd(TESTPMD_NEXT)
    assert nextroot.describe() == ("build/next: qemu-system-x86 1:10.0.13+ds-0+deb13u1, "
                                   "dpdk-dev 24.11.8-0+deb13u1")


def test_run_options_resolve_the_words(installed):
    o = options.build(qemu="next", testpmd="next")
    assert (o.qemu, o.testpmd) == (QEMU_NEXT, TESTPMD_NEXT)
    o = options.build(qemu="system", testpmd="system")
    assert (o.qemu, o.testpmd) == (qemucmd.DEFAULT_QEMU, "dpdk-testpmd")


def test_vhost_user_runs_the_testpmd_of_the_option(installed):
    o = run_opts(app="gen", size=64, testpmd=TESTPMD_NEXT)
    assert testpmd.VhostUser(o)._argv()[0] == TESTPMD_NEXT


def copy_wrapper(tmp_path):
    """tools/next of a tree with no build/next."""
    d = tmp_path / "tools" / "next"
    d.mkdir(parents=True)
    shutil.copy(os.path.join(nextroot.WRAPPERS, "run"), d / "run")
    for name in ("qemu-system-x86_64", "dpdk-testpmd", "other"):
        os.symlink("run", d / name)
    return d


def test_the_wrapper_without_a_root_says_make_next(tmp_path):
    d = copy_wrapper(tmp_path)
    r = subprocess.run([str(d / "qemu-system-x86_64"), "--version"], capture_output=True,
                       text=True, timeout=10)
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING
    assert r.stderr == "qemu-system-x86_64: build/next is not installed: run make next\n"
    (tmp_path / "build" / "next").mkdir(parents=True)
    r = subprocess.run([str(d / "other")], capture_output=True, text=True, timeout=10)
    assert r.returncode == exitcodes.RUNNER_USAGE and "qemu-system-x86_64 or dpdk-testpmd" in r.stderr
