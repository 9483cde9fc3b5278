"""--pcap FILE: the capture app=replay sends (docs/replay.md).

A classic libpcap file (both byte orders, microsecond or nanosecond
timestamps) of Ethernet frames is read here, checked whole, and written as
the compact blob the guest loads from the fw_cfg file opt/vnperf/pcap
(apps/pcap_blob.h): a 24-byte header, then per frame its length, its gap
to the previous frame in ns (48 bits) and its bytes. The reader is our
own, not python3-dpkt's or scapy's: the format is two fixed headers, and
the runner must refuse a capture it cannot send exactly as recorded in
one line (a record cut short at the end, a frame the capture kept only
part of, timestamps going backwards, a link type other than Ethernet),
where dpkt's Reader stops at a short record without a word and takes
every record's captured length as it is. Each refusal is a ValueError of
one line; options.build makes it status 64."""

import dataclasses
import os
import struct
from collections import namedtuple

from ..errors import usage

FWCFG_NAME = "opt/vnperf/pcap"
LINKTYPE_ETHERNET = 1
MIN_FRAME = 14                  # an Ethernet header (PCAP_BLOB_MIN_FRAME)
MAX_FRAME = 9216                # PCAP_BLOB_MAX_FRAME
MAX_FRAMES = 1 << 24            # PCAP_BLOB_MAX_FRAMES
MAX_SPAN_NS = 1 << 48           # PCAP_BLOB_MAX_SPAN: one loop
BLOB_MAGIC = b"VNPCAP\x00\x01"
BLOB_HDR = 24
BLOB_REC = 8
# Guest RAM the appliance needs besides the blob: image, rings, buffers,
# lwIP's pools (docs/replay.md measures it).
GUEST_RESERVE_MB = 24

# magic -> (byte order, ns per timestamp fraction unit)
MAGICS = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000),
          b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}
PCAPNG = b"\x0a\x0d\x0d\x0a"
LINK_NAMES = {0: "BSD loopback", 101: "raw IP", 105: "802.11", 113: "Linux cooked (SLL)",
              127: "802.11 radiotap", 228: "raw IPv4", 229: "raw IPv6",
              276: "Linux cooked v2 (SLL2)"}

Capture = namedtuple("Capture", "frames gaps_ns bytes maxlen span_ns")


def _header(data, name):
    """(byte order, ns per fraction unit) of the file's global header."""
    if data[:4] == PCAPNG:
        raise ValueError("%s: a pcapng file; --pcap reads classic pcap (editcap -F pcap %s OUT)"
                         % (name, name))
    if len(data) < 24:
        raise ValueError("%s: truncated: %d bytes, shorter than a pcap file header (24)"
                         % (name, len(data)))
    if data[:4] not in MAGICS:
        raise ValueError("%s: not a pcap file (magic %s)" % (name, data[:4].hex()))
    order, unit = MAGICS[data[:4]]
    major, minor, _, _, _, link = struct.unpack(order + "HHiIII", data[4:24])
    if (major, minor) != (2, 4):
        raise ValueError("%s: pcap version %d.%d; only 2.4 is read" % (name, major, minor))
    # The upper bits hold the FCS length (pcap-linktype(7)): frames with an
    # FCS are not sent as they are.
    if link != LINKTYPE_ETHERNET:
        raise ValueError("%s: link type %d (%s): only Ethernet (1) is replayed"
                         % (name, link, LINK_NAMES.get(link & 0xffff, "not Ethernet")))
    return order, unit


def read(path, max_frame):
    """The Capture in path: every frame MIN_FRAME..max_frame bytes, kept
    whole, timestamps in order. ValueError (one line) for anything else;
    OSError when unreadable."""
    with open(path, "rb") as f:
        data = f.read()
    order, unit = _header(data, path)
    rec = struct.Struct(order + "IIII")
    frames, gaps = [], []
    off, prev, total, span = 24, None, 0, 0
    while off < len(data):
        n = len(frames)
        if len(data) - off < rec.size:
            raise ValueError("%s: truncated: frame %d's record header has %d of 16 bytes"
                             % (path, n, len(data) - off))
        sec, frac, incl, orig = rec.unpack_from(data, off)
        off += rec.size
        if frac * unit >= 1000000000:
            raise ValueError("%s: frame %d: timestamp fraction %d is over a second"
                             % (path, n, frac))
        if incl > len(data) - off:
            raise ValueError("%s: truncated: frame %d has %d of its %d bytes"
                             % (path, n, len(data) - off, incl))
        if incl < orig:
            raise ValueError("%s: frame %d was captured short (%d of %d bytes, the capture's "
                             "snaplen): it cannot be sent as it was" % (path, n, incl, orig))
        if incl > orig:
            raise ValueError("%s: frame %d: captured length %d is above its length on the "
                             "wire %d" % (path, n, incl, orig))
        if incl < MIN_FRAME or incl > max_frame:
            raise ValueError("%s: frame %d is %d bytes: frames are sent whole, %d..%d (the "
                             "MTU + 14)" % (path, n, incl, MIN_FRAME, max_frame))
        t = sec * 1000000000 + frac * unit
        gap = 0 if prev is None else t - prev
        if gap < 0:
            raise ValueError("%s: frame %d's timestamp is %d ns before frame %d's"
                             % (path, n, -gap, n - 1))
        span += gap
        if span > MAX_SPAN_NS:
            raise ValueError("%s: frame %d is %.1f h after the first: at most %.1f h"
                             % (path, n, span / 3.6e12, MAX_SPAN_NS / 3.6e12))
        if n == MAX_FRAMES:
            raise ValueError("%s: more than %d frames" % (path, MAX_FRAMES))
        prev = t
        frames.append(data[off:off + incl])
        gaps.append(gap)
        total += incl
        off += incl
    if not frames:
        raise ValueError("%s: no frames" % path)
    return Capture(frames, gaps, total, max(len(f) for f in frames), span)


