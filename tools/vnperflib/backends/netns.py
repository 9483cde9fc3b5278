"""Network namespaces the runner creates (no route out, IPv6 off so the
kernel sends nothing of its own) with one kernel interface facing the
guest, and the host sender that sends UDP to the guest through that
kernel's own stack: tap and vhost-net (QEMU's tap), vhost-user's feeder
(testpmd's tap port)."""

import itertools
import json
import os
import re

from ..errors import failed
from ..run import peer
from ..run.proc import run_quiet

# The host side of the wire and the guest, as the kernel's stack sees them.
HOST_IP = "10.0.0.1"
GUEST_IP = "10.0.0.2"
# --ip6: the same two in a unique-local /64 (RFC 4193; "vn" is 0x766e).
HOST_IP6 = "fd00:766e::1"
GUEST_IP6 = "fd00:766e::2"
# UDP port the sink and reflect apps take any datagram on (docs/apps.md).
GUEST_PORT = 9000
# The sender's own port with several queue pairs: a fixed flow, so the
# pair QEMU's RSS puts it on is known (analysis/rss.py).
SENDER_PORT = 9001

_seq = itertools.count(1)


def ip(*args):
    """Runs `ip ARGS`; a failure is the backend's failure (status 68)."""
    rc, out = run_quiet(["ip"] + list(args))
    if rc != 0:
        raise failed("ip %s: %s" % (" ".join(args), out.strip()))
    return out


def remove_stale():
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


def create(session):
    """A fresh namespace, deleted when the session closes; its name."""
    remove_stale()
    # The test harness's tag (if any) in the name lets a test find its own.
    tag = os.environ.get("VNPERF_TEST_TAG")
    ns = "vnperf-%s%d-%d" % (tag + "-" if tag else "", os.getpid(), next(_seq))
    ip("netns", "add", ns)
    session.on_close(ip, "netns", "del", ns, what="delete namespace " + ns)
    ip("-n", ns, "link", "set", "lo", "up")
    # No IPv6 chatter towards the guest: host->guest counts stay exact.
    for k in ("all", "default"):
        run_quiet(["ip", "netns", "exec", ns, "sysctl", "-qw",
                   "net.ipv6.conf.%s.disable_ipv6=1" % k])
    return ns


def face_guest(ns, dev, mac):
    """Addresses dev as the host end of the wire, with a static neighbour
    entry for the guest (nothing waits for ARP)."""
    ip("-n", ns, "addr", "add", HOST_IP + "/24", "dev", dev)
    ip("-n", ns, "link", "set", dev, "up")
    ip("-n", ns, "neigh", "replace", GUEST_IP, "lladdr", mac, "dev", dev, "nud", "permanent")


def vlan_link(ns, tap, vlan_id, svlan_id=None):
    """netif_vlan= (run/vlan.py): a VLAN interface TAP.ID on tap in
    namespace ns, tap brought up (untagged frames reach tap alone); with
    netif_svlan= (QinQ) an 802.1ad interface TAP.SID and on it an 802.1Q
    one vnqSID.ID (IFNAMSIZ: 15 characters at most). The name of the
    innermost, for the caller to address as it would the tap."""
    lower, dev = tap, "%s.%d" % (tap, vlan_id)
    if svlan_id:
        lower, dev = "%s.%d" % (tap, svlan_id), "vnq%d.%d" % (svlan_id, vlan_id)
        ip("-n", ns, "link", "add", "link", tap, "name", lower, "type", "vlan", "proto",
           "802.1ad", "id", str(svlan_id))
        ip("-n", ns, "link", "set", lower, "up")
    ip("-n", ns, "link", "add", "link", lower, "name", dev, "type", "vlan", "id", str(vlan_id))
    ip("-n", ns, "link", "set", tap, "up")
    return dev


def face_guest6(ns, dev, mac):
    """--ip6: IPv6 on dev only (the namespace keeps it off elsewhere), no
    duplicate address detection (nodad: the address is usable at once,
    and the guest does none either), no router solicitations or
    advertisements taken, and a static neighbour entry for the guest;
    call before dev is up."""
    sysctl6(ns, dev, disable_ipv6=0, accept_dad=0, dad_transmits=0, router_solicitations=0,
            accept_ra=0)
    ip("-n", ns, "addr", "add", HOST_IP6 + "/64", "dev", dev, "nodad")
    ip("-n", ns, "neigh", "replace", GUEST_IP6, "lladdr", mac, "dev", dev, "nud", "permanent")


def sysctl6(ns, dev, **keys):
    """Sets net.ipv6.conf.DEV.KEY=VALUE in namespace ns for each of keys;
    a failure is the backend's."""
    # sysctl's separator is '.': a VLAN interface's dot (vntap0.100) is '/'
    conf = dev.replace(".", "/")
    for key, val in keys.items():
        rc, out = run_quiet(["ip", "netns", "exec", ns, "sysctl", "-qw",
                             "net.ipv6.conf.%s.%s=%d" % (conf, key, val)])
        if rc != 0:
            raise failed("--ip6: sysctl net.ipv6.conf.%s.%s=%d: %s" % (dev, key, val,
                                                                        out.strip()))


def link(ns, dev):
    """(MAC, stats64) of an interface in namespace ns (None: the runner's
    own); None when absent."""
    rc, out = run_quiet(["ip"] + (["-n", ns] if ns else []) + ["-s", "-j", "link", "show", dev])
    if rc != 0:
        return None
    dev = json.loads(out)[0]
    return dev.get("address"), dev.get("stats64", {})


# The most a sender waits for the runner's stop after its last frame.
HOLD_S = 60


def sender(session, opts, ns, host=HOST_IP, guest=GUEST_IP, local_port=0):
    """The peer sending the run's frames from host to the guest's address
    through a UDP socket in the namespace (None: the runner's own): the
    kernel writes the Ethernet, IPv4 and UDP headers
    (--payload-only), so the guest gets --size-byte frames that start their
    payload with the vnperf header; count and rate by peer.feed_args. Its
    socket stays open until the runner stops it (--hold): a reflector's
    last frames would otherwise find it closed and draw ICMP port
    unreachables from the namespace's kernel towards the guest, frames the
    host counts as sent and the guest, gone by then, never receives."""
    size = opts.size or 60
    args = ["--payload-only", "--size", str(size), "--dst-port", str(GUEST_PORT),
            "--hold", str(HOLD_S)]
    args += peer.feed_args(opts, size)
    return peer.Peer(session, peer.peer_binary(), "send", local_port, GUEST_PORT, args,
                     host=host, remote_host=guest, netns=ns)
