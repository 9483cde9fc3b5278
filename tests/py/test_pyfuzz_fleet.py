"""Random-input harness of the fleet spec check (fleetspec.parse, what
`vnperf fleet SPEC` reads): mutants of TOML and JSON specs
(tests/py/seeds/fleet) from mutator.py, VNPERF_PYFUZZ_N of them (`make
fuzz`: 10^5, `make pyunit`: a smoke). Rule per input: a Spec whose every
field is of its checked kind and range, or a RunnerError with status 64
(bad runner input) and one printable line; never another exception, and
quickly. Each byte mutant is read as TOML and as JSON; beside it a tree
mutant (a seed with members replaced by HOSTILE values) reaches the field
checks, which a byte mutant rarely gets past the syntax to."""

import json
import random
import tomllib

import vnpy  # noqa: F401 - puts the runner library on sys.path
from mutator import drive, inputs, load_seeds, one_line, tree_mutant
from vnperflib import exitcodes
from vnperflib.fleet import fleetspec
from vnperflib.run import qemucmd
from vnperflib.errors import RunnerError

NAME = "fleet"
# What a hand edit puts where the check reads a member.
HOSTILE = [None, "", "x", "rx", "tx", "srv", "gen", "sink", "rr", "reflect", "server", "client",
           "udp", "udp:x", "none", "user", "passt", "bridge:br0", "bridge:", "network:a b",
           "vhostuser:/tmp/s", "vhostuser:/tmp/s{i}", "ethernet:tap0", "10.0.0.1", "1.2.3",
           "vcpu=0", "vcpu=0-99999999999", "vcpu=a", "backend=0", "vcpu@g=0", "count=1",
           "app=gen", "a b", "k=v\n", "rate=1e400", "q35", "kvm", "stream", 0, 1, 2, 4, -1, 64,
           65, 128, 256, 512, 1024, 3, 4096, 4097, 65536, 2 ** 64, 10 ** 400, 0.5, 1e308, 86400.0001,
           float("nan"), float("inf"), True, False, [], {}, ["count=1"], [1], {"count": 5},
           {"a": None}, json.loads("[" * 50 + "]" * 50)]


def tree_seeds():
    out = []
    for data in load_seeds(NAME):
        text = data.decode()
        out.append(json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text))
    return out


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
    trees = tree_seeds()
    keys = fleetspec.GROUP_KEYS + fleetspec.FLEET_KEYS

    def both(i, data):
        rng = random.Random("fleet-tree:%d" % i)
        tree = tree_mutant(rng, rng.choice(trees), HOSTILE, keys)
        return tuple(check(data)) + tuple("tree " + w for w in check(tree, ("tree.json",)))
    seen = drive(NAME, both)
    assert seen.get("ok") and seen.get("refused") and seen.get("tree ok")
