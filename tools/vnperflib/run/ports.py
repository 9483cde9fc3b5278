"""Free ports on 127.0.0.1 for QEMU, the peer and the host's iperf."""

import socket


def _free_ports(n, kind):
    """n distinct ports that were free a moment ago (held together while
    probing, so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, kind)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_udp_ports(n):
    return _free_ports(n, socket.SOCK_DGRAM)


def free_tcp_ports(n):
    return _free_ports(n, socket.SOCK_STREAM)
