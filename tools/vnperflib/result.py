"""The typed result: what one run reports (RunResult) and what a sweep's
results directory holds (SweepResult), frozen dataclasses the runner
builds and the table, CSV, JSON, compare and the Python API read.

The JSON is the same as before the types (`vnperf run --json`, runs/NNN.json,
results.json), plus "schema_version" in a run report. load() reads both:
a report without "schema_version" was written before it (2026-12-02) and
has the same keys. Keys a class does not name (a newer runner's, a
topology's own) are kept in `extra` and written back as they were.
Members that are the guest's own protocol messages (a guest's result,
ready, samples) or a backend's own counts (host) stay the JSON objects
they are: docs/protocol.md and the backends describe them."""

import dataclasses
import json
import os
import types
import typing
from dataclasses import dataclass, field
from typing import Mapping, Optional

from .errors import usage

# The version of the run report's JSON this runner writes ("schema_version").
# 1: the keys of vnperf_report 1 with schema_version added.
SCHEMA_VERSION = 1
REPORT_FORMAT = 1          # "vnperf_report": what a reader checks first
SCHEMA_VERSIONS = (1,)     # those load() reads (absent: written before, read as 1)


def _plain(v):
    """A JSON value of the typed one: tuples and mappings made lists and
    dicts again, records their dicts."""
    if isinstance(v, Record):
        return v.to_dict()
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, (dict, types.MappingProxyType)):
        return {k: _plain(x) for k, x in v.items()}
    return v


class Record:
    """A JSON object as a frozen dataclass: each named member a field
    (NESTED says which are records, or lists or maps of records), the
    others in extra. to_dict() gives back the keys the object had: a field
    is written when it was read or given (keys), or has a value other than
    None and its default."""

    NESTED = {}        # field: ("one" | "list" | "map", record class)
    TUPLES = ()        # fields that are JSON lists, kept as tuples

    @classmethod
    def from_dict(cls, d):
        if isinstance(d, cls):
            return d
        if not isinstance(d, dict):
            raise TypeError("%s from %s, not a JSON object" % (cls.__name__, type(d).__name__))
        names = {f.name for f in dataclasses.fields(cls)
                 if f.metadata.get("json", True)} - {"extra", "keys"}
        kw = {}
        for k, v in d.items():
            if k in names:
                kw[k] = cls._typed(k, v)
        extra = {k: v for k, v in d.items() if k not in names}
        return cls(**kw, extra=types.MappingProxyType(extra),
                   keys=tuple(k for k in d if k in names))

    @classmethod
    def _typed(cls, name, v):
        if v is None:
            return None
        _check(cls, name, v)
        kind, sub = cls.NESTED.get(name, (None, None))
        if kind == "one":
            return sub.from_dict(v)
        if kind == "list":
            return tuple(sub.from_dict(x) for x in v)
        if kind == "map":
            return types.MappingProxyType({k: sub.from_dict(x) for k, x in v.items()})
        if name in cls.TUPLES and isinstance(v, list):
            return tuple(v)
        return v

    @classmethod
    def given(cls, **kw):
        """A record whose members are those given, each written, None too
        (a null in the JSON), and the others only when they have a value."""
        return cls(**kw, keys=tuple(kw))

    def but(self, **kw):
        """This record with the members given set and written, None too."""
        return dataclasses.replace(self, **kw, keys=self.keys + tuple(k for k in kw
                                                                     if k not in self.keys))

    def to_dict(self):
        out = {}
        for f in dataclasses.fields(self):
            if f.name in ("extra", "keys"):
                continue
            v = getattr(self, f.name)
            if f.name in self.keys or (v is not None and v != f.default):
                out[f.name] = _plain(v)
        out.update(_plain(self.extra))
        return out


# What a member of each annotated type is in the JSON (bool is no number).
_JSON = {str: (str,), int: (int,), float: (int, float), bool: (bool,), Mapping: (dict,),
         tuple: (list, tuple)}


def _check(cls, name, v):
    """A member whose JSON type is not its field's: ValueError naming it."""
    t = cls.__dataclass_fields__[name].type
    args = [a for a in typing.get_args(t) if a is not type(None)]
    if args:
        t = args[0]     # Optional[X]
    if cls.NESTED.get(name, ("", None))[0] in ("one", "map"):
        t = Mapping
    elif name in cls.NESTED:
        t = tuple
    want = _JSON.get(t)
    if want is None:
        return
    if not isinstance(v, want) or (t in (int, float) and isinstance(v, bool)):
        raise ValueError("%s.%s is %s, not %s" % (
            cls.__name__, name, type(v).__name__, "/".join(w.__name__ for w in want)))


