"""vnperf hostile: app=hostile's catalogue against one backend, each case
in a fresh boot (`vnperf run --app hostile -- case=NAME`, its own session,
namespace and teardown) under a timeout; per case what the guest saw, what
the host did and a verdict (hostile_verdict.py); a table, or JSON
{"cases": [...]}. docs/hostile.md."""

import json
import os
import shlex
import signal
import subprocess
import sys
import time

from .. import backends, exitcodes, options, result
from ..errors import RunnerError, usage
from ..run import nextroot, qemucmd
from . import hostile_cases, hostile_verdict

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
VNPERF = os.path.join(ROOT, "tools", "vnperf")
# Backends whose datapath runs in the host kernel: a case can take the host
# down, so they run only with --allow-host-kernel.
HOST_KERNEL = ("vhost-net",)
# Seconds past the run's own --timeout before the case's run is killed.
GRACE_S = 60
KILL_WAIT_S = 10
# A case that needs a feature runs on a device that offers it where this
# QEMU can: the virtio-net property that switches it on (QEMU keeps mq,
# rss, notification_data and the packed ring off by default), and on
# microvm a modern virtio-mmio for the features above bit 31 (the legacy
# one offers 32 bits, and no VERSION_1: no packed ring). Where QEMU has no
# such property (7.2: no notification_data) the guest says not offered.
FEATURE_PROPS = {"ctrl_vq": "ctrl_vq", "ctrl_rx": "ctrl_rx", "mq": "mq", "rss": "rss",
                 "notification_data": "notification_data", "ring_reset": "queue_reset",
                 "ring_packed": "packed"}
HIGH_FEATURES = ("rss", "notification_data", "ring_reset", "ring_packed")


def add_arguments(p):
    p.add_argument("--backend", default=None, help="the backend under test (vnperf run's)")
    p.add_argument("--case", default="all", help="a case, a comma list, or all (default)")
    p.add_argument("--qemu", default=None, help="QEMU binary, or next (vnperf run's --qemu)")
    p.add_argument("--machine", default=None, help="vnperf run's --machine")
    p.add_argument("--accel", default=None, help="vnperf run's --accel")
    p.add_argument("--testpmd", default=None, help="vnperf run's --testpmd (vhost-user)")
    p.add_argument("--timeout", type=int, default=60, help="seconds per case (default 60)")
    p.add_argument("--allow-host-kernel", action="store_true",
                   help="run against vhost-net, whose worker runs in the host kernel: a case "
                        "can take the whole host down")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--json", action="store_true", help="print the results as JSON")


def check(opts):
    """The refusals, before anything starts: the names of the cases."""
    if opts.backend is None:
        raise usage("--backend: which backend to run the cases against")
    backends.known(opts.backend)
    if opts.backend in HOST_KERNEL and not opts.allow_host_kernel:
        raise usage("--backend %s: its worker runs in the host kernel, so a case can take the "
                    "whole host down; pass --allow-host-kernel to run it anyway"
                    % opts.backend)
    if opts.timeout < 10:
        raise usage("--timeout %d: at least 10 seconds per case" % opts.timeout)
    try:
        return hostile_cases.select(opts.case)
    except ValueError as e:
        raise usage(str(e))


def offer_args(needs, machine, props):
    """QEMU words that make the device offer the features needs names:
    machine is vnperf run's, props the properties its virtio-net has."""
    if not needs:
        return []
    driver = qemucmd.nic_device(machine)
    args = []
    if machine == "microvm" and any(n in HIGH_FEATURES for n in needs):
        args += ["-global", "virtio-mmio.force-legacy=false"]
    for n in needs:
        if FEATURE_PROPS[n] in props:
            args += ["-global", "%s.%s=on" % (driver, FEATURE_PROPS[n])]
    return args


def case_offer(opts, name):
    """offer_args for one case against the QEMU the run uses."""
    needs = hostile_cases.NEEDS.get(name, ())
    if not needs:
        return []
    machine = opts.machine or qemucmd.default_machine(options.default("boot"))
    qemu = nextroot.qemu(opts.qemu or "system")
    return offer_args(needs, machine, qemucmd.device_props(qemu, qemucmd.nic_device(machine)))


