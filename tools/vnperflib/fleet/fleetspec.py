"""`vnperf fleet SPEC`: the spec file (TOML through tomllib, or JSON),
checked field by field. Every refusal is one line that names the file,
the line and the key (docs/fleet.md lists the fields)."""

import ipaddress
import json
import os
import re

from ..errors import usage
from ..run import pinning, qemucmd

try:
    import tomllib
except ImportError:  # Python < 3.11: JSON specs only
    tomllib = None

APPS = ("selftest", "gen", "sink", "reflect", "rr", "iperf", "fwd", "fault", "alloc")
# Pairing (gen -> sink, rr clients -> servers): sender app -> receiver apps.
PAIRS = {("gen", "client"): (("sink", "client"), ("reflect", "client")),
         ("rr", "client"): (("rr", "server"),)}
ROLE_APPS = ("rr", "iperf")
MACHINES = ("q35", "pc")
ACCELS = ("auto", "kvm", "tcg")
CONSOLES = ("file", "stream")
WIRES = ("none", "udp", "user", "passt", "network", "bridge", "ethernet", "vhostuser")
WIRE_ARG = {"network": "a libvirt network name", "bridge": "a host bridge name",
            "vhostuser": "a socket path (with {i} for several instances)"}
# Config words the fleet writes itself: addresses and the app.
FLEET_WORDS = ("app", "role", "ip", "mask", "gw", "dst_ip", "dst_mac", "mac")
MAX_INSTANCES = 4096
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
# What a too deep array or table is told (json and tomllib recurse).
DEPTH_WHAT = "Python's recursion limit"

FLEET_KEYS = ("name", "uri", "image", "machine", "memory", "accel", "duration", "timeout",
              "console", "parallel", "group")
GROUP_KEYS = ("name", "app", "role", "count", "config", "uri", "image", "machine", "memory",
              "console", "wire", "to", "address", "pin", "queue_size", "event_idx", "queues")
# Wires whose libvirt interface takes several queue pairs (domxml.MQ_KINDS).
MQ_WIRES = ("vhostuser", "network", "bridge", "ethernet")


class Group:
    """One group of identical appliances, fields checked."""

    def __init__(self, index, name):
        self.index = index
        self.name = name
        self.app = None
        self.role = "client"
        self.count = 1
        self.config = []
        self.uri = self.image = self.machine = self.memory = self.console = None
        self.wire = None          # (kind, argument or None)
        self.to = None            # receiver Group
        self.sender = None        # sender Group, on a receiver
        self.address = "127.0.0.1"
        self.pin = None
        self.queue_size = None
        self.event_idx = None
        self.queues = None        # queue pairs and vCPUs (1..qemucmd.MAX_QUEUES)

    @property
    def paired(self):
        return self.to is not None or self.sender is not None


class Spec:
    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.uri = "qemu:///system"
        self.image = qemucmd.default_image()
        self.machine = "q35"
        self.memory = 128
        self.accel = "auto"
        self.duration = 5
        self.timeout = None
        self.console = None
        self.parallel = 4
        self.groups = []


class Locator:
    """The line of a key in the spec text: TOML by its [[group]] sections,
    JSON by walking the "group" array's objects."""

    def __init__(self, text, is_json):
        self.lines = text.splitlines()
        self.is_json = is_json
        self.text = text

    def line(self, group, key):
        """1-based line of key in group index group (None: [fleet])."""
        lo, hi = self._span(group)
        pat = re.compile(r'^\s*"?%s"?\s*[=:]' % re.escape(key)) if not self.is_json else \
            re.compile(r'"%s"\s*:' % re.escape(key))
        for n in range(lo, hi):
            if pat.search(self.lines[n]):
                return n + 1
        return lo + 1 if lo < len(self.lines) else 1

    def _span(self, group):
        return self._json_span(group) if self.is_json else self._toml_span(group)

    def _toml_span(self, group):
        heads = [n for n, l in enumerate(self.lines) if re.match(r"^\s*\[\[\s*group\s*\]\]", l)]
        if group is None:
            n = next((n for n, l in enumerate(self.lines) if re.match(r"^\s*\[\s*fleet\s*\]", l)),
                     None)
            if n is None:
                return 0, heads[0] if heads else len(self.lines)
            nxt = [h for h, l in enumerate(self.lines) if h > n and re.match(r"^\s*\[", l)]
            return n, nxt[0] if nxt else len(self.lines)
        if group < len(heads):
            return heads[group], heads[group + 1] if group + 1 < len(heads) else len(self.lines)
        return 0, len(self.lines)

    def _json_span(self, group):
        """Line span of the group-th object of the "group" array (the
        whole text for the top level)."""
        if group is None:
            return 0, len(self.lines)
        m = re.search(r'"group"\s*:\s*\[', self.text)
        if not m:
            return 0, len(self.lines)
        depth, k, start, i, in_str = 0, -1, None, m.end(), False
        while i < len(self.text):
            c = self.text[i]
            if in_str:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c in "{[":
                if depth == 0 and c == "{":
                    k += 1
                    start = i
                depth += 1
            elif c in "}]":
                if depth == 0:
                    break
                depth -= 1
                if depth == 0 and k == group:
                    return (self.text.count("\n", 0, start),
                            self.text.count("\n", 0, i) + 1)
            i += 1
        return 0, len(self.lines)


