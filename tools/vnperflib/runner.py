"""One measured run: backend up, guest(s) booted and streamed, host-side
counts and CPU collected, everything torn down, one report dict."""

import os
import re
import sys
import time

from . import backends, counts, exitcodes, guest, hostcpu, qemucmd, scratch, verdict
from .errors import RunnerError
from .qmp import Qmp, QmpError
from .tables import fmt_num

# Seconds after a receiver's ready line when senders start anyway if QMP
# cannot say whether its NIC is up.
NET_GRACE_S = 5.0


def nic_up(g):
    """True once guest g's first NIC has DRIVER_OK; None without QMP."""
    q = getattr(g, "qmp", None)
    if q is None or not g.spec.nics:
        return None if q is None else True
    try:
        path = getattr(g, "nic_path", None)
        if path is None:
            # virtio-mmio: the device itself; PCI: the proxy's virtio-backend child.
            paths = [d["path"] for d in q.command("x-query-virtio")
                     if d["path"].startswith("/machine/peripheral/nic0")]
            if not paths:
                return False
            path = g.nic_path = paths[0]
        return q.driver_ok(path)
    except (QmpError, OSError, ValueError, KeyError):
        g.qmp = None
        return None


def log(opts, line):
    """Runner lines go to stderr so --json stdout stays parseable."""
    print("vnperf: " + line, file=sys.stderr, flush=True)


def app_config(opts):
    words = ["app=%s" % opts.app]
    if getattr(opts, "duration", None) is not None:
        words.append("duration=%d" % opts.duration)
    if getattr(opts, "size", None) is not None:
        words.append("size=%d" % opts.size)
    if getattr(opts, "rate", None) is not None:
        words.append("rate=%s" % opts.rate)
    if getattr(opts, "count", None) is not None:
        words.append("count=%d" % opts.count)
    return words


# Two-guest topology: the app of the receiving guest for each sender app.
PARTNER = {"gen": ["app=sink"], "rr": ["app=rr", "role=server"]}


def guest_roles(opts):
    """[(label, config words)]: one guest, or for --topology guests the
    receiver first and the sender last (the sender's result is the run's)."""
    words = app_config(opts)
    if getattr(opts, "topology", "host") != "guests":
        return [("guest", words)]
    if opts.app not in PARTNER:
        raise RunnerError(exitcodes.RUNNER_USAGE, "--topology guests: app %s has no partner "
                          "app (one of %s)" % (opts.app, ", ".join(PARTNER)))
    rx = PARTNER[opts.app] + ["duration=%d" % ((opts.duration or 5) + 3)]
    if getattr(opts, "count", None):
        rx.append("count=%d" % opts.count)
    return [("rx", rx), ("tx", words)]


# Terminal control sequences firmware writes to the serial console (OVMF
# clears the screen and sets modes): echoed as is they garble the runner's
# output, so human lines are shown without them (--raw keeps them).
_TERM_ESCAPES = re.compile(r"\x1b(\[[0-9;=?]*[A-Za-z]|c)")


