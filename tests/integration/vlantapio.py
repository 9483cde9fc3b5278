"""The guest's side of a tap without a guest: run inside the namespace
that holds the tap (`ip netns exec NS`), it opens the tap as QEMU would
(IFF_TAP | IFF_NO_PI), writes one IPv4 UDP datagram to HOST:PORT per
--kind (the kind's tags before the EtherType; its name the payload) and
reads which the host's stack delivered to a socket on HOST:PORT; then
sends one datagram from that socket to GUEST and reads the frame the tap
hands the guest. Prints one JSON line: {"delivered": [kind names],
"frame": that frame in hex}.

A kind is NAME=TAGS, TAGS a list of TPID/VID[/PCP] joined by '+', outer
first ("q100=8100/100", "qinq=88a8/200+8100/100", "none=").

  vlantapio.py --dev vntc0 --host 10.0.0.1 --guest 10.0.0.2 --guest-mac 52:54:00:00:00:01 \\
      --kind q100=8100/100 --kind none=
"""

import argparse
import fcntl
import json
import os
import select
import socket
import struct
import time

from synflood import csum  # the Internet checksum, RFC 1071

TUNSETIFF = 0x400454CA   # linux/if_tun.h
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000
PORT, GUEST_PORT = 5555, 5556


def tags(text):
    """TPID/VID[/PCP]+... as 802.1Q tag bytes (IEEE 802.1Q-2018 s9.5)."""
    out = b""
    for t in filter(None, text.split("+")):
        parts = [int(p, 16) if i == 0 else int(p) for i, p in enumerate(t.split("/"))]
        tpid, vid, pcp = (parts + [0])[:3]
        out += struct.pack("!HH", tpid, pcp << 13 | vid)
    return out


def udp_frame(dst_mac, src_mac, src, dst, tag, payload):
    """Ethernet, tags, IPv4 (checksum right, RFC 791 s3.1) and UDP
    (checksum 0: none, RFC 768)."""
    ulen = 8 + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 1, 0, 64, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", GUEST_PORT, PORT, ulen, 0) + payload
    return dst_mac + src_mac + tag + b"\x08\x00" + ip + udp


def open_tap(dev):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def host_mac(dev):
    with open("/sys/class/net/%s/address" % dev) as f:
        return bytes.fromhex(f.read().strip().replace(":", ""))


def delivered(sock, wait_s):
    got, end = [], time.monotonic() + wait_s
    while time.monotonic() < end:
        if select.select([sock], [], [], 0.05)[0]:
            got.append(sock.recv(2048).decode())
    return got


def frame_to_guest(fd, sock, guest, wait_s):
    """The first IPv4-carrying frame the tap hands the guest after the
    socket sends one datagram to it, in hex."""
    sock.sendto(b"to-guest", (guest, GUEST_PORT))
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.05)[0]:
            f = os.read(fd, 4096)
            if b"to-guest" in f:
                return f.hex()
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--guest", required=True)
    ap.add_argument("--guest-mac", required=True)
    ap.add_argument("--kind", action="append", default=[])
    a = ap.parse_args()
    fd = open_tap(a.dev)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((a.host, PORT))
    gmac = bytes.fromhex(a.guest_mac.replace(":", ""))
    for kind in a.kind:
        name, tag = kind.split("=", 1)
        os.write(fd, udp_frame(host_mac(a.dev), gmac, a.guest, a.host, tags(tag),
                               name.encode()))
    got = delivered(sock, 0.5)
    print(json.dumps({"delivered": got, "frame": frame_to_guest(fd, sock, a.guest, 2.0)}))


if __name__ == "__main__":
    main()
