"""Stream files (docs/streams.md): TOML read with tomllib, every stream
checked before anything boots (one line per error naming the stream and
the field, status 64), then encoded as the text the guest's gen reads
from fw_cfg (apps/stream_spec.h, docs/streams.md "Guest encoding")."""

import ipaddress
import re
import tomllib

from .. import exitcodes
from ..errors import RunnerError, printable, usage
from ..optypes import digits

FWCFG_NAME = "opt/vnperf/streams"
MAGIC = "vnperf-streams 2"  # 2: proto=
# The guest's limits (apps/stream_spec.h): checked here first so that a
# file the runner passes is one the guest takes.
STREAMS_MAX = 16
VARS_MAX = 4
IMIX_MAX = 8
TEXT_MAX = 4095
MIN_FRAME = 60
MAX_FRAME = 9014
MAX_PPS = 10**9
MAX_BPS = 10**12
GAP_NS_MAX = 60 * 10**9
BURST_MAX = 10**12
IMIX_FCS = 4

MODES = ("continuous", "burst", "multi_burst", "poisson")
# Who sends a stream: the guest's gen (tx) or the host peer toward the
# guest (rx); each side counts the other's (docs/streams.md, "Both ways").
DIRECTIONS = ("tx", "rx")
# The backends whose host end sends rx streams: the C peer's UDP socket,
# or its packet socket on the runner's tap (whole frames onto the tap;
# vhost-net's host end is the same tap, only the datapath to it differs).
BIDIR_BACKENDS = ("dgram", "socket", "tap", "vhost-net")
# proto: its header's bytes and the stamp its smallest frame holds (the
# whole 24 bytes for TCP and ICMP: the magic tells them from the stack's)
PROTOS = {"udp": (8, 18), "tcp": (20, 24), "icmp": (8, 24)}
OPS = ("inc", "dec", "random")
# field: (bits, which frames have it)
FIELDS = {
    "src_mac": (48, "any"), "dst_mac": (48, "any"),
    "vlan": (12, "vlan"), "outer_vlan": (12, "qinq"),
    "src_ip": (32, "any"), "dst_ip": (32, "any"),
    "flow_label": (20, "ipv6"), "tos": (8, "any"),
    "src_port": (16, "any"), "dst_port": (16, "any"),
}
STREAM_KEYS = {"name", "ip", "proto", "src_mac", "dst_mac", "vlan", "src_ip", "dst_ip", "src_port",
               "dst_port", "tos", "ttl", "flow_label", "size", "rate", "share", "mode", "frames",
               "gap_us", "bursts", "var", "direction"}
VAR_KEYS = {"field", "op", "min", "max", "step"}
TOP_KEYS = {"rate", "stream"}
_RATE = re.compile(r"^(\d+)(?:\.(\d+))?([kmgt]?)(pps|bps|bit|bit/s)?$", re.I)
_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$", re.I)
IMIX_SIMPLE = "64:7,594:4,1518:1"


def parse_rate(text):
    """'100k', '1.5mpps', '10gbps' (apps/rate.h's grammar) -> ('pps'|'bps',
    n); None for an unpaced rate ('max', '0'); ValueError with why."""
    s = str(text).strip()
    if s.lower() in ("max", "0", ""):
        return None
    m = _RATE.match(s)
    if not m:
        raise ValueError("expected <number>[k|m|g|t][pps|bps], e.g. 100k, 1.5mpps, 10gbps")
    whole, frac, exp, unit = m.group(1), m.group(2) or "", m.group(3).lower(), m.group(4)
    mult = 10 ** (3 * (" kmgt".index(exp) if exp else 0))
    num = int(whole + frac) * mult
    den = 10 ** len(frac)
    if num % den:
        raise ValueError("%s is not a whole number per second" % s)
    v = num // den
    unit = "bps" if unit and unit.lower() != "pps" else "pps"
    if v == 0:
        raise ValueError("rate 0: leave rate out (or max) for no limit")
    if v > (MAX_PPS if unit == "pps" else MAX_BPS):
        raise ValueError("%s is above 1gpps / 1tbps" % s)
    return unit, v


class StreamFileError(RunnerError):
    """Every error of a file, one line each (the runner prefixes the first
    with "vnperf: "; the others get it here)."""

    def __init__(self, lines):
        super().__init__(exitcodes.RUNNER_USAGE, lines[0])
        self.lines = [printable(x) for x in lines]
        self.line = "\nvnperf: ".join(self.lines)


