"""--topology guests: a sender guest and its partner, joined by the
backend's wire (dgram, socket) or testpmd io (vhost-user)."""

from ..run import identity
from .base import Topology

# The app of the receiving guest for each sender app.
PARTNER = {"gen": ["app=sink"], "rr": ["app=rr", "role=server"]}
# The receiver outlasts the sender, which boots once its NIC is up.
RX_EXTRA_S = 3
WIRED = ("dgram", "socket", "vhost-user")
NO_WIRE = "two guests need a wire between them: dgram, socket or vhost-user"


class Guests(Topology):
    name = "guests"
    joins_guests = True
    vlan_refusal = None
    vlan_all_guests = True
    flag = " (--topology guests)"
    rows = {app: dict({b: None for b in WIRED}, **{"*": NO_WIRE}) for app in PARTNER}

    def roles(self, opts):
        """The receiver first, the sender last; support.check has refused
        apps without a partner."""
        rx = PARTNER[opts.app] + ["duration=%d" % ((opts.duration or 5) + RX_EXTRA_S)]
        if opts.count:
            rx.append("count=%d" % opts.count)
        return [("rx", rx), ("tx", identity.app_words(opts))]

    def pmd_refusal(self, opts, knob):
        if opts.fwd_mode is not None:
            return "two guests are joined by testpmd io: --fwd-mode does not apply"
        return None

    def gen_sends(self, opts):
        return True

    def receiver_app(self, opts):
        words = dict(w.partition("=")[::2] for w in PARTNER.get(opts.app) or ())
        return words.get("app")


GUESTS = Guests()
