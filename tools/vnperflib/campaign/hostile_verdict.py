"""What one hostile case did to the host, from the `vnperf run` that ran
it, and its verdict. Pure: the report is a result.RunResult, the rest
numbers; the unit tests feed synthetic outcomes (tests/py/test_hostile.py)."""

import dataclasses
import json
import signal
from typing import Mapping, Optional

from .. import exitcodes, result
from .hostile_cases import NEVER

# not-offered: the device did not offer a feature the case needs, so the
# guest did nothing (a control queue case without CTRL_VQ, a queue reset
# without RING_RESET): no finding either way.
VERDICTS = ("handled", "needs-reset", "stalled", "crashed", "host-cpu-spin", "corrupted",
            "not-offered")
# A QEMU thread outside the vCPUs, or a backend that does not poll, busy
# this share of one CPU over the case: spinning.
SPIN_PCT = 90.0
QEMU_ROLES = ("main", "iothread", "qemu-other", "vhost")
# Backends that busy-poll by design: their CPU is reported, not judged.
POLLING = ("testpmd",)
NEEDS_RESET_BIT = 0x40
PREFIX = "@vnperf "


def hostile_line(lines):
    """The guest's hostile line among console lines, or None."""
    for text in lines:
        if not text.startswith(PREFIX) or '"hostile"' not in text:
            continue
        try:
            obj = json.loads(text[len(PREFIX):])
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "hostile":
            return obj
    return None


def qemu_errors(text):
    """QEMU's own lines (qemu-system-...: what) in its stderr."""
    return [ln.strip() for ln in (text or "").splitlines() if ln.startswith("qemu-system")]


def _host_frames(rep):
    c = rep.counts
    peer = ((c.host if c is not None else None) or {}).get("peer")
    return peer.get("packets") if isinstance(peer, dict) else None


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one case did to the host: the run's status and whether the
    hostile runner's timeout ended it, QEMU's end (its status, the signal
    that killed it, whether the runner sent that), QEMU's own lines, the
    guest's hostile line, the CPU of QEMU's threads, the vCPUs and each
    backend role (% of a CPU), the frames the host end got, the run's why.
    Its HOST members are the case's "host" in hostile's JSON."""
    run_status: Optional[int] = None
    killed: bool = False
    qemu_status: Optional[int] = None
    signal: Optional[str] = None
    # A signal the runner sent (timeout, or the backend died first) is not
    # QEMU's crash.
    killed_by_runner: bool = False
    qemu_errors: tuple = ()
    guest: Optional[Mapping] = None
    qemu_pct: float = 0.0
    vcpu_pct: Optional[float] = None
    backend_pct: Mapping = dataclasses.field(default_factory=dict)
    host_frames: Optional[int] = None
    why: Optional[str] = None

    HOST = ("run_status", "qemu_status", "signal", "killed_by_runner", "qemu_errors",
            "qemu_pct", "vcpu_pct", "backend_pct", "host_frames")

    def host(self):
        """{member: value} of HOST, as hostile's JSON writes it."""
        return {k: _json(getattr(self, k)) for k in self.HOST}


def _json(v):
    """A member as JSON: lists and objects, not tuples and proxies."""
    return list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, Mapping) else v


def outcome(rep, status, killed):
    """One case's Outcome: rep is vnperf run's report (a result.RunResult,
    None when it printed none), status its exit status, killed whether the
    hostile runner's own timeout ended it."""
    rep = rep or result.RunResult()
    g = rep.sender or result.GuestReport()
    roles = (rep.cpu.roles if rep.cpu is not None else None) or {}
    qs = g.qemu_status
    return Outcome(
        run_status=status, killed=killed, qemu_status=qs,
        signal=signal.Signals(-qs).name if isinstance(qs, int) and qs < 0 else None,
        killed_by_runner=bool(g.timed_out or g.stopped),
        qemu_errors=tuple(qemu_errors(g.stderr_tail)),
        guest=hostile_line(g.console_tail or []),
        qemu_pct=max([roles[r].pct or 0.0 for r in QEMU_ROLES if r in roles] or [0.0]),
        vcpu_pct=roles["vcpu"].pct if "vcpu" in roles else None,
        backend_pct={r: v.pct for r, v in roles.items() if r not in QEMU_ROLES and r != "vcpu"},
        host_frames=_host_frames(rep), why=rep.why)


