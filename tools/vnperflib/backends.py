"""Network backends: each one checks the host, starts what it needs, gives
QEMU its -netdev, reports host-side counts and tears everything down through
the session's undo stack (on every exit path)."""

import json
import os
import re

from . import iperf, peer, ports, qemucmd
from .errors import failed, missing, usage
from .proc import run_quiet


class Backend:
    name = "none"
    lossless = False       # host side sees exactly what the guest sent
    needs_shared_mem = False
    netns = None           # namespace QEMU runs in, if any
    max_guests = 1         # --topology guests needs 2

    def __init__(self, opts):
        self.opts = opts

    def check(self):
        """Raises RunnerError(RUNNER_BACKEND_MISSING) when the host lacks it."""

    def start(self, session, nguests=1):
        """Starts peers/devices for nguests guests."""

    def nics(self, index):
        """The qemucmd.Nic list for guest index."""
        return []

    def guest_config(self, index):
        """Config words the backend decides (addresses, MACs)."""
        return []

    def qemu_extra(self, index):
        """Extra QEMU arguments for guest index."""
        return []

    def on_guest_ready(self, index):
        """Guest index can take frames now (senders start)."""

    def tick(self):
        """Called about every 0.1 s while guests run (cheap sampling)."""

    def finish(self):
        """All guests ended: let the host side drain and stop it."""

    def processes(self):
        """[(role, pid)] of backend processes for CPU accounting."""
        return []

    def live(self):
        """Host-side counts now (cheap), for progress lines; {} if none."""
        return {}

    def collect(self):
        """Final host-side counts: {"rx_packets", "rx_bytes", "tx_packets",
        "tx_bytes", ...} as seen by the host end (rx = from the guest)."""
        return {}

    def healthy(self):
        """None, or one line saying which backend process died."""
        return None


class NoBackend(Backend):
    """No NIC at all (selftest and the other non-network apps)."""


FWD_DST_IP = "10.0.2.99"


def guest_mac(index):
    return "52:54:00:00:00:%02x" % (index + 1)


def guest_ip(index):
    return "10.0.2.%d" % (15 + index)


def nic_props(opts):
    """virtio-net device properties from the runner options."""
    props = {}
    if getattr(opts, "event_idx", None) is not None:
        props["event_idx"] = "on" if opts.event_idx else "off"
    if getattr(opts, "queue_size", None):
        props["rx_queue_size"] = opts.queue_size
        props["tx_queue_size"] = opts.queue_size
    return props


class Wire(Backend):
    """Common part of the backends whose host end is the C peer
    (dgram/socket), or a second guest on the same wire (--topology guests)."""

    lossless = True
    max_guests = 2

    def __init__(self, opts):
        super().__init__(opts)
        self.ports = []     # (qemu local port, remote port) per guest
        self.peers = []
        self.qemu_drops = {}  # guest index: drops on QEMU's receiving socket
        self.fwd = False
        self.session = None

    def check(self):
        try:
            peer.rate_pps(getattr(self.opts, "rate", None), 60)
        except ValueError as e:
            raise usage(str(e))
        if getattr(self.opts, "topology", "host") == "host" and \
                not os.access(peer.peer_binary(), os.X_OK):
            raise missing("%s: host peer %s missing (run make)" % (self.name,
                                                                    peer.peer_binary()))

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

    def _peer_args(self, mode):
        o = self.opts
        args = []
        if mode == "send":
            args += ["--dst-mac", guest_mac(0), "--src-mac", peer.PEER_MAC,
                     "--dst-ip", guest_ip(0), "--src-ip", peer.PEER_IP]
            if o.size:
                args += ["--size", str(o.size)]
            if getattr(o, "count", None):
                args += ["--count", str(o.count)]
            else:
                # Stop a little before the guest stops counting.
                d = max(0.5, (o.duration or 5) - 0.5)
                args += ["--duration", "%.1f" % d]
            pps = peer.rate_pps(o.rate, o.size or 60)
            if pps:
                args += ["--rate", str(pps)]
        return args

    def on_guest_ready(self, index):
        for pr in self.peers:
            if pr.proc is None:
                pr.start()

    def tick(self):
        # QEMU's receiving sockets vanish with QEMU: keep the last count
        # (by guest, or by NIC for fwd).
        from . import udpdrops
        d = udpdrops.drops_by_port()
        for i, (q, _) in enumerate(self.ports):
            if q in d:
                self.qemu_drops[i] = d[q]

    def guest_config(self, index):
        if len(self.ports) == 2:
            other = 1 - index
            return ["ip=" + guest_ip(index), "dst_ip=" + guest_ip(other),
                    "dst_mac=" + guest_mac(other)]
        return ["ip=" + guest_ip(0), "dst_ip=" + peer.PEER_IP, "dst_mac=" + peer.PEER_MAC]

    def nics(self, index):
        if self.fwd:
            return [qemucmd.Nic(self.netdev(q, p), "52:54:00:00:0%d:01" % (k + 1),
                                nic_props(self.opts)) for k, (q, p) in enumerate(self.ports)]
        q, p = self.ports[index]
        return [qemucmd.Nic(self.netdev(q, p), guest_mac(index), nic_props(self.opts))]

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
                   "tx_drops": {"QEMU's UDP socket buffer (first NIC)":
                                self.qemu_drops.get(0, 0)}}
            return out
        for pr in self.peers:
            out.update(peer.host_counts(pr.result))
        if self.peers:
            out["tx_drops"] = {"QEMU's UDP socket buffer": self.qemu_drops.get(0, 0)}
        elif self.qemu_drops:
            out["qemu_socket_drops"] = dict(self.qemu_drops)
        return out


