"""--sock-rcvbuf (issue 16): over dgram QEMU gets a UDP socket the runner
made with the receive buffer asked for, as an inherited fd; bad values and
backends that cannot take it are refused with one line and status 64."""

import dataclasses
import os
import socket

import pytest

from vnpy import run_opts, run_vnperf
from vnperflib.run import identity, qemucmd, udpsock
from vnperflib.report import report
from vnperflib import result
from vnperflib.backends import make
from vnperflib.errors import RunnerError

USAGE = 64


@pytest.mark.parametrize("text,n", [("4194304", 4 << 20), ("512k", 512 << 10),
                                    ("4M", 4 << 20), ("1g", 1 << 30)])
def test_sizes(text, n):
    assert udpsock.parse_size(text) == n


@pytest.mark.parametrize("text", ["", "4x", "-1", "1.5M", "100", "2G", "99999999999"])
def test_bad_sizes(text):
    with pytest.raises(ValueError):
        udpsock.parse_size(text)


@pytest.mark.parametrize("args,needle", [
    (["run", "--backend", "dgram", "--sock-rcvbuf", "4x"], "not a size in bytes"),
    (["run", "--backend", "dgram", "--sock-rcvbuf", "100"], "not in 4096.."),
    (["run", "--backend", "socket", "--app", "sink", "--sock-rcvbuf", "4M"],
     "--backend dgram only"),
    (["ndr", "--backend", "socket", "--sock-rcvbuf", "4M"], "--backend dgram only"),
])
def test_refused_with_one_line(args, needle):
    r = run_vnperf(args, timeout=60)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert needle in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def opts(**kw):
    base = dict(app="sink", size=60, rate="10k", count=None, duration=2, config=[],
                event_idx=None, queue_size=None, topology="host", fwd_mode=None, feeder=None,
                sock_rcvbuf=None)
    base.update(kw)
    return run_opts(**base)


class Session:
    def __init__(self):
        self.undo = []

    def on_close(self, fn, *args, what=None):
        self.undo.append(fn)


def wired(rcvbuf):
    """A dgram backend with ports but no peer started: its NIC, session."""
    be = make("dgram", opts(sock_rcvbuf=rcvbuf))
    s = Session()
    be.session = s
    p = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    p.bind(("127.0.0.1", 0))
    q = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    q.bind(("127.0.0.1", 0))
    qport = q.getsockname()[1]
    q.close()
    be.ports = [(qport, p.getsockname()[1])]
    return be, be.nics(0)[0], s, p


def test_default_is_qemus_own_socket():
    be, nic, s, p = wired(None)
    p.close()
    assert nic.netdev.startswith("dgram,local.type=inet,") and nic.fds == ()
    assert s.undo == [] and "sock_rcvbuf" not in be.collect()


@pytest.mark.skipif(os.geteuid() != 0, reason="SO_RCVBUFFORCE above rmem_max needs root")
def test_qemu_inherits_a_connected_socket_with_the_buffer():
    be, nic, s, p = wired(8 << 20)
    try:
        fd = nic.fds[0]
        assert nic.netdev == "dgram,local.type=fd,local.str=%d" % fd
        spec = qemucmd.GuestSpec("/x.elf", nics=[nic])
        argv = qemucmd.build(spec)
        assert "dgram,local.type=fd,local.str=%d,id=n0" % fd in argv
        assert qemucmd.pass_fds(spec) == (fd,)
        sock = socket.socket(fileno=os.dup(fd))
        try:
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) >= 8 << 20
            assert sock.getpeername() == p.getsockname()
            p.sendto(b"frame", sock.getsockname())
            assert sock.recv(64) == b"frame"
        finally:
            sock.close()
        assert be.collect()["sock_rcvbuf"]["bytes"] == 8 << 20
    finally:
        for fn in s.undo:
            fn()
        p.close()


def test_nic_fails_with_one_line_when_the_port_is_taken():
    be, _, s, p = wired(None)
    be.rcvbuf = 1 << 20
    be.ports = [(p.getsockname()[1], p.getsockname()[1])]
    try:
        with pytest.raises(RunnerError) as e:
            be.nics(0)
        assert "dgram: the socket on 127.0.0.1:%d" % p.getsockname()[1] in e.value.line
    finally:
        p.close()


def test_identity_and_report_name_the_buffer():
    o = run_opts(backend="dgram", machine="microvm", image="/nonexistent")
    assert "sock_rcvbuf" not in identity.of_run(o, ["app=sink"], "tcg")
    o = dataclasses.replace(o, sock_rcvbuf=4 << 20)
    assert identity.of_run(o, ["app=sink"], "tcg")["sock_rcvbuf"] == "4194304"
    rep = {"status": 0, "status_name": "ok", "backend": "dgram", "machine": "microvm",
           "accel": "tcg", "guests": [], "host": {"sock_rcvbuf": {"bytes": 4 << 20,
                                                                   "kernel": [8 << 20]}}}
    assert "4194304 bytes, the runner's socket (kernel SO_RCVBUF 8388608)" in report.human(
        result.RunResult.from_dict(rep))
