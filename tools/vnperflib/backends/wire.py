"""Backends whose host end is the C peer on a UDP socket: QEMU's dgram and
socket netdevs (one datagram is one frame), or a second guest on the same
wire (--topology guests)."""


import os
import socket

from .. import topologies
from ..analysis import counts, udpdrops
from ..errors import failed, missing, usage
from ..run import peer, ports, qemucmd, scratch, udpsock
from .base import Backend, guest_ip, guest_mac, live_from_peer, nic_props

FWD_DST_IP = "10.0.2.99"
# The backends whose host end sends app reneg's frames back (back=1: each
# set counted both ways, docs/apps.md reneg): the host peer (tap's on its
# tap where it counts them, tap.reneg_back) or testpmd 5tswap (vhost-user,
# its port totals: renegsets.echo_peer) or a UDP socket on the host's
# loopback behind slirp's NAT (user, udpcount.py --echo).
RENEG_BACK = ("dgram", "socket", "tap", "vhost-user", "user", "passt")
# The backends that start the host's iperf 2 server for app reneg's TCP
# stream per set (stream_s=, docs/apps.md reneg): in tap's namespace (not
# your own --tap or --bridge), on the host's loopback behind slirp and passt.
RENEG_STREAM = ("tap", "user", "passt")
# The backends that count app reneg's USO segments per set (uso=, docs/apps.md
# reneg): a UDP socket in tap's namespace (not your own --tap or --bridge)
# gets each segment the host's stack cut (backends/udphost.py).
RENEG_USO = ("tap",)


def reneg_stream_end(opts):
    """Whether the backend of opts has a host iperf end for app reneg's
    streams (RENEG_STREAM)."""
    return opts.backend in RENEG_STREAM and not opts.tap and not opts.bridge


def reneg_uso_end(opts):
    """Whether the backend of opts counts app reneg's USO segments
    (RENEG_USO; IPv4: reneg's frames)."""
    return opts.backend in RENEG_USO and not opts.tap and not opts.bridge and not opts.ip6


def check_rate(opts):
    """Refuses a --rate the host peer cannot parse."""
    try:
        peer.rate_pps(opts.rate, 60)
    except ValueError as e:
        raise usage(str(e))


def send_args(opts):
    """`vnperf-peer send`'s frame, count or duration, and rate options."""
    args = ["--dst-mac", guest_mac(0), "--src-mac", peer.PEER_MAC,
            "--dst-ip", guest_ip(0), "--src-ip", peer.PEER_IP]
    if opts.size:
        args += ["--size", str(opts.size)]
    return args + peer.feed_args(opts, opts.size or 60)


def stream_args(opts, path, src=(peer.PEER_MAC, peer.PEER_IP), dst_ip=None):
    """`vnperf-peer send --stream-file`'s options: the file's rx streams
    from the peer's addresses (src: MAC, IP) to the guest's (dst_ip, else
    the wire's), from the guest app's ready (SIGUSR1) for 0.5 s less than
    the run, so the guest is still counting when they stop
    (docs/streams.md, "Both ways")."""
    return ["--stream-file", path, "--start-on-usr1", "--dst-mac", guest_mac(0),
            "--src-mac", src[0], "--dst-ip", dst_ip or guest_ip(0), "--src-ip", src[1],
            "--duration", "%.1f" % max(0.5, (opts.duration or 5) - 0.5)]


def stream_file(session, opts):
    """The guest's stream text in a file of the run's for the host peer."""
    path = os.path.join(scratch.mkdtemp(session, "streams"), "streams")
    with open(path, "w") as f:
        f.write(opts.stream_text)
    return path


def bidir(opts):
    """A stream file with rx streams: the host peer sends them and counts
    the guest's on the same socket."""
    return "rx" in opts.stream_dirs


