"""Which boots `vnperf conform` runs: combinations that differ only in
features negotiated at FEATURES_OK share one boot of app reneg (the device
reset and negotiated again per set, virtio 1.2 s2.4 and s3.1.1), the rest
get a fresh boot each; and the fallback when a shared boot fails (the sets
it did not complete rerun, each in a fresh boot). Pure: the boots are the
caller's (docs/conform.md, "One boot per group")."""

import dataclasses

# The traffic kinds app reneg runs: one size a boot guest->host; where the
# host peer reflects (back=1) every set sends both, so one boot runs both
# kinds (BOTH) and each set is counted both ways (docs/apps.md, reneg).
RENEG_KINDS = ("small", "mtu")
BOTH = "+".join(RENEG_KINDS)
# Where the host end also serves app reneg's TCP stream per set (stream_s=:
# tap, user, passt, wire.RENEG_STREAM) the stream kind joins BOTH's boot.
STREAM = "stream"
STREAM_KINDS = RENEG_KINDS + (STREAM,)
BOTH_STREAM = "+".join(STREAM_KINDS)
# Where the host end also counts app reneg's USO segments per set (uso=:
# tap, wire.RENEG_USO) the uso kind joins those boots too: a boot with a
# combination of it gets uso= (its sets that negotiate HOST_USO send USO
# datagrams, the rest none; docs/apps.md, reneg), "+uso" in its traffic.
USO = "uso"
# apps/reneg_sets.h and kernel/config.h: sets a boot, characters a set
# (text[384]) and characters of the whole sets= value (CFG_LONG_MAX 1024).
SETS_MAX = 8
SET_TEXT_MAX = 383
SETS_LINE_MAX = 1023
# Why a kind needs a fresh boot per combination.
FRESH_KIND = {USO: "USO datagrams: app reneg's segments are counted per set over tap only",
              STREAM: "the TCP stream runs app iperf: app reneg's stream needs a host end "
                        "that reflects its frames and serves it (tap, user, passt)"}


@dataclasses.dataclass(frozen=True)
class Group:
    """One boot: a reneg boot (sets, one per combination, in order) or a
    fresh one (one combination, sets empty, why says why); traffic is a
    kind, or BOTH for a boot of app reneg whose sets (a fresh one: the
    combination's one) send both kinds, each counted both ways."""
    id: str
    traffic: str
    combos: tuple
    sets: tuple = ()
    why: str = ""

    @property
    def kinds(self):
        """The traffic kinds the boot runs (BOTH: each of RENEG_KINDS,
        BOTH_STREAM each of STREAM_KINDS)."""
        return tuple(self.traffic.split("+"))


def set_text(words):
    """A combination's feature words as one reneg set (features=-a,-b and
    indirect=X as -a,-b,indirect:X; all for none); its line words
    (line_words) are the boot's."""
    out = []
    for w in words:
        key, _, val = w.partition("=")
        if key == "features":
            out += [v for v in val.split(",") if v]
        elif key == "indirect":
            out.append("indirect:" + val)
    return ",".join(out) or "all"


def line_words(words):
    """The words a boot's line carries for every set (the control
    commands: promisc=, mac_set=, vlan=): the same in every set of a boot."""
    return tuple(w for w in words if w.partition("=")[0] not in ("features", "indirect"))


def _fresh(n, kind, i, why):
    return Group("f%d" % n, kind, (i,), (), why)


def plan(combos, kinds, reneg_refusal, back=False, stream=False, uso=False):
    """The boots for combos ([(name, words)], in plan order) with their
    traffic kinds (kinds[i]: names); reneg_refusal: why app reneg cannot
    run over this backend, or None; back: its host peer reflects (a boot
    runs both kinds, BOTH, each set counted both ways); stream: it serves
    reneg's TCP stream too (with back: BOTH_STREAM); uso: it counts
    reneg's USO segments (with back: a boot of a combination with the uso
    kind runs it, USO). Combinations of a
    kind reneg runs and the same line words share boots, in plan order, at
    most SETS_MAX sets and SETS_LINE_MAX characters a boot; the rest, and
    a combination left alone, boot fresh (with back its small and mtu,
    and stream, in one boot: a reneg boot of its one set)."""
    groups, buckets = [], {}
    for i, (_, words) in enumerate(combos):
        for kind in kinds[i]:
            if kind in RENEG_KINDS and reneg_refusal is None:
                key = _joined(kinds[i], back, stream) or kind
                members = buckets.setdefault((key, line_words(words)), [])
                if i not in members:
                    members.append(i)
    shared = set()
    for (traffic, _), members in buckets.items():
        for chunk in _chunks(members, [set_text(combos[i][1]) for i in members]):
            if len(chunk) > 1:
                kinds_in = [k for i, _ in chunk for k in kinds[i]]
                g = Group("r%d" % (len(groups) + 1),
                          _with_uso(traffic, kinds_in, back and uso),
                          tuple(i for i, _ in chunk), tuple(t for _, t in chunk))
                groups.append(g)
                shared |= {(i, kind) for i, _ in chunk for kind in g.kinds}
    n = 0
    for i, (_, words) in enumerate(combos):
        fits = back and len(set_text(words)) <= SET_TEXT_MAX
        left = [k for k in kinds[i] if (i, k) not in shared]
        for kind in _fresh_kinds(left, fits, stream, uso):
            n += 1
            groups.append(_fresh(n, kind, i, _why_fresh(kind, reneg_refusal)))
    return groups