def _extra():
    return field(default_factory=lambda: types.MappingProxyType({}), repr=False, compare=False)


def _keys():
    return field(default=(), repr=False, compare=False)


@dataclass(frozen=True)
class Verdict(Record):
    """Which side bound the run (verdict.py): host, guest, backend,
    neither or unknown, and one line why."""
    side: str = None
    why: str = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Direction(Record):
    """One direction's counts on both sides (counts.py): where is the
    places its frames were lost ({"at", "what", "frames"}: counts.drop),
    located how many of them those account for; stalled when QEMU stopped
    reading its socket, host_stall when a chain's hop lost them to a vCPU
    the host took away (topologies/pvp.py); the receiver's own view
    ({"seq_gaps", "after_last"}: counts.receiver_view), the rr server's
    answers, the bytes a guest iperf client held unacknowledged at its
    stop, where counted."""
    TUPLES = ("where",)
    verdict: str = None
    why: str = None
    sent: Optional[float] = None     # whole frames (JSON integers)
    received: Optional[float] = None
    lost: Optional[float] = None
    loss_pct: Optional[float] = None
    where: tuple = None
    located: Optional[float] = None
    stalled: Optional[bool] = None
    host_stall: Optional[bool] = None
    receiver: Mapping = None
    server_answered: Optional[float] = None
    unacked: Optional[float] = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Counts(Record):
    """Both sides' counts: the guest's, the host end's, per direction, and
    whether every direction with both agrees (None: none has both); a
    chain's (topologies/pvp.py) also its tester, its hops in order and,
    with several pairs through testpmd, each pair's hops (they count in
    agree); two guests' (counts.merge_guests) the receiving guest's count
    in peer_guest."""
    NESTED = {"directions": ("map", Direction), "pairs": ("map", Direction)}
    TUPLES = ("hops",)
    guest: Mapping = None
    host: Mapping = None
    directions: Mapping = None      # {name: Direction}
    agree: Optional[bool] = None
    tester: Optional[str] = None
    hops: tuple = None
    pairs: Mapping = None           # {name: Direction}: a multiqueue chain's, per pair and hop
    peer_guest: Mapping = None
    extra: Mapping = _extra()
    keys: tuple = _keys()

    @property
    def host_counted(self):
        """Whether the counts have a count of the other end beside the
        guest's (the host end's, the receiving guest's): some direction
        with both. Without one (hub, slirp but iperf) a rate is the
        guest's own, not what was delivered: every report says "guest
        only"."""
        return bool(self.directions)


