"""`vnperf fleet` spec files: the fields as read, and one clear line with
the file, the line and the key for every field that is wrong."""

import json

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.fleet import fleetspec
from vnperflib.errors import RunnerError

GOOD = """\
# a fleet: four gen -> four sink pairs and one rr pair
[fleet]
name = "pairs"
uri = "qemu:///system"
accel = "tcg"
duration = 3

[[group]]
name = "rx"
app = "sink"
count = 4
config = ["count=20000"]

[[group]]
name = "tx"
app = "gen"
count = 4
to = "rx"
config = ["count=20000", "rate=10k"]
pin = "vcpu=0"

[[group]]
name = "srv"
app = "rr"
role = "server"
uri = "qemu+unix:///system"

[[group]]
name = "cli"
app = "rr"
to = "srv"
config = { count = 500, sessions = 2 }
"""


def load_text(tmp_path, text, name="spec.toml"):
    p = tmp_path / name
    p.write_text(text)
    return fleetspec.load(str(p))


def refused(tmp_path, text, name="spec.toml"):
    with pytest.raises(RunnerError) as e:
        load_text(tmp_path, text, name)
    assert e.value.status == 64
    assert "\n" not in e.value.line
    return e.value.line


def test_good_spec_as_read(tmp_path):
    s = load_text(tmp_path, GOOD)
    assert (s.name, s.accel, s.duration, s.uri) == ("pairs", "tcg", 3, "qemu:///system")
    rx, tx, srv, cli = s.groups
    assert (rx.app, rx.count, rx.config) == ("sink", 4, ["count=20000"])
    assert tx.to is rx and rx.sender is tx
    assert tx.wire == rx.wire == ("udp", None)
    assert tx.pin == {"vcpu": {0}}
    assert (srv.role, srv.uri, cli.role) == ("server", "qemu+unix:///system", "client")
    assert cli.config == ["count=500", "sessions=2"]
    assert cli.to is srv


def test_json_spec_reads_the_same(tmp_path):
    import tomllib
    data = tomllib.loads(GOOD)
    s = load_text(tmp_path, json.dumps(data, indent=2), "spec.json")
    assert [g.name for g in s.groups] == ["rx", "tx", "srv", "cli"]
    assert s.groups[1].to is s.groups[0]


def _line_of(text, needle, nth=1):
    """1-based line of the nth line holding needle."""
    return [n for n, l in enumerate(text.splitlines()) if needle in l][nth - 1] + 1


