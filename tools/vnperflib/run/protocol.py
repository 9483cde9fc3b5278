"""Guest console parser for the results protocol (docs/protocol.md): human
lines, and machine lines "@vnperf " + one JSON object with a "type"."""

import json
import math
import re

from ..errors import printable


PREFIX = "@vnperf "
TYPES = ("boot", "config", "ready", "sample", "hist", "result", "error", "exit")
# A guest that exits ok printed these first (docs/protocol.md).
REQUIRED_TYPES = ("boot", "config", "ready")
# The guest's lines nest a few levels (result.vnet.tx, mem.lwip, hist's
# buckets): deeper is hostile, and would exhaust the JSON decoder's stack.
MAX_DEPTH = 16
# The guest's longest line (a result with every counter, a hist part of
# 256 buckets) is a few KiB; far past that is hostile.
MAX_LINE = 256 * 1024
# Numbers are the guest's uint64_t / int64_t (kernel/json.h).
U64_MAX = 2 ** 64 - 1
I64_MIN = -2 ** 63
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')

# The members each type's values are checked against (docs/protocol.md's
# table): "u64" an integer 0..2^64-1, "code" an exit code 0..63, "rate" a
# finite number >= 0 or null (json_double's NaN), "str", "bool". Members
# not named here only need finite numbers in the 64-bit range.
_COUNTS = ("packets", "bytes", "tx_packets", "tx_bytes", "rx_packets", "rx_bytes",
           "duration_ns", "transactions", "timeouts", "tx_dropped")
_LATENCY = tuple("%s_%s" % (q, u) for q in ("p50", "p90", "p99", "p999", "max", "mean")
                 for u in ("ns", "us"))
# A sample's and result's groups of counters (vnet: the driver's, per
# queue; mem: the allocators'): every number in them a u64 but these
# (json_i64: -1 is "no vector"; json_double: a ratio, vnet_notify.c).
COUNTER_GROUPS = ("vnet", "mem")
SIGNED_COUNTERS = ("irq_vector", "irq_cpu", "rx_irq_cpu", "tx_irq_cpu")  # -1: none, -2: several
RATE_COUNTERS = ("interrupts_per_1000",)
FIELDS = {
    "boot": dict(boot_path="str", tsc_hz="u64", tsc_method="str", tsc_ppm="u64", acpi="bool",
                 ram_bytes="u64", arena_free_bytes="u64"),
    "config": dict(source="str", line="str"),
    "ready": dict(app="str", t_ns="u64"),
    "mark": dict(name="str", t_ns="u64"),
    "sample": dict(dict.fromkeys(_COUNTS, "u64"), app="str", t="rate", pps="rate",
                   bps="rate", tps="rate", goodput_bps="rate"),
    "hist": dict(name="str", unit_ns="rate", part="u64", last="bool", count="u64",
                 min="u64", max="u64", sum="u64", sub_bits="u64"),
    "result": dict(dict.fromkeys(_COUNTS, "u64"), **dict.fromkeys(_LATENCY, "rate"),
                   app="str", pps="rate", bps="rate", tps="rate"),
    "error": dict(code="code", reason="str", message="str"),
    "exit": dict(code="code", reason="str"),
}


class Line:
    """One console line; msg is the parsed object for a machine line."""

    __slots__ = ("text", "msg", "bad", "t")

    def __init__(self, text, msg=None, bad=None, t=None):
        self.text = text
        self.msg = msg
        self.bad = bad
        self.t = t


def _depth(body):
    """How deep the brackets outside strings nest."""
    depth = top = 0
    for m in _NESTING.finditer(body):
        c = m.group()
        if c in "[{":
            depth += 1
            top = max(top, depth)
        elif c in "]}":
            depth -= 1
    return top


