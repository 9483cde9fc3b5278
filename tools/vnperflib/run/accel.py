"""Accelerator choice. /dev/kvm can be present yet useless: on PVM hosts it
emulates every instruction, so a guest crawls or dies with "KVM internal
error". auto therefore boots the real image under KVM with app=selftest and
uses KVM only if that guest reaches its exit line in time."""

import os

from . import guest, qemucmd

PROBE_TIMEOUT_S = 3.0
PROBE_MEMORY_MB = 64


class Choice:
    def __init__(self, accel, why):
        self.accel = accel
        self.why = why


def probe_spec(image, machine):
    """The probe guest: the real image running app=selftest under KVM."""
    return qemucmd.GuestSpec(image, machine=machine, memory_mb=PROBE_MEMORY_MB, accel="kvm",
                             config=["app=selftest"], name="vnperf-kvm-probe")


def probe_kvm(session, image, machine, qemu=qemucmd.DEFAULT_QEMU, timeout=PROBE_TIMEOUT_S):
    """Returns (ok, why)."""
    if not os.path.exists("/dev/kvm"):
        return False, "no /dev/kvm"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is not read/writable for this user"
    return run_probe(session, guest.Guest(probe_spec(image, machine), qemu, label="kvm-probe"),
                     timeout)


def run_probe(session, g, timeout=PROBE_TIMEOUT_S):
    """Boots the probe guest g (any engine's) and judges it: (ok, why)."""
    g.start(session)
    try:
        guest.pump([g], timeout)
    finally:
        g.stop(session)
    err = g.stderr_text()
    if "KVM internal error" in err:
        return False, "KVM probe guest died with \"KVM internal error\""
    if g.timed_out:
        return False, ("KVM probe guest (app=selftest) did not finish within %.0f s "
                       "(an emulating /dev/kvm such as PVM)" % timeout)
    if g.guest_code is None:
        last = err.strip().splitlines()[-1:] or ["no error output"]
        return False, "KVM probe QEMU failed (status %s): %s" % (g.qemu_status, last[0])
    if g.guest_code != 0 or g.console.last("exit") is None:
        return False, "KVM probe guest exited with code %d" % g.guest_code
    return True, "KVM probe guest ran selftest in %.2f s" % g.wall_s


class Resolver:
    """Resolves --accel once per runner invocation: the runs of a sweep or
    a search share it, so the probe boots once and its fallback is said
    once, not before every run."""

    def __init__(self, requested, image, machine, qemu=qemucmd.DEFAULT_QEMU, probe=None):
        self.requested = requested
        self.image = image
        self.machine = machine
        self.qemu = qemu
        # probe(session, image, machine) -> (ok, why): the engine's KVM probe.
        self.probe = probe or (lambda s, i, m: probe_kvm(s, i, m, self.qemu))
        self.choice = None

    def resolve(self, session, say):
        """The choice; say(line) is called once, when the probe found KVM
        unusable, with why the runs use TCG."""
        if self.choice is None:
            if self.requested in ("kvm", "tcg"):
                self.choice = Choice(self.requested, "--accel %s" % self.requested)
            else:
                ok, why = self.probe(session, self.image, self.machine)
                self.choice = Choice("kvm" if ok else "tcg", why)
                if not ok:
                    say("accel tcg: %s" % why)
        return self.choice
