"""The host end that counts gen's UDP datagrams as the host's stack
delivers them (tap and vhost-net with the guest's uso=): a UDP socket bound
in the backend's namespace, without UDP_GRO, so the kernel hands it each
segment of a datagram the device cut (HOST_USO, virtio 1.2 s5.1.6.2) as a
datagram of its own. Run as a script inside the namespace (`ip netns exec
NS python3 udpcount.py --bind IP:PORT --ready-file F`); on SIGTERM it
drains its socket and prints one JSON line: datagrams, bytes, the payload
sizes with their counts, and the namespace's UDP RcvbufErrors over the run
(segments the socket had no room for) and InCsumErrors (segments whose UDP
checksum the stack found wrong). Standard library only."""

import argparse
import json
import os
import select
import signal
import socket
import sys

SO_RCVBUFFORCE = 33          # <asm-generic/socket.h>
RCVBUF = 64 << 20
MAX_SIZES = 64               # distinct payload sizes kept (the rest: "other")
_stop = False


def snmp_udp(path="/proc/net/snmp"):
    """The Udp: line of /proc/net/snmp as a dict (this namespace's)."""
    with open(path) as f:
        rows = [l.split() for l in f if l.startswith("Udp:")]
    return dict(zip(rows[0][1:], (int(v) for v in rows[1][1:]))) if len(rows) >= 2 else {}


def count(sock, sizes, tally):
    """Reads every datagram waiting; adds to tally [datagrams, bytes]."""
    buf = bytearray(65536)
    while True:
        try:
            n = sock.recv_into(buf, len(buf), socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        tally[0] += 1
        tally[1] += n
        key = str(n) if str(n) in sizes or len(sizes) < MAX_SIZES else "other"
        sizes[key] = sizes.get(key, 0) + 1


def _on_term(signum, frame):
    global _stop
    _stop = True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bind", required=True, metavar="IP:PORT")
    ap.add_argument("--ready-file", required=True)
    a = ap.parse_args(argv)
    host, _, port = a.bind.rpartition(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
        sock.bind((host, int(port)))
    except (OSError, ValueError) as e:
        print("udpcount: %s: %s" % (a.bind, e), file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _on_term)
    base = snmp_udp()
    with open(a.ready_file + ".tmp", "w") as f:
        f.write(json.dumps({"pid": os.getpid()}))
    os.rename(a.ready_file + ".tmp", a.ready_file)
    sizes, tally = {}, [0, 0]
    while not _stop:
        try:
            select.select([sock], [], [], 0.2)
        except InterruptedError:
            pass
        count(sock, sizes, tally)
    count(sock, sizes, tally)
    now = snmp_udp()
    print(json.dumps({"mode": "udpcount", "datagrams": tally[0], "bytes": tally[1],
                      "sizes": sizes, "rcvbuf_errors": now.get("RcvbufErrors", 0)
                      - base.get("RcvbufErrors", 0), "csum_errors": now.get("InCsumErrors", 0)
                      - base.get("InCsumErrors", 0)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
