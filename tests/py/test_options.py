"""RunOptions (tools/vnperflib/options.py): typed, frozen, each default
once, made by one function that refuses bad combinations once; no module
reads options by getattr with a default."""

import ast
import dataclasses
import glob
import os

import pytest

from vnpy import ROOT, cli_opts
from vnperflib import exitcodes, options
from vnperflib.analysis import hostcount
from vnperflib.run import identity, qemucmd
from vnperflib.campaign import sweep
from vnperflib.errors import RunnerError

OVMF = "--boot uefi needs --machine q35 or pc (OVMF does not run on microvm)"
# Names an options object goes by in the runner and bench/.
OPTION_NAMES = {"opts", "o", "options", "base", "ns", "opt", "run_opts"}


def sources():
    return ([os.path.join(ROOT, "tools", "vnperf")]
            + glob.glob(os.path.join(ROOT, "tools", "vnperflib", "**", "*.py"), recursive=True)
            + glob.glob(os.path.join(ROOT, "bench", "*.py")))


def is_options(node):
    return (isinstance(node, ast.Name) and node.id in OPTION_NAMES
            or isinstance(node, ast.Attribute) and node.attr in OPTION_NAMES)


def around_the_type(n):
    """An option read around its type: getattr(OPTIONS, ..., default),
    getattr(OPTIONS, "name"), hasattr(OPTIONS, ...), vars(OPTIONS).get(...),
    OPTIONS.__dict__.get(...). getattr(opts, k) over a tuple of field names
    (the testpmd knobs) is a plain read."""
    if not isinstance(n, ast.Call):
        return False
    f = n.func
    if isinstance(f, ast.Name) and f.id == "getattr" and n.args and is_options(n.args[0]):
        return len(n.args) > 2 or isinstance(n.args[1], ast.Constant)
    if isinstance(f, ast.Name) and f.id == "hasattr" and n.args and is_options(n.args[0]):
        return True
    if isinstance(f, ast.Attribute) and f.attr == "get":
        owner = f.value
        if (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                and owner.func.id == "vars" and owner.args and is_options(owner.args[0])):
            return True
        return (isinstance(owner, ast.Attribute) and owner.attr == "__dict__"
                and is_options(owner.value))
    return False


def getattr_reads(path):
    """Where path reads an option around its type (around_the_type)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return ["%s:%d" % (os.path.relpath(path, ROOT), n.lineno) for n in ast.walk(tree)
            if around_the_type(n)]


def test_no_module_reads_options_by_getattr():
    found = [hit for p in sources() for hit in getattr_reads(p)]
    assert found == [], "options read by getattr: " + ", ".join(found)


def test_the_scan_sees_a_getattr_with_a_default(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f(self, opts, ns):\n"
                 "    return getattr(opts, 'x', None), getattr(self.opts, 'y'), getattr(opts, k)\n"
                 "def g(self, ns, o):\n"
                 "    return vars(ns).get('make_run'), o.__dict__.get('x', 1), hasattr(ns, 'y')\n"
                 "def h(e, args):\n"
                 "    return getattr(e, 'strerror', None), vars(args).items()\n")
    assert [h.split(":")[1] for h in getattr_reads(str(p))] == ["2", "2", "4", "4", "4"]


def test_defaults_written_once():
    o = options.build()
    assert (o.machine, o.boot, o.memory, o.accel, o.backend, o.topology, o.engine) == \
        ("microvm", "pvh", 128, "auto", "none", "host", "qemu")
    assert (o.app, o.timeout, o.duration, o.event_idx) == ("selftest", 60.0, None, None)
    assert o.image == qemucmd.default_image() and o.qemu == qemucmd.DEFAULT_QEMU
    assert o.host_count == hostcount.parse("none") and o.config == () and o.qemu_args == ()
    assert options.build(duration=10).timeout == 40.0
    assert options.build(timeout=5).timeout == 5


def repeated_defaults(path, defaults):
    """A RunOptions field's default written again beside its name: a call
    f(opts, "boot", "pvh") or a dict {"boot": "pvh"} (read opts.boot)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            pairs = zip(n.args, n.args[1:])
        elif isinstance(n, ast.Dict):
            pairs = zip(n.keys, n.values)
        else:
            continue
        for k, v in pairs:
            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) \
                    and k.value in defaults and v.value == defaults[k.value]:
                out.append("%s:%d %s" % (os.path.relpath(path, ROOT), n.lineno, k.value))
    return out