@dataclass(frozen=True)
class CpuRole(Record):
    cpu_s: float = None
    wait_s: float = None
    threads: int = None
    pct: float = None
    wait_pct: float = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class CpuThread(Record):
    """One thread's CPU over the window: its role, its name (comm: "CPU
    0/TCG", "rte-worker-1") and thread id."""
    role: str = None
    name: str = None
    tid: int = None
    cpu_s: float = None
    wait_s: float = None
    pct: float = None
    wait_pct: float = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Cpu(Record):
    """Host CPU over the measurement window (hostcpu.CpuMeter.result)."""
    NESTED = {"roles": ("map", CpuRole), "per_thread": ("list", CpuThread)}
    window_s: float = None
    roles: Mapping = None           # {role: CpuRole}
    per_thread: tuple = None        # (CpuThread, ...) by role, name, tid
    total_cpu_s: float = None
    total_pct: float = None
    wait_pct: float = None
    runnable_avg: float = None
    cpus: int = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class GuestReport(Record):
    """One guest of the run (outcome.guest_report); boot, config, ready,
    samples, result, error and exit are its protocol messages."""
    TUPLES = ("argv", "console_tail", "problems", "samples")
    label: str = None
    argv: tuple = None
    qemu_status: Optional[int] = None
    guest_code: Optional[int] = None
    status: int = None
    status_name: str = None
    timed_out: bool = None
    stopped: bool = None
    started: bool = None
    why_no_exit: Optional[str] = None
    stderr_tail: str = None
    console_tail: tuple = None
    wall_s: float = None
    ready_s: Optional[float] = None
    boot: Mapping = None
    config: Mapping = None
    ready: Mapping = None
    samples: tuple = None
    result: Mapping = None
    error: Mapping = None
    exit: Mapping = None
    problems: tuple = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Metrics(Record):
    """The numbers sweep and compare work on (outcome.metrics); a figure
    the run did not measure is None and absent from the JSON."""
    pps: float = None
    bps: float = None
    packets: float = None
    bytes: float = None
    duration_s: float = None
    p50_ns: float = None
    p90_ns: float = None
    p99_ns: float = None
    p999_ns: float = None
    max_ns: float = None
    mean_ns: float = None
    tps: float = None
    transactions: float = None
    timeouts: float = None
    tx_dropped: float = None
    loss_pct: float = None
    lost: float = None
    kicks_per_packet: float = None
    suppressed_pct: float = None
    irq_per_packet: float = None
    idle_pct: float = None
    backend_batch: float = None
    backend_batch_lo: float = None
    backend_batch_hi: float = None
    goodput_bytes: float = None
    goodput_bps: float = None
    cpu_pct: float = None
    vcpu_pct: float = None
    cpu_wait_pct: float = None
    sd_us_per_packet: float = None
    sd_us_per_kb: float = None
    sd_us_per_tx: float = None
    extra: Mapping = _extra()
    keys: tuple = _keys()

    def as_dict(self):
        """{metric: value} of those measured (stats.summarize_runs)."""
        return {k: v for k, v in self.to_dict().items() if v is not None}


