"""Engines: who starts a guest. `qemu` (the default): the runner spawns
QEMU itself; `libvirt[=URI]`: libvirtd starts each guest as a transient
domain (engine_libvirt.py). This is the one place that names them; the
runner asks its engine for guests, the accelerator and its refusals."""

import shutil

from ..errors import usage
from . import accel, guest, qemucmd

NAMES = ("qemu", "libvirt")


class QemuEngine:
    """QEMU as the runner's own child process (guest.Guest)."""

    name = "qemu"
    uri = None
    local_files = True

    def __init__(self, qemu=qemucmd.DEFAULT_QEMU):
        self.qemu = qemu

    def describe(self):
        return "qemu"

    def check(self, opts):
        """The QEMU binary the options name (--qemu) is a program on this
        host: a missing one is a bad option (64), as a missing image is."""
        if shutil.which(self.qemu) is None:
            raise usage("--qemu %s: no such program or not executable (Debian "
                        "qemu-system-x86)" % self.qemu)

    @staticmethod
    def default_machine(boot):
        return qemucmd.default_machine(boot)

    def guest(self, spec, label):
        return guest.Guest(spec, self.qemu, label)

    def resolver(self, opts):
        return accel.Resolver(opts.accel, opts.image, opts.machine, self.qemu)


def parse(text):
    """"libvirt=qemu+ssh://h/system" -> ("libvirt", "qemu+ssh://h/system")."""
    name, eq, uri = (text or "qemu").partition("=")
    if name not in NAMES:
        raise usage("--engine %s: one of qemu, libvirt[=URI]" % name)
    if name == "qemu" and eq:
        raise usage("--engine qemu takes no URI")
    if eq and not uri:
        raise usage("--engine libvirt=: the URI is empty (e.g. libvirt=qemu:///system)")
    return name, uri or None


def default_machine(text, boot):
    """The machine when --machine is not given, by --engine and --boot."""
    if parse(text)[0] == "qemu":
        return QemuEngine.default_machine(boot)
    from .engine_libvirt import LibvirtEngine
    return LibvirtEngine.default_machine(boot)


def make(opts):
    """The engine the runner options name (--engine, --console, --qemu,
    --pin)."""
    name, uri = parse(opts.engine)
    qemu = opts.qemu
    if name == "qemu":
        if opts.console:
            raise usage("--console is for --engine libvirt")
        return QemuEngine(qemu)
    from .engine_libvirt import LibvirtEngine
    # libvirt picks its own QEMU unless one was named.
    emulator = None if qemu == qemucmd.DEFAULT_QEMU else qemu
    return LibvirtEngine(uri, opts.console, emulator, pins=opts.pin)
