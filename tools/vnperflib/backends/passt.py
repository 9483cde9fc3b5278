"""passt backend: passt (user-mode networking through host sockets)
reached by QEMU's -netdev stream; build/passt/passt when `make passt`
built it, else the machine's (passtbin.py). The guest's UDP to the gateway
address lands on the host's loopback (passt maps the gateway to the host),
where the C peer counts datagrams; host->guest goes through a forwarded UDP
port. passt copies between sockets and can drop, so the path is lossy.
app=reneg: the loopback socket is udpcount.py --echo, sending each
datagram back to its source through passt and counting each set's
stream, so both ways are counted per set (back=1), as over slirp; with
stream_s= each set's TCP stream reaches the host's iperf 2 server on the
loopback's iperf port (as a guest client's).
app=iperf: the host's iperf 2 on 127.0.0.1, as over slirp (iperf.py): a
guest client connects to the gateway address, which passt maps to the
host's loopback; a guest server is reached through a TCP port passt
forwards from 127.0.0.1. Only a passt newer than bookworm's carries the
stream (support.py refuses it otherwise). app=rr: vnperf-rrserver on the
host's loopback answers the guest's client at the gateway address.

--ip6: passt IPv6 only (-6), in a namespace of the runner's that gives it
its IPv6 template (passtns.py), with the host's iperf -V or rrserver on
that namespace's ::1, where passt maps the guest's gateway GW_IP6; a
guest server is reached through a TCP port passt forwards from ::1. NDP
stays on: the guest finds the gateway by neighbour discovery, and passt
answers every solicitation with its own MAC (ndp.c, ndp()); router
advertisements and DHCPv6 stay off (the guest's address is static).

passt-vhost-user: the same passt in its vhost-user mode (`--vhost-user`,
where the binary has one: passtbin.has_vhost_user). QEMU hands the guest's
virtqueues to passt over a vhost-user socket, guest RAM shared through a
memfd, and passt reads and writes the rings itself: the device under test
is passt's own virtio code, not QEMU's. Addressing, forwards and the host
peer are the socket mode's. What passt 0.0~git20250503 gives the guest
this way carries VIRTIO_NET_HDR_F_DATA_VALID without
VIRTIO_NET_F_GUEST_CSUM negotiated (virtio 1.2 s5.1.6.4.1: flags MUST be
0); the driver drops every such frame (its rx bad_flags), ARP replies
included, so the guest is given passt's MAC (dst_mac=) and only apps
that send run (topologies/host.py)."""

import os
import subprocess
import time

from ..analysis import counts
from .. import optypes
from ..errors import failed, missing, usage
from ..run import iperf, passtbin, peer, ports, qemucmd, scratch
from ..run import rrhost
from . import passtns, udphost, vhostpeer
from .base import Backend, guest_mac, live_from_peer, nic_props

GUEST_IP = "10.0.2.15"
GW_IP = "10.0.2.2"
# passt's own MAC in vhost-user mode (-M), the guest's dst_mac=.
VU_MAC = "9a:55:9a:55:9a:55"
PORT = 9000


def argv(sock, tcp=None, udp=None, vhost_user=False):
    """passt's command line; tcp, udp: (host port, guest port) forwarded to
    the guest, or None. The TCP port listens on the host's loopback only.
    vhost_user: passt's vhost-user mode on the same socket."""
    return [passtbin.path(), "-f", "-1", "-q", "-s", sock, "-a", GUEST_IP, "-n", "24", "-g", GW_IP,
            "-t", ("127.0.0.1/%d:%d" % tcp) if tcp else "none",
            "-u", ("%d:%d" % udp) if udp else "none",
            "--no-dhcpv6", "--no-ndp", "--no-ra"] + \
        (["--vhost-user", "-M", VU_MAC] if vhost_user else [])


def argv6(ns, sock, tcp=None):
    """--ip6: passt's command line in namespace ns, IPv6 only; tcp: (port
    on ::1, guest port) forwarded to the guest, or None."""
    return ["ip", "netns", "exec", ns, passtbin.path(), "-f", "-1", "-q", "-s", sock, "-6",
            "-a", passtns.GUEST_IP6, "-g", passtns.GW_IP6,
            "-t", ("::1/%d:%d" % tcp) if tcp else "none", "-u", "none",
            "--no-dhcpv6", "--no-ra"]


