"""RunOptions: the options of one run, typed, frozen, each default written
once here, made in one place (build) that refuses bad combinations once.
`vnperf run` makes them from its command line (from_cli), sweep and ndr
from theirs (their base, then dataclasses.replace per point), bench/ and
tests from Python (build)."""

import dataclasses
from dataclasses import dataclass, field

from . import optypes
from .analysis import hostcount
from .errors import usage
from .run import nextroot, placement, qemucmd


@dataclass(frozen=True, slots=True)
class RunOptions:
    # guest
    image: str = field(default_factory=qemucmd.default_image)
    machine: str = None           # build: the engine's default for --boot
    boot: str = "pvh"
    esp: str = field(default_factory=qemucmd.default_esp)
    memory: int = 128
    accel: str = "auto"
    qemu: str = qemucmd.DEFAULT_QEMU   # build: system/next made a binary (nextroot.py)
    timeout: float = None         # build: duration + 30, or 60
    qemu_args: tuple = ()
    engine: str = "qemu"
    console: str = None
    pin: dict = None
    placement: str = "auto"       # the runner's thread plan (placement.MODES; --pin wins)
    # test
    app: str = None               # build: selftest, or the topology's app with a backend
    duration: int = None
    tap: str = None
    bridge: str = None
    count: int = None
    topology: str = "host"
    tester: str = None
    warmup: float = None
    max_lag: float = None
    nice: dict = None
    queue_size: int = None
    queues: int = None            # queue pairs (None: the device's one, as before --queues)
    vcpus: int = None             # build: --queues when not given
    sock_rcvbuf: int = None
    ip6: bool = False             # lwIP's apps (iperf, rr) over IPv6 (tap, vhost-net, user)
    vlan_end: str = "auto"        # netif_vlan='s host end on the tap (run/vlan.py ENDS)
    fwd_mode: str = None
    feeder: str = None
    pmd_burst: int = None
    pmd_rxd: int = None
    pmd_txd: int = None
    testpmd: str = "dpdk-testpmd"   # build: system/next made a binary (nextroot.py)
    backend: str = "none"
    size: int = None
    rate: str = None
    event_idx: bool = None        # build: "on"/"off" -> True/False
    sets: str = None              # --sets: app reneg's feature sets (docs/apps.md)
    # replay (pcap.py)
    pcap: str = None              # --pcap FILE: app replay sends its frames
    loops: int = None
    speed: str = None             # multiplier of the recorded timing
    pps: int = None
    topspeed: bool = False
    config: tuple = ()            # guest config words (after --)
    streams: str = None           # --streams FILE (docs/streams.md)
    stream_text: str = None       # build: the file checked and encoded for the guest
    stream_names: tuple = ()      # build: its streams' names, by id
    stream_dirs: tuple = ()       # build: its streams' directions (tx, rx), by id
    # your own backend
    vhost_user_socket: str = None
    vhost_user_server: bool = False
    host_count: hostcount.Spec = field(default_factory=lambda: hostcount.parse("none"))
    # output
    quiet: bool = False
    raw: bool = False
    json: bool = False
    csv: bool = False
    out: str = None               # run --out DIR: the report also in DIR/run.json

    @classmethod
    def from_cli(cls, ns, make_run=False):
        """The options of `vnperf run`'s namespace (its other entries,
        e.g. the command's name, are not run options); make_run: `make
        run`'s defaults (run's --make-run)."""
        fields = run_fields(ns)
        if make_run:
            # The README's first command: the generator over dgram to the
            # host peer, 64-byte frames for 5 s, both-side counts.
            fields["backend"] = "dgram" if fields["backend"] == "none" else fields["backend"]
            fields["app"] = fields["app"] or "gen"
            fields["size"] = fields["size"] or 64
            fields["duration"] = fields["duration"] or 5
        return build(**fields)


FIELDS = tuple(f.name for f in dataclasses.fields(RunOptions))


def default(name):
    """The default of one field (the CLI parsers' default= too)."""
    f = RunOptions.__dataclass_fields__[name]
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


def run_fields(ns):
    """{field: value} of the run options an argparse namespace holds."""
    return {k: v for k, v in vars(ns).items() if k in FIELDS}


def build(**fields):
    """The one maker of RunOptions: defaults filled, words and on/off made
    values, bad combinations refused (one line, status 64). What needs no
    backend module is refused before any is imported."""
    for k in ("qemu_args", "config"):
        fields[k] = tuple(fields.get(k) or ())
    o = RunOptions(**fields)
    if o.machine is None:
        from .run import engine
        o = dataclasses.replace(o, machine=engine.default_machine(o.engine, o.boot))
    refusal = qemucmd.machine_refusal(o.boot, o.machine)
    if refusal:
        raise usage(refusal)
    if o.placement not in placement.MODES:
        raise usage("--placement %s: one of %s" % (o.placement, ", ".join(placement.MODES)))
    if isinstance(o.event_idx, str):
        o = dataclasses.replace(o, event_idx=o.event_idx == "on")
    o = dataclasses.replace(o, **config_stands(o))
    sets_refusal(o)
    if o.streams is not None:
        o = with_streams(o)
    o = with_vcpus(o)
    if o.pcap is not None or o.loops is not None or o.speed is not None or o.pps is not None \
            or o.topspeed:
        from .run import pcap
        o = pcap.resolve(o)
    from . import backends, topologies
    from .backends import ownvhost
    backends.known(o.backend)
    own = backends.implied(o, [] if o.backend == "none" else [o.backend])
    if own and o.backend == "none":
        o = dataclasses.replace(o, backend=own)
    ownvhost.resolve(o)
    topo = topologies.topology_for(o)  # an unknown --topology: one line, 64
    if o.app is None:
        o = dataclasses.replace(o, app="selftest" if o.backend == "none" and not own
                                else topo.default_app())
    if o.timeout is None:
        o = dataclasses.replace(o, timeout=default_timeout(o))
    return nextroot.binaries(o)