def _host_end(o):
    """crashed, with why, when QEMU or the backend died; else None."""
    if o.signal and not o.killed_by_runner:
        return "QEMU killed by %s" % o.signal
    if o.run_status == exitcodes.RUNNER_NO_GUEST_EXIT:
        return "QEMU ended without a guest exit (status %s)" % o.qemu_status
    if o.run_status == exitcodes.RUNNER_BACKEND_FAILED:
        return "the backend failed: %s" % (o.why or "?")
    return None


def _spin(o):
    if o.qemu_pct >= SPIN_PCT:
        return "a QEMU thread outside the vCPUs at %.0f%% of a CPU" % o.qemu_pct
    for role, pct in sorted(o.backend_pct.items()):
        if role not in POLLING and (pct or 0.0) >= SPIN_PCT:
            return "the backend (%s) at %.0f%% of a CPU" % (role, pct)
    return None


def _traffic(g, host):
    """stalled or corrupted, with why, when the check after the reset
    failed; else None."""
    if g.get("restart"):
        return "stalled", "the device did not come back after a reset (%d)" % g["restart"]
    sent, done = g.get("sent", 0), g.get("completed", 0)
    if not sent or not done:
        return "stalled", "after the reset %d of %d check frames came back" % (done, sent)
    if done != sent:
        return "corrupted", "after the reset %d of %d check frames came back" % (done, sent)
    bufs = g.get("bufs", 0)
    if host is not None and not sent <= host <= sent + bufs:
        return "corrupted", ("the host got %d frames: %d check frames and at most %d of the "
                             "case's" % (host, sent, bufs))
    return None


def verdict(o, uses_buffer):
    """(verdict, why) for Outcome o; uses_buffer: True when the case leaves
    a buffer the device is meant to use (or refuse with DEVICE_NEEDS_RESET),
    "rx" when the device meets it only with a frame for the guest, "never"
    when it must not use what the case wrote."""
    dead = _host_end(o)
    if dead:
        return "crashed", dead
    if o.killed or o.run_status == exitcodes.RUNNER_TIMEOUT:
        return "stalled", "the case did not end within its timeout"
    g = o.guest
    if g is None:
        return "stalled", "the guest ended before the case's line (status %s)" % o.run_status
    if g.get("offered") is False:
        if g.get("skip"):
            return "not-offered", "not applicable: %s; the case did nothing" % g["skip"]
        return "not-offered", "the device did not offer %s: the case did nothing" % (
            g.get("needs") or "what it needs")
    spin = _spin(o)
    if spin:
        return "host-cpu-spin", spin
    bad = _traffic(g, o.host_frames)
    if bad:
        return bad
    v, why = _guest_verdict(g, uses_buffer)
    return v, _seen(g) + why


def _seen(g):
    """What the case's own steps met, before the verdict's why: the ack of a
    control command (s5.1.6.5), a step the transport refused (-errno)."""
    words = []
    if "ack" in g:
        words.append("ack %s" % (g["ack"].upper() if g["ack"] in ("ok", "err") else g["ack"]))
    if g.get("build"):
        words.append("the case's step refused (%d)" % g["build"])
    return "".join(w + "; " for w in words)


def _guest_verdict(g, uses_buffer):
    if g.get("status", 0) & NEEDS_RESET_BIT:
        return "needs-reset", "DEVICE_NEEDS_RESET set; traffic exact after the reset"
    if uses_buffer == NEVER and g.get("used"):
        return "corrupted", ("the device used %d descriptors the driver did not make available"
                             % g["used"])
    if uses_buffer == "rx" and not g.get("used"):
        return "handled", ("not reached: no frame came to the receiveq during the watch; "
                           "traffic exact after the reset")
    if uses_buffer is True and g.get("bufs") and not g.get("used"):
        return "stalled", ("the queue stopped without DEVICE_NEEDS_RESET (nothing used in the "
                           "watch): only a reset brought it back")
    return "handled", "traffic exact after the reset"