def blob_size(cap):
    return BLOB_HDR + BLOB_REC * len(cap.frames) + cap.bytes


def blob(cap):
    """The bytes of the fw_cfg file (apps/pcap_blob.h)."""
    out = [BLOB_MAGIC, struct.pack("<IHHQ", len(cap.frames), cap.maxlen, 0, cap.bytes)]
    for frame, gap in zip(cap.frames, cap.gaps_ns):
        out.append(struct.pack("<HIH", len(frame), gap & 0xffffffff, gap >> 32))
        out.append(frame)
    return b"".join(out)


def ram_refusal(cap, memory_mb):
    """None, or the line that refuses a capture --memory cannot hold."""
    need = blob_size(cap)
    room = (memory_mb - GUEST_RESERVE_MB) << 20
    if need <= room:
        return None
    want = GUEST_RESERVE_MB + (need + (1 << 20) - 1) // (1 << 20)
    return ("--pcap: the capture needs %d bytes of guest RAM, --memory %d leaves %d: give "
            "--memory %d or more" % (need, memory_mb, max(room, 0), want))


def write(path, frames, gaps_ns=None, order="<", ns=False, link=LINKTYPE_ETHERNET):
    """A classic pcap file of frames (tests and bench write their own
    captures): gaps_ns between them (default 1 us)."""
    magic = 0xa1b23c4d if ns else 0xa1b2c3d4
    unit = 1 if ns else 1000
    out = [struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, link)]
    t = 0
    for i, f in enumerate(frames):
        t += 0 if i == 0 else (gaps_ns[i] if gaps_ns else 1000)
        out.append(struct.pack(order + "IIII", t // 1000000000, (t % 1000000000) // unit,
                               len(f), len(f)))
        out.append(f)
    with open(path, "wb") as fh:
        fh.write(b"".join(out))


# Frames the runner's NICs take: QEMU's default MTU (the runner sets no
# host_mtu) plus the Ethernet header.
RUNNER_MAX_FRAME = 1514
MAX_SPEED = 10000          # speed=: apps/pcap_sched.h PCAP_SPEED_MAX
MAX_PPS = 1000000000       # rate=: apps/rate.c's 1 Gpps
MAX_LOOPS = 1000000        # loops=


def _speed(text):
    """--speed X: the guest's speed= syntax, checked here (one line)."""
    whole, dot, frac = text.partition(".")
    ok = whole.isdigit() and whole.isascii() and (not dot or (frac.isdigit() and frac.isascii()
                                                                and len(frac) <= 6))
    if not ok or not 0 < float(text) <= MAX_SPEED:
        raise usage("--speed %s: a multiplier of the recorded timing, 0.000001..%d with at most "
                    "6 fraction digits (2: twice as fast)" % (text, MAX_SPEED))


def resolve(o):
    """The options of a run with --pcap, checked: one timing of --speed,
    --pps and --topspeed, nothing that makes frames of its own, the
    capture read whole and fitting the guest's RAM. Refusals are one line,
    status 64, before anything boots. Returns o with app replay."""
    timing = [n for n, on in (("--speed", o.speed is not None), ("--pps", o.pps is not None),
                              ("--topspeed", o.topspeed)) if on]
    if o.pcap is None:
        given = timing + (["--loops"] if o.loops is not None else [])
        raise usage("%s: replay options need --pcap FILE" % given[0])
    if len(timing) > 1:
        raise usage("--pcap: %s each set the timing: give one" % " and ".join(timing))
    if o.app not in (None, "replay"):
        raise usage("--pcap: the capture is sent by app replay, not --app %s" % o.app)
    for name in ("size", "rate", "count"):
        if getattr(o, name) is not None:
            raise usage("--pcap: the capture's frames are sent as they are: --%s does not "
                        "apply (--pps for a fixed rate)" % name)
    if o.speed is not None:
        _speed(o.speed)
    if o.pps is not None and o.pps > MAX_PPS:
        raise usage("--pps %d: at most %d" % (o.pps, MAX_PPS))
    if o.loops is not None and o.loops > MAX_LOOPS:
        raise usage("--loops %d: at most %d" % (o.loops, MAX_LOOPS))
    cap = load(o.pcap)
    too_big = ram_refusal(cap, o.memory)
    if too_big:
        raise usage(too_big)
    return dataclasses.replace(o, app="replay")


def load(path):
    """read() with the runner's frame limit; every refusal one line."""
    try:
        return read(path, RUNNER_MAX_FRAME)
    except OSError as e:
        raise usage("--pcap %s: %s" % (path, e.strerror or e))
    except ValueError as e:
        raise usage("--pcap %s" % e.args[0])


def words(opts):
    """The replay's config words: loops=, and speed= or rate=."""
    out = ["loops=%d" % (opts.loops or 1)]
    if opts.pps is not None:
        out.append("rate=%d" % opts.pps)
    else:
        out.append("speed=%s" % ("max" if opts.topspeed else (opts.speed or "1")))
    return out


def qemu_args(opts, tmpdir):
    """-fw_cfg with the blob, written into the run's scratch directory."""
    path = os.path.join(tmpdir, "pcap.blob")
    with open(path, "wb") as f:
        f.write(blob(load(opts.pcap)))
    return ["-fw_cfg", "name=%s,file=%s" % (FWCFG_NAME, path.replace(",", ",,"))]