class Passt(iperf.IperfBackend, Backend):
    name = "passt"
    lossless = False
    vhost_user = False

    def __init__(self, opts):
        super().__init__(opts)
        self.proc = None
        self.sock = None
        self.peer = None
        self.port = None
        self.ports = None
        self.session = None
        self.netns = None
        self.rr = None
        self.echo = None

    def check(self):
        if passtbin.path() is None:
            raise missing("passt: not found (Debian package passt, or make passt)")

    def programs(self):
        if self.opts.app == "rr":
            return [("rr host server", rrhost.rrserver_binary())]
        return [] if self.opts.app == "iperf" else [("host peer", peer.peer_binary())]

    def spawn(self, session, tcp=None, udp=None):
        """Starts passt with these forwards; returns once its socket exists."""
        self.session = session
        # passt drops root for nobody before binding: the socket lives in /tmp.
        self.sock = scratch.path(session, "passt", "%d.sock" % int(time.monotonic() * 1000))
        cmd = argv6(self.netns, self.sock, tcp) if self.netns else \
            argv(self.sock, tcp, udp, self.vhost_user)
        self.proc = session.spawn(cmd, name="passt",
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  watch=session.DAEMON)
        deadline = time.monotonic() + 5
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None:
                raise failed("passt exited at start (status %d)" % self.proc.returncode)
            if time.monotonic() >= deadline:
                raise failed("passt did not create %s within 5 s" % self.sock)
            time.sleep(0.02)

    def start(self, session, nguests=1):
        if self.opts.ip6:
            self.netns = passtns.create(session)
        loopback = "::1" if self.opts.ip6 else "127.0.0.1"
        if self.opts.app == "iperf":
            self.ports = ports.free_tcp_ports(2)  # the host's server; forwarded to the guest's
            client = iperf.config_value(self.opts.config, "role", "client") == "client"
            self.spawn(session, tcp=None if client else (self.ports[1], iperf.PORT))
            self.iperf_start(session, self.netns, loopback, self.ports[0 if client else 1],
                             bind=loopback)
            return
        if self.opts.app == "rr":
            self.spawn(session)
            self.port = self.rr_port()
            self.rr = rrhost.HostRr(session, self.netns, loopback, self.opts, self.port)
            self.rr.start()
            return
        self.port = ports.free_udp_ports(1)[0]
        if self.opts.app == "reneg":
            # each datagram back to passt's socket, each set's stream counted
            self.spawn(session)
            self.echo = udphost.UdpCount(session, None, "127.0.0.1", self.port, echo=True)
            self.echo.start()
            if iperf.reneg_stream_s(self.opts):
                self.iperf_start(session, self.netns, loopback, iperf.PORT, bind=loopback)
            return
        sink = self.opts.app in ("sink", "reflect")
        self.spawn(session, udp=(self.port, PORT) if sink else None)
        if sink:
            # passt writes the frame's headers itself: payloads only, so
            # the guest gets --size-byte frames with the vnperf header
            args = ["--payload-only", "--dst-port", str(self.port)]
            if self.opts.size:
                args += ["--size", str(self.opts.size)]
            args += ["--count", str(self.opts.count)] if self.opts.count \
                else ["--duration", "%.1f" % max(0.5, (self.opts.duration or 5) - 0.5)]
            pps = peer.rate_pps(self.opts.rate, self.opts.size or 60)
            if pps:
                args += ["--rate", str(pps)]
            self.peer = peer.Peer(session, peer.peer_binary(), "send", 0, self.port, args)
        else:
            # The gateway maps to the host: the guest's dst_port is ours.
            self.peer = peer.Peer(session, peer.peer_binary(), "count", self.port, None)
            self.peer.start()

    def rr_port(self):
        """The rr server's port: the guest's dst_port= when given, else
        one free on the host's loopback for its proto=."""
        given = iperf.config_value(self.opts.config, "dst_port", None)
        if given is not None:
            if not (optypes.digits(given) and 1 <= int(given) <= 65535):
                raise usage("dst_port=%s: a port, 1..65535" % given)
            return int(given)
        tcp = iperf.config_value(self.opts.config, "proto", "udp") == "tcp"
        return (ports.free_tcp_ports if tcp else ports.free_udp_ports)(1)[0]

    def on_guest_ready(self, index):
        if self.peer is not None and self.peer.proc is None:
            self.peer.start()
        self.iperf_ready()

    def nics(self, index):
        nd = "stream,server=off,addr.type=unix,addr.path=%s" % self.sock
        return [qemucmd.Nic(nd, guest_mac(index), nic_props(self.opts))]

    def guest_config(self, index):
        words = ["ip=" + GUEST_IP, "gw=" + GW_IP, "dst_ip=" + GW_IP]
        if self.opts.ip6:
            words += ["ip6=" + passtns.GUEST_IP6, "dst_ip6=" + passtns.GW_IP6]
        if self.rr is not None or self.echo is not None:
            # app reneg: the frames' port (its streams go to iperf's own)
            return words + ["dst_port=%d" % self.port] + (["back=1"] if self.echo else [])
        if self.iperf is not None:
            # A guest server listens on iperf's port, where passt forwards.
            return words + (["dst_port=%d" % self.ports[0]] if self.iperf.role == "client"
                            else [])
        sink = self.opts.app in ("sink", "reflect")
        return words + ["dst_port=%d" % (PORT if sink else self.port)]

    def processes(self):
        out = [("passt", self.proc.pid)] if self.proc else []
        if self.peer and self.peer.proc:
            out.append(("peer", self.peer.proc.pid))
        if self.rr is not None and self.rr.proc is not None:
            out.append(("rrserver", self.rr.proc.pid))
        if self.echo is not None and self.echo.proc is not None:
            out.append(("udpecho", self.echo.proc.pid))
        return out + self.iperf_processes()

    def live(self):
        return live_from_peer(self.peer)

    def healthy(self):
        if self.rr is not None:
            return self.rr.dead()
        if self.echo is not None:
            # app reneg: its streams' iperf server too
            return self.echo.dead() or (self.iperf.dead() if self.iperf is not None else None)
        if self.iperf is not None:
            return self.iperf.dead()
        return self.peer.dead() if self.peer else None

    def finish(self):
        if self.rr is not None:
            self.rr.finish()
        if self.peer:
            self.peer.finish()
        if self.echo is not None:
            self.echo.finish()
        if self.iperf is not None:
            self.iperf.finish()

    def collect(self):
        if self.rr is not None:
            return {"rr": self.rr.result} if self.rr.result is not None else {}
        if self.echo is not None:
            # the echo's per-stream counts stand for the host peer's
            out = self.iperf_collect()
            if self.echo.result is not None:
                out.update(udp=self.echo.result, peer=self.echo.result)
            return out
        if self.iperf is not None:
            return self.iperf_collect()
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


class PasstVhostUser(Passt):
    name = "passt-vhost-user"
    vhost_user = True
    needs_shared_mem = True

    def check(self):
        super().check()
        binary = passtbin.path()
        if not passtbin.has_vhost_user(binary):
            raise missing("passt-vhost-user: %s has no --vhost-user (passt 2024_11_27 and "
                          "newer); %s" % (passtbin.describe(binary), passtbin.MAKE_PASST))

    def nics(self, index):
        return [vhostpeer.vhost_nic(self.opts, index)]

    def guest_config(self, index):
        return super().guest_config(index) + ["dst_mac=" + VU_MAC]

    def qemu_extra(self, index):
        # passt refuses a legacy device ("virtio legacy devices aren't
        # supported by passt"): microvm's virtio-mmio is version 1 unless
        # told otherwise (virtio 1.2 s4.2.4).
        modern = ["-global", "virtio-mmio.force-legacy=false"] \
            if self.opts.machine == "microvm" else []
        return ["-chardev", "socket,id=vu%d,path=%s" % (index, self.sock)] + modern