def _number_problem(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "%s is not a finite number" % json.dumps(v)
    if isinstance(v, int) and not isinstance(v, bool) and not I64_MIN <= v <= U64_MAX:
        return "a %d-digit integer is beyond 64 bits" % len(str(abs(v)))
    return None


def _numbers(msg):
    """The first number of msg (any depth, MAX_DEPTH bounds it) that is
    not finite or beyond 64 bits: (dotted path, why), or None."""
    todo = [(msg["type"], msg)]
    while todo:
        path, v = todo.pop()
        if isinstance(v, dict):
            todo.extend(reversed([("%s.%s" % (path, k), x) for k, x in v.items()]))
        elif isinstance(v, list):
            todo.extend(reversed([("%s[%d]" % (path, i), x) for i, x in enumerate(v)]))
        else:
            why = _number_problem(v)
            if why:
                return path, why
    return None


def _kind_ok(kind, v):
    if kind == "str":
        return isinstance(v, str)
    if kind == "bool":
        return isinstance(v, bool)
    if isinstance(v, bool):
        return False
    if kind == "rate":
        return v is None or (isinstance(v, (int, float)) and v >= 0)
    top = 63 if kind == "code" else U64_MAX
    return isinstance(v, int) and 0 <= v <= top


_KIND_TEXT = {"str": "a string", "bool": "true or false", "u64": "an integer 0..2^64-1",
              "code": "an exit code 0..63", "rate": "a number >= 0 (or null)"}


def _counters(path, v):
    """The first number under v (a result's vnet or mem: the driver's and
    allocator's counters) that is not of its kind: (path, value, kind)."""
    todo = [(path, v)]
    while todo:
        path, v = todo.pop()
        if isinstance(v, dict):
            todo.extend(reversed([("%s.%s" % (path, k), x) for k, x in v.items()
                                  if k not in SIGNED_COUNTERS and k not in RATE_COUNTERS]))
            rate = [("%s.%s" % (path, k), x) for k, x in v.items()
                    if k in RATE_COUNTERS and not _kind_ok("rate", x)]
            if rate:
                return rate[0] + ("rate",)
        elif isinstance(v, list):
            todo.extend(reversed([("%s[%d]" % (path, i), x) for i, x in enumerate(v)]))
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and not _kind_ok("u64", v):
            return path, v, "u64"
    return None


def check(msg):
    """Why a machine line's members break the protocol (one line naming
    the member), or None."""
    bad = _numbers(msg)
    if bad:
        return "%s: %s" % bad
    for name, kind in FIELDS.get(msg["type"], {}).items():
        if name in msg and not _kind_ok(kind, msg[name]):
            return "%s.%s is %s: want %s" % (msg["type"], name, json.dumps(msg[name])[:40],
                                             _KIND_TEXT[kind])
    if msg["type"] in ("sample", "result"):
        for name in COUNTER_GROUPS:
            bad = _counters("%s.%s" % (msg["type"], name), msg.get(name))
            if bad:
                return "%s is %s: want %s" % (bad[0], json.dumps(bad[1]), _KIND_TEXT[bad[2]])
        share = (msg.get("idle") or {}).get("share") if isinstance(msg.get("idle"), dict) \
            else None
        if not _kind_ok("rate", share):
            return "%s.idle.share is %s: want %s" % (msg["type"], json.dumps(share)[:40],
                                                      _KIND_TEXT["rate"])
    return None


def parse_line(text, t=None):
    """Classifies one line (no newline). A machine line whose JSON does not
    parse (NaN, infinities and numbers beyond 64 bits included), nests
    deeper than MAX_DEPTH, is not an object, has no string "type" or a
    member of the wrong kind (FIELDS) is kept with .bad set."""
    text = text.rstrip("\r")
    if not text.startswith(PREFIX):
        return Line(text, t=t)
    body = text[len(PREFIX):]
    if _depth(body) > MAX_DEPTH:
        return Line(text, bad="JSON nested deeper than %d" % MAX_DEPTH, t=t)
    try:
        msg = json.loads(body)
    except ValueError as e:
        return Line(text, bad="bad JSON (%s)" % e, t=t)
    if not isinstance(msg, dict):
        return Line(text, bad="not a JSON object", t=t)
    if not isinstance(msg.get("type"), str):
        return Line(text, bad='no string "type" member', t=t)
    bad = check(msg)
    if bad:
        # Names the member with the guest's own keys: escaped.
        return Line(text, bad=printable(bad), t=t)
    return Line(text, msg=msg, t=t)


class Console:
    """Splits a byte stream into lines and keeps everything by type."""

    def __init__(self):
        self._partial = b""
        self._skipping = False
        self.lines = []
        self.by_type = {}
        self.bad = []

    def feed(self, data, t=None):
        """Feeds raw bytes; returns the complete lines they finished. A line
        past MAX_LINE is ended there (flagged) and its rest dropped, so an
        endless line costs neither memory nor a copy per chunk."""
        if self._skipping:
            nl = data.find(b"\n")
            if nl < 0:
                return []
            data, self._skipping = data[nl + 1:], False
        data = self._partial + data
        parts = data.split(b"\n")
        self._partial = parts.pop()
        lines = [self._add(p, t) for p in parts]
        if len(self._partial) > MAX_LINE:
            lines.append(self._add(self._partial, t))
            self._partial, self._skipping = b"", True
        return lines

    def close(self, t=None):
        """Flushes a last unterminated line."""
        if not self._partial:
            return []
        p, self._partial = self._partial, b""
        return [self._add(p, t)]

    def _add(self, raw, t):
        if len(raw) > MAX_LINE:
            line = Line(raw[:80].decode("utf-8", "replace"),
                        bad="line longer than %d bytes" % MAX_LINE, t=t)
        else:
            line = parse_line(raw.decode("utf-8", "replace"), t)
        self.lines.append(line)
        if line.bad:
            self.bad.append(line)
        elif line.msg is not None:
            self.by_type.setdefault(line.msg["type"], []).append(line.msg)
        return line

    def first(self, type_):
        msgs = self.by_type.get(type_)
        return msgs[0] if msgs else None

    def last(self, type_):
        msgs = self.by_type.get(type_)
        return msgs[-1] if msgs else None

    def all(self, type_):
        return list(self.by_type.get(type_, ()))

    def text(self):
        return "".join(line.text + "\n" for line in self.lines)

    def problems(self, guest_code):
        """Protocol violations, given the code QEMU reported (None if the
        guest did not exit): bad lines, missing or contradicting exit line,
        an ok exit without boot/config/ready lines, more than one result."""
        out = ["line %r: %s" % (l.text[:80], l.bad) for l in self.bad]
        if guest_code is None:
            return out
        exits = self.all("exit")
        if not exits:
            out.append("no exit line before the guest exited with code %d" % guest_code)
        elif exits[-1].get("code") != guest_code:
            out.append("exit line says code %r but QEMU reported %d"
                       % (exits[-1].get("code"), guest_code))
        if len(self.all("result")) > 1:
            out.append("%d result lines (exactly one allowed)" % len(self.all("result")))
        if guest_code == 0:
            missing = [t for t in REQUIRED_TYPES if t not in self.by_type]
            if missing:
                out.append("the guest exited ok without a %s line" % "/".join(missing))
        return out
