"""Issue 31 F13, F18: a runner's temp files live in one directory of its
own that a later run and `vnperf doctor --clean` remove once its PID is gone
(kill -9 left /tmp/vnperf-PID-peer-* and -run-* scattered), and a full temp
directory is named with its errno, not "no error output"."""

import contextlib
import os
import signal
import subprocess
import tempfile

import pytest

from vnpy import PYTHON, ROOT, run_opts, run_vnperf, standin_image

from vnperflib.run import peer, rrhost, scratch
from vnperflib.errors import RunnerError
from vnperflib.run.proc import Session

# A runner's library making its usual temp entries, then killed with SIGKILL.
CHILD = r"""
import os, sys
sys.path.insert(0, %r)
from vnperflib.run import scratch
from vnperflib.run.proc import Session
s = Session()
for what in ("run", "peer", "libvirt"):
    scratch.mkdtemp(s, what)
open(scratch.path(s, "passt", "1.sock"), "w").close()
print(scratch.root(), flush=True)
os.kill(os.getpid(), 9)
"""


def killed_runner(tmpdir):
    env = dict(os.environ, TMPDIR=str(tmpdir))
    r = subprocess.run([PYTHON, "-c", CHILD % os.path.join(ROOT, "tools")], env=env,
                       stdout=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == -signal.SIGKILL
    return r.stdout.strip()


def test_a_killed_runner_leaves_one_directory(tmp_path):
    root = killed_runner(tmp_path)
    assert os.listdir(str(tmp_path)) == [os.path.basename(root)]
    assert os.path.basename(root).startswith("vnperf-")
    assert sorted(n.split("-")[0] for n in os.listdir(root)) == ["libvirt", "passt", "peer", "run"]
    assert os.stat(root).st_mode & 0o777 == 0o711


def test_doctor_clean_removes_it(tmp_path):
    root = killed_runner(tmp_path)
    mine = tmp_path / ("vnperf-%d-live" % os.getpid())   # a live runner's: kept
    mine.mkdir()
    r = run_vnperf(["doctor", "--clean"], env=dict(os.environ, TMPDIR=str(tmp_path)), timeout=30)
    assert r.returncode == 0, r.stderr
    assert "removed " + root in r.stdout.splitlines()
    assert os.listdir(str(tmp_path)) == [mine.name]


def test_a_later_run_removes_it(tmp_path, monkeypatch):
    root = killed_runner(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert root in scratch.clean_stale()
    assert not os.path.exists(root)


def test_a_session_removes_its_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(scratch, "_root", None)
    with Session() as s:
        d = scratch.mkdtemp(s, "peer")
        sock = scratch.path(s, "passt", "1.sock")
        assert os.path.dirname(d) == os.path.dirname(os.path.dirname(sock)) == scratch.root()
        assert os.stat(os.path.dirname(sock)).st_mode & 0o7777 == 0o1777
    assert os.listdir(scratch.root()) == []


@contextlib.contextmanager
def full_dir(tmp_path):
    """A directory writes to fail in: a full 64 KiB tmpfs as root (ENOSPC),
    else one without write permission (EACCES)."""
    d = tmp_path / "full"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o500)
        yield str(d), "(EACCES)"
        d.chmod(0o700)
        return
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)], check=True)
    try:
        fd = os.open(str(d / "fill"), os.O_WRONLY | os.O_CREAT)
        with pytest.raises(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
        os.close(fd)
        yield str(d), "No space left on device (ENOSPC)"
    finally:
        subprocess.run(["umount", str(d)], check=True)


def test_unwritable_names_the_errno(tmp_path):
    assert scratch.unwritable(str(tmp_path)) is None
    with full_dir(tmp_path) as (d, why):
        assert why in scratch.unwritable(d)


def test_full_tmpdir_is_refused_with_one_line(tmp_path):
    """Python's tempfile silently took /tmp instead of a full TMPDIR."""
    with full_dir(tmp_path) as (d, why):
        r = run_vnperf(["run", "--image", standin_image(tmp_path), "--", "app=selftest"],
                       env=dict(os.environ, TMPDIR=d), timeout=60)
    assert r.returncode == 67, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("vnperf: TMPDIR=%s cannot hold the runner's files" % d), r.stderr
    assert why in line and "Traceback" not in r.stderr


def test_full_tmpdir_refuses_a_sweep_before_its_results_directory(tmp_path):
    out = tmp_path / "out"
    with full_dir(tmp_path) as (d, why):
        r = run_vnperf(["sweep", "--image", standin_image(tmp_path), "--size", "64,128",
                        "--out", str(out)],
                       env=dict(os.environ, TMPDIR=d), timeout=60)
    assert r.returncode == 67, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0], r.stderr
    assert lines[0].startswith("vnperf: TMPDIR=%s cannot hold the runner's files: " % d)
    assert not out.exists()


class FakeProc:
    def __init__(self, returncode):
        self.returncode = returncode


def silent_peer(tmp_path, monkeypatch, status):
    """A peer that ended with status and wrote nothing, its files in tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(scratch, "_root", None)
    s = Session()
    p = peer.Peer(s, "/bin/true", "count", 0, None)
    p.proc = FakeProc(status)
    return s, p


def test_peer_on_a_full_disk_names_the_errno(tmp_path, monkeypatch):
    with full_dir(tmp_path) as (d, why):
        s, p = silent_peer(tmp_path, monkeypatch, 4)
        monkeypatch.setattr(p, "tmp", d)
        line = p.why_no_result()
        s.close()
    assert line.startswith("its output in %s could not be written: " % d) and why in line


def test_peer_status_4_says_its_result_was_not_written(tmp_path, monkeypatch):
    s, p = silent_peer(tmp_path, monkeypatch, 4)
    assert p.why_no_result() == "its result could not be written (status 4)"
    p.proc = FakeProc(0)
    assert p.why_no_result() == "no error output"
    p.err.write(b"vnperf-peer: result not written to stdout: No space left on device\n")
    assert p.why_no_result() == "vnperf-peer: result not written to stdout: No space left on device"
    s.close()


def test_peer_and_runner_agree_on_status_4():
    with open(os.path.join(ROOT, "tools", "peer", "peer_run.h")) as f:
        assert "#define PEER_EXIT_OUTPUT %d\n" % peer.EXIT_OUTPUT in f.read()


def test_rrserver_on_a_full_disk_names_the_errno(tmp_path, monkeypatch):
    """The host's rrserver ends without a result and without an error line
    (its disk is full): the run's line names the errno, not "no error output"."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(scratch, "_root", None)
    opts = run_opts()
    with full_dir(tmp_path) as (d, why):
        with Session() as s:
            h = rrhost.HostRr(s, None, "127.0.0.1", opts)
            h.argv = ["sh", "-c", "touch %s; exit 0" % h.ready_file]
            h.start()
            # Its exit, not finish's SIGTERM, ends it: the line names status 0.
            h.proc.wait()
            h.tmp = d
            with pytest.raises(RunnerError) as e:
                h.finish()
    assert e.value.status == 68
    assert e.value.line.startswith("rrserver printed no result (status 0): its output in %s "
                                   "could not be written: " % d) and why in e.value.line