def default_timeout(o):
    """--timeout unless given: the duration and 30 s, else 60 s; app
    reneg's TCP streams (stream_s= seconds a set) on top."""
    from .run import iperf
    streams = (iperf.reneg_stream_s(o) or 0) * len(o.sets.split("/")) if o.sets else 0
    return ((o.duration + 30.0) if o.duration else 60.0) + streams


def with_vcpus(o):
    """o with a vCPU per queue pair unless --vcpus is given: the one rule
    of `run --queues N` and of a sweep's queues axis (sweep.point_opts)."""
    if o.vcpus is None and o.queues is not None:
        return dataclasses.replace(o, vcpus=o.queues)
    return o


# What a stream file sets per stream: refused beside --streams.
STREAM_SHORTHAND = ("size", "rate", "imix", "flows")


def with_streams(o):
    """--streams FILE: the file checked (every error one line, 64) and
    encoded; the one-stream shorthand beside it refused; app gen."""
    from .run import streamfile
    given = {w.partition("=")[0] for w in o.config}
    given |= {k for k, v in (("size", o.size), ("rate", o.rate)) if v is not None}
    for k in STREAM_SHORTHAND:
        if k in given:
            raise usage("--streams %s and %s=: the stream file sets each stream's %s"
                        % (o.streams, k, k))
    if o.app not in (None, "gen"):
        raise usage("--streams: app gen sends streams, not app %s" % o.app)
    if (o.queues or 1) > 1 or (o.vcpus or 1) > 1:
        raise usage("--streams: one queue pair and one vCPU (the stream scheduler is one CPU's)")
    streams = streamfile.load(o.streams)
    dirs = tuple(streamfile.directions(streams))
    if "rx" in dirs:
        from . import topologies
        own = "--tap " + o.tap if o.tap else "--bridge " + o.bridge if o.bridge else None
        why = streamfile.bidir_refusal(o.backend, topologies.topology_for(o).joins_guests, own)
        if why:
            raise usage(why)
    if o.count and "tx" not in dirs:
        raise usage("--streams %s: --count with rx streams only: gen sends nothing, --duration "
                    "ends the run" % o.streams)
    return dataclasses.replace(o, app="gen", stream_text=streamfile.encode(streams),
                               stream_names=tuple(streamfile.names(streams)), stream_dirs=dirs)


# Options that identity.app_words turns into guest config words.
CONFIG_OPTIONS = ("app", "duration", "size", "rate", "count", "queues", "vcpus", "sets")
# Those whose config word is a whole number.
WHOLE_OPTIONS = ("duration", "size", "count", "queues", "vcpus")


def sets_refusal(o):
    """--sets belongs to app reneg: else one line, 64. The guest checks
    the sets themselves (apps/reneg_sets.h: every error one line, status
    2); support.check that app reneg has them and --count."""
    if o.sets is not None and o.app != "reneg":
        raise usage("--sets: app reneg runs feature sets, not app %s" % o.app)


def config_stands(o):
    """The words after --: key=value, each key once (the guest refuses a
    repeated key; merged here the last one won silently), none that
    contradicts an option (--size 64 with size=128). Returns {option:
    value} of the words that stand for an option not given (-- app=rr is
    --app rr)."""
    seen = {}
    for w in o.config:
        k, eq, v = w.partition("=")
        if not eq or not k:
            raise usage("config word %r is not key=value" % w)
        if any(c.isspace() for c in w):
            # The guest splits its config at whitespace: a newline would
            # start a word (or a console line) the runner never checked.
            raise usage("config word %r contains whitespace" % w)
        if k in seen:
            raise usage("config key %s given twice (%s=%s, %s)" % (k, k, seen[k], w))
        seen[k] = v
    stands = {}
    for k in CONFIG_OPTIONS:
        if k not in seen:
            continue
        opt, v = getattr(o, k), seen[k]
        val = whole_word(k, v) if k in WHOLE_OPTIONS else v
        if opt is None:
            stands[k] = val
        elif opt != val and str(opt) != v:
            raise usage("--%s %s and the config word %s=%s disagree" % (k, opt, k, v))
    return stands


_SUFFIX = {"k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30}


def whole_word(key, v):
    """A whole-number config word's value as the guest reads it
    (kernel/config.c parse_uint: decimal with k/m/g, 1000s, or ki/mi/gi,
    1024s; or 0x hex), so -- count=10k stands for --count 10000; else one
    line (64): the runner used to carry the text on and fail inside."""
    t = v.lower()
    if t.startswith("0x") and len(t) > 2 and all(c in "0123456789abcdef" for c in t[2:]):
        return int(t[2:], 16)
    digits = t.rstrip("kmgi")
    if optypes.digits(digits) and \
            (t == digits or t[len(digits):] in _SUFFIX):
        return int(digits) * _SUFFIX.get(t[len(digits):], 1)
    raise usage("config word %s=%s is not a whole number (e.g. 64, 0x40, 10k: docs/config.md)"
                % (key, v))
