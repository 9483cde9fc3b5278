"""vnperf UDP frames to a guest, 802.1Q-tagged or untagged, written
straight onto a tap with an AF_PACKET socket (a tap's transmit is what
QEMU reads), so run it inside the namespace that holds the tap (`ip netns
exec NS`). It first pings the guest until it answers (the guest's lwIP
answers from the app's receive loop, so the app's control commands are
done) and takes the guest's MAC from the neighbour table. Then, paced to
--rate, one frame of each kind in turn until --count of each: a kind is a
VLAN id (802.1Q tag, IEEE 802.1Q-2018 s9.5) or "none" (untagged), and its
frames are vnperf stream STREAM_BASE + id (untagged: STREAM_BASE), each
stream's sequence numbers from 0 (docs/protocol.md). Prints one JSON line:
{"mac": guest MAC, "sent": {kind: frames}, "tx_dropped": the tap's drops
while sending}.

  vlanframes.py --dev vnvtap0 --src 10.9.0.1 --dst 10.9.0.2 --kinds 5,6,none --count 300
"""

import argparse
import json
import socket
import struct
import subprocess
import sys
import time

from synflood import csum  # the Internet checksum, RFC 1071

ETH_P_8021Q = 0x8100
ETH_P_IP = 0x0800
PL_MAGIC = 0x564E5046  # "VNPF"
SRC_PORT, DST_PORT = 40000, 9000
STREAM_BASE = 100


def frame(dst_mac, src_mac, src, dst, vid, stream, seq):
    """Ethernet, an optional 802.1Q tag, IPv4 and UDP (both checksums
    right: RFC 791 s3.1, RFC 768), and the vnperf payload header: seq,
    TSC (0), stream, magic (net/pkt.h PL_OFF_*)."""
    payload = struct.pack("<QQII", seq, 0, stream, PL_MAGIC)
    ulen = 8 + len(payload)
    pseudo = struct.pack("!4s4sBBH", src, dst, 0, socket.IPPROTO_UDP, ulen)
    udp = struct.pack("!HHHH", SRC_PORT, DST_PORT, ulen, 0) + payload
    udp = udp[:6] + struct.pack("!H", csum(pseudo + udp) or 0xFFFF) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, seq & 0xFFFF, 0, 64,
                     socket.IPPROTO_UDP, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    tag = b"" if vid is None else struct.pack("!HH", ETH_P_8021Q, vid)
    return dst_mac + src_mac + tag + struct.pack("!H", ETH_P_IP) + ip + udp


def link(dev):
    """(MAC bytes, TX drops) of dev."""
    d = json.loads(subprocess.run(["ip", "-s", "-j", "link", "show", dev],
                                  stdout=subprocess.PIPE, check=True).stdout)[0]
    return bytes.fromhex(d["address"].replace(":", "")), d["stats64"]["tx"]["dropped"]


def guest_mac(dst, wait_s):
    """The guest's MAC once it answers a ping; None if it does not within
    wait_s."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if subprocess.run(["ping", "-c", "1", "-W", "1", dst], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            out = subprocess.run(["ip", "-j", "neigh", "show", dst], stdout=subprocess.PIPE,
                                 check=True).stdout
            return bytes.fromhex(json.loads(out)[0]["lladdr"].replace(":", ""))
    return None


def send(dev, frames, rate):
    """Every frame, paced to rate per second."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    t0 = time.monotonic()
    try:
        for i, f in enumerate(frames):
            due = t0 + i / rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            s.send(f)
    finally:
        s.close()


def kind_id(k):
    if k == "none":
        return None
    vid = int(k)
    if not 1 <= vid <= 4094:
        raise ValueError("VLAN id %d: 1..4094 (IEEE 802.1Q-2018 s9.6)" % vid)
    return vid


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--kinds", required=True, help="VLAN ids or none, comma-separated")
    ap.add_argument("--count", type=int, required=True, help="frames of each kind")
    ap.add_argument("--rate", type=float, default=300.0, help="frames per second, all kinds")
    ap.add_argument("--wait", type=float, default=120.0, help="seconds for the guest to answer")
    a = ap.parse_args(argv)
    try:
        kinds = [kind_id(k) for k in a.kinds.split(",")]
    except ValueError as e:
        ap.error("--kinds %s: %s" % (a.kinds, e))
    if not (0 < a.count <= 10 ** 5 and 0 < a.rate <= 10 ** 5):
        ap.error("--count 1..10^5, --rate up to 10^5")
    mac = guest_mac(a.dst, a.wait)
    if mac is None:
        print("vlanframes: %s did not answer a ping within %.0f s" % (a.dst, a.wait),
              file=sys.stderr)
        return 1
    my_mac, dropped = link(a.dev)
    src, dst = socket.inet_aton(a.src), socket.inet_aton(a.dst)
    frames = [frame(mac, my_mac, src, dst, vid, STREAM_BASE + (vid or 0), seq)
              for seq in range(a.count) for vid in kinds]
    send(a.dev, frames, a.rate)
    print(json.dumps({"mac": mac.hex(":"),
                      "sent": {str(vid or "none"): a.count for vid in kinds},
                      "tx_dropped": link(a.dev)[1] - dropped}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
