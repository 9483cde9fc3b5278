"""The feature combinations `vnperf conform` runs: all on, all off, every
feature on alone and off alone, then a pairwise covering array over
on/off (every value pair of every two features in some row), not the
full product.

Rows are dicts {feature: bool}. Features may depend on others
(VALID_DEPENDS: a feature on needs its parents on, virtio 1.2 s5.1.3.1
and the driver's own rules); a pair no valid row can hold (guest_tso4 on
with mrg_rxbuf off) is reported as impossible, not silently missed."""

import itertools

# feature -> features it needs (virtio 1.2 s5.1.3.1; guest_tso* also
# needs mrg_rxbuf in this driver, docs/driver.md "Offloads"; mq and rss
# need the control queue, s5.1.3.1).
DEPENDS = {
    "guest_tso4": ("guest_csum", "mrg_rxbuf"),
    "guest_tso6": ("guest_csum", "mrg_rxbuf"),
    "host_tso4": ("csum",),
    "host_tso6": ("csum",),
    "host_uso": ("csum",),
    "guest_uso4": ("guest_csum", "mrg_rxbuf"),
    "guest_uso6": ("guest_csum", "mrg_rxbuf"),
    "mq": ("ctrl_vq",),
    "rss": ("ctrl_vq",),
    "ctrl_rx": ("ctrl_vq",),
    "ctrl_vlan": ("ctrl_vq",),
    "ctrl_mac_addr": ("ctrl_vq",),
    "guest_announce": ("ctrl_vq",),
}


def valid(row):
    """Whether every feature on in row has its parents on (a parent not
    among the row's features is taken as given)."""
    return all(row.get(p, True) for f, on in row.items() if on for p in DEPENDS.get(f, ()))


def _pairs(features):
    """Every (f, a, g, b) with f before g and a, b in {False, True}."""
    return {(f, a, g, b) for f, g in itertools.combinations(features, 2)
            for a in (False, True) for b in (False, True)}


def _covered(row, features):
    return {(f, row[f], g, row[g]) for f, g in itertools.combinations(features, 2)}


def coverable(features):
    """The pairs some valid row holds (the rest cannot be run)."""
    return {(f, a, g, b) for f, a, g, b in _pairs(features)
            if valid(_complete({f: a, g: b}, features))}


def _complete(fixed, features):
    """fixed, the rest on where valid (parents of an on feature on,
    children of an off feature off): the most features negotiated."""
    row = {f: fixed.get(f, True) for f in features}
    for f in features:
        if f not in fixed:
            continue
        if fixed[f]:
            for p in DEPENDS.get(f, ()):
                if p in row and p not in fixed:
                    row[p] = True
        else:
            for c, ps in DEPENDS.items():
                if f in ps and c in row and c not in fixed:
                    row[c] = False
    return row


def _greedy_row(want, features, todo):
    """A valid row that holds the pair want, the other features set one
    by one to the value covering most pairs still to do."""
    f, a, g, b = want
    row = _complete({f: a, g: b}, features)
    for h in features:
        if h in (f, g):
            continue
        best, gain = row[h], -1
        for v in (True, False):
            cand = dict(row, **{h: v})
            if not valid(cand):
                continue
            n = len(_covered(cand, features) & todo)
            if n > gain:
                best, gain = v, n
        row[h] = best
    return row


def pairwise(features):
    """Rows covering every coverable pair, deterministic (the same
    features give the same rows). Each row is valid."""
    features = list(features)
    todo = coverable(features)
    rows = []
    while todo:
        want = min(todo, key=lambda p: (features.index(p[0]), features.index(p[2]), p[1], p[3]))
        row = _greedy_row(want, features, todo)
        got = _covered(row, features) & todo
        if not got:   # cannot happen for a coverable pair; never loop on it
            raise AssertionError("pairwise: no progress on %r" % (want,))
        todo -= got
        rows.append(row)
    return rows


def _only(f, features):
    """f on alone (with the features it needs), the rest off."""
    row = {h: False for h in features}
    row[f] = True
    for p in DEPENDS.get(f, ()):
        if p in row:
            row[p] = True
    return row


def plan(features):
    """The combinations in order, each (name, row): all on, all off, each
    feature off alone (with what needs it) and on alone (with what it
    needs), then the pairwise rows not already among them."""
    features = list(features)
    out, seen = [], set()

    def add(name, row):
        key = tuple(sorted(row.items()))
        if key not in seen:
            seen.add(key)
            out.append((name, row))

    add("all", _complete({}, features))
    add("none", {f: False for f in features})
    for f in features:
        add("-" + f, _complete({f: False}, features))
        add("+" + f, _only(f, features))
    for i, row in enumerate(pairwise(features)):
        add("pair%d" % (i + 1), row)
    return out


def impossible(features):
    """The pairs no valid row holds, as 'f=on g=off' words."""
    def w(f, v):
        return "%s=%s" % (f, "on" if v else "off")
    return sorted("%s %s" % (w(f, a), w(g, b))
                  for f, a, g, b in _pairs(list(features)) - coverable(list(features)))