def literal_defaults():
    return {f.name: f.default for f in dataclasses.fields(options.RunOptions)
            if isinstance(f.default, str)}


def test_no_module_writes_a_default_again():
    found = [hit for p in sources() if not p.endswith(os.path.join("vnperflib", "options.py"))
             for hit in repeated_defaults(p, literal_defaults())]
    assert found == [], "defaults written again: " + ", ".join(found)


def test_the_default_scan_sees_a_call_and_a_dict(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f(opts):\n"
                 "    a = _opt(opts, 'boot', 'pvh')\n"
                 "    b = {'topology': 'host', 'app': 'gen'}\n"
                 "    return why_not('gen', 'dgram', 'host'), _opt(opts, 'boot', 'uefi')\n")
    assert repeated_defaults(str(p), literal_defaults()) == [
        "%s:2 boot" % os.path.relpath(str(p), ROOT), "%s:3 topology" % os.path.relpath(str(p), ROOT)]


@pytest.mark.parametrize("kw, want", [
    ({"backend": "dgram"}, {"app": "gen"}),
    ({"backend": "dgram", "topology": "pvp"}, {"app": "fwd"}),
    ({"tap": "t0"}, {"backend": "tap", "app": "gen"}),
    ({"qemu_args": ["-device", "virtio-net-pci"]}, {"backend": "none", "app": "gen"}),
    ({"vhost_user_socket": "/s"}, {"backend": "vhost-user", "app": "gen"}),
    ({"boot": "uefi"}, {"machine": "q35"}),
    ({"engine": "libvirt"}, {"machine": "q35"}),
    ({"event_idx": "off"}, {"event_idx": False}),
    ({"event_idx": "on"}, {"event_idx": True}),
    ({"config": ["app=rr", "duration=3"]}, {"app": "rr", "duration": 3, "timeout": 33.0}),
])
def test_what_build_fills_in(kw, want):
    o = options.build(**kw)
    assert {k: getattr(o, k) for k in want} == want


@pytest.mark.parametrize("kw, line", [
    ({"boot": "uefi", "machine": "microvm"}, OVMF),
    ({"tap": "t0", "bridge": "b0"}, "--tap and --bridge: give one"),
    ({"tap": "t0", "backend": "dgram"}, "--tap t0 and --backend dgram"),
    ({"vhost_user_socket": "/s", "tap": "t0"}, "--vhost-user-socket and --tap"),
    ({"vhost_user_server": True}, "--vhost-user-server: with --vhost-user-socket PATH only"),
    ({"host_count": hostcount.parse("iface:lo")}, "--host-count iface:lo: with --vhost-user"),
    ({"vhost_user_socket": "/s", "app": "rr"}, "--vhost-user-socket: app rr needs"),
    ({"size": 64, "config": ["size=128"]}, "--size 64 and the config word size=128 disagree"),
    ({"config": ["app"]}, "config word 'app' is not key=value"),
    ({"engine": "xen"}, "--engine xen: one of qemu, libvirt[=URI]"),
])
def test_each_refusal_once_with_its_line(kw, line):
    with pytest.raises(RunnerError) as e:
        options.build(**kw)
    assert e.value.status == exitcodes.RUNNER_USAGE and line in e.value.line, e.value.line


def test_frozen():
    o = options.build()
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.size = 64
    assert dataclasses.replace(o, size=64).size == 64 and o.size is None


@pytest.mark.parametrize("argv, kw", [
    ([], {}),
    (["--backend", "dgram", "--size", "64", "--event-idx", "off", "--", "count=5"],
     {"backend": "dgram", "size": 64, "event_idx": "off", "config": ["count=5"]}),
    (["--boot", "uefi", "--memory", "64", "--qemu-arg=-S", "--timeout", "9"],
     {"boot": "uefi", "memory": 64, "qemu_args": ["-S"], "timeout": 9.0}),
    (["--tap", "t0", "--app", "sink", "--rate", "10k", "--pin", "vcpu=0"],
     {"tap": "t0", "app": "sink", "rate": "10k", "pin": {"vcpu": {0}}}),
])
def test_cli_and_python_give_equal_options(argv, kw):
    mod, ns = cli_opts("run", *argv)
    assert options.RunOptions.from_cli(ns) == options.build(**kw)


