"""The wiring of --topology pvp|pvvp (topologies/pvp.py): a chain of
forwarding guests (app=fwd, NICs a and b) between a tester's two ports.

dgram/socket: the host peer is the tester, two UDP ports on each side of
each guest: `vnperf-peer send` -> fwd1 a, fwd1 b -> fwd2 a (pvvp: QEMU to
QEMU), fwdN b -> `vnperf-peer count --latency` (one-way, host TSC).

vhost-user, --tester gen: testpmd in io mode between 2N+2 net_vhost ports,
paired as testpmd pairs them (0-1, 2-3, ...): port 0 is the tester's first
NIC (a gen guest with two NICs, round trip on its own TSC), 1 and 2 are
fwd1's a and b, ..., the last is the tester's second NIC.

vhost-user, --tester peer: `vnperf-peer-dpdk send` owns fwd1's two
vhost-user sockets, no switch between: it paces frames into a's RX ring and
counts (sequence, one-way latency on the host TSC) what comes out of b."""

import dataclasses
import os

from ..analysis import udpdrops
from ..run import peer, ports, qemucmd, scratch
from ..topologies import pvp as chain
from .base import guest_ip, live_from_peer, nic_props
from .testpmd import VhostUser, queue_counts
from .vhostpeer import DpdkPeerBackend
from .wire import FWD_DST_IP, Dgram, Socket, check_rate, send_args


def nic_mac(guest, nic):
    """fwd i's NICs a (0) and b (1); the tester's are guest nfwd's."""
    return "52:54:00:00:%02x:%02x" % (guest + 1, nic + 1)


class ChainWire:
    """Mixed into Dgram/Socket: a chain over UDP links."""

    max_guests = 2

    def __init__(self, opts, nfwd):
        super().__init__(opts)
        self.nfwd = nfwd
        self.links = []      # (upstream port, downstream port) per link
        self.drops = {}      # "fwd1 a": drops on that QEMU's receiving socket
        self.tx = self.rx = None

    def programs(self):
        return [("host peer", peer.peer_binary())]

    def start(self, session, nguests=1):
        self.session = session
        # Link k feeds fwd k+1's NIC a; link nfwd leads to the counter.
        flat = ports.free_udp_ports(2 * (self.nfwd + 1))
        self.links = [(flat[2 * k], flat[2 * k + 1]) for k in range(self.nfwd + 1)]
        up, down = self.links[-1]
        self.rx = peer.Peer(session, peer.peer_binary(), "count", down, up, ["--latency"],
                            label="peer-rx")
        self.rx.start()
        up, down = self.links[0]
        args = self._peer_args("send")
        args[args.index("--dst-ip") + 1] = FWD_DST_IP
        args[args.index("--dst-mac") + 1] = nic_mac(0, 0)
        self.tx = peer.Peer(session, peer.peer_binary(), "send", up, down, args,
                            label="peer-tx")
        # Stopped in this order: the counter drains after the sender ended.
        self.peers = [self.tx, self.rx]

    def nics(self, index):
        a_up, a_down = self.links[index]
        b_up, b_down = self.links[index + 1]
        # NIC a receives on its link's downstream port; b sends on the next.
        return [self.nic(a_down, a_up, nic_mac(index, 0)),
                self.nic(b_up, b_down, nic_mac(index, 1))]

    def guest_config(self, index):
        return ["ip=" + guest_ip(index)]

    def on_guest_ready(self, index):
        # The last forwarder is the last guest up: the chain is whole.
        if index == self.nfwd - 1 and self.tx.proc is None:
            self.tx.start()

    def tick(self):
        udpdrops.sample(self.drops, {"fwd%d a" % (i + 1): self.links[i][1]
                                     for i in range(self.nfwd)})

    def live(self):
        return live_from_peer(self.rx)

    def collect(self):
        return {"chain": {"backend": "wire", "nfwd": self.nfwd},
                "peer_tx": self.tx.result, "peer_rx": self.rx.result,
                "qemu_socket_drops": dict(self.drops)}


class ChainDgram(ChainWire, Dgram):
    def collect(self):
        return dict(ChainWire.collect(self), **self.rcvbuf_counts())


class ChainSocket(ChainWire, Socket):
    pass


