"""vhost-user to the user's own, already running backend (--vhost-user-socket
PATH): OVS-DPDK, a DPDK vhost application, VPP, a vhost-user-net daemon. The
runner starts no testpmd. QEMU is the vhost-user client of PATH (the backend
listens: OVS's dpdkvhostuser, DPDK's iface=PATH), or with --vhost-user-server
the server (QEMU listens on PATH; the backend connects: OVS's
dpdkvhostuserclient, DPDK's client=1). Guest RAM, NIC and queue options are
those of the runner's own vhost-user (vhostpeer.vhost_nic, the shared memfd
of needs_shared_mem). The host-side count is what --host-count names
(hostcount.py); none: the report says guest only."""

import os
import socket
import stat
import time

from .. import options, topologies
from ..analysis import hostcount
from ..errors import missing, usage
from ..run import peer, qemucmd
from . import vhostpeer
from .base import Backend, guest_ip

# --vhost-user-server: QEMU blocks before the guest boots until a backend
# connects; one that has not after this long ends the run with one line.
CONNECT_WAIT_S = 20.0
PROBE_TIMEOUT_S = 2.0

# The options that configure the runner's own testpmd or feeder.
TESTPMD_KNOBS = ("fwd_mode", "pmd_burst", "pmd_rxd", "pmd_txd", "feeder")
# Apps whose other end the runner itself starts (an rr or iperf server, a
# second NIC): none of them exists behind a backend the user runs.
NEEDS_RUNNER_PEER = {"rr": "an rr server", "iperf": "the host's iperf", "fwd": "two NICs"}
# sink and reflect take what the user's backend sends them; --rate paces
# the runner's feeder, which is not there.
FED_BY_USER = ("sink", "reflect")


def resolve(opts):
    """--vhost-user-server and --host-count need --vhost-user-socket; with
    it, the options that need a peer the runner controls are refused (one
    line, 64). backends.implied makes it the vhost-user backend."""
    if opts.vhost_user_socket is None:
        if opts.vhost_user_server:
            raise usage("--vhost-user-server: with --vhost-user-socket PATH only")
        if opts.host_count.kind != "none":
            raise usage("--host-count %s: with --vhost-user-socket PATH only (the runner's "
                        "own backends count themselves)" % opts.host_count.text)
        return
    line = refusal(opts)
    if line:
        raise usage("--vhost-user-socket: " + line)


def refusal(opts):
    """None, or why these options need a peer the runner controls."""
    knob = next((k for k in TESTPMD_KNOBS if getattr(opts, k) is not None), None)
    if knob is None and opts.testpmd != options.default("testpmd"):
        knob = "testpmd"
    if knob:
        return "--%s configures the runner's own testpmd or feeder, and none is started" % \
            knob.replace("_", "-")
    if topologies.topology_for(opts).joins_guests:
        return "--topology %s wires guests the runner's backend joins; your socket is one " \
            "guest's (--topology host)" % opts.topology
    if opts.app in NEEDS_RUNNER_PEER:
        return "app %s needs %s the runner starts; over your own backend: gen, or sink and " \
            "reflect with your traffic" % (opts.app, NEEDS_RUNNER_PEER[opts.app])
    if opts.app in FED_BY_USER and opts.rate is not None:
        return "--rate paces the runner's feeder of a %s; over your own backend the traffic " \
            "into the guest is yours" % opts.app
    return None