def test_sweep_points_are_replaced_not_mutated():
    _, ns = cli_opts("sweep", "--size", "64,128", "--backend", "dgram")
    base = sweep.base_opts(ns)
    assert isinstance(base, options.RunOptions) and (base.duration, base.timeout) == (5, 35.0)
    pts = [sweep.point_opts(base, p) for p in sweep.points(sweep.axes_from(ns))]
    assert [p.size for p in pts] == [64, 128] and base.size is None


def test_stream_files_are_a_sweep_axis(tmp_path):
    ex = os.path.join(ROOT, "examples", "streams")
    a, b = os.path.join(ex, "two-rates.toml"), os.path.join(ex, "imix.toml")
    _, ns = cli_opts("sweep", "--streams", "%s,%s" % (a, b), "--backend", "dgram")
    base = sweep.base_opts(ns)
    pts = [sweep.point_opts(base, p) for p in sweep.points(sweep.axes_from(ns))]
    assert [p.streams for p in pts] == [a, b] and base.streams is None
    assert [p.stream_names for p in pts] == [("fast", "slow"), ("small", "medium", "large")]
    assert {p.app for p in pts} == {"gen"}
    assert [p.stream_text.splitlines()[0] for p in pts] == ["vnperf-streams 2"] * 2
    # Each point's identity names what its guest sends.
    ids = [identity.of_run(p, identity.main_words(p), "tcg")["streams"] for p in pts]
    assert len(set(ids)) == 2
    assert "streams" not in identity.of_run(base, identity.main_words(base), "tcg")
    # Refused in one line before anything runs: a file that is not there, a
    # bad file (its stream and field), the shorthand beside it.
    with pytest.raises(RunnerError, match="--streams: bad value .*: no such file"):
        sweep.axes_from(cli_opts("sweep", "--streams", a + ",/nonexistent.toml")[1])
    bad = tmp_path / "bad.toml"
    bad.write_text('[[stream]]\nname = "x"\nsize = 10\n')
    _, ns = cli_opts("sweep", "--streams", "%s,%s" % (a, bad), "--backend", "dgram")
    pt = sweep.points(sweep.axes_from(ns))[1]
    with pytest.raises(RunnerError, match=r"stream 0 \(x\): size: 10") as e:
        sweep.point_opts(sweep.base_opts(ns), pt)
    assert e.value.status == exitcodes.RUNNER_USAGE
    _, ns = cli_opts("sweep", "--streams", a, "--size", "64,128", "--backend", "dgram")
    with pytest.raises(RunnerError, match="--streams .* and size=: the stream file sets"):
        sweep.point_opts(sweep.base_opts(ns), sweep.points(sweep.axes_from(ns))[0])


def test_the_ovmf_refusal_is_written_once():
    hits = []
    for p in sources():
        with open(p) as f:
            hits += [p for line in f if "OVMF does not run on microvm" in line]
    assert [os.path.relpath(p, ROOT) for p in hits] == ["tools/vnperflib/run/qemucmd.py"]


def test_every_path_refuses_ovmf_on_microvm_alike():
    lines = []
    for make in (lambda: options.build(boot="uefi", machine="microvm"),
                 lambda: sweep.base_opts(cli_opts("sweep", "--size", "64", "--boot", "uefi",
                                                  "--machine", "microvm")[1])):
        with pytest.raises(RunnerError) as e:
            make()
        lines.append((e.value.status, e.value.line))
    with pytest.raises(ValueError) as v:
        qemucmd.GuestSpec("x.elf", machine="microvm", boot="uefi")
    lines.append((exitcodes.RUNNER_USAGE, str(v.value)))
    assert lines == [(exitcodes.RUNNER_USAGE, OVMF)] * 3


def test_every_option_of_run_is_a_field():
    """A new `vnperf run` option is a RunOptions field with its default
    (from_cli keeps the fields only: an option left out would be lost)."""
    mod, _ = cli_opts("run")
    ns = mod.parser(["run"]).parse_args(["run"])
    assert set(vars(ns)) - {"cmd", "make_run"} - set(options.FIELDS) == set()