class ChainVhostUser(VhostUser):
    """testpmd io between the tester guest's two NICs and the chain."""

    max_guests = 3

    def __init__(self, opts, nfwd):
        super().__init__(dataclasses.replace(opts, fwd_mode="io"))
        self.nfwd = nfwd

    def start(self, session, nguests=1):
        # One net_vhost port per NIC of the chain: 2 per guest.
        super().start(session, nguests=2 * nguests)

    def _ports(self, index):
        """The testpmd ports of guest index's NICs."""
        if index < self.nfwd:
            return [2 * index + 1, 2 * index + 2]
        return [0, 2 * self.nfwd + 1]

    def nics(self, index):
        return vhost_user_nics(self.opts, index, ["vu%d" % p for p in self._ports(index)])

    def qemu_extra(self, index):
        out = []
        for p in self._ports(index):
            out += ["-chardev", "socket,id=vu%d,path=%s" % (p, self.socks[p])]
        return out

    def guest_config(self, index):
        words = ["ip=" + guest_ip(index)]
        if index == self.nfwd:
            # Not to a forwarder's address: it would keep those frames.
            words += ["dst_ip=" + FWD_DST_IP, "dst_mac=" + nic_mac(0, 0)]
        return words

    def collect(self):
        if not self.stats:
            return {}
        out = {"chain": {"backend": "vhost-user", "nfwd": self.nfwd},
               "testpmd": {"mode": self.mode, "ports": self.stats}}
        if self.queues > 1 and self.streams:
            # Per port, per queue: what its forwarding streams moved.
            out["testpmd"]["queues"] = {p: queue_counts(self.streams[-1], p, self.queues)
                                        for p in range(len(self.socks))}
        return out


def vhost_user_nics(opts, index, chardevs):
    """Guest index's NICs on the vhost-user chardevs (a, b)."""
    props = nic_props(opts)
    if opts.machine != "microvm":
        # QEMU 7.2 under TCG crashes when vhost-user starts with MSI-X.
        props["vectors"] = 0
    mq = ",queues=%d" % opts.queues if (opts.queues or 1) > 1 else ""
    return [qemucmd.Nic("vhost-user,chardev=%s%s" % (c, mq), nic_mac(index, k), props)
            for k, c in enumerate(chardevs)]


class ChainVhostPeer(DpdkPeerBackend):
    """The DPDK host peer on fwd1's two vhost-user sockets: it sends into
    a (paced from the forwarder's DRIVER_OK on) and counts b's frames."""

    name = "vhost-user"
    max_guests = 1
    # EAL init and the ports' sockets take a while on a loaded host.
    START_S = 20.0

    def __init__(self, opts, nfwd):
        super().__init__(opts)
        self.nfwd = nfwd
        self.socks = []

    def check(self):
        check_rate(self.opts)

    def start(self, session, nguests=1):
        tmp = scratch.mkdtemp(session, "vp")
        self.socks = [os.path.join(tmp, "fwd1-%s.sock" % nic) for nic in ("a", "b")]
        self.start_peer(session, self.peer_args(), self.START_S)

    def peer_args(self):
        """vnperf-peer-dpdk send's options on self.socks."""
        args = send_args(self.opts) + [
            "--tx-vhost", self.socks[0], "--rx-vhost", self.socks[1], "--latency",
            "--start-on-usr1"]
        args[args.index("--dst-ip") + 1] = FWD_DST_IP
        args[args.index("--dst-mac") + 1] = nic_mac(0, 0)
        warm, lag = (chain.peer_knob(self.opts, k) for k in ("warmup", "max_lag"))
        if lag and "--rate" in args:
            args += ["--max-lag", "%g" % lag]
        return args + (["--warmup", "%g" % warm] if warm else [])

    def nics(self, index):
        return vhost_user_nics(self.opts, index, ["vp0", "vp1"])

    def qemu_extra(self, index):
        out = []
        for k, sock in enumerate(self.socks):
            out += ["-chardev", "socket,id=vp%d,path=%s" % (k, sock)]
        return out

    def guest_config(self, index):
        return ["ip=" + guest_ip(index)]

    def collect(self):
        by_mode = {r.get("mode"): r for r in (self.peer.results if self.peer else ())}
        return {"chain": {"backend": "vhost-peer", "nfwd": self.nfwd},
                "peer_tx": by_mode.get("send"), "peer_rx": by_mode.get("count")}


def make(name, opts, nfwd):
    """The chain backend for a --backend name; None when it has none."""
    if name == "vhost-user" and chain.tester(opts) == "peer":
        return ChainVhostPeer(opts, nfwd)
    cls = {"dgram": ChainDgram, "socket": ChainSocket, "vhost-user": ChainVhostUser}.get(name)
    return cls(opts, nfwd) if cls else None