def _joined(kinds, back, stream):
    """The kinds of a combination that one reneg boot runs together:
    BOTH_STREAM where the host end reflects (back) and serves the stream,
    BOTH where it reflects; None: each kind apart."""
    if back and stream and set(STREAM_KINDS) <= set(kinds):
        return BOTH_STREAM
    if back and set(RENEG_KINDS) <= set(kinds):
        return BOTH
    return None


def _with_uso(traffic, kinds, uso):
    """A joined boot's traffic with the uso kind where the host end counts
    reneg's USO segments (uso) and one of its combinations has the kind
    (kinds: theirs)."""
    return traffic + "+" + USO if uso and "+" in traffic and USO in kinds else traffic


def _fresh_kinds(kinds, back, stream, uso):
    """The fresh boots of a combination's kinds left: small and mtu (and
    the stream where the host end serves it, the uso kind where it counts
    reneg's USO segments) one boot (_joined) where the host peer reflects
    and its set fits the guest."""
    joined = _joined(kinds, back, stream)
    if joined:
        joined = _with_uso(joined, kinds, uso)
        return [joined] + [k for k in kinds if k not in joined.split("+")]
    return kinds


def reneg_kind(traffic):
    """Whether a boot of traffic is a joined app reneg boot (small and mtu
    both ways, and what joins them)."""
    return set(RENEG_KINDS) <= set(traffic.split("+"))


def _why_fresh(kind, reneg_refusal):
    if kind in FRESH_KIND:
        return FRESH_KIND[kind]
    if reneg_refusal is not None:
        return "app reneg: " + reneg_refusal
    return "no other combination of its control commands shares a boot with it"


def _chunks(members, texts):
    """members with their set texts, cut into boots within the limits (a
    set too long for the guest is a chunk of its own: a fresh boot)."""
    out, cur, size = [], [], 0
    for i, t in zip(members, texts):
        if len(t) > SET_TEXT_MAX:
            out.append([(i, t)])
            continue
        add = len(t) + (1 if cur else 0)
        if cur and (len(cur) == SETS_MAX or size + add > SETS_LINE_MAX):
            out.append(cur)
            cur, size, add = [], 0, len(t)
        cur.append((i, t))
        size += add
    if cur:
        out.append(cur)
    return out


def execute(groups, run_fresh, run_reneg):
    """Runs the groups: run_fresh(i, kind) -> a boot; run_reneg(group) ->
    (the boots of the sets it completed, in order; None or the failure:
    {"status", "why"}). The sets a failed boot did not complete rerun each
    in a fresh boot (of BOTH too). Returns ({(i, traffic): (boot, mark)},
    in the order run; failures)."""
    boots, failures = {}, []
    for g in groups:
        if not g.sets:
            boots[(g.combos[0], g.traffic)] = (run_fresh(g.combos[0], g.traffic),
                                               {"boot": "fresh boot", "why": g.why})
            continue
        done, failure = run_reneg(g)
        for k, (i, b) in enumerate(zip(g.combos, done)):
            boots[(i, g.traffic)] = (b, {"boot": "one boot", "id": g.id, "set": k + 1,
                                         "sets": list(g.sets)})
        left = g.combos[len(done):]
        if failure is None and not left:
            continue
        failures.append(dict(failure or {"status": 0, "why": "sets missing from the result"},
                             boot=g.id, traffic=g.traffic, sets=list(g.sets),
                             completed=len(done)))
        for i in left:
            boots[(i, g.traffic)] = (run_fresh(i, g.traffic), {
                "boot": "fresh boot", "why": "rerun: one boot %s failed before its set" % g.id})
    return boots, failures
