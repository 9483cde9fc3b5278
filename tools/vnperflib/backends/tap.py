"""tap and vhost-net: a tap in a network namespace the runner creates,
QEMU inside it; or the user's own tap (--tap IF), or a tap of the
runner's own on the user's bridge (--bridge BR), in the runner's own
namespace. The tap's interface statistics are the host-side counts."""

import ipaddress
import itertools
import os
import re

from ..analysis import counts, rss
from ..errors import failed, missing, usage
from ..run import iperf, peer, qemucmd, rrhost, scratch, vlan
from ..run.iperf import config_value
from ..run.proc import run_quiet
from . import netns, udphost, vlantc, wire
from .base import Backend, guest_mac, live_from_peer, nic_props

# /sys/class/net/IF/tun_flags bits (linux/if_tun.h) and flags' IFF_UP.
IFF_TAP = 0x0002
IFF_MULTI_QUEUE = 0x0100
IFF_VNET_HDR = 0x4000
IFF_UP = 0x1
CAP_NET_ADMIN = 12
# The backends that take --tap and --bridge.
OWN_TAP_BACKENDS = ("tap", "vhost-net")
# --bridge's tap: vnb<runner pid>-<n>, at most IFNAMSIZ-1 (15) characters.
BRIDGE_TAP = re.compile(r"^vnb(\d+)-\d+$")
_seq = itertools.count(1)


def counts_flows(opts):
    """Whether the host peer counts what the namespace's tap receives by
    flow: gen over several queue pairs (IPv4; uso= has its own UDP count),
    so each pair is judged both sides (docs/runner-run.md, --queues), and
    app reneg, each set's stream apart (docs/apps.md)."""
    several = opts.app == "gen" and (opts.queues or 1) > 1
    return ((several or opts.app == "reneg") and not opts.ip6
            and not udphost.wanted(opts) and not opts.tap and not opts.bridge)


def packet_count(res, drops):
    """The host peer's count of what the tap received on its packet
    socket: the vnperf frames (app level), the drops (the tap's) and the
    frames its socket buffer lost."""
    full = (res.get("errors") or {}).get("sock_drops", 0)
    return {"peer": res, "rx_packets": res.get("vnperf", res["packets"]),
            "rx_drops": drops + [counts.drop(
                "peer", "in the host peer's packet socket buffer", full)]}


def reneg_uso_count(opts):
    """Whether the namespace's UDP socket counts app reneg's USO segments
    (uso=, each set's on a stream of its own: run/udpcount.py) beside the
    host peer that reflects its frames (reneg_back), which leaves the GSO
    frames to the host's stack (docs/peer.md, --rx-if)."""
    return reneg_back(opts) and udphost.reneg_uso(opts)


def reneg_back(opts):
    """Whether the host peer sends app reneg's frames back (back=1, each
    set counted both ways: docs/apps.md, reneg): where it counts them on
    the namespace's tap."""
    return opts.app == "reneg" and counts_flows(opts)