class Echo:
    """Console echo and live progress lines."""

    def __init__(self, opts, multi, live=None):
        self.live = live
        self.quiet = opts.quiet
        self.raw = getattr(opts, "raw", False)
        self.multi = multi
        self.out = sys.stderr if opts.json or getattr(opts, "csv", False) else sys.stdout

    def __call__(self, g, line):
        if self.quiet:
            return
        try:
            self._show(g, line)
        except BrokenPipeError:
            # The reader went away (| head): the run goes on, silently.
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())
            self.quiet = True

    def _show(self, g, line):
        tag = "[%s] " % g.label if self.multi else ""
        if self.raw:
            print(tag + line.text, file=self.out, flush=True)
            return
        if line.msg is None:
            print(tag + _TERM_ESCAPES.sub("", line.text), file=self.out, flush=True)
            return
        m = line.msg
        if m["type"] == "sample":
            extra = ""
            for k, what in (("lost", "lost"), ("tx_dropped", "dropped"), ("timeouts", "timeouts")):
                if _num(m.get(k)) is not None:
                    extra += "  %s %d" % (what, m[k])
            if self.live is not None:
                for k, v in self.live().items():
                    extra += "  %s %d" % (k, v)
            bps = _num(m.get("bps"))
            t = _num(m.get("t"))
            print("%s[%5.1fs] %s pps  %s Gbit/s%s" % (
                tag, t if t is not None else 0.0, fmt_num(_num(m.get("pps"))),
                "%.3f" % (bps / 1e9) if bps is not None else "-", extra),
                file=self.out, flush=True)
        elif m["type"] == "error":
            print("%sguest error: %s" % (tag, m.get("message", m)), file=self.out, flush=True)


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def guest_report(g):
    c = g.console
    return {
        "label": g.label,
        "argv": g.argv,
        "qemu_status": g.qemu_status,
        "guest_code": g.guest_code,
        "status": g.status(),
        "status_name": exitcodes.status_name(g.status()),
        "timed_out": g.timed_out,
        "started": g.proc is not None,
        "why_no_exit": g.why_no_exit() if g.guest_code is None else None,
        "stderr_tail": g.stderr_text()[-2000:],
        "console_tail": [l.text for l in c.lines[-40:]],
        "wall_s": g.wall_s,
        "ready_s": g.t_ready,
        "boot": c.first("boot"),
        "config": c.last("config"),
        "ready": c.first("ready"),
        "samples": c.all("sample"),
        "result": c.last("result"),
        "error": c.last("error"),
        "exit": c.last("exit"),
        "problems": c.problems(g.guest_code),
    }


