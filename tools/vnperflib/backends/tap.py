"""tap and vhost-net: a tap in a network namespace the runner creates,
QEMU inside it; the tap's interface statistics are the host-side counts."""

import os

from .. import counts, iperf, peer, qemucmd, rrhost
from ..errors import failed, missing
from . import netns
from .base import Backend, guest_mac, live_from_peer, nic_props


class Tap(iperf.IperfBackend, Backend):
    """A tap inside a network namespace the runner creates (no route out);
    QEMU runs inside the namespace. Host-side counts are the tap's own
    interface statistics (its RX is what the guest sent). app=rr: the
    guest's client is answered by vnperf-rrserver in the namespace."""

    name = "tap"
    lossless = True
    vhost = False
    TAP = "vntap0"

    def __init__(self, opts):
        super().__init__(opts)
        self.netns = None
        self.tap_mac = None
        self.base = None
        self.sender = None
        self.rr = None

    def check(self):
        if os.geteuid() != 0:
            raise missing("%s: needs root (CAP_NET_ADMIN) to create a namespace and a tap"
                          % self.name)
        if not os.path.exists("/dev/net/tun"):
            raise missing("%s: /dev/net/tun missing (modprobe tun)" % self.name)
        if self.vhost and not os.path.exists("/dev/vhost-net"):
            raise missing("vhost-net: /dev/vhost-net missing (modprobe vhost_net; in a "
                          "container, pass the device in)")

    def programs(self):
        if self.opts.app == "rr":
            return [("rr host server", rrhost.rrserver_binary())]
        if self.opts.app in ("sink", "reflect"):
            return [("host peer", peer.peer_binary())]
        return []

    def start(self, session, nguests=1):
        ns = self.netns = netns.create(session)
        netns.ip("-n", ns, "tuntap", "add", "dev", self.TAP, "mode", "tap", "vnet_hdr")
        netns.face_guest(ns, self.TAP, guest_mac(0))
        self.tap_mac, self.base = self._stats()
        if self.opts.app == "iperf":
            self.iperf_start(session, ns, netns.GUEST_IP)
        elif self.opts.app == "rr":
            self.rr = rrhost.HostRr(session, ns, netns.HOST_IP, self.opts)
            self.rr.start()
        elif self.opts.app in ("sink", "reflect"):
            self.sender = netns.sender(session, self.opts, ns)

    def on_guest_ready(self, index):
        if self.sender is not None and self.sender.proc is None:
            self.sender.start()
        self.iperf_ready()

    def healthy(self):
        if self.iperf is not None:
            return self.iperf.dead()
        if self.rr is not None:
            return self.rr.dead()
        return self.sender.dead() if self.sender else None

    def finish(self):
        if self.sender:
            self.sender.finish()
        if self.iperf is not None:
            self.iperf.finish()
        if self.rr is not None:
            self.rr.finish()

    def processes(self):
        if self.iperf is not None:
            return self.iperf_processes()
        if self.rr is not None and self.rr.proc is not None:
            return [("rrserver", self.rr.proc.pid)]
        return [("peer", self.sender.proc.pid)] if self.sender and self.sender.proc else []

    def live(self):
        return live_from_peer(self.sender)

    def _stats(self):
        got = netns.link(self.netns, self.TAP)
        if got is None:
            raise failed("%s: %s is gone from %s" % (self.name, self.TAP, self.netns))
        return got

    def nics(self, index):
        nd = "tap,ifname=%s,script=no,downscript=no" % self.TAP
        if self.vhost:
            nd += ",vhost=on"
        return [qemucmd.Nic(nd, guest_mac(index), nic_props(self.opts))]

    def guest_config(self, index):
        return ["ip=" + netns.GUEST_IP, "dst_ip=" + netns.HOST_IP, "dst_mac=" + self.tap_mac]

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
               "rx_drops": [counts.drop("backend", "dropped by the host kernel at the tap "
                                        "(rx_dropped)", d(rx, brx, "dropped"))],
               "tx_drops": [counts.drop("backend", "dropped at the tap's queue towards "
                                        "QEMU (tx_dropped)", d(tx, btx, "dropped"))]}
        if self.sender is not None and self.sender.result is not None:
            out["peer"] = self.sender.result
            out["tx_packets"] = self.sender.result["packets"]
        out.update(self.iperf_collect())
        if self.rr is not None and self.rr.result is not None:
            out["rr"] = self.rr.result
        return out


class VhostNet(Tap):
    name = "vhost-net"
    vhost = True
