"""The host end that counts gen's UDP datagrams as the host's stack
delivers them (tap and vhost-net with the guest's uso=): a UDP socket bound
in the backend's namespace, without UDP_GRO, so the kernel hands it each
segment of a datagram the device cut (HOST_USO, virtio 1.2 s5.1.6.2) as a
datagram of its own. Run as a script inside the namespace (`ip netns exec
NS python3 udpcount.py --bind IP:PORT --ready-file F`); on SIGTERM it
drains its socket and prints one JSON line: datagrams, bytes, the payload
sizes with their counts, and the namespace's UDP RcvbufErrors over the run
(segments the socket had no room for) and InCsumErrors (segments whose UDP
checksum the stack found wrong), and the vnperf payload header's streams
(docs/peer.md: stream id at 16, u16 below 24 bytes, u32 with the magic at
20 from 24 on): "streams" [{"id", "packets", "sizes"}] as the host peer's,
with each stream's payload sizes (app reneg's uso=: each set's segments on
a stream of its own, docs/apps.md). With
--echo (app reneg over slirp, whose host end is a UDP socket on the host's
loopback) it also sends each datagram back to its source: "echoed" the
datagrams sent back. Standard library only."""

import argparse
import json
import os
import select
import signal
import socket
import struct
import sys

SO_RCVBUFFORCE = 33          # <asm-generic/socket.h>
RCVBUF = 64 << 20
MAX_SIZES = 64               # distinct payload sizes kept (the rest: "other")
PL_MIN, PL_LEN, PL_MAGIC = 18, 24, 0x564e5046   # net/pkt.h's payload header
_stop = False


def snmp_udp(path="/proc/net/snmp"):
    """The Udp: line of /proc/net/snmp as a dict (this namespace's)."""
    with open(path) as f:
        rows = [l.split() for l in f if l.startswith("Udp:")]
    return dict(zip(rows[0][1:], (int(v) for v in rows[1][1:]))) if len(rows) >= 2 else {}


def stream_id(payload):
    """The vnperf payload header's stream id, or None (too short, or from
    PL_LEN bytes on without the magic)."""
    if len(payload) < PL_MIN:
        return None
    if len(payload) < PL_LEN:
        return struct.unpack_from("<H", payload, 16)[0]
    sid, magic = struct.unpack_from("<II", payload, 16)
    return sid if magic == PL_MAGIC else None


def _add_size(sizes, n):
    """One datagram of n payload bytes in sizes ({size: count}, MAX_SIZES
    sizes kept, the rest "other")."""
    key = str(n) if str(n) in sizes or len(sizes) < MAX_SIZES else "other"
    sizes[key] = sizes.get(key, 0) + 1


def count(sock, sizes, tally, streams, echo=False):
    """Reads every datagram waiting; adds to tally [datagrams, bytes,
    echoed], to sizes and to streams ({id: {size: count}}) its stream's;
    with echo sends each back to its source."""
    buf = bytearray(65536)
    while True:
        try:
            n, src = sock.recvfrom_into(buf, len(buf), socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        tally[0] += 1
        tally[1] += n
        _add_size(sizes, n)
        sid = stream_id(bytes(buf[:n]))
        if sid is not None:
            _add_size(streams.setdefault(sid, {}), n)
        if echo:
            tally[2] += sock.sendto(memoryview(buf)[:n], src) == n


def _on_term(signum, frame):
    global _stop
    _stop = True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bind", required=True, metavar="IP:PORT")
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--echo", action="store_true",
                    help="send each datagram back to its source")
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
    sizes, tally, streams = {}, [0, 0, 0], {}
    while not _stop:
        try:
            select.select([sock], [], [], 0.2)
        except InterruptedError:
            pass
        count(sock, sizes, tally, streams, a.echo)
    count(sock, sizes, tally, streams, a.echo)
    now = snmp_udp()
    out = {"mode": "udpcount", "datagrams": tally[0], "bytes": tally[1],
           "sizes": sizes, "rcvbuf_errors": now.get("RcvbufErrors", 0)
           - base.get("RcvbufErrors", 0), "csum_errors": now.get("InCsumErrors", 0)
           - base.get("InCsumErrors", 0),
           "streams": [{"id": k, "packets": sum(v.values()), "sizes": v}
                       for k, v in sorted(streams.items())]}
    if a.echo:
        out["echoed"] = tally[2]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