@dataclass(frozen=True)
class QueuePair(Record):
    """One queue pair of the sending guest (outcome.queue_pairs): the app's
    count on it (gen: the frames its CPU sent there; sink: received there;
    reflect: sent back there; else the driver's frames both ways), the CPU
    that drove it (an app that runs one instance per vCPU), the loss and
    reordering of its streams (sink, reflect: from the sequence numbers of
    the flows on that pair), and the driver's own frames and bytes each
    way."""
    queue: int = None
    cpu: Optional[int] = None
    packets: int = None
    lost: Optional[int] = None
    reorder: Optional[int] = None
    tx_packets: int = None
    rx_packets: int = None
    tx_bytes: int = None
    rx_bytes: int = None
    hash_bad: Optional[int] = None         # the device's wrong hash reports on it (HASH_REPORT)
    host_rx_packets: Optional[int] = None  # the backend's own count from the guest on it
    host_tx_packets: Optional[int] = None  # and into the guest on it
    agree: Optional[bool] = None           # both sides' counts agree each way (None: no host count)
    why: Optional[str] = None              # which way it lost how many, when not
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class StreamRow(Record):
    """One stream of a stream file (outcome.stream_rows): what gen sent of
    it and what the receiver counted; the latency of its frames that came
    back (a reflector), when they did."""
    id: int = None
    name: Optional[str] = None
    direction: str = "tx"                 # tx: guest to host; rx: host peer to guest
    packets: int = None
    bytes: int = None
    received: Optional[int] = None
    lost: Optional[int] = None
    dup: Optional[int] = None
    reorder: Optional[int] = None
    p50_us: Optional[float] = None
    p99_us: Optional[float] = None
    max_us: Optional[float] = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class RunResult(Record):
    """One `vnperf run`: its report (docs/runner-run.md, "Report")."""
    NESTED = {"guests": ("list", GuestReport), "counts": ("one", Counts),
              "cpu": ("one", Cpu), "metrics": ("one", Metrics), "verdict": ("one", Verdict),
              "queues": ("list", QueuePair), "streams": ("list", StreamRow)}
    TUPLES = ("config", "teardown_errors")
    vnperf_report: int = REPORT_FORMAT
    schema_version: int = SCHEMA_VERSION
    time: str = None
    engine: str = None
    machine: str = None
    boot: str = None
    accel: str = None
    accel_why: str = None
    backend: str = None
    app: str = None
    config: tuple = None
    guests: tuple = None            # (GuestReport, ...): receivers first, the sender last
    host: Mapping = None
    counts: Optional[Counts] = None
    queues: tuple = None            # (QueuePair, ...) with more than one pair, else absent
    streams: tuple = None           # (StreamRow, ...) when gen sent through its stream engine
    cpu: Optional[Cpu] = None
    qmp: Mapping = None
    topology: str = None
    nice: Mapping = None
    identity: Mapping = None
    placement: Mapping = None       # --placement's plan, what was placed and what not
    wall_s: float = None
    metrics: Metrics = field(default_factory=Metrics)
    waits: Mapping = None
    verdict: Optional[Verdict] = None
    status: int = None
    why: str = None
    status_name: str = None
    teardown_errors: tuple = None
    extra: Mapping = _extra()
    keys: tuple = ("vnperf_report", "schema_version", "metrics")

    # What the runner writes of every run, a null too (RunResult.of).
    RUN_KEYS = ("vnperf_report", "schema_version", "time", "engine", "machine", "boot", "accel",
                "accel_why", "backend", "app", "config", "guests", "host", "counts", "cpu",
                "qmp", "topology", "nice", "identity", "placement", "wall_s", "metrics",
                "waits", "verdict", "status", "why", "status_name")

    @classmethod
    def of(cls, **kw):
        """The runner's report of one run from its typed parts: every
        member of RUN_KEYS written, queues and streams when there are
        some."""
        return cls(**kw, keys=cls.RUN_KEYS)

    @classmethod
    def from_dict(cls, d):
        """Also a report written before schema_version (read as version 1;
        written back with it)."""
        r = super().from_dict(d)
        return r if r.metrics is not None else dataclasses.replace(r, metrics=Metrics())

    @classmethod
    def failed(cls, status, why):
        """A run that never reported (a host-side failure): its status and
        line, no figures."""
        from . import exitcodes
        return cls(status=status, why=why, status_name=exitcodes.status_name(status))

    @property
    def sender(self):
        """The guest whose result is the run's (the last one), or None."""
        return self.guests[-1] if self.guests else None

    @property
    def sender_result(self):
        """The sender's result message ({} without one)."""
        g = self.sender
        return (g.result if g is not None else None) or {}

    @property
    def host_counted(self):
        return self.counts is not None and self.counts.host_counted

    def config_value(self, key):
        """The value of config word key=, None without one."""
        for w in self.config or ():
            k, _, v = w.partition("=")
            if k == key:
                return v
        return None

    def to_dict(self):
        d = super().to_dict()
        d["schema_version"] = self.schema_version   # also in a report read from before it
        return d

    def with_teardown_errors(self, errors):
        if not errors:
            return self
        return dataclasses.replace(self, teardown_errors=tuple(errors),
                                   keys=self.keys + ("teardown_errors",))

    def to_json(self):
        return json.dumps(self.to_dict(), indent=1, sort_keys=True, default=str)


@dataclass(frozen=True)
class Summary(Record):
    """A metric over a point's runs (stats.summary)."""
    TUPLES = ("values",)
    median: float = None
    min: float = None
    max: float = None
    mean: float = None
    sd: float = None
    n: int = None
    values: tuple = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Point(Record):
    """One point of a sweep (results.json's points[]): its parameters and
    identity, its runs' files and statuses, and each metric's summary."""
    NESTED = {"summary": ("map", Summary)}
    TUPLES = ("runs", "statuses", "why", "searches")
    params: Mapping = None
    identity: Mapping = None
    runs: tuple = ()
    statuses: tuple = ()
    why: tuple = ()
    ok: int = None
    summary: Mapping = None         # {metric: Summary}
    host_counted: Optional[bool] = None
    searches: tuple = None          # an ndr point's searches (search.py's results)
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class SweepResult(Record):
    """A sweep's results directory (resultsdir.py): its axes, fixed
    parameters and points; run(point, i) reads one run's report."""
    NESTED = {"points": ("list", Point)}
    TUPLES = ("argv", "plots")
    vnperf_sweep: int = None
    argv: tuple = None
    time: str = None
    axes: Mapping = None
    repeat: int = None
    fixed: Mapping = None
    points: tuple = ()
    plots: tuple = ()
    order: str = None
    seed: int = None
    search: Mapping = None          # an ndr search's spec (mode, trials per load, ...)
    vnperf_search: int = None       # an ndr search's results.json (its format)
    aa: Mapping = None              # a --aa sweep's A/A calibration
    # Not in results.json: where it was read, and (the API's) the status
    # the command returned.
    directory: str = field(default=None, compare=False, metadata={"json": False})
    status: int = field(default=None, compare=False, metadata={"json": False})
    extra: Mapping = _extra()
    keys: tuple = _keys()

    def to_dict(self):
        d = super().to_dict()
        d.pop("directory", None)
        d.pop("status", None)
        return d

    @property
    def app(self):
        """The app the points ran (their identity), None when unknown (a
        format 1 sweep) or several."""
        apps = {(p.identity or {}).get("app") for p in self.points} - {None}
        return apps.pop() if len(apps) == 1 else None

    def run(self, point, i=0):
        """The RunResult of the point's i-th run (runs/NNN.json)."""
        if self.directory is None:
            raise usage("this sweep was read from its results.json alone: no runs/ beside it")
        return load_run(os.path.join(self.directory, point.runs[i]))


