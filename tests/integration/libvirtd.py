"""A libvirt daemon for the tests that need one: the running one if there
is, else virtlogd and libvirtd started here as children (CI machines have
no init system to start them) and stopped at the end. One line why not
when libvirt cannot run here at all."""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time

SOCK = "/var/run/libvirt/libvirt-sock"
LOG_DIR = "/var/log/libvirt/qemu"
URI = "qemu:///system"
START_WAIT_S = 30.0


def _answers(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def why_not():
    """None, or why libvirt cannot run here (the tests skip with it)."""
    try:
        import libvirt  # noqa: F401
    except ImportError:
        return "python3-libvirt is not installed (tools/deps.sh installs it)"
    if _answers(SOCK):
        return None
    if os.geteuid() != 0:
        return "no libvirtd runs and only root can start the system one"
    for b in ("libvirtd", "virtlogd"):
        if shutil.which(b) is None:
            return "%s not found (Debian libvirt-daemon-system)" % b
    return None


def _die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


class Daemons:
    """Uses a running libvirtd, or starts virtlogd and libvirtd (in the
    foreground, our children, without the test tag in their environment:
    they outlive single tests) and stops them in stop()."""

    def __init__(self):
        self.procs = []

    def start(self):
        if _answers(SOCK):
            return self
        env = {k: v for k, v in os.environ.items() if k != "VNPERF_TEST_TAG"}
        for argv in (["virtlogd"], ["libvirtd"]):
            self.procs.append(subprocess.Popen(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=_die_with_parent))
        deadline = time.monotonic() + START_WAIT_S
        while not _answers(SOCK):
            dead = [p for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("libvirtd did not start (%s)" % (
                    "%s exited with status %d" % (dead[0].args[0], dead[0].returncode)
                    if dead else "no socket after %.0f s" % START_WAIT_S))
            time.sleep(0.05)
        return self

    @property
    def started_here(self):
        return bool(self.procs)

    def pid(self, name):
        for p in self.procs:
            if p.args[0] == name:
                return p.pid
        return None

    def stop(self):
        """libvirtd first (it may still talk to virtlogd), then virtlogd."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def domains(prefix="vnperf-"):
    """Names of every domain (running or defined) whose name starts with
    prefix, as `virsh list --all` would show them."""
    import libvirt
    c = libvirt.open(URI)
    try:
        return sorted(d.name() for d in c.listAllDomains() if d.name().startswith(prefix))
    finally:
        c.close()


def destroy(names):
    import libvirt
    c = libvirt.open(URI)
    try:
        for n in names:
            try:
                c.lookupByName(n).destroy()
            except libvirt.libvirtError:
                pass
    finally:
        c.close()


def logs(prefix):
    """QEMU log files libvirt keeps for domains whose name starts with prefix."""
    try:
        return sorted(os.path.join(LOG_DIR, n) for n in os.listdir(LOG_DIR)
                      if n.startswith(prefix))
    except OSError:
        return []