def run_argv(opts, name):
    """vnperf run's arguments for one case."""
    argv = ["run", "--backend", opts.backend, "--app", "hostile", "--timeout", str(opts.timeout)]
    for flag, value in (("--qemu", opts.qemu), ("--machine", opts.machine),
                        ("--accel", opts.accel), ("--testpmd", opts.testpmd)):
        if value is not None:
            argv += [flag, value]
    argv += ["--qemu-arg=" + a for a in case_offer(opts, name)]
    return argv + ["--", "case=" + name] + list(hostile_cases.GUEST_WORDS.get(name, ()))


def repro(argv):
    """The one command that reproduces a case."""
    return shlex.join(["tools/vnperf"] + argv)


def _stop(p):
    """Ends a case's run and everything it started (its own session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(KILL_WAIT_S)
            return
        except subprocess.TimeoutExpired:
            continue


def run_case(opts, name):
    """(report or None, exit status, killed, stderr) of one case's run."""
    argv = [sys.executable, VNPERF, "run", "--json"] + run_argv(opts, name)[1:]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True, text=True)
    killed = False
    try:
        out, err = p.communicate(timeout=opts.timeout + GRACE_S)
    except subprocess.TimeoutExpired:
        killed = True
        _stop(p)
        out, err = p.communicate()
    return report_of(out), p.returncode, killed, err


def report_of(out):
    """The result.RunResult `vnperf run --json` printed, None for none or
    what is no report (a run that died before it)."""
    try:
        return result.run_from_json(json.loads(out), "vnperf run --json") if out.strip() \
            else None
    except (ValueError, RunnerError):
        return None


def case_result(opts, name, rep, status, killed, wall_s):
    o = hostile_verdict.outcome(rep, status, killed)
    v, why = hostile_verdict.verdict(o, hostile_cases.USES_BUFFER[name])
    g = o.guest or {}
    return {"name": name, "spec": g.get("spec", hostile_cases.SPEC[name]),
            "allows": g.get("allows"), "verdict": v, "why": why,
            "guest": {k: g.get(k) for k in ("status", "needs_reset", "failed", "features_ok",
                                            "used", "bufs", "features", "restart", "sent",
                                            "completed", "build", "needs", "offered", "ack",
                                            "skip", "queue")},
            "host": o.host(),
            "wall_s": round(wall_s, 2), "command": repro(run_argv(opts, name))}


def _refused(status, err):
    """A run refused before it started (options, this host): the line why."""
    if status in (exitcodes.RUNNER_USAGE, exitcodes.RUNNER_BACKEND_MISSING):
        lines = [ln for ln in (err or "").splitlines() if ln.startswith("vnperf: ")]
        return RunnerError(status, lines[-1][len("vnperf: "):] if lines else "run refused")
    return None


def table(res):
    rows = ["%-21s %-13s %-6s %-4s %-6s %5s  %s" % ("case", "verdict", "status", "used", "check",
                                                  "qemu%", "host")]
    for c in res["cases"]:
        g, h = c["guest"], c["host"]
        st = "-" if g["status"] is None else "0x%02x" % g["status"]
        chk = "-" if g["sent"] is None else "%d/%d" % (g["completed"], g["sent"])
        note = "; ".join(h["qemu_errors"][-1:] + [c["why"]])
        rows.append("%-21s %-13s %-6s %-4s %-6s %5.0f  %s" % (
            c["name"], c["verdict"], st, "-" if g["used"] is None else g["used"], chk,
            h["qemu_pct"], note))
        if c["verdict"] == "crashed":
            rows.append("    reproduce: %s" % c["command"])
    rows.append("%d cases in %.0f s over %s" % (len(res["cases"]), res["wall_s"], res["backend"]))
    return "\n".join(rows)


def main(opts):
    if opts.list:
        print("\n".join("%-21s %s" % c[:2] for c in hostile_cases.CASES))
        return 0
    names = check(opts)
    t0 = time.monotonic()
    res = {"backend": opts.backend, "qemu": opts.qemu or "system", "cases": []}
    for name in names:
        t = time.monotonic()
        rep, status, killed, err = run_case(opts, name)
        refused = _refused(status, err) if rep is None else None
        if refused:
            raise refused
        c = case_result(opts, name, rep, status, killed, time.monotonic() - t)
        res["cases"].append(c)
        print("vnperf: hostile: %s: %s (%s)" % (name, c["verdict"], c["why"]), file=sys.stderr,
              flush=True)
    res["wall_s"] = round(time.monotonic() - t0, 1)
    print(json.dumps(res, indent=1, sort_keys=True) if opts.json else table(res))
    return 0
