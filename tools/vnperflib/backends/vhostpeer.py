"""vhost-user fed by the DPDK host peer (--feeder peer-dpdk, the default
for a sink with --rate or --count): build/tools/vnperf-peer-dpdk owns the
guest's net_vhost port and puts its paced frames straight into the guest's
RX ring, no testpmd, tap port or namespace in between (docs/runner-run.md).
The clock starts at the guest's ready line (SIGUSR1); frames the guest's
full ring refused are the peer's ring_full count, the located loss."""

import os
import shutil

from ..analysis import counts
from ..errors import failed, missing
from ..run import peer, qemucmd, scratch
from .base import Backend, guest_ip, guest_mac, live_from_peer, nic_props

FEEDERS = ("peer-dpdk", "testpmd")
# QEMU connects within its start; a guest that never sets DRIVER_OK is
# the peer's exit 3 after this long, or the run's own timeout first.
LINK_WAIT_S = 120


# testpmd's knobs (support.PMD_KNOBS): without --feeder they ask for it.
PMD_KNOBS = ("fwd_mode", "pmd_burst", "pmd_rxd", "pmd_txd")


def feeder(opts, fed):
    """Who feeds a vhost-user guest that the host peer feeds (fed:
    testpmd.plan's second value): "peer-dpdk" for a sink unless --feeder
    testpmd or a testpmd knob says otherwise; "testpmd" for the rest
    (reflect); None when the peer feeds nothing."""
    if not fed:
        return None
    given = opts.feeder
    if given:
        return given if opts.app == "sink" else "testpmd"
    if opts.app != "sink" or any(getattr(opts, k) is not None for k in PMD_KNOBS):
        return "testpmd"
    return "peer-dpdk"


def runtime_dir(pid):
    """EAL's runtime directory of the peer with that pid (its --file-prefix)."""
    return "/var/run/dpdk/vnperf-peer-%d" % pid


def sender_args(opts, sock):
    """vnperf-peer-dpdk send's options for the sink of guest 0."""
    size = opts.size or 60
    return (["--tx-vhost", sock, "--start-on-usr1", "--link-wait", str(LINK_WAIT_S),
             "--size", str(size), "--dst-mac", guest_mac(0), "--dst-ip", guest_ip(0),
             "--src-mac", peer.PEER_MAC, "--src-ip", peer.PEER_IP]
            + peer.feed_args(opts, size))


def vhost_nic(opts, index):
    """The guest's vhost-user NIC (chardev vu<index>)."""
    props = nic_props(opts)
    if opts.machine != "microvm":
        # QEMU 7.2 under TCG crashes when vhost-user starts with MSI-X.
        props["vectors"] = 0
    nd = "vhost-user,chardev=vu%d" % index
    if (opts.queues or 1) > 1:
        nd += ",queues=%d" % opts.queues
    return qemucmd.Nic(nd, guest_mac(index), props)


class DpdkPeerBackend(Backend):
    """A backend whose host side is one vnperf-peer-dpdk (self.peer): its
    start, clock, liveness, CPU role and end, for the sink's feeder and the
    PVP tester alike."""

    lossless = True
    needs_shared_mem = True

    def __init__(self, opts):
        super().__init__(opts)
        self.peer = None

    def programs(self):
        return [("host peer (DPDK)", peer.peer_dpdk_binary())]

    def start_peer(self, session, args, wait_s):
        self.peer = peer.Peer(session, peer.peer_dpdk_binary(), "send", None, None, args,
                              label="peer-dpdk")
        # EAL's start and the ports' sockets before QEMU connects to them.
        self.peer.start(wait_s=wait_s)
        # The peer removes EAL's runtime directory itself, unless killed.
        session.on_close(shutil.rmtree, runtime_dir(self.peer.proc.pid), True,
                         what="remove DPDK runtime dir")

    def on_guest_ready(self, index):
        # The guest's driver is up: the peer's clock starts.
        self.peer.go()

    def processes(self):
        return [("peer-dpdk", self.peer.proc.pid)] if self.peer and self.peer.proc else []

    def live(self):
        return live_from_peer(self.peer)

    def healthy(self):
        return self.peer.dead() if self.peer else None

    def finish(self):
        if self.peer is not None:
            self.peer.finish()


class VhostUserPeer(DpdkPeerBackend):
    name = "vhost-user"

    def __init__(self, opts):
        super().__init__(opts)
        self.sock = None

    def check(self):
        if not os.path.exists(peer.peer_dpdk_binary()):
            raise missing("vhost-user: %s not built (Debian libdpdk-dev; make host-tools), "
                          "or --feeder testpmd" % peer.peer_dpdk_binary())

    def start(self, session, nguests=1):
        if nguests != 1:
            raise failed("vhost-user: the peer-dpdk feeder serves one guest, not %d" % nguests)
        self.sock = os.path.join(scratch.mkdtemp(session, "vu"), "vhost0.sock")
        self.start_peer(session, sender_args(self.opts, self.sock), 15.0)

    def nics(self, index):
        return [vhost_nic(self.opts, index)]

    def qemu_extra(self, index):
        return ["-chardev", "socket,id=vu%d,path=%s" % (index, self.sock)]

    def guest_config(self, index):
        return ["ip=" + guest_ip(0), "dst_ip=" + peer.PEER_IP, "dst_mac=" + peer.PEER_MAC]

    def collect(self):
        res = self.peer.result if self.peer else None
        if res is None:
            return {}
        out = peer.host_counts(res)
        out["feeder"] = "peer-dpdk"
        out["tx_drops"] = [counts.drop("ring", "not placed in the guest's full RX ring by "
                                       "vnperf-peer-dpdk (ring_full)",
                                       res["errors"].get("ring_full", 0))]
        return out
