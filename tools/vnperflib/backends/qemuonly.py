"""Backends that are QEMU alone, with no host end to count: a hub with an
unattached port (the device model as a null sink), slirp, and a NIC of the
user's own command line."""

from ..run import iperf, peer, ports, qemucmd
from . import udphost
from .base import Backend, guest_ip, guest_mac, nic_props


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


class OwnNic(Hub):
    """A virtio-net device of the user's own on QEMU's command line
    (--qemu-args-file, --qemu-arg), measured as it is: the runner adds no
    NIC and has no host end to count on; the guest's driver takes the first
    virtio-net device. Its addressing is the hub's, unless the config words
    after -- say otherwise."""

    name = "none"

    def nics(self, index):
        return []

    def qemu_extra(self, index):
        return []


class User(iperf.IperfBackend, Backend):
    """slirp, restricted (nothing leaves the host) except for app=iperf
    with the guest as the client: the guest's gateway address is the
    host's loopback, where the host's iperf server listens (restrict=on
    would refuse that connection); the guest as server is reached through
    a port forwarded from the host's loopback. app=reneg: its frames to the
    gateway reach a UDP socket on the host's loopback that sends each back
    to its source (slirp's NAT) and counts each set's stream, so both ways
    are counted per set (back=1, docs/apps.md, reneg); with stream_s= each
    set's TCP stream reaches the host's iperf server on the loopback's
    iperf port, as a guest client's does."""

    name = "user"
    GUEST_IP = "10.0.2.15"
    GW_IP = "10.0.2.2"
    # --ip6: slirp's IPv6 net and its own address, which it maps to the
    # host's loopback (::1) as it maps GW_IP to 127.0.0.1.
    NET6 = "fd00:766e:2::/64"
    GW_IP6 = "fd00:766e:2::2"
    GUEST_IP6 = "fd00:766e:2::15"

    def __init__(self, opts):
        super().__init__(opts)
        self.ports = None
        self.echo = None

    def start(self, session, nguests=1):
        if self.opts.app == "reneg":
            self.ports = ports.free_udp_ports(1)
            self.echo = udphost.UdpCount(session, None, "127.0.0.1", self.ports[0], echo=True)
            self.echo.start()
            if iperf.reneg_stream_s(self.opts):
                self.iperf_start(session, None, "127.0.0.1", iperf.PORT)
        if self.opts.app == "iperf":
            self.ports = ports.free_tcp_ports(2)  # the host's server; forwarded to the guest's
            client = iperf.config_value(self.opts.config, "role", "client") == "client"
            self.iperf_start(session, None, "127.0.0.1", self.ports[0 if client else 1])

    def on_guest_ready(self, index):
        self.iperf_ready()

    def nics(self, index):
        nd = "user,net=10.0.2.0/24,host=" + self.GW_IP
        if self.opts.ip6:
            # both named: naming one family alone turns the other off (QEMU 7.2)
            nd += ",ipv4=on,ipv6=on,ipv6-net=%s,ipv6-host=%s" % (self.NET6, self.GW_IP6)
        # restrict=on would drop the guest's connections to the host's loopback
        if self.echo is None and (self.iperf is None or self.iperf.role != "client"):
            nd += ",restrict=on"
        if self.iperf is not None and self.iperf.role == "server":
            nd += ",hostfwd=tcp:127.0.0.1:%d-%s:%d" % (self.ports[1], self.GUEST_IP, iperf.PORT)
        return [qemucmd.Nic(nd, guest_mac(index), nic_props(self.opts))]

    def guest_config(self, index):
        words = ["ip=" + guest_ip(index), "gw=" + self.GW_IP, "dst_ip=" + self.GW_IP]
        if self.opts.ip6:
            words += ["ip6=" + self.GUEST_IP6, "dst_ip6=" + self.GW_IP6]
        if self.echo is not None:
            # app reneg: the frames' port (its streams go to iperf's own)
            words += ["dst_port=%d" % self.ports[0], "back=1"]
        elif self.iperf is not None and self.iperf.role == "client":
            words.append("dst_port=%d" % self.ports[0])
        return words

    def healthy(self):
        return (self.echo.dead() if self.echo is not None else None) or \
            (self.iperf.dead() if self.iperf is not None else None)

    def finish(self):
        if self.echo is not None:
            self.echo.finish()
        if self.iperf is not None:
            self.iperf.finish()

    def processes(self):
        echo = [("udpecho", self.echo.proc.pid)] if self.echo is not None and \
            self.echo.proc is not None else []
        return echo + self.iperf_processes()

    def collect(self):
        out = self.iperf_collect()
        if self.echo is not None and self.echo.result is not None:
            # the echo's per-stream counts stand for the host peer's
            out.update(udp=self.echo.result, peer=self.echo.result)
        return out