class Checker:
    """Field checks; each failure raises one usage line with file:line."""

    def __init__(self, path, loc):
        self.path = path
        self.loc = loc

    def fail(self, group, key, msg):
        where = "[fleet]" if group is None else "group %d" % (group + 1)
        raise usage("%s:%d: %s %s: %s" % (self.path, self.loc.line(group, key), where, key,
                                          msg))

    def string(self, g, key, v, pattern=None, what=None):
        if not isinstance(v, str) or not v:
            self.fail(g, key, "%r is not a non-empty string" % (v,))
        if pattern is not None and not re.match(pattern, v):
            self.fail(g, key, "%r is not %s" % (v, what))
        return v

    def whole(self, g, key, v, lo, hi):
        if not isinstance(v, int) or isinstance(v, bool):
            self.fail(g, key, "%r is not a whole number" % (v,))
        if not lo <= v <= hi:
            self.fail(g, key, "%d is outside %d..%d" % (v, lo, hi))
        return v

    def seconds(self, g, key, v):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v <= 86400:
            self.fail(g, key, "%r is not a number of seconds in (0, 86400]" % (v,))
        return float(v)

    def choice(self, g, key, v, choices):
        if v not in choices:
            self.fail(g, key, "%r: one of %s" % (v, ", ".join(choices)))
        return v


def load(path):
    """Reads and checks a spec; returns a Spec. Raises a usage error."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise usage("fleet: cannot read %s: %s" % (path, e.strerror))
    return parse(path, raw)


def parse(path, raw):
    """Checks the bytes raw of the spec file path; returns a Spec. Raises a
    usage error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise usage("%s: not UTF-8 (byte %d)" % (path, e.start))
    is_json = path.endswith(".json") or text.lstrip().startswith("{")
    data = _parse(path, text, is_json)
    try:
        return build(path, data, Locator(text, is_json))
    except RecursionError:
        # A value nested about as deep as the parser could take, then
        # printed in a refusal.
        raise usage("%s:1: a value is nested deeper than %s" % (path, DEPTH_WHAT)) from None


def _parse(path, text, is_json):
    try:
        return _parse_text(path, text, is_json)
    except RecursionError:
        raise usage("%s:1: not %s: nested deeper than %s" % (
            path, "JSON" if is_json else "TOML", DEPTH_WHAT)) from None


