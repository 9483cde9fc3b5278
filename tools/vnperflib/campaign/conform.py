"""`vnperf conform --backend B`: for the features the backend's device
offers (the guest's feature table of a probe boot), the combinations of
conform_pairs.plan, run per traffic kind with exact counts: those that
differ only in features negotiated at FEATURES_OK share one boot of app
reneg (conform_plan.py: the device reset and negotiated again per set), the
rest a fresh boot each; per combination the spec's device checks
(conform_checks.py, per set in a shared boot) as a table: pass, a
violation with its spec section, not offered, n/a.
A violation is a finding about the backend; the exit status says only
whether vnperf itself ran every cell (docs/conform.md)."""

import dataclasses
import json
import shlex
import subprocess
import time

from .. import exitcodes, options, result
from ..backends import wire
from ..errors import RunnerError, usage
from ..run import engine, runner, support
from ..run.proc import Session
from . import conform_checks, conform_pairs, conform_plan, conform_reneg

# Features the guest can switch off by features=-NAME (docs/config.md;
# test_conform_logic checks this against drivers/virtio/vnet_features.c).
# version_1 stays on: without it a modern-only device refuses the driver.
SWITCHABLE = ("csum", "guest_csum", "host_tso4", "host_tso6", "guest_tso4", "guest_tso6", "mtu",
              "mac", "mrg_rxbuf", "status", "ctrl_vq", "mq", "rss", "event_idx", "ring_packed",
              "in_order", "ring_reset", "notification_data", "hash_report", "host_uso",
              "guest_uso4", "guest_uso6", "ctrl_rx", "ctrl_vlan", "ctrl_mac_addr",
              "guest_announce", "speed_duplex", "notf_coal", "vq_notf_coal")
# Switched by its own config word (indirect=on|off).
WORD_FEATURES = {"indirect_desc": "indirect"}
# Offered, but negotiated only when a config word asks (docs/driver.md,
# "USO" and "Control commands"): a factor where offered; on, the
# combination sends what needs it (USO datagrams, a VLAN_ADD).
ASKED = ("host_uso", "ctrl_vlan")

# Device properties off by default that make QEMU offer more (set only
# where the QEMU binary has them: `-device DRIVER,help`).
OFFER_PROPS = (("packed", "on"), ("in_order", "on"), ("host_mtu", "1500"), ("speed", "10000"),
               ("duplex", "full"))
# The config fields the probe's guest read and validated (virtio 1.2
# s5.1.4), shown with the table.
CONFIG_FIELDS = ("mtu", "speed_mbps", "duplex")

SMALL, MTU_FRAME = 60, 1514
# USO datagrams (virtio 1.2 s5.1.6.2): 8192 bytes of UDP payload that the
# device cuts into 5 x 1400 + 1192 (as tests/integration/test_uso.py).
USO_FRAME, USO_SEG, USO_COUNT = 8234, 1400, 500
VLAN_ID = 5
DEFAULT_COUNT = 2000
DEFAULT_RATE = "2000"   # pps: paced, so the host's queues towards QEMU never overflow under TCG
STREAM_S = 1


def add_arguments(p):
    c = p.add_argument_group("conform")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    c.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE")
    c.add_argument("--features", metavar="A,B,...",
                   help="only these of the offered features as factors (the rest stay as "
                   "negotiated): a short run")
    c.add_argument("--no-stream", action="store_true",
                   help="no TCP stream boot (GSO and checksum offloads) per combination")


def nic_driver(machine):
    return "virtio-net-device" if machine == "microvm" else "virtio-net-pci"


