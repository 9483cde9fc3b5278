"""Backends that are QEMU alone, with no host end to count: a hub with an
unattached port (the device model as a null sink) and slirp."""

from .. import peer, qemucmd
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


class User(Backend):
    """slirp, restricted: nothing leaves the host."""

    name = "user"

    def nics(self, index):
        return [qemucmd.Nic("user,restrict=on,net=10.0.2.0/24,host=10.0.2.2", guest_mac(index),
                            nic_props(self.opts))]

    def guest_config(self, index):
        return ["ip=" + guest_ip(index), "gw=10.0.2.2", "dst_ip=10.0.2.2"]
