"""tap and vhost-net: a tap in a network namespace the runner creates,
QEMU inside it; the tap's interface statistics are the host-side counts."""

import json
import os
import re

from .. import iperf, peer, qemucmd
from ..errors import failed, missing
from ..proc import run_quiet
from .base import Backend, guest_mac, live_from_peer, nic_props


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
