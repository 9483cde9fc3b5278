"""passt backend: Debian's passt (user-mode networking through host
sockets) reached by QEMU's -netdev stream. The guest's UDP to the gateway
address lands on the host's loopback (passt maps the gateway to the host),
where the C peer counts datagrams; host->guest goes through a forwarded UDP
port. passt copies between sockets and can drop, so the path is lossy."""

import os
import shutil
import subprocess
import time

from .. import counts, peer, ports, qemucmd, scratch
from ..errors import failed, missing
from .base import Backend, guest_mac, live_from_peer, nic_props

PASST = "passt"
GUEST_IP = "10.0.2.15"
GW_IP = "10.0.2.2"
PORT = 9000


class Passt(Backend):
    name = "passt"
    lossless = False

    def __init__(self, opts):
        super().__init__(opts)
        self.proc = None
        self.sock = None
        self.peer = None
        self.port = None
        self.session = None

    def check(self):
        if shutil.which(PASST) is None:
            raise missing("passt: %s not found (Debian package passt)" % PASST)

    def programs(self):
        return [("host peer", peer.peer_binary())]

    def start(self, session, nguests=1):
        self.session = session
        # passt drops root for nobody before binding: the socket lives in /tmp.
        self.sock = scratch.path(session, "passt", "%d.sock" % int(time.monotonic() * 1000))
        self.port = ports.free_udp_ports(1)[0]
        sink = self.opts.app in ("sink", "reflect")
        args = [PASST, "-f", "-1", "-q", "-s", self.sock, "-a", GUEST_IP, "-n", "24",
                "-g", GW_IP, "-t", "none", "-u", ("%d:%d" % (self.port, PORT)) if sink else "none",
                "--no-dhcpv6", "--no-ndp", "--no-ra"]
        self.proc = session.spawn(args, name="passt", stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, watch=session.DAEMON)
        deadline = time.monotonic() + 5
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None:
                raise failed("passt exited at start (status %d)" % self.proc.returncode)
            if time.monotonic() >= deadline:
                raise failed("passt did not create %s within 5 s" % self.sock)
            time.sleep(0.02)
        if sink:
            args = ["--dst-port", str(self.port)]
            if self.opts.size:
                args += ["--size", str(self.opts.size)]
            args += ["--count", str(self.opts.count)] if getattr(self.opts, "count", None) \
                else ["--duration", "%.1f" % max(0.5, (self.opts.duration or 5) - 0.5)]
            pps = peer.rate_pps(self.opts.rate, self.opts.size or 60)
            if pps:
                args += ["--rate", str(pps)]
            self.peer = peer.Peer(session, peer.peer_binary(), "send", 0, self.port, args)
        else:
            # The gateway maps to the host: the guest's dst_port is ours.
            self.peer = peer.Peer(session, peer.peer_binary(), "count", self.port, None)
            self.peer.start()

    def on_guest_ready(self, index):
        if self.peer is not None and self.peer.proc is None:
            self.peer.start()

    def nics(self, index):
        nd = "stream,server=off,addr.type=unix,addr.path=%s" % self.sock
        return [qemucmd.Nic(nd, guest_mac(index), nic_props(self.opts))]

    def guest_config(self, index):
        sink = self.opts.app in ("sink", "reflect")
        return ["ip=" + GUEST_IP, "gw=" + GW_IP, "dst_ip=" + GW_IP,
                "dst_port=%d" % (PORT if sink else self.port)]

    def processes(self):
        out = [("passt", self.proc.pid)] if self.proc else []
        if self.peer and self.peer.proc:
            out.append(("peer", self.peer.proc.pid))
        return out

    def live(self):
        return live_from_peer(self.peer)

    def healthy(self):
        return self.peer.dead() if self.peer else None

    def finish(self):
        if self.peer:
            self.peer.finish()

    def collect(self):
        res = self.peer.result if self.peer else None
        if res is None:
            return {}
        # The peer gets UDP payloads (passt ends the guest's UDP on a host
        # socket), not frames: every datagram is one of the app's packets.
        out = {"peer": res}
        drops = [counts.drop("peer", "in the peer's socket buffer (SO_RXQ_OVFL)",
                             (res.get("errors") or {}).get("sock_drops", 0))]
        if res["mode"] == "count":
            out.update(rx_packets=res["packets"], rx_bytes=res["bytes"], rx_drops=drops)
        else:
            out.update(tx_packets=res["packets"], tx_bytes=res["bytes"])
        return out