def run_one(session, opts, resolver, roles=None):
    """Runs one test. roles: [(label, app config words)] per guest (one
    guest by default). Returns the report dict; raises RunnerError."""
    image = opts.image
    if not os.path.isfile(image):
        raise RunnerError(exitcodes.RUNNER_USAGE,
                          "image %s not found (build it with make)" % image)
    if opts.boot == "uefi":
        for path, what in ((opts.esp, "ESP image %s not found (build it with make)"),
                           (qemucmd.DEFAULT_OVMF,
                            "OVMF firmware %s not found (apt-get install ovmf)")):
            if not os.path.isfile(path):
                raise RunnerError(exitcodes.RUNNER_USAGE, what % path)
    be = backends.make(opts.backend, opts)
    be.check()
    roles = roles or guest_roles(opts)
    if len(roles) > be.max_guests:
        raise RunnerError(exitcodes.RUNNER_USAGE, "%s: guest <-> host only; two guests need "
                          "dgram, socket or vhost-user" % be.name)
    choice = resolver.resolve(session)
    if opts.accel == "auto" and choice.accel == "tcg":
        log(opts, "accel tcg: %s" % choice.why)
    be.start(session, nguests=len(roles))
    scratch.clean_stale()
    tmp = scratch.mkdtemp(session, "run")

    meter = hostcpu.CpuMeter()
    guests = []
    for i, (label, words) in enumerate(roles):
        cfg = qemucmd.merge_config(be.guest_config(i), words, opts.config)
        spec = qemucmd.GuestSpec(image, machine=opts.machine, memory_mb=opts.memory,
                                 accel=choice.accel, config=cfg, nics=be.nics(i),
                                 qmp_path=os.path.join(tmp, "qmp%d.sock" % i),
                                 shared_mem=be.needs_shared_mem, name="vnperf-" + label,
                                 boot=opts.boot, esp=opts.esp,
                                 extra=be.qemu_extra(i) + list(getattr(opts, "qemu_args", ())))
        guests.append(guest.Guest(spec, getattr(opts, "qemu", qemucmd.DEFAULT_QEMU), label))

    echo = Echo(opts, len(guests) > 1, be.live)
    n = len(guests)
    sender = guests[-1]
    receivers = guests[:-1]
    state = {"started": False, "stopped": False, "backend_dead": None,
             "ready_at": [None] * n, "net_ready": [False] * n, "sender_up": n == 1}
    t0 = time.monotonic()
    qmp_info = {}
    pump = None

    def start_guest(g):
        g.start(session, netns=be.netns)
        meter.add_qemu(g.label, g.pid)
        qmp_info.update(_qmp_setup(opts, [g], meter, session))
        if pump is not None:
            pump.add(g)

    adopted = set()

    def adopt_backend_processes():
        """Backend processes (also senders started later) join the CPU
        accounting and get --pin backend=."""
        for role, pid in be.processes():
            if pid in adopted:
                continue
            adopted.add(pid)
            meter.add_process(role, pid)
            if getattr(opts, "pin", None):
                from . import pinning
                try:
                    pinning.apply_process(opts.pin, pid)
                except OSError:
                    pass  # gone already: nothing to pin

    def net_ready(i):
        """Guest i can take frames: host senders and the sender VM go."""
        if state["net_ready"][i]:
            return
        state["net_ready"][i] = True
        be.on_guest_ready(i)
        adopt_backend_processes()
        if not state["sender_up"] and all(state["net_ready"][:n - 1]):
            state["sender_up"] = True
            start_guest(sender)

    def on_line(g, line):
        echo(g, line)
        if line.msg is None:
            return
        i = guests.index(g)
        t = line.msg["type"]
        if t == "ready":
            state["ready_at"][i] = time.monotonic()
            # The measurement window: the main (sending) guest's app run.
            if g is sender and not state["started"]:
                state["started"] = True
                meter.start(time.monotonic())
        elif t == "net" or (t == "mark" and line.msg.get("name") == "net_ready"):
            net_ready(i)
        elif t == "result":
            be.tick()
            if g is sender and not state["stopped"]:
                state["stopped"] = True
                meter.stop(time.monotonic())

    def on_tick(elapsed):
        meter.tick()
        be.tick()
        now = time.monotonic()
        for i, t in enumerate(state["ready_at"]):
            if t is None or state["net_ready"][i]:
                continue
            # The app brings its NIC up after its ready line: senders wait
            # for the driver's DRIVER_OK (QMP), or a grace period without QMP.
            if nic_up(guests[i]) or now - t >= NET_GRACE_S:
                net_ready(i)
        if state["backend_dead"] is None:
            state["backend_dead"] = be.healthy()

    # Receivers boot first; the sender once they can take frames.
    for g in receivers if n > 1 else guests:
        start_guest(g)
    adopt_backend_processes()
    pump = guest.Pump(on_line, on_tick, tick_s=0.1)
    for g in guests:
        if g.proc is not None:
            pump.add(g)
    why = "done"
    try:
        why = pump.run(t0 + opts.timeout, until=lambda: state["backend_dead"] is not None)
    finally:
        pump.finish(stopped=why == "until")
    for g in guests:
        if g.proc is None:
            # Never started: its receivers did not come up in time.
            g.timed_out = True
    if not state["stopped"]:
        meter.stop(time.monotonic())
    dead = state["backend_dead"]
    try:
        be.finish()
    except RunnerError as e:
        dead = dead or e.line
    host = be.collect()
    dead = dead or be.healthy()

    reports = [guest_report(g) for g in guests]
    main = reports[-1] if len(reports) > 1 else reports[0]
    app = (main["ready"] or {}).get("app") or _app_of(roles[-1][1])
    result = main["result"]
    if n == 2:
        drops = {"rx QEMU's UDP socket buffer": host.get("qemu_socket_drops", {}).get(0, 0)}
        ports = (host.get("testpmd") or {}).get("ports", {})
        if 0 in ports and 1 in ports:
            # io forwarding: what testpmd took from the sender (port 1) and
            # could not hand to the receiver (port 0).
            drops["testpmd io forwarding"] = max(
                0, ports[1].get("RX-packets", 0) - ports[0].get("TX-packets", 0))
        merged = counts.merge_guests(app, result, reports[0]["result"], lossless=be.lossless,
                                     drops=drops)
    elif app == "iperf" and opts.backend != "none":
        merged = counts.merge_iperf(result, host)
    elif app == "fwd" and opts.backend != "none":
        merged = counts.merge_fwd(result, host, lossless=be.lossless)
    elif opts.backend != "none":
        merged = counts.merge(app, result, host, lossless=be.lossless)
    else:
        merged = None
    cpu = meter.result()
    rep = {
        "vnperf_report": 1,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": opts.machine,
        "boot": opts.boot,
        "accel": choice.accel,
        "accel_why": choice.why,
        "backend": opts.backend,
        "app": app,
        "config": guests[-1].spec.config,
        "guests": reports,
        "host": host,
        "counts": merged,
        "cpu": cpu,
        "qmp": qmp_info,
        "topology": getattr(opts, "topology", "host"),
        "wall_s": time.monotonic() - t0,
    }
    rep["metrics"] = metrics(rep)
    rep["verdict"] = verdict.bottleneck(rep)
    rep["status"], rep["why"] = overall_status(rep, dead)
    rep["status_name"] = exitcodes.status_name(rep["status"])
    return rep