class Tap(iperf.IperfBackend, Backend):
    """A tap inside a network namespace the runner creates (no route out);
    QEMU runs inside the namespace. Host-side counts are the tap's own
    interface statistics (its RX is what the guest sent). app=rr: the
    guest's client is answered by vnperf-rrserver in the namespace."""

    name = "tap"
    lossless = True
    vhost = False
    max_queues = qemucmd.MAX_QUEUES
    TAP = "vntap0"

    def __init__(self, opts):
        super().__init__(opts)
        self.dev = self.TAP
        self.dst_ip = netns.HOST_IP
        self.dst_mac = None
        self.base = None
        self.sender = None
        self.rr = None
        self.udp = None
        self.counter = None
        self.streams = None     # rx streams: the host peer sending them onto the tap
        self.vlan = None        # netif_vlan=: the host end's device (TAP.ID, or the tap with
        self.vlan_base = None   # tc-bpf) and its counts at the tap's base
        self.vlan_end = None    # and the host end chosen, with the line that says so
        self.vlan_note = None

    def check(self):
        if os.geteuid() != 0:
            raise missing("%s: needs root (CAP_NET_ADMIN) to create a namespace and a tap"
                          % self.name)
        self.check_devices()
        if vlan.vid(self.opts):
            self.choose_vlan_end()

    def choose_vlan_end(self):
        """netif_vlan=: the host end this host has (run/vlan.py
        choose_end), or the one line why none."""
        if self.vlan_end is None:
            end, line = vlan.choose_end(self.opts.vlan_end, vlan.kernel_refusal(),
                                        vlantc.refusal())
            if end is None:
                raise missing("%s: %s" % (self.name, line))
            self.vlan_end, self.vlan_note = end, "%s: %s" % (self.name, line)
        return self.vlan_end

    def notes(self):
        return super().notes() + ([self.vlan_note] if self.vlan_note else [])

    def check_devices(self):
        if not os.path.exists("/dev/net/tun"):
            raise missing("%s: /dev/net/tun missing (modprobe tun)" % self.name)
        if self.vhost and not os.path.exists("/dev/vhost-net"):
            raise missing("vhost-net: /dev/vhost-net missing (modprobe vhost_net; in a "
                          "container, pass the device in)")

    def programs(self):
        if self.opts.app == "rr":
            return [("rr host server", rrhost.rrserver_binary())]
        if self.opts.app in ("sink", "reflect") or counts_flows(self.opts) or \
                wire.bidir(self.opts):
            return [("host peer", peer.peer_binary())]
        return []

    def start(self, session, nguests=1):
        ns = self.netns = netns.create(session)
        # QEMU's queues=N opens N queues of one tap: it must be multi_queue.
        mq = ["multi_queue"] if (self.opts.queues or 1) > 1 else []
        netns.ip("-n", ns, "tuntap", "add", "dev", self.TAP, "mode", "tap", "vnet_hdr", *mq)
        vid = vlan.vid(self.opts)
        end = self.TAP
        if vid and self.choose_vlan_end() == "interface":
            # the host end's addresses on TAP.ID, so it speaks tagged
            end = netns.vlan_link(ns, self.TAP, vid, vlan.svid(self.opts))
        elif vid:
            # the tap's own addresses: its tc programs untag and tag
            obj = vlantc.build(scratch.mkdtemp(session, "vlantc"), vid, vlan.svid(self.opts),
                               vlan.pcp(self.opts))
            vlantc.attach(ns, self.TAP, obj)
        if self.opts.ip6:
            netns.face_guest6(ns, end, guest_mac(0))
            self.dst_ip = netns.HOST_IP6
        netns.face_guest(ns, end, guest_mac(0))
        self.dst_mac, self.base = self._stats()
        if vid:
            # read with the tap's base: frames before it count on neither
            self.vlan = end
            self.vlan_base = vlantc.counts(ns, end) if self.vlan_end == "tc-bpf" else \
                self._stats(end)[1]
        self.start_host_end(session, netns.GUEST_IP6 if self.opts.ip6 else netns.GUEST_IP)

    def start_host_end(self, session, guest_ip, bind=None):
        """The app's host end in the backend's namespace, at dst_ip."""
        ns = self.netns
        if self.opts.app == "iperf":
            self.iperf_start(session, ns, guest_ip, bind=bind, nat=False)
        elif self.opts.app == "rr":
            self.rr = rrhost.HostRr(session, ns, self.dst_ip, self.opts)
            self.rr.start()
        elif self.opts.app in ("sink", "reflect"):
            sport = netns.SENDER_PORT if (self.opts.queues or 1) > 1 else 0
            self.sender = netns.sender(session, self.opts, ns, self.dst_ip, guest_ip, sport)
        elif wire.bidir(self.opts):
            self.start_streams(session, guest_ip)
        elif udphost.wanted(self.opts):
            self.udp = udphost.UdpCount(session, ns, self.dst_ip, udphost.dst_port(self.opts))
            self.udp.start()
        elif counts_flows(self.opts):
            # gen's flows go to any port: every frame the tap receives;
            # reneg's each sent back onto the tap, checksums checked
            back = reneg_back(self.opts)
            self.counter = peer.Peer(session, peer.peer_binary(), "reflect" if back else "count",
                                     None, None, ["--rx-if", self.dev]
                                     + (["--verify-csum"] if back else []), netns=ns)
            self.counter.start()
        if reneg_uso_count(self.opts):
            # where reneg's frames go: the host's stack gets every segment
            self.udp = udphost.UdpCount(session, ns, self.dst_ip, udphost.dst_port(self.opts))
            self.udp.start()
        if iperf.reneg_stream_s(self.opts):
            # app reneg's TCP stream per set: iperf's port, not dst_port= (the frames')
            self.iperf_start(session, ns, guest_ip, port=iperf.PORT, bind=bind, nat=False)

    def start_streams(self, session, guest_ip):
        """A stream file's rx streams (docs/streams.md, "Both ways"): the
        host peer writes their whole frames onto the tap from the tap's
        own addresses, from the guest app's ready on, and counts every
        frame the tap receives (gen's tx streams) by stream."""
        args = wire.stream_args(self.opts, wire.stream_file(session, self.opts),
                                (self.dst_mac, self.dst_ip), guest_ip)
        self.streams = peer.Peer(session, peer.peer_binary(), "send", None, None,
                                 args + ["--rx-if", self.dev], netns=self.netns)
        self.streams.start()

    def on_guest_ready(self, index):
        if self.sender is not None and self.sender.proc is None:
            self.sender.start()
        if self.streams is not None:
            self.streams.go()
        self.iperf_ready()

    def healthy(self):
        if self.rr is not None:
            return self.rr.dead()
        # app reneg's host ends: the host peer, the iperf server, the UDP count
        ends = (self.udp, self.iperf, self.counter or self.streams or self.sender)
        return next((d for d in (e.dead() for e in ends if e is not None) if d), None)

    def finish(self):
        if self.sender:
            self.sender.finish()
        if self.iperf is not None:
            self.iperf.finish()
        if self.rr is not None:
            self.rr.finish()
        if self.udp is not None:
            self.udp.finish()
        if self.counter is not None:
            self.counter.finish()
        if self.streams is not None:
            self.streams.finish()

    def processes(self):
        if self.rr is not None and self.rr.proc is not None:
            return [("rrserver", self.rr.proc.pid)]
        pr = self.sender or self.counter or self.streams
        return ([("peer", pr.proc.pid)] if pr and pr.proc else []) + self.iperf_processes()

    def live(self):
        return live_from_peer(self.sender or self.counter or self.streams)

    def _stats(self, dev=None):
        dev = dev or self.dev
        got = netns.link(self.netns, dev)
        if got is None:
            raise failed("%s: %s is gone%s" % (self.name, dev,
                                               " from " + self.netns if self.netns else ""))
        return got

    def nics(self, index):
        nd = "tap,ifname=%s,script=no,downscript=no" % self.dev
        props = nic_props(self.opts)
        if (self.opts.queues or 1) > 1:
            nd += ",queues=%d" % self.opts.queues
            if not self.vhost:
                props.update(qemucmd.hash_props(self.opts.qemu, self.opts.machine))
        if self.vhost:
            nd += ",vhost=on"
        return [qemucmd.Nic(nd, guest_mac(index), props)]

    def hash_note(self):
        if self.vhost or (self.opts.queues or 1) < 2:
            return super().hash_note()
        if qemucmd.hash_props(self.opts.qemu, self.opts.machine):
            return None
        return "tap: %s's %s has no rss and hash properties (QEMU 5.1 and later): hash reports " \
            "not checked" % (self.opts.qemu, qemucmd.nic_device(self.opts.machine))

    def guest_config(self, index):
        if self.opts.ip6:
            # The guest finds the host's MAC by neighbour discovery.
            return ["ip=" + netns.GUEST_IP, "dst_ip=" + netns.HOST_IP, "dst_mac=" + self.dst_mac,
                    "ip6=" + netns.GUEST_IP6, "dst_ip6=" + netns.HOST_IP6]
        return ["ip=" + netns.GUEST_IP, "dst_ip=" + self.dst_ip, "dst_mac=" + self.dst_mac] + (
            ["back=1"] if reneg_back(self.opts) else [])

    def collect(self):
        if self.base is None:
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
            if (self.opts.queues or 1) > 1:
                out["queues"] = self.flow_queues(self.sender.result["packets"])
        out.update(self.iperf_collect())
        if self.rr is not None and self.rr.result is not None:
            out["rr"] = self.rr.result
            if (self.opts.queues or 1) > 1 and "udp_ports" in self.rr.result:
                out["queues"] = self.rr_queues(self.rr.result)
        if self.udp is not None and self.udp.result is not None:
            out["udp"] = self.udp.result
        if self.counter is not None and self.counter.result is not None:
            out.update(self.counted(self.counter.result, out["rx_drops"]))
        if self.streams is not None and len(self.streams.results) == 2:
            out.update(self.streams_counted(*self.streams.results, out["rx_drops"]))
        if self.vlan is not None:
            out["vlan"] = self.vlan_counts()
        return out

    def vlan_counts(self):
        """netif_vlan=: the host end's own counts over the run: the VLAN
        interface's (the kernel hands it only frames with its tags), or
        the tc-bpf programs' (frames with the run's tags passed, others
        dropped by kind); rx_frames are the guest's tagged frames, the
        tap's counts hold every frame."""
        out = {"host_end": self.vlan_end, "dev": self.vlan, "id": vlan.vid(self.opts)}
        if vlan.svid(self.opts):
            out["svid"] = vlan.svid(self.opts)
        if self.vlan_end == "tc-bpf":
            c = vlantc.since(self.vlan_base, vlantc.counts(self.netns, self.vlan))
            out.update(rx_frames=c["rx_passed"]["frames"], rx_bytes=c["rx_passed"]["bytes"],
                       tx_frames=c["tx_tagged"]["frames"], tx_bytes=c["tx_tagged"]["bytes"],
                       rx_other_tags=c["rx_other"]["frames"],
                       rx_untagged=c["rx_untagged"]["frames"], failed=c["failed"]["frames"])
            return out
        now = self._stats(self.vlan)[1]
        rx, tx = now.get("rx", {}), now.get("tx", {})
        brx, btx = self.vlan_base.get("rx", {}), self.vlan_base.get("tx", {})
        out.update(rx_frames=rx.get("packets", 0) - brx.get("packets", 0),
                   rx_bytes=rx.get("bytes", 0) - brx.get("bytes", 0),
                   tx_frames=tx.get("packets", 0) - btx.get("packets", 0),
                   tx_bytes=tx.get("bytes", 0) - btx.get("bytes", 0))
        return out

    def counted(self, res, drops):
        """The host peer's count on the tap (counts_flows): gen's frames
        (app level) beside the tap's own counter (drops: the tap's), and
        per queue pair."""
        out = packet_count(res, drops)
        if (self.opts.queues or 1) > 1:
            out["queues"] = self.flow_rx_queues(res)
        return out

    def streams_counted(self, sent, res, drops):
        """The rx streams' send line and the count of gen's streams beside
        the tap's own counters: app level (the tap carries the kernel's
        ARP and ICMP too)."""
        return dict(packet_count(res, drops), peer_tx=sent, tx_packets=sent["packets"])

    def flow_rx_queues(self, res):
        """gen's frames per queue pair as the host peer counted them: each
        flow on the pair gen sent it on (analysis/rss.py), app level (lwIP's
        own frames, ARP on pair 0, are no vnperf flow: the app's count per
        pair meets this one, as gen's total meets the peer's). Not judged,
        and why, when more flows came than the peer's table holds."""
        n = self.opts.queues
        over = res.get("flows_overflow", 0)
        if over:
            why = ("the host peer counted %d frames of flows beyond its table (flows_overflow, "
                   "docs/peer.md): not by flow" % over)
            return [{"queue": i, "rx_packets": None, "app_level": True, "why": why}
                    for i in range(n)]
        per = rss.flows_by_pair(res.get("flows") or [], n)
        return [{"queue": i, "rx_packets": per[i], "app_level": True} for i in range(n)]


    def flow_queues(self, sent):
        """The peer's frames per queue pair: its one flow lands on the pair
        QEMU's RSS names (analysis/rss.py); counted by the peer, app level
        (the kernel's own frames into the tap are not among them)."""
        n = self.opts.queues
        q = rss.flow_queue(self.dst_ip, netns.GUEST_IP, netns.SENDER_PORT, netns.GUEST_PORT, n)
        return [{"queue": i, "tx_packets": sent if i == q else 0, "app_level": True}
                for i in range(n)]


    def rr_queues(self, rr):
        """The UDP rr server's answers per queue pair: each client port's
        answers land on the pair QEMU's RSS names for their flow (from the
        server's port to the session's; with --ip6 between the IPv6
        addresses), app level, as flow_queues."""
        n = self.opts.queues
        guest = netns.GUEST_IP6 if self.opts.ip6 else netns.GUEST_IP
        out = [{"queue": i, "tx_packets": 0, "app_level": True} for i in range(n)]
        for port, answers in rr["udp_ports"]:
            out[rss.flow_queue(self.dst_ip, guest, rr["port"], port, n)]["tx_packets"] += answers
        return out