# (replace this, with that, message part, (text of the line named, which
# occurrence of it)). A missing key is named at its group's header.
BAD = [
    ('accel = "tcg"', 'accel = "hvf"', "[fleet] accel: 'hvf': one of auto, kvm, tcg",
     ('accel =',)),
    ('duration = 3', 'duration = 0', "[fleet] duration: 0 is outside 1..86400", ("duration",)),
    ('duration = 3', 'duration = "3"', "[fleet] duration: '3' is not a whole number",
     ("duration",)),
    ('duration = 3', 'duraton = 3', "[fleet] duraton: unknown key", ("duraton",)),
    ('name = "pairs"', 'name = "a b"', "[fleet] name: 'a b' is not letters", ('name = "a b"',)),
    ('uri = "qemu:///system"', 'uri = 5', "[fleet] uri: 5 is not a non-empty string",
     ("uri = 5",)),
    ('count = 4\nconfig = ["count=20000"]', 'count = 0\nconfig = ["count=20000"]',
     "group 1 count: 0 is outside 1..4096", ("count = 0",)),
    ('config = ["count=20000"]\n', 'config = ["count"]\n',
     "group 1 config: config word 'count' is not key=value", ('config = ["count"]',)),
    ('config = ["count=20000"]\n', 'config = ["dst_ip=1.2.3.4"]\n',
     "group 1 config: dst_ip= is the fleet's", ('config = ["dst_ip',)),
    ('config = ["count=20000"]\n', 'config = ["a=b c"]\n',
     "group 1 config: config word 'a=b c' contains whitespace", ('config = ["a=b c"]',)),
    ('config = ["count=20000"]\n', 'config = "count=1"\n',
     "group 1 config: is not a list", ('config = "count=1"',)),
    ('app = "sink"', 'app = "sinc"', "group 1 app: 'sinc': one of", ('app = "sinc"',)),
    ('name = "rx"\n', '', "group 1 name: missing", ("[[group]]",)),
    ('name = "rx"\napp = "sink"', 'name = "rx"\napp = "sink"\nrole = "server"',
     "group 1 role: app sink has no role", ('role = "server"',)),
    ('to = "rx"', 'to = "rxx"', "group 2 to: no group is named 'rxx'", ('to = "rxx"',)),
    ('to = "rx"', 'to = "tx"', "group 2 to: a group cannot be paired with itself",
     ('to = "tx"',)),
    ('to = "srv"', 'to = "rx"', "group 4 to: rr client cannot send to sink",
     ('to = "rx"', 2)),
    ('name = "tx"\napp = "gen"\ncount = 4', 'name = "tx"\napp = "gen"\ncount = 3',
     "group 2 to: 3 senders but 4 receivers in 'rx'", ('to = "rx"',)),
    ('name = "srv"', 'name = "rx"', "group 3 name: 'rx' is used by group 1 too",
     ('name = "rx"', 2)),
    ('pin = "vcpu=0"', 'pin = "vcpu=99"', "group 2 pin: vcpu: CPU 99 outside",
     ('pin = "vcpu=99"',)),
    ('pin = "vcpu=0"', 'pin = "backend=0"', "group 2 pin: role backend", ('pin = "backend',)),
    ('pin = "vcpu=0"', 'wire = "bridge"', "group 2 wire: bridge needs a host bridge name",
     ('wire = "bridge"',)),
    ('pin = "vcpu=0"', 'wire = "tcp"', "group 2 wire: 'tcp': one of", ('wire = "tcp"',)),
    ('pin = "vcpu=0"', 'wire = "udp:5"', "group 2 wire: udp takes no argument",
     ('wire = "udp:5"',)),
    ('pin = "vcpu=0"', 'wire = "user"', "group 2 wire: user cannot carry frames",
     ('wire = "user"',)),
    ('pin = "vcpu=0"', 'wire = "vhostuser:/tmp/s{i}"',
     "group 1 wire: vhostuser: each end of the pair names its own", ("[[group]]",)),
    ('pin = "vcpu=0"', 'wire = "passt"\naddress = "10.0.0.300"',
     "group 2 address: '10.0.0.300' is not an IPv4 address", ('address =',)),
    ('pin = "vcpu=0"', 'queue_size = 300', "group 2 queue_size: 300 is not a power of two",
     ("queue_size",)),
    ('pin = "vcpu=0"', 'event_idx = "on"', "group 2 event_idx: 'on' is not true or false",
     ("event_idx",)),
    ('name = "cli"', 'name = "cli"\nflavour = 1', "group 4 flavour: unknown key",
     ("flavour",)),
]


@pytest.mark.parametrize("old,new,msg,where", [b for b in BAD if b[2]],
                         ids=[b[2].split(":")[0] + ":" + b[1][:20] for b in BAD if b[2]])
def test_bad_field_names_file_line_and_key(tmp_path, old, new, msg, where):
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    line = refused(tmp_path, text)
    want = _line_of(text, where[0], *where[1:])
    assert line.startswith("%s:%d: " % (tmp_path / "spec.toml", want)), line
    assert msg in line, line


def test_udp_without_partner_is_refused(tmp_path):
    text = GOOD.replace('role = "server"\nuri', 'role = "server"\nwire = "udp"\nuri', 1)
    text = text.replace('to = "srv"\n', "")
    line = refused(tmp_path, text)
    assert "group 3 wire: udp joins the two ends of a pair" in line