class _Stream:
    """One stream's checked values (what the encoding writes)."""

    def __init__(self, idx, name):
        self.idx, self.name = idx, name
        self.ip, self.proto, self.vlan, self.macs = 4, "udp", (), ("0", "0")
        self.src = self.dst = "0"
        self.ports, self.tos, self.ttl, self.flow_label = (0, 0), 0, 64, 0
        self.sizes, self.size_max = ((64, 1),), 64
        self.rate, self.share = None, None
        self.mode, self.frames, self.gap_ns, self.bursts = "continuous", 0, 0, 0
        self.direction = "tx"
        self.vars = []


class _Checker:
    def __init__(self, path):
        self.path, self.errors = path, []

    def err(self, where, field, msg):
        self.errors.append("%s: %s: %s: %s" % (self.path, where, field, msg))

    def integer(self, where, field, v, lo, hi):
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            self.err(where, field, "%r: a whole number %d..%d" % (v, lo, hi))
            return None
        return v


def _mac(ck, where, field, v):
    if not isinstance(v, str) or not _MAC.match(v):
        ck.err(where, field, "%r: a MAC address aa:bb:cc:dd:ee:ff" % (v,))
        return "0"
    return v.replace(":", "").lower()


def _addr(ck, where, field, v, ip):
    try:
        a = ipaddress.ip_address(v) if isinstance(v, str) else None
    except ValueError:
        a = None
    if a is None or a.version != ip:
        ck.err(where, field, "%r: an IPv%d address" % (v, ip))
        return "0"
    return "%d" % int(a) if ip == 4 else "%032x" % int(a)


def _sizes(ck, where, v):
    """size = 64 | "imix" | "64:7,594:4" | {min, max}: ((len, weight), ...),
    the largest; IMIX sizes are on the wire with the FCS (apps/imix.h)."""
    if isinstance(v, int) and not isinstance(v, bool):
        n = ck.integer(where, "size", v, MIN_FRAME, MAX_FRAME)
        return ((n or 64, 1),), n or 64
    if isinstance(v, dict):
        if set(v) != {"min", "max"}:
            ck.err(where, "size", "a range is {min = A, max = B}")
            return ((64, 1),), 64
        lo = ck.integer(where, "size.min", v["min"], MIN_FRAME, MAX_FRAME)
        hi = ck.integer(where, "size.max", v["max"], MIN_FRAME, MAX_FRAME)
        if lo is None or hi is None:
            return ((64, 1),), 64
        if hi < lo:
            ck.err(where, "size", "max %d is below min %d" % (hi, lo))
            return ((64, 1),), 64
        return ((lo, 0), (hi, 0)), hi
    if isinstance(v, str):
        text = IMIX_SIMPLE if v == "imix" else v
        out = []
        for item in text.split(","):
            s, colon, w = item.partition(":")
            if not colon or not digits(s) or not digits(w):
                ck.err(where, "size", "%r: imix, SIZE:WEIGHT,... or a number" % v)
                return ((64, 1),), 64
            size, weight = int(s) - IMIX_FCS, int(w)
            if not MIN_FRAME <= size <= MAX_FRAME or not 1 <= weight <= 4096:
                ck.err(where, "size", "%s: sizes %d..%d with the FCS, weights 1..4096"
                       % (item, MIN_FRAME + IMIX_FCS, MAX_FRAME + IMIX_FCS))
                return ((64, 1),), 64
            out.append((size, weight))
        if len(out) > IMIX_MAX or sum(w for _, w in out) > 4096:
            ck.err(where, "size", "at most %d sizes and 4096 weights in all" % IMIX_MAX)
            return ((64, 1),), 64
        return tuple(out), max(s for s, _ in out)
    ck.err(where, "size", "%r: a frame size, {min, max}, imix or SIZE:WEIGHT,..." % (v,))
    return ((64, 1),), 64


