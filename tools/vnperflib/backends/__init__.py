"""Network backends, one module per family. Each checks the host, starts
what it needs, gives QEMU its -netdev, reports host-side counts and tears
everything down through the session's undo stack (base.Backend). The
registry below is the one place that names them."""

from .. import topologies
from ..errors import usage
from ..run import qemucmd
from . import tap, testpmd, vhostpeer
from .base import Backend, NoBackend
from .ownvhost import OwnVhostUser
from .passt import Passt, PasstVhostUser
from .qemuonly import Hub, OwnNic, User
from .tap import Tap, VhostNet
from .testpmd import VhostUser
from .wire import Dgram, Socket

# --backend name -> class, in the order `--help` and doctor list them.
REGISTRY = {
    "none": NoBackend,
    "dgram": Dgram,
    "socket": Socket,
    "hub": Hub,
    "user": User,
    "tap": Tap,
    "vhost-net": VhostNet,
    "vhost-user": VhostUser,
    "passt": Passt,
    "passt-vhost-user": PasstVhostUser,
}

__all__ = ["Backend", "REGISTRY", "names", "make", "implied"]


def names():
    return list(REGISTRY)


def implied(opts, named):
    """The backend that --vhost-user-socket, --tap, --bridge or a virtio-net
    -device of the user's own (--qemu-arg, --qemu-args-file) stands for:
    vhost-user, tap (vhost-net takes --tap and --bridge too) or none (the
    runner adds no NIC); None
    when no option names one. named: the backends the user gave (--backend,
    sweep's axis); one that contradicts the option is refused."""
    if opts.tap and opts.bridge:
        raise usage("--tap and --bridge: give one (--bridge adds a tap of the runner's own)")
    nic = qemucmd.own_nic(opts.qemu_args)
    if opts.vhost_user_socket:
        if opts.tap or opts.bridge or nic:
            raise usage("--vhost-user-socket and %s: the guest takes one NIC" % (
                "--tap" if opts.tap else "--bridge" if opts.bridge
                else "a virtio-net -device of your own"))
        what = "--vhost-user-socket"
        allowed, why = ("vhost-user",), "it is the vhost-user backend"
    elif opts.tap or opts.bridge:
        what = "--tap %s" % opts.tap if opts.tap else "--bridge %s" % opts.bridge
        if nic:
            raise usage("%s and a virtio-net -device of your own: the guest takes one NIC "
                        "(give its -netdev tap,ifname=... in your file instead)" % what)
        allowed, why = tap.OWN_TAP_BACKENDS, "it is the tap backend (or vhost-net)"
    elif nic:
        what = "a virtio-net -device of your own"
        allowed, why = ("none",), "the runner adds no NIC of its own then (--backend none)"
    else:
        return None
    bad = [n for n in named if n not in allowed]
    if bad:
        raise usage("%s and --backend %s: %s" % (what, bad[0], why))
    return allowed[0]


def known(name):
    """Refuses a backend name the runner does not have: one line, 64."""
    if name not in REGISTRY:
        raise usage("unknown backend %r: one of %s" % (name, ", ".join(REGISTRY)))


def make(name, opts):
    known(name)
    if opts.sock_rcvbuf and name != "dgram":
        raise usage("--sock-rcvbuf: --backend dgram only (the runner makes QEMU's socket "
                    "there), not %s" % name)
    if name == "vhost-user" and opts.vhost_user_socket:
        return OwnVhostUser(opts)
    wired = topologies.topology_for(opts).make_backend(name, opts)
    if wired is not None:
        return wired
    if name in tap.OWN_TAP_BACKENDS and (opts.tap or opts.bridge):
        return tap.own(opts, name == "vhost-net")
    if name == "none" and qemucmd.own_nic(opts.qemu_args):
        return OwnNic(opts)
    if name == "vhost-user" and vhostpeer.feeder(opts, testpmd.plan(opts)[1]) == "peer-dpdk":
        return vhostpeer.VhostUserPeer(opts)
    return REGISTRY[name](opts)
