"""Guest console parser for the results protocol (docs/protocol.md): human
lines, and machine lines "@vnperf " + one JSON object with a "type"."""

import json

PREFIX = "@vnperf "
TYPES = ("boot", "config", "ready", "sample", "hist", "result", "error", "exit")


class Line:
    """One console line; msg is the parsed object for a machine line."""

    __slots__ = ("text", "msg", "bad", "t")

    def __init__(self, text, msg=None, bad=None, t=None):
        self.text = text
        self.msg = msg
        self.bad = bad
        self.t = t


def parse_line(text, t=None):
    """Classifies one line (no newline). A machine line whose JSON does not
    parse, is not an object or has no string "type" is kept with .bad set."""
    text = text.rstrip("\r")
    if not text.startswith(PREFIX):
        return Line(text, t=t)
    body = text[len(PREFIX):]
    try:
        msg = json.loads(body)
    except ValueError as e:
        return Line(text, bad="bad JSON (%s)" % e, t=t)
    if not isinstance(msg, dict):
        return Line(text, bad="not a JSON object", t=t)
    if not isinstance(msg.get("type"), str):
        return Line(text, bad='no string "type" member', t=t)
    return Line(text, msg=msg, t=t)


class Console:
    """Splits a byte stream into lines and keeps everything by type."""

    def __init__(self):
        self._partial = b""
        self.lines = []
        self.by_type = {}
        self.bad = []

    def feed(self, data, t=None):
        """Feeds raw bytes; returns the complete lines they finished."""
        data = self._partial + data
        parts = data.split(b"\n")
        self._partial = parts.pop()
        return [self._add(p, t) for p in parts]

    def close(self, t=None):
        """Flushes a last unterminated line."""
        if not self._partial:
            return []
        p, self._partial = self._partial, b""
        return [self._add(p, t)]

    def _add(self, raw, t):
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
        more than one result."""
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
        return out