class VhostNet(Tap):
    name = "vhost-net"
    vhost = True


def _sys(dev, leaf):
    """The text of /sys/class/net/DEV/LEAF; None when absent."""
    try:
        with open("/sys/class/net/%s/%s" % (dev, leaf)) as f:
            return f.read().strip()
    except OSError:
        return None


def tun_flags(dev):
    """The tap's TUN flags (tun_flags, hex); None when dev is no tun/tap."""
    v = _sys(dev, "tun_flags")
    return None if v is None else int(v, 16)


def is_up(dev):
    return int(_sys(dev, "flags") or "0", 16) & IFF_UP != 0


def master(dev):
    """The bridge (or other master) dev is enslaved to; None."""
    path = "/sys/class/net/%s/master" % dev
    return os.path.basename(os.readlink(path)) if os.path.islink(path) else None


def net_admin():
    """CAP_NET_ADMIN in this process's effective set (root has it)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16) >> CAP_NET_ADMIN & 1 == 1
    return os.geteuid() == 0


def may_open(dev):
    """What the kernel asks of a process that attaches to an existing tap
    (tun_not_capable): CAP_NET_ADMIN, or the tap's owner and group (unset:
    -1) match."""
    if net_admin():
        return True
    owner, group = int(_sys(dev, "owner") or -1), int(_sys(dev, "group") or -1)
    return owner in (-1, os.geteuid()) and (group == -1 or group == os.getegid()
                                            or group in os.getgroups())


def holder(dev):
    """'PID (COMM)' of a process that has tap dev attached (its tun file's
    fdinfo names it: iff:), or None. A single-queue tap takes one: QEMU's
    TUNSETIFF would fail with EBUSY. Processes this one may not look into
    are not seen."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
            for fd in fds:
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) != "/dev/net/tun":
                    continue
                with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                    if "iff:\t%s\n" % dev in f.read():
                        with open("/proc/%s/comm" % pid) as c:
                            return "%s (%s)" % (pid, c.read().strip())
        except OSError:
            continue
    return None