def socket_facts(path, server):
    """[(row, None or one line why it is not usable)] about PATH: exists, is
    a socket, accepts (client mode) or is free (server mode), permissions.
    doctor prints them all; a run stops at the first line."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if server:
            d = os.path.dirname(os.path.abspath(path))
            free = None if os.access(d, os.W_OK | os.X_OK) else \
                "%s: this user (uid %d) cannot create a socket in %s" % (path, os.geteuid(), d)
            return [("free for QEMU", free)]
        return [("exists", "%s: no such socket: start your backend first (it creates and "
                 "listens on it), or --vhost-user-server for one that connects to QEMU" % path)]
    except OSError as e:
        return [("exists", "%s: %s" % (path, e.strerror))]
    if not stat.S_ISSOCK(st.st_mode):
        return [("exists", None), ("is a socket", "%s is not a socket (%s)" % (path, _kind(st)))]
    rows = [("exists", None), ("is a socket", None)]
    why = _connect(path)
    if server:
        busy = "%s: something listens there already (busy): QEMU cannot listen on it" % path
        rows.append(("free for QEMU", None if why else busy))
    else:
        rows.append(("accepts", why))
    if not os.access(path, os.W_OK):
        rows.append(("permissions", "%s: this user (uid %d) may not connect (mode %s, owner "
                     "uid %d)" % (path, os.geteuid(), stat.filemode(st.st_mode), st.st_uid)))
    else:
        rows.append(("permissions", None))
    return rows


def _kind(st):
    return "a directory" if stat.S_ISDIR(st.st_mode) else \
        "a regular file" if stat.S_ISREG(st.st_mode) else "mode %s" % stat.filemode(st.st_mode)


def _connect(path):
    """None when something accepts a connection on path, else why not."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(PROBE_TIMEOUT_S)
    try:
        s.connect(path)
    except OSError as e:
        return "%s: nobody accepts a connection (%s): the backend that made it is gone or " \
            "not listening yet" % (path, e.strerror or e)
    finally:
        s.close()
    return None


def _connected(path):
    """Whether a backend connected to the listener at path: QEMU's end of
    the connection carries the listener's path in /proc/net/unix, in state
    02 while QEMU has not accepted it yet, then 03 (the listener is 01)."""
    with open("/proc/net/unix") as f:
        next(f, None)
        for line in f:
            cols = line.split()
            # Num RefCount Protocol Flags Type St Inode Path
            if len(cols) >= 8 and cols[5] in ("02", "03") and cols[7] == path:
                return True
    return False


class OwnVhostUser(Backend):
    name = "vhost-user"
    needs_shared_mem = True

    def __init__(self, opts):
        super().__init__(opts)
        self.path = os.path.abspath(opts.vhost_user_socket)
        self.server = opts.vhost_user_server
        self.count = hostcount.HostCount(opts.host_count)
        self.lossless = self.count.lossless
        self.t_start = None
        self.linked = False

    def check(self):
        why = next((w for _, w in socket_facts(self.path, self.server) if w), None)
        if why:
            raise missing("vhost-user: " + why)
        self.count.probe()

    def start(self, session, nguests=1):
        if self.server:
            if os.path.exists(self.path):
                os.unlink(self.path)  # a socket nobody listens on (check())
            session.on_close(_unlink_socket, self.path, what="remove " + self.path)
        self.count.base()
        self.t_start = time.monotonic()

    def nics(self, index):
        return [vhostpeer.vhost_nic(self.opts, index)]

    def qemu_extra(self, index):
        chardev = "socket,id=vu%d,path=%s" % (index, qemucmd.qemu_escape(self.path))
        # QEMU 7.2 takes no listening fd for vhost-user ("does not support
        # FD passing"): it listens on the path and waits for the backend.
        return ["-chardev", chardev + (",server=on,wait=off" if self.server else "")]

    def guest_config(self, index):
        return ["ip=" + guest_ip(0), "dst_ip=" + peer.PEER_IP, "dst_mac=" + peer.PEER_MAC]

    def healthy(self):
        if not self.server or self.linked or self.t_start is None:
            return None
        self.linked = _connected(self.path)
        if not self.linked and time.monotonic() - self.t_start > CONNECT_WAIT_S:
            return ("vhost-user: no backend connected to %s within %.0f s (--vhost-user-server: "
                    "QEMU listens there; start yours as its client, e.g. DPDK's --vdev "
                    "net_vhost0,iface=%s,client=1)" % (self.path, CONNECT_WAIT_S, self.path))
        return None

    def collect(self):
        out = self.count.collect()
        if "tx_frames" in out:
            # Your backend sends when it likes: after the app stopped, up to
            # a ring's worth waits in the guest's RX ring (counts._rx_where).
            out["sender_outlives_guest"] = True
        return out


def _unlink_socket(path):
    if os.path.exists(path) and stat.S_ISSOCK(os.stat(path).st_mode):
        os.unlink(path)
