"""Network backends: each one checks the host, starts what it needs, gives
QEMU its -netdev, reports host-side counts and tears everything down through
the session's undo stack (on every exit path)."""

from . import exitcodes


class RunnerError(Exception):
    """A host-side failure with the runner status to return and one line."""

    def __init__(self, status, line):
        super().__init__(line)
        self.status = status
        self.line = line


class Backend:
    name = "none"
    lossless = False       # host side sees exactly what the guest sent
    needs_shared_mem = False
    netns = None           # namespace QEMU runs in, if any

    def __init__(self, opts):
        self.opts = opts

    def check(self):
        """Raises RunnerError(RUNNER_BACKEND_MISSING) when the host lacks it."""

    def start(self, session, nguests=1):
        """Starts peers/devices for nguests guests."""

    def nics(self, index):
        """The qemucmd.Nic list for guest index."""
        return []

    def guest_config(self, index):
        """Config words the backend decides (addresses, MACs)."""
        return []

    def processes(self):
        """[(role, pid)] of backend processes for CPU accounting."""
        return []

    def live(self):
        """Host-side counts now (cheap), for progress lines; {} if none."""
        return {}

    def collect(self):
        """Final host-side counts: {"rx_packets", "rx_bytes", "tx_packets",
        "tx_bytes", ...} as seen by the host end (rx = from the guest)."""
        return {}

    def healthy(self):
        """None, or one line saying which backend process died."""
        return None


class NoBackend(Backend):
    """No NIC at all (selftest and the other non-network apps)."""


def missing(line):
    return RunnerError(exitcodes.RUNNER_BACKEND_MISSING, line)


def failed(line):
    return RunnerError(exitcodes.RUNNER_BACKEND_FAILED, line)


REGISTRY = {"none": NoBackend}


def names():
    return list(REGISTRY)


def make(name, opts):
    if name not in REGISTRY:
        raise RunnerError(exitcodes.RUNNER_USAGE,
                          "unknown backend %r: one of %s" % (name, ", ".join(REGISTRY)))
    return REGISTRY[name](opts)