def offer_args(qemu, machine, given=()):
    """-global words switching on the offers QEMU keeps off by default,
    those its device has and the user's --qemu-arg words (given) do not
    set; microvm's virtio-mmio made modern (version 2: the legacy one has
    no version_1, so no packed ring)."""
    try:
        out = subprocess.run([qemu, "-device", nic_driver(machine) + ",help"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise RunnerError(exitcodes.RUNNER_BACKEND_MISSING,
                          "conform: %s -device %s,help: %s" % (qemu, nic_driver(machine), e))
    args = []
    if machine == "microvm":
        args += ["-global", "virtio-mmio.force-legacy=false"]
    for prop, val in OFFER_PROPS:
        mine = any(a.startswith("%s.%s=" % (nic_driver(machine), prop)) for a in given)
        if "  %s=" % prop in out and not mine:
            args += ["-global", "%s.%s=%s" % (nic_driver(machine), prop, val)]
    return tuple(args)


@dataclasses.dataclass
class Boot:
    """One boot of a combination (or its set of a shared boot: report is
    then that set's view, set_report): what it ran and what came back."""
    traffic: str
    command: str
    status: int
    why: str
    report: result.RunResult

    def as_json(self):
        """The boot in conform's JSON: what ran, its status and its count
        directions (a set's: that set's each way), not its report."""
        c = self.report.counts
        dirs = (c.directions if c is not None else None) or {}
        return {"traffic": self.traffic, "command": self.command, "status": self.status,
                "why": self.why,
                "counts": {k: {"verdict": d.verdict, "sent": d.sent, "received": d.received}
                           for k, d in dirs.items()}}


def traffics(base, stream, row=None):
    """The traffic kinds of a combination: (name, option changes, words).
    Frames both ways through the host's reflector where the backend has a
    host end (reflect: the host peer sends, the guest sends each back);
    guest->host only otherwise (gen); USO datagrams guest->host where the
    combination has host_uso; the TCP stream where iperf runs."""
    both = support.why_not("reflect", base.backend, "host") is None
    app = "reflect" if both else "gen"
    out = []
    for name, size in (("small", SMALL), ("mtu", MTU_FRAME)):
        out.append((name, dict(app=app, size=size, count=base.count or DEFAULT_COUNT,
                               rate=base.rate or DEFAULT_RATE, duration=None), ("notify=hybrid",)))
    if (row or {}).get("host_uso"):
        out.append((conform_plan.USO, dict(app="gen", size=USO_FRAME, count=USO_COUNT,
                                           rate=base.rate or DEFAULT_RATE, duration=None),
                    ("notify=hybrid", "uso=%d" % USO_SEG)))
    if stream and support.why_not("iperf", base.backend, "host") is None:
        out.append((conform_plan.STREAM, dict(app="iperf", size=None, count=None, rate=None,
                                              duration=STREAM_S),
                    ("role=client", "notify=hybrid")))
    return out


def feature_words(row):
    """Config words for one combination: features=-a,-b and indirect=;
    the control commands of the control features on (virtio 1.2
    s5.1.6.5.1-3: receive mode, MAC address and table, a VLAN added),
    each reply checked by the guest. Without mac the driver's address is
    its own invention (s5.1.5), which the host end does not send to (and
    mac_set=1 makes it the filter's): promiscuous mode stays on there."""
    off = [f for f in SWITCHABLE if f in row and not row[f]]
    words = ["features=" + ",".join("-" + f for f in off)] if off else []
    for feat, word in WORD_FEATURES.items():
        if feat in row:
            words.append("%s=%s" % (word, "on" if row[feat] else "off"))
    if row.get("ctrl_rx"):
        # Promiscuous mode off only where the driver's address is the
        # device's (mac), the one the host end sends to.
        words += ["promisc=%d" % (0 if row.get("mac", True) else 1), "allmulti=0"]
        if row.get("ctrl_mac_addr"):
            words.append("mac_set=1")
    if row.get("ctrl_vlan"):
        words.append("vlan=%d" % VLAN_ID)
    return words


def command(cli, opts, words):
    """The `vnperf run` line that repeats one boot."""
    argv = ["tools/vnperf", "run", "--backend", opts.backend, "--qemu", cli["qemu"],
            "--machine", opts.machine, "--accel", opts.accel, "--app", opts.app]
    if opts.backend == "vhost-user":
        argv += ["--testpmd", cli["testpmd"]]
    if opts.image != options.default("image"):
        argv += ["--image", opts.image]
    if opts.placement != options.default("placement"):
        argv += ["--placement", opts.placement]
    for a in opts.qemu_args:
        argv.append("--qemu-arg=" + a)
    for k in ("size", "count", "rate", "duration", "sets"):
        v = getattr(opts, k)
        if v is not None:
            argv += ["--" + k, str(v)]
    argv += ["--"] + list(words)
    return " ".join(shlex.quote(a) for a in argv)


def boot(cli, base, traffic, words):
    """One boot; a host-side failure that is no finding raises."""
    name, change, extra = traffic
    ws = tuple(base.config) + tuple(words) + tuple(extra)
    opts = dataclasses.replace(base, **change, config=ws)
    cmd = command(cli, opts, ws)
    eng = engine.make(opts)
    try:
        support.check(opts)   # the traffic's app over this backend (run_one asks not)
        with Session() as s:
            res = runner.run_one(s, opts, eng.resolver(opts), eng=eng)
    except RunnerError as e:
        return Boot(name, cmd, e.status, e.line, result.RunResult.failed(e.status, e.line))
    return Boot(name, cmd, res.status, res.why or "", res)


def probe(cli, base, stream):
    """Every offer on: the offered and negotiated features (the stream's
    boot, where there is one, negotiates the offloads too) and the config
    fields the guest read (CONFIG_FIELDS)."""
    offered, negotiated, config = set(), set(), {}
    for t in traffics(base, stream)[1:]:
        b = boot(cli, base, t, ())
        vnet = conform_checks.vnet_of(b.report)
        if vnet is None:
            raise RunnerError(b.status if b.status >= 64 else exitcodes.RUNNER_BACKEND_FAILED,
                              "conform: the probe boot (every offer on) gave no result: %s; "
                              "repeat it with: %s" % (b.why, b.command))
        offered |= set(vnet["features_offered"])
        negotiated |= set(vnet["features"])
        config = {k: vnet.get(k) for k in CONFIG_FIELDS}
    return offered, negotiated, config


def factors(offered, negotiated, only=None):
    """The features a combination switches: those negotiated with every
    offer on that features= can switch off, those negotiated only when
    asked (ASKED) and indirect_desc where offered;
    only: the user's subset (a name not among them: one line, 64)."""
    feats = [f for f in SWITCHABLE if f in negotiated
             or f in ASKED and f in offered]
    feats += [f for f in WORD_FEATURES if f in offered]
    if only is None:
        return feats
    missing = [f for f in only if f not in feats]
    if missing:
        raise usage("conform --features: %s not offered and switchable here (these are: %s)"
                    % (",".join(missing), ",".join(feats) or "none"))
    return [f for f in feats if f in only]


def _run_group(cli, base, stream, plan_rows, log):
    """run_reneg for conform_plan.execute: the group's boot and its set
    views (each way its sets ran: both where the host peer reflects)."""
    back = base.backend in wire.RENEG_BACK

    def run_reneg(g):
        row = plan_rows[g.combos[0]][1]
        words = conform_plan.line_words(feature_words(row))
        t = next(t for t in traffics(base, stream, row) if t[0] == g.kinds[0])
        log("conform: one boot %s: %s, %d sets: %s" % (g.id, g.traffic, len(g.sets),
                                                       "/".join(g.sets)))
        b = boot(cli, base, conform_reneg.reneg_traffic(
            t, g, base.count or DEFAULT_COUNT, STREAM_S, USO_SEG), words)
        return conform_reneg.split(b, g, lambda rep: Boot(g.traffic, b.command, 0, "", rep), back)
    return run_reneg


def _alone(cli, base, stream, row, words, kind=conform_plan.BOTH):
    """A combination's small and mtu frames both ways (kind BOTH_STREAM:
    and its TCP stream; "+uso": its USO datagrams) in a fresh boot of its
    own: app reneg with its one set, the host peer reflecting; the set's
    view, or where it did not complete the boot's."""
    g = conform_plan.Group("fresh", kind, (0,), (conform_plan.set_text(words),))
    t = next(t for t in traffics(base, stream, row) if t[0] == g.kinds[0])
    b = boot(cli, base, conform_reneg.reneg_traffic(t, g, base.count or DEFAULT_COUNT,
                                                    STREAM_S, USO_SEG), words)
    done, _ = conform_reneg.split(b, g, lambda rep: dataclasses.replace(b, report=rep), True)
    return done[0] if done else dataclasses.replace(b, report=conform_reneg.boot_view(b.report))


def _run_fresh(cli, base, stream, plan_rows, log):
    def run_fresh(i, kind):
        name, row = plan_rows[i]
        words = feature_words(row)
        log("conform: fresh boot: %s %s %s" % (name, kind, " ".join(words) or "(all on)"))
        if conform_plan.reneg_kind(kind):
            return _alone(cli, base, stream, row, words, kind)
        t = next(t for t in traffics(base, stream, row) if t[0] == kind)
        return boot(cli, base, t, words)
    return run_fresh


def run(cli, base, stream, log, only=None):
    t0 = time.monotonic()
    offered, negotiated, config = probe(cli, base, stream)
    feats = factors(offered, negotiated, only)
    plan = conform_pairs.plan(feats)
    kinds = [[t[0] for t in traffics(base, stream, row)] for _, row in plan]
    groups = conform_plan.plan([(n, feature_words(row)) for n, row in plan], kinds,
                               support.why_not("reneg", base.backend, "host"),
                               base.backend in wire.RENEG_BACK, wire.reneg_stream_end(base),
                               wire.reneg_uso_end(base))
    boots, failures = conform_plan.execute(groups, _run_fresh(cli, base, stream, plan, log),
                                           _run_group(cli, base, stream, plan, log))
    combos = []
    for i, (name, row) in enumerate(plan):
        mine = [v for (j, _), v in boots.items() if j == i]
        combos.append({"name": name, "row": row, "words": feature_words(row),
                       "boots": [dict(b.as_json(), **mark) for b, mark in mine],
                       "checks": conform_checks.judge(row, offered, [b for b, _ in mine])})
    return {"backend": base.backend, "qemu": cli["qemu"], "testpmd": cli["testpmd"],
            "machine": base.machine, "qemu_args": list(base.qemu_args),
            "features_offered": sorted(offered), "features_negotiated": sorted(negotiated),
            "config": config,
            "factors": feats, "impossible_pairs": conform_pairs.impossible(feats),
            "renegotiation": "one boot (app reneg) per group of combinations that differ "
                             "only in features, each set counted both ways where the host "
                             "peer reflects, its TCP stream too where the host serves it, "
                             "its USO segments where the host counts them; fresh boots for "
                             "the rest",
            "boots": [dataclasses.asdict(g) for g in groups], "reneg_failures": failures,
            "combinations": combos, "wall_s": round(time.monotonic() - t0, 1),
            "errors": errors(combos)}


def errors(combos):
    """Cells vnperf could not run: (combination, check, status, why)."""
    return [{"combination": c["name"], "check": k, "status": v["status"], "why": v["detail"]}
            for c in combos for k, v in c["checks"].items() if v["verdict"] == "error"]


def exit_status(result):
    """0 when every cell has a verdict (violations included); else the
    status of the first cell vnperf could not run."""
    errs = result["errors"]
    return errs[0]["status"] if errs else 0


def build_base(ns):
    fields = options.run_fields(ns)
    if fields.get("machine") is None:
        fields["machine"] = "microvm"
    if fields.get("backend") in (None, "none"):
        raise usage("conform needs --backend")
    if fields.get("app") is not None:
        raise usage("conform picks its own apps (reflect or gen, iperf): no --app")
    fields["app"] = "gen"
    known = SWITCHABLE + tuple(WORD_FEATURES)
    unknown = [f for f in (ns.features or "").split(",") if f and f not in known]
    if unknown:
        raise usage("conform --features: %s: one of %s" % (",".join(unknown), ", ".join(known)))
    base = options.build(**fields)
    return dataclasses.replace(base, qemu_args=base.qemu_args + offer_args(
        base.qemu, base.machine, base.qemu_args))


def main(ns):
    cli = {"qemu": ns.qemu, "testpmd": ns.testpmd}
    base = build_base(ns)
    only = [f for f in ns.features.split(",") if f] if ns.features is not None else None
    res = run(cli, base, not ns.no_stream, lambda line: runner.log(base, line)
              if not base.quiet else None, only)
    text = json.dumps(res, indent=1, sort_keys=True)
    if ns.out:
        with open(ns.out, "w") as f:
            f.write(text + "\n")
    if ns.json:
        out = text
    else:
        out = conform_checks.table(res, markdown=ns.markdown)
    print(out)
    for e in res["errors"]:
        runner.log(base, "conform: %s/%s: %s (status %d)" % (e["combination"], e["check"],
                                                             e["why"], e["status"]))
    return exit_status(res)

