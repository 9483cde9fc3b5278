"""--ip6 over passt: the network namespace passt runs in, with the host's
iperf or rr server beside it. passt takes its IPv6 template (interface,
link-local address) from the host it runs on (conf.c, conf_ip6: the
interface of the first default route, else of any route; no such
interface is "local mode", where -a's address is never the one passt
forwards to), so a run cannot count on the runner's host for it. The
namespace is a host of the runner's own: a veth pair, one end with
NET6's ::1 and the default route, its peer only there for the carrier;
IPv6 on that end and on lo alone. passt maps the guest's gateway GW_IP6
to the namespace's ::1 (--map-host-loopback's default, the -g address),
where the host's end listens; QEMU reaches passt's UNIX socket, a file,
from the runner's namespace."""

from . import netns

# A unique-local /64 of its own (tap fd00:766e::/64, user fd00:766e:2::/64).
NET6 = "fd00:766e:3::/64"
TEMPLATE_IP6 = "fd00:766e:3::1"
GW_IP6 = "fd00:766e:3::2"
GUEST_IP6 = "fd00:766e:3::15"
# The template's end and its peer.
DEV, PEER = "vnpt0", "vnpt1"


def create(session):
    """A fresh namespace (deleted when the session closes) holding
    passt's IPv6 template; its name."""
    ns = netns.create(session)
    netns.sysctl6(ns, "lo", disable_ipv6=0)  # ::1, where the host's end listens
    netns.ip("-n", ns, "link", "add", DEV, "type", "veth", "peer", "name", PEER)
    netns.sysctl6(ns, DEV, disable_ipv6=0, accept_dad=0, dad_transmits=0,
                  router_solicitations=0, accept_ra=0)
    netns.ip("-n", ns, "addr", "add", TEMPLATE_IP6 + "/64", "dev", DEV, "nodad")
    netns.ip("-n", ns, "link", "set", PEER, "up")
    netns.ip("-n", ns, "link", "set", DEV, "up")
    netns.ip("-n", ns, "-6", "route", "add", "default", "dev", DEV)
    return ns
