"""The UDP socket the runner makes for QEMU's -netdev dgram when asked for
a receive buffer (--sock-rcvbuf): bound and connected like QEMU's own, the
buffer set before QEMU inherits it (local.type=fd). QEMU's main loop reads
one datagram per iteration; the kernel's default buffer
(net.core.rmem_default, about 208 KiB, a 64-byte datagram costing ~700 B of
it) holds only a few ms of a paced flood, so a short stall of that loop
overflows it (docs/runner-run.md)."""

import re
import socket

# <linux/asm-generic/socket.h>; Python's socket module does not name it.
SO_RCVBUFFORCE = 33
MIN_RCVBUF = 4096
# The kernel keeps twice the value asked for in an int.
MAX_RCVBUF = 1 << 30
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text):
    """"4194304", "512k", "4M" (binary multiples) -> bytes; ValueError
    with the reason otherwise."""
    m = re.fullmatch(r"([0-9]{1,10})([kKmMgG]?)", str(text).strip())
    if not m:
        raise ValueError("%r is not a size in bytes (e.g. 4194304, 512k, 4M)" % (text,))
    n = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if not MIN_RCVBUF <= n <= MAX_RCVBUF:
        raise ValueError("%s: %d bytes, not in %d..%d" % (text, n, MIN_RCVBUF, MAX_RCVBUF))
    return n


def set_rcvbuf(sock, size):
    """SO_RCVBUFFORCE (root: above net.core.rmem_max), else SO_RCVBUF;
    returns the kernel's figure (twice size: its bookkeeping share) or
    raises OSError when the kernel capped it below size."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, size)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)
    got = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    if got < size:
        raise OSError("the kernel gave %d bytes (net.core.rmem_max caps SO_RCVBUF without "
                      "CAP_NET_ADMIN)" % got)
    return got


def connected(local_port, remote_port, rcvbuf):
    """A UDP socket on 127.0.0.1:local_port that sends to and takes from
    127.0.0.1:remote_port only (QEMU's dgram with an fd sends with send()),
    with a receive buffer of rcvbuf bytes: (socket, the kernel's figure)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        # As QEMU's own dgram socket (socket_set_fast_reuse).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", local_port))
        s.connect(("127.0.0.1", remote_port))
        got = set_rcvbuf(s, rcvbuf)
    except OSError:
        s.close()
        raise
    return s, got