def tap_facts(dev):
    """[(what, None or why not)] of the user's tap, in the order they
    matter; stops at the first a later one depends on."""
    if not os.path.exists("/sys/class/net/" + dev):
        return [("exists", "no interface %s in this network namespace" % dev)]
    flags = tun_flags(dev)
    if flags is None or not flags & IFF_TAP:
        return [("exists", None),
                ("is a tap", "not a tap (%s)" % ("no /sys/class/net/%s/tun_flags" % dev
                                                  if flags is None else "a tun: layer 3"))]
    who = holder(dev)
    return [("exists", None),
            ("is a tap", None),
            ("single queue", "multi-queue (tun_flags 0x%x): QEMU's one-queue netdev cannot "
                             "open it" % flags if flags & IFF_MULTI_QUEUE else None),
            ("free", "busy: process %s has it open" % who if who else None),
            ("up", None if is_up(dev) else "down: the runner does not change your tap "
                                           "(ip link set %s up)" % dev),
            ("permissions", None if may_open(dev) else
             "needs root (CAP_NET_ADMIN), or the tap's owner or group, to open it")]


def bridge_facts(br):
    """[(what, None or why not)] of the user's bridge, as tap_facts."""
    if not os.path.exists("/sys/class/net/" + br):
        return [("exists", "no interface %s in this network namespace" % br)]
    if not os.path.isdir("/sys/class/net/%s/bridge" % br):
        return [("exists", None),
                ("is a bridge", "not a bridge (no /sys/class/net/%s/bridge)" % br)]
    return [("exists", None), ("is a bridge", None),
            ("up", None if is_up(br) else "down: the runner does not change your bridge "
                                          "(ip link set %s up)" % br),
            ("permissions", None if net_admin() else
             "needs root (CAP_NET_ADMIN) to create a tap and add it to the bridge")]


