"""vhost-user backend: DPDK dpdk-testpmd with --no-huge, one net_vhost port
per guest, driven through its interactive prompt (start, show port stats
all, quit) so its own port statistics can be read at the end."""

import os
import re
import shutil
import subprocess
import time

from .. import qemucmd, scratch
from ..errors import failed, missing, usage
from .base import Backend, guest_ip, guest_mac, nic_props

TESTPMD = "dpdk-testpmd"
# Guest TX only counted, guest RX only sent to, RR answered, guest <-> guest.
FWD_MODE = {"gen": "rxonly", "sink": "txonly", "rr": "macswap", "reflect": "txonly"}
# dpdk-testpmd 22.11's --forward-mode values: it falls back to io for any
# other word, so a typo must not reach it.
FWD_MODES = ("io", "mac", "macswap", "flowgen", "rxonly", "txonly", "csum", "icmpecho", "noisy",
             "5tswap")
STAT_RE = re.compile(r"(RX-packets|RX-missed|RX-bytes|RX-errors|RX-nombuf|TX-packets|"
                     r"TX-errors|TX-bytes):\s*(\d+)")


def parse_port_stats(text):
    """{port: {"RX-packets": n, ...}} from `show port stats all` output (the
    last block per port wins)."""
    out = {}
    port = None
    for line in text.splitlines():
        m = re.search(r"NIC statistics for port (\d+)", line)
        if m:
            port = int(m.group(1))
            out[port] = {}
            continue
        if port is not None:
            for k, v in STAT_RE.findall(line):
                out[port][k] = int(v)
            if line.strip().startswith("####") and out[port]:
                port = None
    return out


class VhostUser(Backend):
    name = "vhost-user"
    lossless = True
    needs_shared_mem = True
    max_guests = 2

    def __init__(self, opts):
        super().__init__(opts)
        self.proc = None
        self.socks = []
        self.log = None
        self.logpath = None
        self.prefix = scratch.prefix("dpdk").rstrip("-")
        self.stats = {}
        self.mode = None
        self.finished = False

    def check(self):
        if shutil.which(TESTPMD) is None:
            raise missing("vhost-user: %s not found (Debian package dpdk-dev)" % TESTPMD)

    def start(self, session, nguests=1):
        self.session = session
        tmp = scratch.mkdtemp(session, "vu")
        # DPDK leaves its runtime directory behind.
        session.on_close(shutil.rmtree, "/var/run/dpdk/" + self.prefix, True,
                         what="remove DPDK runtime dir")
        self.socks = [os.path.join(tmp, "vhost%d.sock" % i) for i in range(nguests)]
        if nguests == 2:
            if getattr(self.opts, "fwd_mode", None) not in (None, "io"):
                raise usage("vhost-user: two guests are joined by testpmd io; --fwd-mode %s "
                            "does not apply" % self.opts.fwd_mode)
            self.mode = "io"
        else:
            self.mode = getattr(self.opts, "fwd_mode", None) or FWD_MODE.get(self.opts.app,
                                                                             "rxonly")
            if self.opts.app == "rr" and self.mode == "macswap":
                raise usage("vhost-user: rr against testpmd macswap gets its requests back "
                            "unanswered (IPs not swapped); use --topology guests (testpmd io "
                            "between a client and a server VM)")
        vdevs = []
        for i, s in enumerate(self.socks):
            vdevs += ["--vdev", "net_vhost%d,iface=%s,queues=1" % (i, s)]
        ncpu = os.cpu_count() or 1
        lcores = "0-1" if ncpu >= 2 else "0"
        args = ["--forward-mode=" + self.mode, "--nb-cores=1", "--total-num-mbufs=16384",
                "-i"]
        if self.mode == "txonly":
            args += ["--txpkts=%d" % (self.opts.size or 64), "--eth-peer=0,%s" % guest_mac(0)]
        argv = [TESTPMD, "--no-huge", "-m", "512", "-l", lcores, "--no-pci", "--no-shconf",
                "--file-prefix", self.prefix, "--log-level=lib.eal:error"] + vdevs + ["--"] + args
        self.logpath = os.path.join(tmp, "testpmd.log")
        self.log = open(self.logpath, "w+b")
        session.on_close(self.log.close, what="close testpmd log")
        self.proc = session.spawn(argv, name="testpmd", stdin=subprocess.PIPE, stdout=self.log,
                                  stderr=subprocess.STDOUT, watch=session.DAEMON)
        deadline = time.monotonic() + 15
        while not all(os.path.exists(s) for s in self.socks):
            if self.proc.poll() is not None:
                raise failed("testpmd exited at start (status %d): %s"
                             % (self.proc.returncode, self._tail()))
            if time.monotonic() >= deadline:
                raise failed("testpmd did not create its vhost-user sockets within 15 s")
            time.sleep(0.05)
        if self.mode != "txonly":
            self._cmd("start")

    def _tail(self):
        self.log.seek(0)
        lines = [l for l in self.log.read().decode("utf-8", "replace").splitlines() if l.strip()]
        return lines[-1] if lines else "no output"

    def _cmd(self, line):
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise failed("testpmd is gone: " + self._tail())

    def on_guest_ready(self, index):
        if self.mode == "txonly":
            self._cmd("start")

    def nics(self, index):
        props = nic_props(self.opts)
        if self.opts.machine != "microvm":
            # QEMU 7.2 under TCG crashes when vhost-user starts with MSI-X.
            props["vectors"] = 0
        chardev = "vu%d" % index
        nd = "vhost-user,chardev=%s" % chardev
        return [qemucmd.Nic(nd, guest_mac(index), props)]

    def qemu_extra(self, index):
        return ["-chardev", "socket,id=vu%d,path=%s" % (index, self.socks[index])]

    def guest_config(self, index):
        if len(self.socks) == 2:
            other = 1 - index
            return ["ip=" + guest_ip(index), "dst_ip=" + guest_ip(other),
                    "dst_mac=" + guest_mac(other)]
        return ["ip=" + guest_ip(0), "dst_ip=10.0.2.2", "dst_mac=02:00:00:00:00:01"]

    def processes(self):
        return [("testpmd", self.proc.pid)] if self.proc else []

    def healthy(self):
        if self.proc is not None and not self.finished and self.proc.poll() is not None:
            return "testpmd died (status %d): %s" % (self.proc.returncode, self._tail())
        return None

    def finish(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.finished = True
        self._cmd("stop")
        self._cmd("show port stats all")
        self._cmd("quit")
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(10)
        except Exception:
            self.session.stop(self.proc)
        self.log.seek(0)
        self.stats = parse_port_stats(self.log.read().decode("utf-8", "replace"))

    def collect(self):
        if not self.stats:
            return {}
        p = self.stats.get(0, {})
        out = {"testpmd": {"mode": self.mode, "ports": self.stats}}
        if len(self.socks) == 2:
            return out
        # testpmd counts every frame (ARP too): wire-level counts.
        out.update(rx_frames=p.get("RX-packets"), rx_bytes=p.get("RX-bytes"),
                   tx_frames=p.get("TX-packets"), tx_bytes=p.get("TX-bytes"),
                   rx_drops={"testpmd RX-missed": p.get("RX-missed", 0),
                             "testpmd RX-nombuf": p.get("RX-nombuf", 0)},
                   sender_outlives_guest=self.mode == "txonly")
        return out