@dataclass(frozen=True)
class Cell(Record):
    """One metric of a compared point (compare.py): A's and B's medians,
    the change of the means in percent, its test and interval."""
    TUPLES = ("ci_pct",)
    metric: str = None
    a: float = None
    b: float = None
    pct: Optional[float] = None
    p: Optional[float] = None
    p_adj: Optional[float] = None
    ci_pct: Optional[tuple] = None
    significant: Optional[bool] = None
    mde_pct: Optional[float] = None
    a_mean: Optional[float] = None
    b_mean: Optional[float] = None
    a_n: Optional[int] = None
    b_n: Optional[int] = None
    se_pct: Optional[float] = None
    df: Optional[float] = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Row(Record):
    """A compared point: its key's values, a Cell per column, the failed
    runs of each side ({"a": [...], "b": [...]})."""
    NESTED = {"columns": ("map", Cell)}
    params: Mapping = None
    columns: Mapping = None         # {column: Cell}
    failed: Mapping = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Side(Record):
    """One side of a saved comparison (compare.json's sides): its label
    (the path and the points selected) and the parameters its points
    share."""
    label: str = None
    identity: Mapping = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class Comparison(Record):
    """`vnperf compare --json` (vnperf_compare 3): rows, the average over
    them, and what A and B differ in; saved (--out), also both paths and
    sides."""
    NESTED = {"rows": ("list", Row), "average": ("map", Cell), "sides": ("map", Side)}
    TUPLES = ("key", "columns", "ab", "same", "only_a", "only_b")
    vnperf_compare: int = None
    key: tuple = ()
    columns: tuple = ()
    rows: tuple = ()
    average: Mapping = None         # {column: Cell}
    differences: Mapping = None
    ab: tuple = ()
    same: tuple = ()                # lines: the A/B dimensions A and B do not differ in
    only_a: tuple = ()
    only_b: tuple = ()
    test: str = None
    alpha: float = None
    tests: int = None               # the cells tested (Holm's correction over them)
    mde_alpha: float = None
    mde_power: float = None
    a: str = None                   # the results directories compared
    b: str = None
    sides: Mapping = None           # {"a" | "b": Side}
    extra: Mapping = _extra()
    keys: tuple = _keys()

    def significant(self):
        """[(row params, column, Cell)] of the changes significant after
        Holm's correction."""
        return [(r.params, c, cell) for r in self.rows for c, cell in r.columns.items()
                if cell.significant]


@dataclass(frozen=True)
class GroupSummary(Record):
    """A fleet group's sums, or the fleet's (fleetreport.summarize): its
    instances and how many ended ok, the summed rates and counts, the loss
    over its pairs, the merged histogram's percentiles."""
    instances: int = None
    ok: int = None
    pps: float = None
    bps: float = None
    packets: float = None
    bytes: float = None
    tps: float = None
    transactions: float = None
    sent: float = None
    lost: float = None
    loss_pct: float = None
    p50_ns: float = None
    p90_ns: float = None
    p99_ns: float = None
    p999_ns: float = None
    max_ns: float = None
    mean_ns: float = None
    latency_samples: float = None
    app: str = None
    role: Optional[str] = None
    wire: str = None
    receives_from: Optional[str] = None
    sends_to: Optional[str] = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class FleetInstance(Record):
    """One appliance of a fleet (fleetreport.instance_report): its group,
    app and role, status and why, its guest report, its own metrics and,
    for a sender, its pair's counts."""
    NESTED = {"guest": ("one", GuestReport), "metrics": ("one", Metrics),
              "counts": ("one", Counts)}
    TUPLES = ("config",)
    instance: str = None
    group: str = None
    app: str = None
    role: Optional[str] = None
    uri: Optional[str] = None
    partner: Optional[str] = None
    domain: Optional[str] = None
    config: tuple = None
    status: int = None
    why: str = None
    started: bool = None
    guest: Optional[GuestReport] = None
    ready_s: Optional[float] = None
    metrics: Optional[Metrics] = None
    counts: Optional[Counts] = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class FleetFailure(Record):
    """An instance that did not end ok: its name, status and line."""
    instance: str = None
    status: int = None
    why: str = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


