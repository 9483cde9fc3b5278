"""--topology host: one guest and the backend's host end (the host peer,
the host's stack, testpmd, passt, QEMU alone)."""

from ..run import identity
from .base import Topology

PASST = ("passt", "passt-vhost-user")
HOST_SENDERS = ("dgram", "socket", "tap", "vhost-net", "vhost-user", "passt")
# backends/passt.py: nothing passt's vhost-user mode gives the guest passes
# the driver's header check.
PASST_VU_RX = ("passt 0.0~git20250503's vhost-user mode sets VIRTIO_NET_HDR_F_DATA_VALID on every "
               "frame to the guest without VIRTIO_NET_F_GUEST_CSUM (virtio 1.2 s5.1.6.4.1: "
               "flags MUST be 0), and the driver drops them: over passt-vhost-user, gen only")
NO_HOST_END = "QEMU alone: no host end sends to the guest or answers it"
REPLAY_ENDS = ("a capture's frames are counted by the tap's counters (tap, vhost-net) or "
               "dropped by QEMU's hub; no other host end takes frames that are not its own")

# The peer reflects each UDP request as it is (docs/peer.md).
RR_PEER_RULES = (
    (lambda p: p["proto"] != "udp",
     "the host peer reflects UDP only: proto=tcp needs --topology guests"),
    (lambda p: p["role"] != "client", "no host client sends requests to an rr server here: "
                                      "role=server needs --topology guests"),
    (lambda p: p["req_size"] != p["resp_size"],
     "the host peer sends each request back as it is: resp_size must equal req_size"),
)

# Over a tap or passt the host's own stack serves (vnperf-rrserver, UDP
# and TCP).
RR_TAP_RULES = (
    (lambda p: p["role"] != "client", "the host serves (vnperf-rrserver) and has no rr "
                                      "client: role=server needs --topology guests"),
)
RR_RULES = {"dgram": RR_PEER_RULES, "socket": RR_PEER_RULES, "tap": RR_TAP_RULES,
            "vhost-net": RR_TAP_RULES, "passt": RR_TAP_RULES}


class Host(Topology):
    name = "host"
    no_row = NO_HOST_END
    ip6 = True
    vlan_refusal = None
    rows = {
        "gen": {"*": None},
        "reneg": {"dgram": None, "socket": None, "tap": None, "vhost-user": None, "user": None,
                  "passt": None,
                  "*": "app reneg's sets are counted per stream by the host peer (dgram, "
                       "socket, tap), sent back by testpmd 5tswap (vhost-user) or by a "
                       "UDP socket behind slirp (user)"},
        "replay": {"tap": None, "vhost-net": None, "hub": None, "*": REPLAY_ENDS},
        "sink": dict({b: None for b in HOST_SENDERS},
                     **{"passt-vhost-user": PASST_VU_RX, "*": NO_HOST_END}),
        "reflect": dict({b: None for b in HOST_SENDERS},
                        **{"passt-vhost-user": PASST_VU_RX, "*": NO_HOST_END}),
        "fwd": {"dgram": None, "socket": None,
                "*": "fwd needs two NICs; the runner wires them over dgram and socket only"},
        "rr": {"dgram": None, "socket": None, "tap": None, "vhost-net": None, "passt": None,
               "vhost-user": "testpmd macswap returns the requests with their IP "
                             "addresses unswapped; use --topology guests (testpmd io)",
               "passt-vhost-user": PASST_VU_RX,
               "*": NO_HOST_END},
        "iperf": {"tap": None, "vhost-net": None, "user": None, "passt": None,
                  "passt-vhost-user": PASST_VU_RX,
                  "*": "iperf needs the host's iperf 2 over tap, vhost-net, user or passt"},
    }


    def queues_refusal(self, opts):
        return None

    def roles(self, opts):
        return [("guest", identity.app_words(opts))]

    def app_refusal(self, backend, params):
        if params["app"] != "rr":
            return None
        return next((why for bad, why in RR_RULES.get(backend, ()) if bad(params)), None)

    def own_nic_app(self, app):
        return app == "gen"


HOST = Host()
