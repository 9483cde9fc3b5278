"""Shared helpers for the integration tests: paths, booting the image,
running the runner, free UDP ports, and finding what a test left behind.

Every process a test starts inherits VNPERF_TEST_TAG (set per test by
conftest.py), so leftovers are found by that tag in /proc/*/environ and
never confused with QEMUs other people run on the same machine."""

import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "py"))

from vnpy import PYTHON, ROOT, VNPERF, run_vnperf  # noqa: E402,F401

BUILD = os.path.join(ROOT, "build")
IMAGE = os.path.join(BUILD, "vnperf.elf")
PEER = os.path.join(BUILD, "tools", "vnperf-peer")
TAG_ENV = "VNPERF_TEST_TAG"
NETNS_PREFIX = "vnperf-"

from vnperflib import exitcodes
from vnperflib.run import guest, protocol, qemucmd  # noqa: E402,F401
from vnperflib.run.proc import Session  # noqa: E402

_ports_given = set()


def free_udp_port():
    """A UDP port on 127.0.0.1 nobody uses now, never the same one twice in
    this test session."""
    for _ in range(100):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        finally:
            s.close()
        if port not in _ports_given:
            _ports_given.add(port)
            return port
    raise RuntimeError("no free UDP port")


def free_udp_ports(n):
    return [free_udp_port() for _ in range(n)]


def dgram_netdev(local_port, remote_port):
    return ("dgram,local.type=inet,local.host=127.0.0.1,local.port=%d,"
            "remote.type=inet,remote.host=127.0.0.1,remote.port=%d" % (local_port, remote_port))


class Boot:
    """What one boot produced."""

    def __init__(self, g):
        self.code = g.guest_code            # None: no isa-debug-exit
        self.qemu_status = g.qemu_status
        self.timed_out = g.timed_out
        self.wall_s = g.wall_s
        self.ready_s = g.t_ready
        self.console = g.console.text()
        self.lines = g.console.lines
        self.stderr = g.stderr_text()
        self.problems = g.console.problems(g.guest_code)
        self._c = g.console

    def msgs(self, type_):
        """Every machine line of that type, in order."""
        return self._c.all(type_)

    def one(self, type_):
        """The single machine line of that type (asserts there is one)."""
        m = self._c.all(type_)
        assert len(m) == 1, "expected one %r line, got %d:\n%s" % (type_, len(m), self.console)
        return m[0]

    def __repr__(self):
        return "Boot(code=%r, qemu_status=%r, timed_out=%r)" % (
            self.code, self.qemu_status, self.timed_out)


def boot(config=(), machine="microvm", netdevs=(), timeout=30, memory=128, append=None,
         image=IMAGE, extra=(), nic_props=None, shared_mem=False):
    """Boots the image once under TCG. config: key=value words (fw_cfg);
    netdevs: -netdev values without id (one virtio-net NIC each);
    shared_mem: guest RAM as a shared memfd (vhost-user). QEMU is killed
    on every path."""
    if isinstance(config, str):
        config = config.split()
    nics = [qemucmd.Nic(nd, "52:54:00:00:01:%02x" % i, nic_props)
            for i, nd in enumerate(netdevs)]
    spec = qemucmd.GuestSpec(image, machine=machine, memory_mb=memory, accel="tcg",
                             config=config, nics=nics, cmdline=append, extra=extra,
                             name="vnperf-test", shared_mem=shared_mem)
    g = guest.Guest(spec)
    with Session() as s:
        g.start(s)
        guest.pump([g], timeout)
    return Boot(g)


def tagged_pids(tag):
    """Pids of live processes whose environment carries the test tag."""
    needle = ("%s=%s" % (TAG_ENV, tag)).encode()
    me = os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/stat" % d) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state != "Z":
            out.append(int(d))
    return out


def proc_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def netns_list():
    r = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True)
    return {line.split()[0] for line in r.stdout.splitlines() if line.strip()}


def vnperf_netns():
    return {n for n in netns_list() if n.startswith(NETNS_PREFIX)}


def wait_gone(pids, timeout=5.0):
    """Waits until none of pids is alive; returns those still alive."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if os.path.exists("/proc/%d" % p)]
        if alive:
            time.sleep(0.05)
    return alive