def _mode(ck, where, st, d):
    mode = d.get("mode", "continuous")
    if mode not in MODES:
        ck.err(where, "mode", "%r: one of %s" % (mode, ", ".join(MODES)))
        return
    st.mode = mode
    need = {"continuous": (), "poisson": (), "burst": ("frames",),
            "multi_burst": ("frames", "gap_us", "bursts")}[mode]
    for k in ("frames", "gap_us", "bursts"):
        if k in d and k not in need:
            ck.err(where, k, "only with mode %s" % (" or ".join(
                m for m in MODES[1:3] if k == "frames" or m == "multi_burst")))
        elif k not in d and k in need:
            ck.err(where, k, "mode %s needs it" % mode)
    if "frames" in d and "frames" in need:
        st.frames = ck.integer(where, "frames", d["frames"], 1, BURST_MAX) or 0
    if "bursts" in d and "bursts" in need:
        st.bursts = ck.integer(where, "bursts", d["bursts"], 1, BURST_MAX) or 0
    if "gap_us" in d and "gap_us" in need:
        st.gap_ns = (ck.integer(where, "gap_us", d["gap_us"], 1, GAP_NS_MAX // 1000) or 0) * 1000
    if mode == "poisson" and st.rate is None and st.share is None:
        ck.err(where, "mode", "poisson needs a rate or share (the mean)")


def _var(ck, where, st, i, d):
    w = "%s var %d" % (where, i)
    if not isinstance(d, dict):
        ck.err(w, "var", "a table {field, op, min, max, step}")
        return
    for k in sorted(set(d) - VAR_KEYS):
        ck.err(w, k, "unknown key (known: %s)" % ", ".join(sorted(VAR_KEYS)))
    field = d.get("field")
    if field not in FIELDS:
        ck.err(w, "field", "%r: one of %s" % (field, ", ".join(FIELDS)))
        return
    bits, needs = FIELDS[field]
    if needs == "vlan" and not st.vlan or needs == "qinq" and len(st.vlan) < 2 \
            or needs == "ipv6" and st.ip != 6 \
            or field.endswith("_port") and st.proto == "icmp":
        ck.err(w, "field", "%s: the stream's frames have no such field" % field)
        return
    op = d.get("op", "inc")
    if op not in OPS:
        ck.err(w, "op", "%r: one of %s" % (op, ", ".join(OPS)))
        return
    if field in ("src_ip", "dst_ip"):
        lo, hi = _var_addr(ck, w, st, d)
    elif field.endswith("mac"):
        lo, hi = [int(_mac(ck, w, k, d.get(k)) or "0", 16) for k in ("min", "max")]
    else:
        top = (1 << bits) - 1
        lo = ck.integer(w, "min", d.get("min"), 0, top)
        hi = ck.integer(w, "max", d.get("max"), 0, top)
    step = ck.integer(w, "step", d.get("step", 1), 1, 1 << 32)
    if lo is None or hi is None or step is None:
        return
    if hi < lo:
        ck.err(w, "max", "below min")
        return
    if hi - lo >= 1 << 32:
        ck.err(w, "max", "a range is at most 2^32 values")
        return
    if any(v[0] == field for v in st.vars):
        ck.err(w, "field", "%s has a var already" % field)
        return
    st.vars.append((field, op, lo, hi, step))


def _var_addr(ck, w, st, d):
    """An address range: the low 32 bits vary (IPv6: the high 96 bits of
    min and max must match)."""
    out = []
    for k in ("min", "max"):
        v = d.get(k)
        try:
            a = ipaddress.ip_address(v) if isinstance(v, str) else None
        except ValueError:
            a = None
        if a is None or a.version != st.ip:
            ck.err(w, k, "%r: an IPv%d address" % (v, st.ip))
            return None, None
        out.append(int(a))
    if out[0] >> 32 != out[1] >> 32:
        ck.err(w, "max", "only the low 32 bits of an address range may differ")
        return None, None
    return out[0] & 0xffffffff, out[1] & 0xffffffff


def _stream(ck, idx, d, names):
    name = d.get("name", "s%d" % idx) if isinstance(d, dict) else "s%d" % idx
    where = "stream %d (%s)" % (idx, name)
    st = _Stream(idx, name)
    if not isinstance(d, dict):
        ck.err(where, "stream", "a table")
        return st
    if not isinstance(name, str) or not re.match(r"^[A-Za-z0-9_.-]{1,32}$", name):
        ck.err(where, "name", "%r: 1..32 of A-Z a-z 0-9 _ . -" % (name,))
    elif name in names:
        ck.err(where, "name", "%r: given to stream %d too" % (name, names[name]))
    names.setdefault(name, idx)
    for k in sorted(set(d) - STREAM_KEYS):
        ck.err(where, k, "unknown key (known: %s)" % ", ".join(sorted(STREAM_KEYS)))
    st.direction = d.get("direction", "tx")
    if st.direction not in DIRECTIONS:
        ck.err(where, "direction", "%r: tx (guest to host) or rx (host peer to guest)"
               % (st.direction,))
        st.direction = "tx"
    st.ip = d.get("ip", 4)
    if st.ip not in (4, 6):
        ck.err(where, "ip", "%r: 4 or 6" % (st.ip,))
        st.ip = 4
    st.proto = d.get("proto", "udp")
    if st.proto not in PROTOS:
        ck.err(where, "proto", "%r: one of %s" % (st.proto, ", ".join(PROTOS)))
        st.proto = "udp"
    _header(ck, where, st, d)
    st.sizes, st.size_max = _sizes(ck, where, d.get("size", 64))
    l4, stamp = PROTOS[st.proto]
    hdrs = 14 + 4 * len(st.vlan) + (40 if st.ip == 6 else 20) + l4 + stamp
    if min(s for s, _ in st.sizes) < hdrs:
        ck.err(where, "size", "frames below %d bytes cannot hold these headers and the stamp"
               % hdrs)
    if "rate" in d and "share" in d:
        ck.err(where, "rate", "give rate or share, not both")
    elif "rate" in d:
        try:
            st.rate = parse_rate(d["rate"])
        except ValueError as e:
            ck.err(where, "rate", "%r: %s" % (d["rate"], e))
    elif "share" in d:
        v = d["share"]
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v <= 1:
            ck.err(where, "share", "%r: a fraction 0 < share <= 1 of the file's rate" % (v,))
        else:
            st.share = float(v)
    _mode(ck, where, st, d)
    vs = d.get("var", [])
    if not isinstance(vs, list) or len(vs) > VARS_MAX:
        ck.err(where, "var", "at most %d [[stream.var]] tables" % VARS_MAX)
        vs = []
    for i, v in enumerate(vs):
        _var(ck, where, st, i, v)
    return st


def _header(ck, where, st, d):
    st.macs = tuple(_mac(ck, where, k, d[k]) if k in d else "0" for k in ("src_mac", "dst_mac"))
    st.src, st.dst = (_addr(ck, where, k, d[k], st.ip) if k in d else "0"
                      for k in ("src_ip", "dst_ip"))
    if st.ip == 6 and (st.src == "0" or st.dst == "0"):
        ck.err(where, "src_ip" if st.src == "0" else "dst_ip",
               "an IPv6 stream gives both addresses")
    for k in ("src_port", "dst_port"):
        if k in d and st.proto == "icmp":
            ck.err(where, k, "an ICMP stream has no ports")
    st.ports = tuple(ck.integer(where, k, d[k], 1, 65535) or 0
                     if k in d and st.proto != "icmp" else 0 for k in ("src_port", "dst_port"))
    st.tos = ck.integer(where, "tos", d.get("tos", 0), 0, 255) or 0
    st.ttl = ck.integer(where, "ttl", d.get("ttl", 64), 1, 255) or 64
    if "flow_label" in d and st.ip != 6:
        ck.err(where, "flow_label", "IPv6 streams only")
    st.flow_label = ck.integer(where, "flow_label", d.get("flow_label", 0), 0, (1 << 20) - 1) or 0
    vlan = d.get("vlan", [])
    vlan = [vlan] if isinstance(vlan, int) and not isinstance(vlan, bool) else vlan
    if not isinstance(vlan, list) or len(vlan) > 2:
        ck.err(where, "vlan", "%r: an id, [id] (802.1Q) or [outer, inner] (QinQ 802.1ad)"
               % (vlan,))
        vlan = []
    st.vlan = tuple(ck.integer(where, "vlan", v, 1, 4094) or 1 for v in vlan)


def _shares(ck, total, streams):
    """Shares of the file's rate to rates of the same unit."""
    given = [s for s in streams if s.share is not None]
    if not given:
        if total is not None:
            ck.err("file", "rate", "no stream has a share of it")
        return
    if total is None:
        ck.err("stream %d (%s)" % (given[0].idx, given[0].name), "share",
               "needs the file's top-level rate")
        return
    if sum(s.share for s in given) > 1 + 1e-9:
        ck.err("file", "share", "the shares add up to more than 1")
    for s in given:
        v = int(round(total[1] * s.share))
        if v < 1:
            ck.err("stream %d (%s)" % (s.idx, s.name), "share", "under 1 per second")
        s.rate = (total[0], max(v, 1))


def load(path):
    """The checked streams of a file: a list of _Stream; a RunnerError
    (status 64) whose line holds every error, one per line."""
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise usage("--streams %s: %s" % (path, e.strerror))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise usage("--streams %s: not TOML: %s" % (path, e))
    return check(doc, path)


def check(doc, path="streams"):
    ck = _Checker(path)
    for k in sorted(set(doc) - TOP_KEYS):
        ck.err("file", k, "unknown key (known: rate, [[stream]])")
    total = None
    if "rate" in doc:
        try:
            total = parse_rate(doc["rate"])
        except ValueError as e:
            ck.err("file", "rate", "%r: %s" % (doc["rate"], e))
    raw = doc.get("stream")
    if not isinstance(raw, list) or not raw:
        ck.err("file", "stream", "no [[stream]] tables")
        raw = []
    if len(raw) > STREAMS_MAX:
        ck.err("file", "stream", "%d streams, at most %d" % (len(raw), STREAMS_MAX))
        raw = raw[:STREAMS_MAX]
    names = {}
    streams = [_stream(ck, i, d, names) for i, d in enumerate(raw)]
    _shares(ck, total, streams)
    text = encode(streams)
    if len(text) > TEXT_MAX:
        ck.err("file", "stream", "encodes to %d bytes, the guest takes %d" % (len(text), TEXT_MAX))
    if ck.errors:
        raise StreamFileError(ck.errors)
    return streams


def _size_word(st):
    if len(st.sizes) == 2 and st.sizes[0][1] == 0:
        return "size=%d-%d" % (st.sizes[0][0], st.sizes[1][0])
    return "size=" + "/".join("%d:%d" % sw for sw in st.sizes)


def encode(streams):
    """The guest's text: a magic line, then per stream an 's' line and its
    'v' lines (docs/streams.md "Guest encoding")."""
    lines = [MAGIC]
    for st in streams:
        rate = "max" if st.rate is None else "%s:%d" % st.rate
        tags = "/".join(str(v) for v in st.vlan) or "0"
        lines.append(" ".join((
            "s", "id=%d" % st.idx, "ip=%d" % st.ip, "proto=%s" % st.proto, "vlan=%s" % tags,
            "smac=%s" % st.macs[0], "dmac=%s" % st.macs[1], "sip=%s" % st.src,
            "dip=%s" % st.dst, "sport=%d" % st.ports[0], "dport=%d" % st.ports[1],
            "tos=%d" % st.tos, "ttl=%d" % st.ttl, "fl=%d" % st.flow_label, _size_word(st),
            "rate=%s" % rate, "mode=%s" % st.mode, "frames=%d" % st.frames,
            "gap_ns=%d" % st.gap_ns, "bursts=%d" % st.bursts, "dir=%s" % st.direction)))
        for field, op, lo, hi, step in st.vars:
            lines.append("v f=%s op=%s lo=%d hi=%d step=%d" % (field, op, lo, hi, step))
    return "\n".join(lines) + "\n"


def names(streams):
    return [s.name for s in streams]


def directions(streams):
    return [s.direction for s in streams]


def bidir_refusal(backend, joins_guests, own_tap=None):
    """One line when a file with rx streams cannot run on this backend
    (or topology), else None: the host peer sends them, on its UDP socket
    or onto the tap of the runner's namespace (own_tap: --tap or --bridge,
    the user's network, is not)."""
    if backend not in BIDIR_BACKENDS:
        return ("--streams: rx streams (host peer to guest) need --backend %s: the host peer "
                "sends them on its socket (backend %s)"
                % (", ".join(BIDIR_BACKENDS[:-1]) + " or " + BIDIR_BACKENDS[-1], backend))
    if own_tap:
        return ("--streams: rx streams over tap need the runner's own namespace: the host peer "
                "writes frames onto its tap, not onto %s" % own_tap)
    if joins_guests:
        return "--streams: rx streams need the host peer: not with a topology of two guests"
    return None
