"""Latency histograms from the guests' `hist` lines (docs/protocol.md),
merged across guests and read as percentiles of the merged distribution:
the p99 of a fleet is not the average of its guests' p99s.

The buckets are apps/hist.h's log-linear ones; the merged histogram keeps
them in nanoseconds. A guest that recorded in other units (gen: TSC cycles)
is moved to nanoseconds bucket by bucket (each bucket's highest value, as
the guest's own quantiles take it), which adds at most one bucket's width
(1/32) to that guest's values."""

import math

SUB_BITS = 5
SUB = 1 << SUB_BITS
BUCKETS = (64 - SUB_BITS + 1) * SUB
PERCENTILES = (("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99), ("p999_ns", 0.999))


def index(v):
    """apps/hist.h hist_index(): the bucket of value v (an int >= 0)."""
    if v < SUB:
        return v
    shift = v.bit_length() - 1 - SUB_BITS
    return (shift + 1) * SUB + ((v >> shift) & (SUB - 1))


def bucket_low(i):
    if i < SUB:
        return i
    return (SUB + i % SUB) << (i // SUB - 1)


def bucket_high(i):
    if i < SUB:
        return i
    return bucket_low(i) + (1 << (i // SUB - 1)) - 1


class Hist:
    """A latency histogram in nanoseconds."""

    def __init__(self):
        self.buckets = {}
        self.count = 0
        self.min = None
        self.max = None
        self.sum = 0.0

    def add_bucket(self, i, n):
        if n:
            self.buckets[i] = self.buckets.get(i, 0) + n
            self.count += n

    def merge(self, other):
        for i, n in other.buckets.items():
            self.add_bucket(i, n)
        self.sum += other.sum
        for v in (other.min, other.max):
            if v is not None:
                self.min = v if self.min is None else min(self.min, v)
                self.max = v if self.max is None else max(self.max, v)
        return self

    def quantile(self, q):
        """apps/hist.c hist_quantile(): the highest value of the bucket that
        holds the ceil(q * count)-th smallest sample, capped at max."""
        if not self.count:
            return None
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for i in sorted(self.buckets):
            seen += self.buckets[i]
            if seen >= rank:
                return min(bucket_high(i), self.max)
        return self.max

    def summary(self):
        """{"count", "p50_ns" ... "p999_ns", "max_ns", "mean_ns"}; {} when empty."""
        if not self.count:
            return {}
        out = {"count": self.count}
        for name, q in PERCENTILES:
            out[name] = self.quantile(q)
        out["max_ns"] = self.max
        out["mean_ns"] = self.sum / self.count
        return out


def merged(hists):
    """One histogram from several (None entries skipped)."""
    out = Hist()
    for h in hists:
        if h is not None:
            out.merge(h)
    return out


def _whole(v, what):
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ValueError("%s %r is not a whole number >= 0" % (what, v))
    return v


def from_lines(msgs, name="latency"):
    """The histogram named name from one guest's `hist` lines (parsed
    machine lines, in console order), in nanoseconds; None when the guest
    printed none. Raises ValueError with one line on a broken set."""
    parts = [m for m in msgs if m.get("name") == name]
    if not parts:
        return None
    head = parts[0]
    unit = head.get("unit_ns")
    if not isinstance(unit, (int, float)) or isinstance(unit, bool) or \
            not math.isfinite(unit) or unit <= 0:
        raise ValueError("hist %s: unit_ns %r is not a positive number" % (name, unit))
    if head.get("sub_bits") != SUB_BITS:
        raise ValueError("hist %s: sub_bits %r, this host reads %d" % (
            name, head.get("sub_bits"), SUB_BITS))
    raw = {}
    for k, m in enumerate(parts):
        if m.get("part") != k:
            raise ValueError("hist %s: part %r where part %d was due" % (name, m.get("part"), k))
        if m.get("unit_ns") != unit:
            raise ValueError("hist %s: unit_ns changes between parts" % name)
        for pair in m.get("b") or ():
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError("hist %s: bucket entry %r is not [index, count]" % (name, pair))
            i, n = _whole(pair[0], "bucket index"), _whole(pair[1], "bucket count")
            if i >= BUCKETS or i in raw:
                raise ValueError("hist %s: bucket index %d out of range or repeated" % (name, i))
            raw[i] = n
    if parts[-1].get("last") is not True:
        raise ValueError("hist %s: the last part is missing" % name)
    count = _whole(head.get("count"), "count")
    if sum(raw.values()) != count:
        raise ValueError("hist %s: buckets hold %d samples, count says %d" % (
            name, sum(raw.values()), count))
    return _in_ns(raw, unit, head)


def _in_ns(raw, unit, head):
    h = Hist()
    for i, n in raw.items():
        h.add_bucket(i if unit == 1 else index(int(round(bucket_high(i) * unit))), n)
    if h.count:
        h.min = _whole(head.get("min"), "min") * unit
        h.max = _whole(head.get("max"), "max") * unit
        h.sum = _whole(head.get("sum"), "sum") * unit
    return h