class Wire(Backend):
    """Common part of the backends whose host end is the C peer
    (dgram/socket), or a second guest on the same wire (--topology guests)."""

    lossless = True

    def __init__(self, opts):
        super().__init__(opts)
        self.ports = []     # (qemu local port, remote port) per guest
        self.peers = []
        self.qemu_drops = {}  # guest index: drops on QEMU's receiving socket
        self.fwd = False
        self.session = None

    def check(self):
        check_rate(self.opts)

    def programs(self):
        if not topologies.topology_for(self.opts).joins_guests:
            return [("host peer", peer.peer_binary())]
        return []

    def start(self, session, nguests=1):
        self.session = session
        if nguests == 2:
            a, b = ports.free_udp_ports(2)
            self.ports = [(a, b), (b, a)]
            # A receiving QEMU drains its UDP socket only as fast as its
            # guest empties the ring: overflow drops are possible.
            self.lossless = False
            return
        if self.opts.app == "fwd":
            self._start_fwd(session)
            return
        q, p = ports.free_udp_ports(2)
        self.ports = [(q, p)]
        if bidir(self.opts):
            self._start_bidir(session, p, q)
            return
        mode = peer.mode_for_app(self.opts.app)
        pr = peer.Peer(session, peer.peer_binary(), mode, p, q, self._peer_args(mode))
        self.peers.append(pr)
        if mode != "send":
            pr.start()

    def _start_fwd(self, session):
        """app=fwd: the peer sends into the guest's first NIC, a second peer
        counts what the guest forwards out of its second NIC."""
        qa, pa, qb, pb = ports.free_udp_ports(4)
        self.ports = [(qa, pa), (qb, pb)]
        self.fwd = True
        counter = peer.Peer(session, peer.peer_binary(), "count", pb, qb, label="peer-rx")
        counter.start()
        # Not to the guest's own ip=: the forwarder gives those to lwIP.
        args = self._peer_args("send")
        args[args.index("--dst-ip") + 1] = FWD_DST_IP
        self.peers += [counter, peer.Peer(session, peer.peer_binary(), "send", pa, qa, args,
                                          label="peer-tx")]

    def _start_bidir(self, session, p, q):
        """Both ways: one peer counts from before the boot (the guest's
        streams) and sends the rx streams from the guest app's ready."""
        pr = peer.Peer(session, peer.peer_binary(), "send", p, q,
                       stream_args(self.opts, stream_file(session, self.opts)))
        self.peers.append(pr)
        pr.start()

    def _peer_args(self, mode):
        if mode == "send":
            return send_args(self.opts)
        # reneg's frames checked whole (its sets' guest->host counts)
        return ["--verify-csum"] if self.opts.app == "reneg" else []

    def on_guest_ready(self, index):
        for pr in self.peers:
            if pr.proc is None:
                pr.start()
            elif bidir(self.opts):
                pr.go()

    def tick(self):
        # QEMU's receiving sockets vanish with QEMU: keep the last count
        # (by guest, or by NIC for fwd).
        udpdrops.sample(self.qemu_drops, {i: q for i, (q, _) in enumerate(self.ports)})

    def guest_config(self, index):
        if len(self.ports) == 2:
            other = 1 - index
            return ["ip=" + guest_ip(index), "dst_ip=" + guest_ip(other),
                    "dst_mac=" + guest_mac(other)]
        # app reneg: the peer reflects, each set's frames come back (docs/apps.md)
        back = ["back=1"] if self.opts.app == "reneg" and self.name in RENEG_BACK else []
        return ["ip=" + guest_ip(0), "dst_ip=" + peer.PEER_IP, "dst_mac=" + peer.PEER_MAC] + back

    def nics(self, index):
        if self.fwd:
            return [self.nic(q, p, "52:54:00:00:0%d:01" % (k + 1))
                    for k, (q, p) in enumerate(self.ports)]
        q, p = self.ports[index]
        return [self.nic(q, p, guest_mac(index))]

    def nic(self, q, p, mac):
        """The NIC whose QEMU end receives on local port q and sends to p."""
        return qemucmd.Nic(self.netdev(q, p), mac, nic_props(self.opts))

    def processes(self):
        return [("peer", pr.proc.pid) for pr in self.peers if pr.proc is not None]

    def live(self):
        return live_from_peer(self.peers[0] if self.peers else None)

    def healthy(self):
        for pr in self.peers:
            d = pr.dead()
            if d:
                return d
        return None

    def finish(self):
        for pr in self.peers:
            pr.finish()

    def collect(self):
        out = {}
        if self.fwd:
            rx, tx = self.peers
            out = {"peer_rx": rx.result, "peer_tx": tx.result,
                   "tx_packets": (tx.result or {}).get("packets"),
                   "rx_packets": (rx.result or {}).get("vnperf"),
                   "rx_frames": (rx.result or {}).get("packets"),
                   "tx_drops": [counts.drop("qemu_socket", "in QEMU's UDP socket buffer of "
                                            "NIC a (QEMU did not read it in time)",
                                            self.qemu_drops.get(0, 0))]}
            return out
        for pr in self.peers:
            # Both ways: the send line (the rx streams), then the count.
            for res in pr.results or [pr.result]:
                out.update(peer.host_counts(res))
            if len(pr.results) == 2:
                out["peer_tx"] = pr.results[0]
        if self.peers:
            out["tx_drops"] = [counts.drop("qemu_socket", "in QEMU's UDP socket buffer (QEMU did not read it in time)",
                                           self.qemu_drops.get(0, 0))]
        elif self.qemu_drops:
            out["qemu_socket_drops"] = dict(self.qemu_drops)
        return out



class Dgram(Wire):
    """QEMU's dgram netdev: its own socket, or with --sock-rcvbuf one the
    runner made with that receive buffer (udpsock.py), inherited as an fd."""

    name = "dgram"

    def __init__(self, opts):
        super().__init__(opts)
        self.rcvbuf = opts.sock_rcvbuf
        self.rcvbuf_kernel = {}  # QEMU's local port: the kernel's SO_RCVBUF figure

    def check(self):
        super().check()
        if self.rcvbuf:
            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                udpsock.set_rcvbuf(probe, self.rcvbuf)
            except OSError as e:
                raise missing("--sock-rcvbuf %d: %s" % (self.rcvbuf, e))
            finally:
                probe.close()

    def nic(self, q, p, mac):
        if not self.rcvbuf:
            return super().nic(q, p, mac)
        try:
            sock, self.rcvbuf_kernel[q] = udpsock.connected(q, p, self.rcvbuf)
        except OSError as e:
            raise failed("dgram: the socket on 127.0.0.1:%d: %s" % (q, e))
        # QEMU has its copy once started; the runner's goes at the end.
        self.session.on_close(sock.close, what="dgram socket %d" % q)
        return qemucmd.Nic("dgram,local.type=fd,local.str=%d" % sock.fileno(), mac,
                           nic_props(self.opts), fds=[sock.fileno()])

    def collect(self):
        return dict(super().collect(), **self.rcvbuf_counts())

    def rcvbuf_counts(self):
        """The buffer asked for and the kernel's figures, when asked for."""
        if not self.rcvbuf:
            return {}
        return {"sock_rcvbuf": {"bytes": self.rcvbuf,
                                "kernel": sorted(set(self.rcvbuf_kernel.values()))}}

    @staticmethod
    def netdev(q, p):
        return ("dgram,local.type=inet,local.host=127.0.0.1,local.port=%d,"
                "remote.type=inet,remote.host=127.0.0.1,remote.port=%d" % (q, p))


class Socket(Wire):
    name = "socket"

    @staticmethod
    def netdev(q, p):
        return "socket,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (p, q)