def _parse_text(path, text, is_json):
    if is_json:
        try:
            return json.loads(text)
        except ValueError as e:
            raise usage("%s:%d: not JSON: %s" % (path, getattr(e, "lineno", 0), e.msg
                                                 if hasattr(e, "msg") else e))
    if tomllib is None:
        raise usage("%s: TOML needs Python 3.11's tomllib; write the spec as JSON" % path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        raise usage("%s:%s: not TOML: %s" % (path, m.group(1) if m else "?",
                                             re.sub(r"\s*\(at .*\)$", "", str(e))))


def build(path, data, loc):
    """The Spec from parsed data (a dict), every field checked."""
    ck = Checker(path, loc)
    if not isinstance(data, dict):
        raise usage("%s:1: the spec is not a table/object" % path)
    top = data.get("fleet", {})
    if not isinstance(top, dict):
        ck.fail(None, "fleet", "is not a table")
    for k in data:
        if k not in ("fleet", "group"):
            ck.fail(None, k, "unknown key (the spec has [fleet] and [[group]])")
    spec = Spec(path)
    _fleet_fields(ck, spec, top)
    groups = data.get("group")
    if not isinstance(groups, list) or not groups:
        ck.fail(None, "group", "no [[group]] given (at least one)")
    for i, g in enumerate(groups):
        if not isinstance(g, dict):
            ck.fail(i, "group", "is not a table")
        spec.groups.append(_group(ck, i, g))
    _pairing(ck, spec, groups)
    _wires(ck, spec)
    return spec


def _fleet_fields(ck, spec, top):
    for k, v in top.items():
        if k not in FLEET_KEYS or k == "group":
            ck.fail(None, k, "unknown key (one of %s)" % ", ".join(FLEET_KEYS[:-1]))
        if k == "name":
            spec.name = ck.string(None, k, v, NAME_RE, "letters, digits, _ and - (1-32)")
        elif k in ("uri", "image"):
            setattr(spec, k, ck.string(None, k, v))
        elif k == "machine":
            spec.machine = ck.choice(None, k, v, MACHINES)
        elif k == "memory":
            spec.memory = ck.whole(None, k, v, 16, 65536)
        elif k == "accel":
            spec.accel = ck.choice(None, k, v, ACCELS)
        elif k == "duration":
            spec.duration = ck.whole(None, k, v, 1, 86400)
        elif k == "timeout":
            spec.timeout = ck.seconds(None, k, v)
        elif k == "console":
            spec.console = ck.choice(None, k, v, CONSOLES)
        elif k == "parallel":
            spec.parallel = ck.whole(None, k, v, 1, 64)


def _group(ck, i, d):
    for k in d:
        if k not in GROUP_KEYS:
            ck.fail(i, k, "unknown key (one of %s)" % ", ".join(GROUP_KEYS))
    if "name" not in d:
        ck.fail(i, "name", "missing (every group has a name)")
    g = Group(i, ck.string(i, "name", d["name"], NAME_RE, "letters, digits, _ and - (1-32)"))
    if "app" not in d:
        ck.fail(i, "app", "missing (one of %s)" % ", ".join(APPS))
    g.app = ck.choice(i, "app", d["app"], APPS)
    if "role" in d:
        if g.app not in ROLE_APPS:
            ck.fail(i, "role", "app %s has no role (only %s)" % (g.app, ", ".join(ROLE_APPS)))
        g.role = ck.choice(i, "role", d["role"], ("client", "server"))
    if "count" in d:
        g.count = ck.whole(i, "count", d["count"], 1, MAX_INSTANCES)
    g.config = _config(ck, i, d.get("config", []))
    for k in ("uri", "image"):
        if k in d:
            setattr(g, k, ck.string(i, k, d[k]))
    if "machine" in d:
        g.machine = ck.choice(i, "machine", d["machine"], MACHINES)
    if "memory" in d:
        g.memory = ck.whole(i, "memory", d["memory"], 16, 65536)
    if "console" in d:
        g.console = ck.choice(i, "console", d["console"], CONSOLES)
    if "wire" in d:
        g.wire = _wire(ck, i, d["wire"])
    if "address" in d:
        try:
            g.address = str(ipaddress.IPv4Address(ck.string(i, "address", d["address"])))
        except ValueError:
            ck.fail(i, "address", "%r is not an IPv4 address" % (d["address"],))
    if "pin" in d:
        try:
            g.pin = pinning.parse(ck.string(i, "pin", d["pin"]))
        except ValueError as e:
            ck.fail(i, "pin", str(e).replace("--pin ", ""))
        if "backend" in g.pin:
            ck.fail(i, "pin", "role backend: a fleet has no backend process to pin")
        if pinning.labels(g.pin):
            ck.fail(i, "pin", "role@GUEST: a fleet guest's pin is its own (no @)")
    if "queue_size" in d:
        # What QEMU's virtio-net takes (qemucmd.QUEUE_SIZES); 64 and 128 failed at define.
        g.queue_size = ck.whole(i, "queue_size", d["queue_size"], qemucmd.QUEUE_SIZES[0],
                                qemucmd.QUEUE_SIZES[-1])
        if g.queue_size & (g.queue_size - 1):
            ck.fail(i, "queue_size", "%d is not a power of two" % g.queue_size)
    if "event_idx" in d:
        if not isinstance(d["event_idx"], bool):
            ck.fail(i, "event_idx", "%r is not true or false" % (d["event_idx"],))
        g.event_idx = d["event_idx"]
    if "queues" in d:
        g.queues = ck.whole(i, "queues", d["queues"], 1, qemucmd.MAX_QUEUES)
        if {w.partition("=")[0] for w in g.config} & {"queues", "vcpus"}:
            ck.fail(i, "config", "queues= and vcpus= follow the group's own key queues")
    return g


def _config(ck, i, v):
    """Config words: a list of "key=value" strings or a table."""
    if isinstance(v, dict):
        v = ["%s=%s" % (k, str(x).lower() if isinstance(x, bool) else x) for k, x in v.items()]
    if not isinstance(v, list):
        ck.fail(i, "config", "is not a list of key=value words or a table")
    for w in v:
        if not isinstance(w, str):
            ck.fail(i, "config", "%r is not a key=value string" % (w,))
        try:
            qemucmd.config_string([w])
        except ValueError as e:
            ck.fail(i, "config", str(e))
        k = w.partition("=")[0]
        if k in FLEET_WORDS:
            ck.fail(i, "config", "%s= is the fleet's (app, role, addresses); use the group's "
                                 "own keys" % k)
    return list(v)


def _wire(ck, i, v):
    kind, colon, arg = ck.string(i, "wire", v).partition(":")
    ck.choice(i, "wire", kind, WIRES)
    if kind in WIRE_ARG and not arg:
        ck.fail(i, "wire", "%s needs %s: %s:ARG" % (kind, WIRE_ARG[kind], kind))
    if colon and kind not in WIRE_ARG and kind != "ethernet":
        ck.fail(i, "wire", "%s takes no argument" % kind)
    if kind in ("network", "bridge") and not re.match(r"^[A-Za-z0-9_.:-]{1,64}$", arg):
        ck.fail(i, "wire", "%r is not a %s name" % (arg, kind))
    return kind, arg or None


def _pairing(ck, spec, raw):
    by_name = {}
    for g in spec.groups:
        if g.name in by_name:
            ck.fail(g.index, "name", "%r is used by group %d too" % (
                g.name, by_name[g.name].index + 1))
        by_name[g.name] = g
    for g, d in zip(spec.groups, raw):
        if "to" not in d:
            continue
        to = ck.string(g.index, "to", d["to"])
        r = by_name.get(to)
        if r is None:
            ck.fail(g.index, "to", "no group is named %r" % to)
        if r is g:
            ck.fail(g.index, "to", "a group cannot be paired with itself")
        ok = PAIRS.get((g.app, g.role))
        if ok is None:
            ck.fail(g.index, "to", "%s is not a sender: pairs are gen -> sink or reflect, "
                                   "rr client -> rr server" % _what(g))
        if (r.app, r.role) not in ok:
            ck.fail(g.index, "to", "%s cannot send to %s (%s)" % (
                _what(g), _what(r), " or ".join(_what_pair(a, b) for a, b in ok)))
        if r.sender is not None:
            ck.fail(g.index, "to", "group %r already receives from %r" % (r.name,
                                                                         r.sender.name))
        if r.to is not None:
            ck.fail(g.index, "to", "group %r sends itself; a receiver cannot be a sender"
                    % r.name)
        if r.count != g.count:
            ck.fail(g.index, "to", "%d senders but %d receivers in %r: pairs are one to one"
                    % (g.count, r.count, r.name))
        g.to, r.sender = r, g


def _what(g):
    return _what_pair(g.app, g.role)


def _what_pair(app, role):
    return "rr %s" % role if app in ROLE_APPS else app


def _wires(ck, spec):
    """Both ends of a pair on one kind of wire (udp by default; their
    arguments may differ: two hosts' bridges, a switch's two sockets);
    groups without a partner have no NIC unless they name a wire."""
    for g in spec.groups:
        if g.to is None:
            continue
        r = g.to
        if g.wire and r.wire and g.wire[0] != r.wire[0]:
            ck.fail(r.index, "wire", "%s differs from the wire of its sender %r (%s)" % (
                r.wire[0], g.name, g.wire[0]))
        if (g.wire or r.wire or ("udp",))[0] == "vhostuser" and not (g.wire and r.wire):
            ck.fail((g if g.wire is None else r).index, "wire",
                    "vhostuser: each end of the pair names its own switch socket")
        g.wire = g.wire or r.wire or ("udp", None)
        r.wire = r.wire or g.wire
        if g.wire[0] in ("none", "user"):
            ck.fail(g.index, "wire", "%s cannot carry frames from one guest to another (udp, "
                                     "passt, network, bridge, ethernet or vhostuser)"
                    % g.wire[0])
    for g in spec.groups:
        if g.wire is None:
            g.wire = ("none", None)
        if g.wire[0] == "udp" and not g.paired:
            ck.fail(g.index, "wire", "udp joins the two ends of a pair; group %r has no "
                                     "partner (to =)" % g.name)
        if (g.queues or 1) > 1 and g.wire[0] not in MQ_WIRES:
            ck.fail(g.index, "queues", "%d: wire %s has one queue pair (queues over %s)" % (
                g.queues, g.wire[0], ", ".join(MQ_WIRES)))
        if g.wire[0] == "vhostuser" and g.count > 1 and "{i}" not in g.wire[1]:
            ck.fail(g.index, "wire", "%d instances cannot share one vhost-user socket: put "
                                     "{i} in the path" % g.count)