def first_problem(facts):
    return next((why for _, why in facts if why), None)


def host_end(dev):
    """(MAC, IPv4 interface address or None) the guest sends to: the
    bridge dev is on, else dev itself; frames to that MAC end in this
    host's stack."""
    end = master(dev) or dev
    mac = netns.link(None, end)[0]
    rc, out = run_quiet(["ip", "-4", "-o", "addr", "show", "dev", end])
    m = re.search(r"\binet ([0-9.]+/[0-9]+)", out) if rc == 0 else None
    return mac, ipaddress.ip_interface(m.group(1)) if m else None


def remove_stale_taps():
    """--bridge taps of runners that were killed (SIGKILL leaves no time
    to delete them): vnb<PID>-N whose PID is gone."""
    for dev in os.listdir("/sys/class/net"):
        m = BRIDGE_TAP.match(dev)
        if m and tun_flags(dev) is not None and not os.path.exists("/proc/" + m.group(1)):
            run_quiet(["ip", "link", "del", dev])


class OwnTap(Tap):
    """--tap IF: the user's tap as it is, in the runner's own namespace
    (none created). QEMU opens it with the vnet header the tap has (so its
    flags stay as they were); nothing else is changed (no address, link
    state, MAC, master, neighbour or route). The tap's interface
    statistics are the host-side counts. gen sends to the host's stack
    whatever its addresses; the apps with a host end (sink, reflect, rr,
    iperf) need one the runner can reach: this host's IPv4 address on the
    tap or its bridge, and the guest's own in that subnet (-- ip=A: the
    runner picks no address on the user's network)."""

    def __init__(self, opts, vhost):
        super().__init__(opts)
        self.vhost = vhost
        self.dev = self.end_dev = opts.tap
        self.option = "--tap %s" % opts.tap
        self.flags = None

    def facts(self):
        return tap_facts(self.dev)

    def check(self):
        why = first_problem(self.facts())
        if why:
            raise missing("%s: %s" % (self.option, why))
        self.check_app()
        self.check_devices()

    def check_app(self):
        app = self.opts.app
        if app in ("gen", "replay"):
            return
        end = master(self.end_dev) or self.end_dev
        addr = host_end(self.end_dev)[1]
        if addr is None:
            raise missing("%s: app %s needs an IPv4 address of this host on %s to reach the "
                          "guest from (the runner adds none to your network; gen needs none)"
                          % (self.option, app, end))
        ip = config_value(self.opts.config, "ip", None)
        if ip is None:
            raise usage("%s: app %s needs the guest's address in %s after -- (ip=A): the "
                        "runner picks none on your network" % (self.option, app, addr.network))
        try:
            ok = ipaddress.ip_address(ip) in addr.network and ipaddress.ip_address(ip) != addr.ip
        except ValueError:
            ok = False
        if not ok:
            raise usage("%s: -- ip=%s is no address of %s but the host's %s"
                        % (self.option, ip, addr.network, addr.ip))

    def start(self, session, nguests=1):
        self.flags = tun_flags(self.dev)
        _, self.base = self._stats()
        self.dst_mac, addr = host_end(self.end_dev)
        if addr is not None:
            self.dst_ip = str(addr.ip)
            self.start_host_end(session, config_value(self.opts.config, "ip", netns.GUEST_IP),
                                bind=self.dst_ip)

    def nics(self, index):
        [nic] = super().nics(index)
        nic.netdev += ",vnet_hdr=" + ("on" if self.flags & IFF_VNET_HDR else "off")
        return [nic]