def live_from_peer(pr):
    """Progress-line figures: what the host end counted so far."""
    if pr is None:
        return {}
    c = pr.live()
    if pr.mode == "send" and "sent" in c:
        return {"host sent": c["sent"]}
    if "packets" in c:
        out = {"host rx": c["packets"]}
        if "lost" in c:
            out["lost"] = c["lost"]
        return out
    return {}


class Dgram(Wire):
    name = "dgram"

    @staticmethod
    def netdev(q, p):
        return ("dgram,local.type=inet,local.host=127.0.0.1,local.port=%d,"
                "remote.type=inet,remote.host=127.0.0.1,remote.port=%d" % (q, p))


class Socket(Wire):
    name = "socket"

    @staticmethod
    def netdev(q, p):
        return "socket,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (p, q)


class Hub(Backend):
    """QEMU's own virtio-net device and nothing behind it: the NIC on a hub
    with a second, unattached port (a one-port hub refuses frames)."""

    name = "hub"

    def nics(self, index):
        return [qemucmd.Nic("hubport,hubid=%d" % index, guest_mac(index), nic_props(self.opts))]

    def qemu_extra(self, index):
        return ["-netdev", "hubport,id=hubnull%d,hubid=%d" % (index, index)]

    def guest_config(self, index):
        return ["ip=" + guest_ip(index), "dst_ip=" + peer.PEER_IP, "dst_mac=" + peer.PEER_MAC]


class User(Backend):
    """slirp, restricted: nothing leaves the host."""

    name = "user"

    def nics(self, index):
        return [qemucmd.Nic("user,restrict=on,net=10.0.2.0/24,host=10.0.2.2", guest_mac(index),
                            nic_props(self.opts))]

    def guest_config(self, index):
        return ["ip=" + guest_ip(index), "gw=10.0.2.2", "dst_ip=10.0.2.2"]


REGISTRY = {"none": NoBackend, "dgram": Dgram, "socket": Socket, "hub": Hub, "user": User}


def names():
    return list(REGISTRY)


def make(name, opts):
    if name not in REGISTRY:
        raise usage("unknown backend %r: one of %s" % (name, ", ".join(REGISTRY)))
    return REGISTRY[name](opts)


