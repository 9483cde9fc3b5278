"""Random-input harness of the fleet spec check (fleetspec.parse, what
`vnperf fleet SPEC` reads): mutants of TOML and JSON specs
(tests/py/seeds/fleet) from mutator.py, VNPERF_PYFUZZ_N of them (`make
fuzz`: 10^5, `make pyunit`: a smoke). Rule per input: a Spec whose every
field is of its checked kind and range, or a RunnerError with status 64
(bad runner input) and one printable line; never another exception, and
quickly. Each byte mutant is read as TOML and as JSON; beside it a tree
mutant (a seed with members replaced by HOSTILE values) reaches the field
checks, which a byte mutant rarely gets past the syntax to."""

import copy
import json
import os
import random
import time
import tomllib

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import inputs, load_seeds
from vnperflib import exitcodes, fleetspec, qemucmd
from vnperflib.errors import RunnerError

NAME = "fleet"
SLOW_S = 0.5
# What a hand edit puts where the check reads a member.
HOSTILE = [None, "", "x", "rx", "tx", "srv", "gen", "sink", "rr", "reflect", "server", "client",
           "udp", "udp:x", "none", "user", "passt", "bridge:br0", "bridge:", "network:a b",
           "vhostuser:/tmp/s", "vhostuser:/tmp/s{i}", "ethernet:tap0", "10.0.0.1", "1.2.3",
           "vcpu=0", "vcpu=0-99999999999", "vcpu=a", "backend=0", "vcpu@g=0", "count=1",
           "app=gen", "a b", "k=v\n", "rate=1e400", "q35", "kvm", "stream", 0, 1, 2, 4, -1, 64,
           65, 128, 256, 512, 1024, 3, 4096, 4097, 65536, 2 ** 64, 10 ** 400, 0.5, 1e308, 86400.0001,
           float("nan"), float("inf"), True, False, [], {}, ["count=1"], [1], {"count": 5},
           {"a": None}, json.loads("[" * 50 + "]" * 50)]


def _slots(v, out):
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        out.append((v, k))
        _slots(x, out)
    return out


def tree_seeds():
    out = []
    for data in load_seeds(NAME):
        text = data.decode()
        out.append(json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text))
    return out


def tree_mutant(rng, trees):
    """A seed with one to three members replaced, removed or added, as JSON
    text (NaN and Infinity included, as Python's json reads them)."""
    data = copy.deepcopy(rng.choice(trees))
    for _ in range(rng.randrange(1, 4)):
        slots = _slots(data, [])
        if not slots:
            break
        c, k = rng.choice(slots)
        op = rng.randrange(6)
        if op == 0 and isinstance(c, dict):
            del c[k]
        elif op == 1 and isinstance(c, dict):
            c[rng.choice(fleetspec.GROUP_KEYS + fleetspec.FLEET_KEYS)] = \
                copy.deepcopy(rng.choice(HOSTILE))
        else:
            c[k] = copy.deepcopy(rng.choice(HOSTILE))
    return json.dumps(data).encode()


def one_line(text):
    return isinstance(text, str) and text and not any(c < " " or c == "\x7f" for c in text)


def whole(v, lo, hi):
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def check_spec(s):
    """Every field as fleetspec documents it (docs/fleet.md)."""
    assert fleetspec.NAME_RE.match(s.name) or s.name, s.name
    assert whole(s.memory, 16, 65536) and whole(s.duration, 1, 86400)
    assert whole(s.parallel, 1, 64)
    assert s.timeout is None or (isinstance(s.timeout, float) and 0 < s.timeout <= 86400)
    assert s.machine in fleetspec.MACHINES and s.accel in fleetspec.ACCELS
    assert s.console in fleetspec.CONSOLES + (None,)
    assert s.groups and len({g.name for g in s.groups}) == len(s.groups)
    for g in s.groups:
        assert fleetspec.NAME_RE.match(g.name) and g.app in fleetspec.APPS
        assert g.role in ("client", "server")
        assert whole(g.count, 1, fleetspec.MAX_INSTANCES)
        assert all(isinstance(w, str) and "=" in w for w in g.config), g.config
        assert g.wire is not None and g.wire[0] in fleetspec.WIRES
        assert g.to is None or (g.to.sender is g and g.to.count == g.count)
        assert g.queue_size in qemucmd.QUEUE_SIZES + (None,), g.queue_size
        assert g.event_idx in (None, True, False)
        assert g.memory is None or whole(g.memory, 16, 65536)


def check(data, paths=("fuzz.toml", "fuzz.json")):
    for path in paths:
        try:
            check_spec(fleetspec.parse(path, data))
            yield "ok"
        except RunnerError as e:
            assert e.status == exitcodes.RUNNER_USAGE, (e.status, e.line)
            assert one_line(e.line) and e.line == str(e), e.line
            yield "refused"


def test_seeds_are_good_specs():
    """Not vacuous: every seed is a spec the check takes."""
    for i, data in inputs(NAME, n=0):
        name = "seed.json" if data.lstrip().startswith(b"{") else "seed.toml"
        check_spec(fleetspec.parse(name, data))


def test_pyfuzz_fleet():
    n = slowest = 0
    seen = {}
    trees = tree_seeds()
    rng = random.Random("fleet-tree:%s" % os.environ.get("VNPERF_PYFUZZ_SEED", "0"))
    t0 = time.monotonic()
    for i, data in inputs(NAME):
        t = time.monotonic()
        tree = tree_mutant(rng, trees)
        try:
            for what in check(data):
                seen[what] = seen.get(what, 0) + 1
            for what in check(tree, ("tree.json",)):
                seen["tree " + what] = seen.get("tree " + what, 0) + 1
        except Exception as e:  # noqa: BLE001 - the rule is: none but RunnerError
            raise AssertionError("input %d (%r... / tree %r...): %s: %s" % (
                i, data[:120], tree[:300], type(e).__name__, e)) from e
        took = time.monotonic() - t
        assert took < SLOW_S, "input %d took %.2f s: %r..." % (i, took, data[:120])
        slowest = max(slowest, took)
        n += 1
    print("pyfuzz fleet: %d inputs in %.1f s, slowest %.1f ms, %s" % (
        n, time.monotonic() - t0, slowest * 1e3, dict(sorted(seen.items()))))
    assert seen.get("ok") and seen.get("refused") and seen.get("tree ok")