class BridgeTap(OwnTap):
    """--bridge BR: a tap of the runner's own (vnb<pid>-<n>, with a vnet
    header, the bridge's MTU, IPv6 off) added to the user's bridge, up,
    deleted at teardown; nothing of the bridge changes. QEMU's bridge
    helper is not used (it needs /etc/qemu/bridge.conf)."""

    def __init__(self, opts, vhost):
        super().__init__(opts, vhost)
        self.bridge = self.end_dev = opts.bridge
        self.dev = "vnb%d-%d" % (os.getpid(), next(_seq))
        self.option = "--bridge " + opts.bridge

    def facts(self):
        return bridge_facts(self.bridge)

    def start(self, session, nguests=1):
        remove_stale_taps()
        netns.ip("tuntap", "add", "dev", self.dev, "mode", "tap", "vnet_hdr")
        session.on_close(netns.ip, "link", "del", self.dev, what="delete tap " + self.dev)
        # No router solicitations of its own towards the guest; a tap with
        # a smaller MTU would lower the bridge's.
        run_quiet(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % self.dev])
        netns.ip("link", "set", self.dev, "mtu", _sys(self.bridge, "mtu"))
        netns.ip("link", "set", self.dev, "master", self.bridge)
        netns.ip("link", "set", self.dev, "up")
        super().start(session, nguests)


def own(opts, vhost):
    """The backend of --tap or --bridge."""
    return (OwnTap if opts.tap else BridgeTap)(opts, vhost)