@dataclass(frozen=True)
class FleetResult(Record):
    """`vnperf fleet SPEC`'s report (fleet.json, vnperf_fleet 1): its
    instances, a GroupSummary per group and for the fleet, the times, the
    failed instances and the domains not destroyed."""
    NESTED = {"instances": ("list", FleetInstance), "groups": ("map", GroupSummary),
              "aggregate": ("one", GroupSummary), "failed": ("list", FleetFailure)}
    TUPLES = ("engines", "not_destroyed", "teardown_errors")
    vnperf_fleet: int = None
    spec: Optional[str] = None
    name: Optional[str] = None
    time: str = None
    accel: Mapping = None
    engines: tuple = None
    instances: tuple = ()
    groups: Mapping = None          # {group: GroupSummary}
    aggregate: Optional[GroupSummary] = None
    wall_s: float = None
    created_s: Optional[float] = None
    startup_s: Optional[float] = None
    failed: tuple = ()
    not_destroyed: tuple = ()       # (domain, why) pairs
    teardown_errors: tuple = None
    status: int = None
    why: str = None
    status_name: str = None
    extra: Mapping = _extra()
    keys: tuple = _keys()


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise usage("cannot read %s: %s" % (path, e.strerror))


def _json(text, path):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        why = "nested too deep" if isinstance(e, RecursionError) else str(e)
        raise usage("%s is not JSON: %s" % (path, why))


def run_from_json(data, path):
    """A RunResult of a report's JSON object; one usage line naming what
    is not a report this runner reads."""
    if not isinstance(data, dict) or "vnperf_report" not in data:
        raise usage("%s is not a `vnperf run --json` report" % path)
    if data["vnperf_report"] != REPORT_FORMAT or isinstance(data["vnperf_report"], bool):
        raise usage("%s: vnperf_report %s: not a format this runner reads (%d)"
                    % (path, json.dumps(data["vnperf_report"])[:40], REPORT_FORMAT))
    v = data.get("schema_version", 1)
    if v not in SCHEMA_VERSIONS or isinstance(v, bool):
        raise usage("%s: schema_version %s: not one this runner reads (%s)"
                    % (path, json.dumps(v)[:40], ", ".join(map(str, SCHEMA_VERSIONS))))
    try:
        return RunResult.from_dict(data)
    except (TypeError, AttributeError, ValueError) as e:
        raise usage("%s: not a run report this runner reads: %s" % (path, e))


def load_run(path):
    return run_from_json(_json(_read(path), path), path)


def parse(text, path):
    """load()'s typed result of the bytes of a results.json or a run
    report (path names it in a refusal)."""
    data = _json(text, path)
    if isinstance(data, dict) and "vnperf_sweep" in data:
        from .report import resultsdir
        resultsdir.parse(text, path)   # every member compare reads checked, one line
        try:
            return SweepResult.from_dict(data)
        except (TypeError, AttributeError, ValueError) as e:
            raise usage("%s: not a results directory this runner reads: %s" % (path, e))
    return run_from_json(data, path)


def load(path):
    """A results directory (or its results.json) as a SweepResult, a run
    report (`vnperf run --json`, runs/NNN.json) as a RunResult; today's and
    those written before the types alike. Bad input: RunnerError, status
    64, one line."""
    directory = None
    if os.path.isdir(path):
        directory, path = path, os.path.join(path, "results.json")
    res = parse(_read(path), path)
    if isinstance(res, SweepResult):
        return dataclasses.replace(res, directory=directory or os.path.dirname(path) or ".")
    return res
