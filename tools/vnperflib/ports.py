"""Free UDP ports on 127.0.0.1 for QEMU and the peer."""

import socket


def free_udp_ports(n):
    """n distinct ports that were free a moment ago (held together while
    probing, so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