class Tap(Backend):
    """A tap inside a network namespace the runner creates (no route out);
    QEMU runs inside the namespace. Host-side counts are the tap's own
    interface statistics (its RX is what the guest sent)."""

    name = "tap"
    lossless = True
    vhost = False
    TAP = "vntap0"
    HOST_IP = "10.0.0.1"
    GUEST_IP = "10.0.0.2"
    _seq = 0

    def __init__(self, opts):
        super().__init__(opts)
        self.netns = None
        self.tap_mac = None
        self.base = None
        self.sender = None
        self.iperf = None

    def check(self):
        if os.geteuid() != 0:
            raise missing("%s: needs root (CAP_NET_ADMIN) to create a namespace and a tap"
                          % self.name)
        if not os.path.exists("/dev/net/tun"):
            raise missing("%s: /dev/net/tun missing (modprobe tun)" % self.name)
        if self.vhost and not os.path.exists("/dev/vhost-net"):
            raise missing("vhost-net: /dev/vhost-net missing (modprobe vhost_net; in a "
                          "container, pass the device in)")

    def _ip(self, *args):
        rc, out = run_quiet(["ip"] + list(args))
        if rc != 0:
            raise failed("%s: ip %s: %s" % (self.name, " ".join(args), out.strip()))
        return out

    @staticmethod
    def remove_stale_namespaces():
        """Namespaces of runners that were killed (SIGKILL leaves no time to
        clean up): vnperf-[TAG-]PID-N whose PID is gone."""
        rc, out = run_quiet(["ip", "netns", "list"])
        removed = []
        for line in out.splitlines() if rc == 0 else ():
            name = line.split()[0] if line.strip() else ""
            m = re.match(r"^vnperf-(?:[0-9a-f]+-)?(\d+)-\d+$", name)
            if m and not os.path.exists("/proc/%s" % m.group(1)):
                if run_quiet(["ip", "netns", "del", name])[0] == 0:
                    removed.append(name)
        return removed

    def start(self, session, nguests=1):
        self.remove_stale_namespaces()
        Tap._seq += 1
        # The test harness's tag (if any) in the name lets a test find its own.
        tag = os.environ.get("VNPERF_TEST_TAG")
        ns = "vnperf-%s%d-%d" % (tag + "-" if tag else "", os.getpid(), Tap._seq)
        self._ip("netns", "add", ns)
        session.on_close(self._ip, "netns", "del", ns, what="delete namespace " + ns)
        self.netns = ns
        self._ip("-n", ns, "link", "set", "lo", "up")
        # No IPv6 chatter towards the guest: host->guest counts stay exact.
        for k in ("all", "default"):
            run_quiet(["ip", "netns", "exec", ns, "sysctl", "-qw",
                       "net.ipv6.conf.%s.disable_ipv6=1" % k])
        self._ip("-n", ns, "tuntap", "add", "dev", self.TAP, "mode", "tap", "vnet_hdr")
        self._ip("-n", ns, "addr", "add", self.HOST_IP + "/24", "dev", self.TAP)
        self._ip("-n", ns, "link", "set", self.TAP, "up")
        self._ip("-n", ns, "neigh", "replace", self.GUEST_IP, "lladdr", guest_mac(0),
                 "dev", self.TAP, "nud", "permanent")
        self.tap_mac, self.base = self._stats()
        if self.opts.app == "iperf":
            self.iperf = iperf.HostIperf(session, ns, self.GUEST_IP, self.opts)
            if self.iperf.role == "client":
                self.iperf.start()
            return
        if self.opts.app in ("sink", "reflect"):
            # Host -> guest: the peer inside the namespace sends UDP to the
            # guest through the kernel's own stack (the frame it builds is
            # the UDP payload).
            args = ["--dst-port", "9000"]
            if self.opts.size:
                args += ["--size", str(max(60, self.opts.size - 42))]
            args += ["--count", str(self.opts.count)] if getattr(self.opts, "count", None) \
                else ["--duration", "%.1f" % max(0.5, (self.opts.duration or 5) - 0.5)]
            pps = peer.rate_pps(self.opts.rate, self.opts.size or 60)
            if pps:
                args += ["--rate", str(pps)]
            self.sender = peer.Peer(session, peer.peer_binary(), "send", 0, 9000, args,
                                    host=self.HOST_IP, remote_host=self.GUEST_IP,
                                    netns=ns)

    def on_guest_ready(self, index):
        if self.sender is not None and self.sender.proc is None:
            self.sender.start()
        if self.iperf is not None and self.iperf.proc is None:
            self.iperf.start()

    def healthy(self):
        if self.iperf is not None:
            return self.iperf.dead()
        return self.sender.dead() if self.sender else None

    def finish(self):
        if self.sender:
            self.sender.finish()
        if self.iperf is not None:
            self.iperf.finish()

    def processes(self):
        if self.iperf is not None and self.iperf.proc is not None:
            return [("iperf", self.iperf.proc.pid)]
        return [("peer", self.sender.proc.pid)] if self.sender and self.sender.proc else []

    def live(self):
        return live_from_peer(self.sender)

    def _stats(self):
        out = self._ip("-n", self.netns, "-s", "-j", "link", "show", self.TAP)
        link = json.loads(out)[0]
        return link.get("address"), link.get("stats64", {})

    def nics(self, index):
        nd = "tap,ifname=%s,script=no,downscript=no" % self.TAP
        if self.vhost:
            nd += ",vhost=on"
        return [qemucmd.Nic(nd, guest_mac(index), nic_props(self.opts))]

    def guest_config(self, index):
        return ["ip=" + self.GUEST_IP, "dst_ip=" + self.HOST_IP, "dst_mac=" + self.tap_mac]

    def collect(self):
        if self.netns is None:
            return {}
        _, now = self._stats()
        rx, tx = now.get("rx", {}), now.get("tx", {})
        brx, btx = self.base.get("rx", {}), self.base.get("tx", {})

        def d(a, b, k):
            return a.get(k, 0) - b.get(k, 0)
        # Interface statistics count every frame: wire-level counts.
        out = {"rx_frames": d(rx, brx, "packets"), "rx_bytes": d(rx, brx, "bytes"),
               "tx_frames": d(tx, btx, "packets"), "tx_bytes": d(tx, btx, "bytes"),
               "rx_drops": {"tap rx_dropped": d(rx, brx, "dropped")},
               "tx_drops": {"tap tx_dropped": d(tx, btx, "dropped")}}
        if self.sender is not None and self.sender.result is not None:
            out["peer"] = self.sender.result
            out["tx_packets"] = self.sender.result["packets"]
        if self.iperf is not None:
            out["iperf"] = self.iperf.result
        return out


class VhostNet(Tap):
    name = "vhost-net"
    vhost = True


REGISTRY.update({"tap": Tap, "vhost-net": VhostNet})


# Backends in their own modules register themselves.
from . import testpmd  # noqa: E402,F401
from . import passt  # noqa: E402,F401