def _app_of(words):
    for w in words:
        if w.startswith("app="):
            return w[4:]
    return None


def _qmp_setup(opts, guests, meter, session):
    """vCPU thread ids from QMP (for CPU roles and --pin); the connection
    stays open (g.qmp) to watch the NIC come up."""
    info = {}
    for g in guests:
        q = Qmp(g.spec.qmp_path)
        try:
            q.connect(alive=lambda: g.proc.poll() is None)
            tids = q.vcpu_threads()
        except (QmpError, OSError, ValueError) as e:
            info[g.label] = {"error": str(e)}
            q.close()
            continue
        g.qmp = q
        session.on_close(q.close, what="close QMP")
        meter.set_vcpus(g.pid, tids.values())
        info[g.label] = {"vcpu_threads": tids}
        pin = getattr(opts, "pin", None)
        if pin:
            from . import pinning
            info[g.label]["pinned"] = pinning.apply(pin, g.pid, tids)
    return info


def metrics(rep):
    """The numbers compare and sweep work on."""
    main = rep["guests"][-1]
    r = main["result"] or {}
    m = {"pps": _num(r.get("pps")), "bps": _num(r.get("bps")),
         "packets": _num(r.get("packets")), "bytes": _num(r.get("bytes")),
         "duration_s": _num(r.get("duration_ns")) / 1e9 if _num(r.get("duration_ns")) else None}
    for k in ("p50", "p90", "p99", "p999"):
        if _num(r.get(k + "_ns")) is not None:
            m[k + "_ns"] = _num(r.get(k + "_ns"))
        elif _num(r.get(k + "_us")) is not None:
            m[k + "_ns"] = _num(r.get(k + "_us")) * 1e3
    for k in ("tps", "transactions", "timeouts"):
        if _num(r.get(k)) is not None:
            m[k] = _num(r.get(k))
    cpu = rep.get("cpu")
    if cpu:
        m["cpu_pct"] = cpu["total_pct"]
        sd = hostcpu.service_demand(cpu["total_cpu_s"], m["packets"], m["bytes"])
        m["sd_us_per_packet"] = sd["us_per_packet"]
        m["sd_us_per_kb"] = sd["us_per_kb"]
    return m


def overall_status(rep, backend_dead):
    """(status, one line). A guest that did not exit cleanly decides it;
    then a dead backend; then protocol problems; then the guests' codes; a
    sender that never started only when nothing else explains it."""
    started = [g for g in rep["guests"] if g.get("started", True)]
    for g in started:
        if g["status"] in (exitcodes.RUNNER_TIMEOUT, exitcodes.RUNNER_NO_GUEST_EXIT):
            if backend_dead:
                return exitcodes.RUNNER_BACKEND_FAILED, backend_dead
            return g["status"], g.get("why_no_exit") or g["status_name"]
    if backend_dead:
        return exitcodes.RUNNER_BACKEND_FAILED, backend_dead
    for g in started:
        if g["problems"]:
            return exitcodes.RUNNER_PROTOCOL, "%s: %s" % (g["label"], g["problems"][0])
    for g in started:
        if g["guest_code"] != 0:
            err = g["error"] or {}
            return g["guest_code"], "%s: exit %d (%s)%s" % (
                g["label"], g["guest_code"], exitcodes.status_name(g["guest_code"]),
                ": " + err["message"] if err.get("message") else "")
    for g in rep["guests"]:
        if not g.get("started", True):
            return exitcodes.RUNNER_TIMEOUT, g["why_no_exit"]
    return 0, "ok"