def test_pair_wires_must_agree_and_shared_vhostuser_needs_index(tmp_path):
    text = GOOD.replace('count = 4\nconfig = ["count=20000"]',
                        'count = 4\nconfig = ["count=20000"]\nwire = "bridge:br0"', 1)
    text = text.replace('pin = "vcpu=0"', 'wire = "network:default"')
    assert "group 1 wire: bridge differs from the wire of its sender 'tx' (network)" in refused(
        tmp_path, text)
    text = GOOD.replace('count = 4\nconfig = ["count=20000"]',
                        'count = 4\nconfig = ["count=20000"]\nwire = "vhostuser:/s"', 1)
    text = text.replace('pin = "vcpu=0"', 'wire = "vhostuser:/t{i}"')
    assert "group 1 wire: 4 instances cannot share one vhost-user socket" in refused(
        tmp_path, text)


def test_receiver_taken_twice_and_receiver_that_sends(tmp_path):
    text = GOOD + '\n[[group]]\nname = "tx2"\napp = "gen"\ncount = 4\nto = "rx"\n'
    line = refused(tmp_path, text)
    assert "group 5 to: group 'rx' already receives from 'tx'" in line
    assert line.startswith("%s:%d:" % (tmp_path / "spec.toml", len(text.splitlines())))


def test_syntax_errors_name_the_line(tmp_path):
    line = refused(tmp_path, GOOD.replace('count = 4', 'count = = 4', 1))
    assert line.startswith("%s:11: not TOML" % (tmp_path / "spec.toml")), line
    line = refused(tmp_path, '{"group": [\n {"name": "a",\n "app": }]}', "s.json")
    assert line.startswith("%s:3: not JSON" % (tmp_path / "s.json")), line


def test_json_errors_name_the_line_of_the_key(tmp_path):
    import tomllib
    data = tomllib.loads(GOOD)
    data["group"][2]["count"] = -1
    text = json.dumps(data, indent=2)
    line = refused(tmp_path, text, "s.json")
    lines = text.splitlines()
    srv = next(n for n, l in enumerate(lines) if '"srv"' in l)
    want = next(n for n, l in enumerate(lines) if n > srv and '"count"' in l) + 1
    assert line.startswith("%s:%d: group 3 count: -1 is outside" % (tmp_path / "s.json",
                                                                       want)), line


def test_structure_errors(tmp_path):
    assert "group: no [[group]] given" in refused(tmp_path, "[fleet]\nname = \"x\"\n")
    assert "[fleet] color: unknown key" in refused(tmp_path, "color = 1\n" + GOOD)
    assert "not a table/object" in refused(tmp_path, "[1, 2]", "s.json")
    with pytest.raises(RunnerError, match="cannot read"):
        fleetspec.load(str(tmp_path / "nope.toml"))


def test_deep_nesting_is_one_line_not_a_recursion_error(tmp_path):
    """Found by test_pyfuzz_fleet: 2000 `[` in a JSON spec, or a TOML value
    nested as deep, ended in RecursionError (a traceback, status 70)."""
    line = refused(tmp_path, '{"group": ' + "[" * 2000, "s.json")
    assert "s.json:1: not JSON: nested deeper than" in line, line
    line = refused(tmp_path, "x = " + "[" * 2000 + "]" * 2000 + "\n")
    assert "spec.toml:1: not TOML: nested deeper than" in line, line


@pytest.mark.parametrize("text,msg", [
    ('[[group]]\nname = "a"\napp = "sink"\nqueues = 2\n',
     "group 1 queues: 2: wire none has one queue pair (queues over vhostuser, network, bridge, "
     "ethernet)"),
    ('[[group]]\nname = "a"\napp = "sink"\nwire = "passt"\nqueues = 2\n',
     "wire passt has one queue pair"),
    ('[[group]]\nname = "a"\napp = "sink"\nwire = "bridge:br0"\nqueues = 9\n',
     "group 1 queues: 9 is outside 1..8"),
    ('[[group]]\nname = "a"\napp = "sink"\nwire = "bridge:br0"\nqueues = 2\n'
     'config = ["vcpus=1"]\n', "queues= and vcpus= follow the group's own key queues"),
])
def test_queues_refused_in_one_line(tmp_path, text, msg):
    assert msg in refused(tmp_path, text)


def test_queues_as_read(tmp_path):
    s = load_text(tmp_path, '[[group]]\nname = "a"\napp = "sink"\nwire = "bridge:br0"\n'
                            'queues = 4\n')
    assert s.groups[0].queues == 4
