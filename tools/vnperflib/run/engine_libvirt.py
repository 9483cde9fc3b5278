"""The libvirt engine: each guest is a transient domain that libvirtd starts
(domxml.py), on this host or on the one the URI names.

A DomainGuest is a guest.Guest whose "process" is the domain: its console
arrives on a pipe (read from the serial file locally, from libvirt's
console stream for a remote URI), destroying the domain is killing it, and
the domain's end is the process's end. libvirt does not pass on QEMU's exit
status, so the guest's code is its `exit` line's (docs/protocol.md); a
domain that ended without one is status 66 with libvirt's reason."""

import json
import os
import subprocess
import threading
import time

from ..errors import usage
from . import accel, domxml, guest, libvirtconn, libvirtstage, pinning, scratch
from .libvirtconn import err_line, libvirt, libvirt_qemu

DEFAULT_URI = "qemu:///system"
LOG_DIR = "/var/log/libvirt/qemu"    # qemu:///system domains' QEMU logs
PID_DIR = "/run/libvirt/qemu"
FILE_POLL_S = 0.02
ALIVE_POLL_S = 1.0   # safety net under the lifecycle events
DRAIN_QUIET_S = 0.2  # virtlogd writes the file: it is complete once quiet

STOP_REASONS = {}
if libvirt is not None:
    STOP_REASONS = {
        libvirt.VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN: "shut down",
        libvirt.VIR_DOMAIN_EVENT_STOPPED_DESTROYED: "destroyed",
        libvirt.VIR_DOMAIN_EVENT_STOPPED_CRASHED: "crashed",
        libvirt.VIR_DOMAIN_EVENT_STOPPED_FAILED: "QEMU exited",
    }

# Backends of `vnperf run` and what libvirt makes of them (domxml.py).
WHY_NOT = {
    "hub": domxml.NO_INTERFACE["hubport"],
    "user": domxml.NO_INTERFACE["user"],
    "passt": domxml.NO_INTERFACE["stream"],
    "passt-vhost-user": "the runner's passt in vhost-user mode runs with --engine qemu only "
                        "(libvirt's own, <interface type='vhostuser'><backend type='passt'/>, "
                        "needs libvirt 11.1)",
    "tap": domxml.NO_INTERFACE["tap"],
    "vhost-net": domxml.NO_INTERFACE["tap"],
}


def why_not(backend):
    """None when `vnperf run --engine libvirt` can wire this backend."""
    return WHY_NOT.get(backend)


class DomainProcess:
    """The domain as the runner sees a QEMU process: stdout is its console
    (a pipe fed by a reader thread), kill() destroys it, wait() returns
    once it ended and its console is drained. returncode stays None:
    libvirt does not report QEMU's exit status."""

    def __init__(self, dom, rfd, pid):
        self.dom = dom
        self.stdout = os.fdopen(rfd, "rb", buffering=0)
        self.pid = pid
        self.returncode = None
        self.done = threading.Event()

    def poll(self):
        return 0 if self.done.is_set() else None

    def wait(self, timeout=None):
        if not self.done.wait(timeout):
            raise subprocess.TimeoutExpired("domain " + self.dom.name(), timeout)
        return None

    def kill(self):
        """Destroys the domain in the background: a host that stops
        answering must not hold the runner (wait() bounds the wait). A
        failure shows in the teardown, which destroys it again and names
        what it could not."""
        threading.Thread(target=libvirtconn.destroy, args=(self.dom,), daemon=True,
                         name="destroy " + self.dom.name()).start()


class Monitor:
    """The QMP commands the runner uses, through libvirt's monitor
    passthrough (libvirt owns the domain's QMP socket)."""

    def __init__(self, dom):
        self.dom = dom

    def command(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        try:
            r = json.loads(libvirt_qemu.qemuMonitorCommand(self.dom, json.dumps(msg), 0))
        except libvirt.libvirtError as e:
            raise OSError(err_line(e))
        if "error" in r:
            raise OSError("%s: %s" % (name, r["error"].get("desc", r["error"])))
        return r.get("return")

    def vcpu_threads(self):
        return {c["cpu-index"]: c["thread-id"] for c in self.command("query-cpus-fast")}

    def driver_ok(self, qom_path):
        st = self.command("x-query-virtio-status", path=qom_path)
        return any("DRIVER_OK" in x for x in st.get("status", {}).get("statuses", ()))

    def close(self):
        """Nothing of its own to close: it speaks through the connection."""


class DomainGuest(guest.Guest):
    """One appliance as a transient libvirt domain."""

    NIC_QOM = "/machine/peripheral/ua-net0"

    def __init__(self, spec, label, engine, ifaces=None, pins=None):
        super().__init__(spec, label=label)
        self.engine = engine
        self.name = libvirtconn.domain_name(label)
        self.stream = engine.stream_console
        self.console_path = None
        self.pins = pinning.for_guest(pins, label)
        if ifaces is None:
            chardevs, rest = domxml.split_extra(spec.extra)
            ifaces = [domxml.iface_from_nic(n, chardevs) for n in spec.nics]
        else:
            rest = list(spec.extra)
        self.ifaces = ifaces
        self.domain = domxml.Domain(spec, self.name, ifaces, ("pty",), pins=self.pins,
                                    emulator=engine.emulator, qemu_args=rest,
                                    description="transient vnperf appliance %s of runner %d "
                                                "on %s" % (label, os.getpid(),
                                                           libvirtconn.this_host()))
        self.argv = ["libvirt", engine.uri, self.name]
        self.xml = None
        self.stop_why = None
        self.log_tail = ""
        self._wfd = None

    @property
    def has_nic(self):
        """Its interfaces are a run's spec.nics or a fleet group's (ifaces):
        either way its sender waits for the first one's DRIVER_OK."""
        return bool(self.ifaces)

    # ---- start
    def start(self, session, netns=None, paused=False):
        """Creates the domain (left paused with paused=True: resume()
        runs it) and starts reading its console."""
        if netns is not None:
            raise usage("libvirt: QEMU cannot run in the runner's network namespace")
        conn = self.engine.connection(session)
        self.domain.files = self.engine.place(self.domain.host_files(), self.spec.accel)
        if not self.stream:
            self.console_path = os.path.join(self.engine.tmp, self.name + ".console")
            self.domain.console = ("file", self.console_path)
        self.xml = self.domain.xml()
        ended = threading.Event()
        conn.watch(self.name, lambda detail, lost: self._stopped(ended, detail, lost))
        self.engine.starting(self)
        flags = libvirt.VIR_DOMAIN_START_AUTODESTROY
        if self.stream or paused:
            # Nothing printed before the console stream opens may be lost.
            flags |= libvirt.VIR_DOMAIN_START_PAUSED
        self.t_start = time.monotonic()
        try:
            dom = conn.conn.createXML(self.xml, flags)
        except libvirt.libvirtError as e:
            conn.unwatch(self.name)
            raise usage("libvirt: %s: cannot start domain %s on %s: %s" % (
                self.label, self.name, self.engine.uri, err_line(e)))
        rfd, self._wfd = os.pipe()
        self.proc = DomainProcess(dom, rfd, self._qemu_pid())
        st = self._open_console(conn, dom) if self.stream else None
        if self.stream and not paused and self.stop_why is None:
            self.resume()
        reader = self._stream_reader if self.stream else self._file_reader
        threading.Thread(target=reader, args=(dom, ended, st), daemon=True,
                         name="console " + self.name).start()

    def resume(self):
        """Runs a domain created paused; None, or one line why not."""
        try:
            self.proc.dom.resume()
        except libvirt.libvirtError as e:
            self.stop_why = "resume: " + err_line(e)
            self.proc.kill()
            return self.stop_why
        return None

    def _open_console(self, conn, dom):
        """libvirt's console stream of the paused domain; None (and the
        domain destroyed) when that fails."""
        try:
            st = conn.conn.newStream(0)
            dom.openConsole(None, st, 0)
            return st
        except libvirt.libvirtError as e:
            self.stop_why = "console stream: " + err_line(e)
            self.proc.kill()
            return None

    def _qemu_pid(self):
        if libvirtconn.is_remote(self.engine.uri):
            return None
        try:
            with open(os.path.join(PID_DIR, self.name + ".pid")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def _stopped(self, ended, detail, lost):
        if lost:
            self.stop_why = "lost: " + lost
        elif self.stop_why is None:
            self.stop_why = STOP_REASONS.get(detail, "stopped (%s)" % detail)
        ended.set()

    # ---- console readers: the domain's console into the pipe, EOF at its end
    def _file_reader(self, dom, ended, _st):
        f = None
        last_alive = time.monotonic()
        try:
            while True:
                if f is None and os.path.exists(self.console_path):
                    f = open(self.console_path, "rb")
                data = f.read(65536) if f else b""
                if data:
                    self._put(data)
                    continue
                if ended.is_set():
                    break
                if time.monotonic() - last_alive >= ALIVE_POLL_S:
                    last_alive = time.monotonic()
                    if not self._alive(dom):
                        ended.set()
                ended.wait(FILE_POLL_S)
            self._drain(f)
        finally:
            if f:
                f.close()
            self._eof()

    def _drain(self, f):
        quiet_since = time.monotonic()
        deadline = quiet_since + 2.0
        while f is not None and time.monotonic() < deadline:
            data = f.read(65536)
            if data:
                self._put(data)
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= DRAIN_QUIET_S:
                return
            else:
                time.sleep(FILE_POLL_S)

    def _stream_reader(self, dom, ended, st):
        try:
            self._recv_all(dom, ended, st)
        finally:
            # The console ends a little before the domain; a domain whose
            # stream broke runs on until it ends or the runner destroys it.
            while not ended.wait(ALIVE_POLL_S):
                if not self._alive(dom):
                    break
            self._eof()

    def _recv_all(self, dom, ended, st):
        if st is None:
            return
        try:
            while True:
                data = st.recv(65536)
                if not isinstance(data, bytes) or not data:
                    break
                self._put(data)
            st.finish()
        except libvirt.libvirtError as e:
            if self.stop_why is None and not ended.is_set() and self._alive(dom):
                self.stop_why = "console stream: " + err_line(e)
            try:
                st.abort()
            except libvirt.libvirtError:
                pass

    def _alive(self, dom):
        try:
            return bool(dom.isActive())
        except libvirt.libvirtError as e:
            if not libvirtconn.no_domain(e) and self.stop_why is None:
                self.stop_why = "lost: " + err_line(e)
            return False

    def _put(self, data):
        try:
            os.write(self._wfd, data)
        except OSError:
            pass  # the runner stopped reading: nothing left to deliver

    def _eof(self):
        self._collect_log()
        if self._wfd is not None:
            os.close(self._wfd)
            self._wfd = None
        if self.proc is not None:
            self.proc.done.set()

    def _collect_log(self):
        """QEMU's own log (libvirt's, this host only): its tail explains a
        domain that failed; the file is ours, so it goes."""
        if libvirtconn.is_remote(self.engine.uri):
            return
        path = os.path.join(LOG_DIR, self.name + ".log")
        try:
            with open(path, "rb") as f:
                tail = f.read()[-4000:].decode("utf-8", "replace")
            os.unlink(path)
        except OSError:
            return
        # Called again after the destroy: libvirt's closing line comes last.
        self.log_tail = self.log_tail or tail

    def stop(self, session):
        if self.proc is not None:
            self.proc.kill()
            self.proc.done.wait(libvirtconn.DESTROY_WAIT_S)

    # ---- what the runner reads
    def open_monitor(self, alive=None):
        return Monitor(self.proc.dom)

    def pin(self, pins, vcpu_tids):
        """vcpu/main/qemu pins are in the domain's <cputune>."""
        return {r: sorted(c) for r, c in pinning.for_guest(pins, self.label).items()
                if r in pinning.GUEST_ROLES}

    def stderr_text(self):
        return self.log_tail

    def _finish(self, status):
        self.t_end = time.monotonic()
        self.qemu_status = None
        ex = self.console.last("exit")
        code = ex.get("code") if ex else None
        # isa-debug-exit carries 7 bits (QEMU exits with code << 1 | 1).
        ok = isinstance(code, int) and not isinstance(code, bool) and 0 <= code <= 127
        self.guest_code = code if ok else None

    def why_no_exit(self):
        if self.proc is None:
            return guest.never_started(self)
        if self.timed_out:
            return "%s: no guest exit within the timeout; domain %s destroyed" % (
                self.label, self.name)
        log = [l for l in self.log_tail.strip().splitlines() if l.strip()]
        return "%s: domain %s %s without a guest exit%s" % (
            self.label, self.name, self.stop_why or "ended",
            (": " + log[-1]) if log else "")


class LibvirtEngine:
    """--engine libvirt[=URI]: guests are transient domains of that
    libvirtd. One connection per runner session (closed with it)."""

    name = "libvirt"

    def __init__(self, uri=None, console=None, emulator=None, pins=None):
        self.uri = uri or DEFAULT_URI
        if emulator is not None and not os.path.isabs(emulator):
            raise usage("--engine libvirt: --qemu %s must be an absolute path (libvirt's "
                        "<emulator>)" % emulator)
        self.pins = pins or {}
        if console not in (None, "file", "stream"):
            raise usage("--console %s: file or stream" % console)
        if console == "file" and libvirtconn.is_remote(self.uri):
            raise usage("--console file: %s is another host; its serial file is not "
                        "readable here (use the stream)" % self.uri)
        self.stream_console = console == "stream" or libvirtconn.is_remote(self.uri)
        # Paths in the domain (image, sockets) are read on the URI's host.
        self.local_files = not libvirtconn.is_remote(self.uri)
        self.emulator = emulator
        self.conn = None
        self.tmp = None
        self.stage = None
        self._qemu_users = {}  # domain type -> libvirtstage.QemuUser or None
        self.not_destroyed = []
        self._guests = []
        self._lock = threading.Lock()

    def describe(self):
        return "libvirt %s (console %s)" % (self.uri, "stream" if self.stream_console
                                            else "file")

    def check(self, opts):
        """What libvirt cannot do, refused before anything starts."""
        if opts.sock_rcvbuf:
            raise usage("--sock-rcvbuf: --engine qemu only (the runner hands QEMU the socket)")
        if opts.vhost_user_server:
            raise usage("--vhost-user-server: --engine qemu only (the runner watches QEMU's "
                        "listening socket for your backend)")
        if self.emulator and self.local_files and not os.access(self.emulator, os.X_OK):
            raise usage("--qemu %s: no such program or not executable" % self.emulator)
        why = libvirtconn.available()
        if why:
            raise usage("--engine libvirt: " + why)
        if opts.machine not in domxml.MACHINES:
            raise usage("--engine libvirt: machine %s: one of %s (libvirt 9 adds PCI devices "
                        "to every machine, and microvm has no PCI bus)" % (
                            opts.machine, ", ".join(domxml.MACHINES)))
        why = why_not(opts.backend)
        if why:
            raise usage("--engine libvirt: backend %s: %s" % (opts.backend, why))

    @staticmethod
    def default_machine(boot):
        return "q35"

    def connection(self, session):
        """The open connection; on first use it registers, in this order,
        removing the console files, removing the staged copies (this host
        only), closing, and destroying every domain (the session undoes in
        reverse: destroy, close, remove)."""
        if self.conn is None:
            self.tmp = scratch.mkdtemp(session, "libvirt")
            if self.local_files:
                self.stage = libvirtstage.Stage()
                session.on_close(self.stage.remove, what="remove the files staged for "
                                 "libvirt's QEMU")
                libvirtstage.clean_stale()
            self._qemu_users = {}
            self.conn = libvirtconn.Connection(self.uri).open()
            session.on_close(self._close, what="close libvirt connection to " + self.uri)
            session.on_close(self._destroy_all, what="destroy domains on " + self.uri)
            if not libvirtconn.is_remote(self.uri):
                libvirtconn.destroy_stale(self.conn, LOG_DIR)
        if self.conn.lost:
            raise usage("libvirt: " + self.conn.lost)
        return self.conn

    def place(self, paths, accel_name):
        """{host path: the path a domain is to name}: on this host, copies
        libvirt's QEMU user can read (libvirtstage.py); elsewhere the
        paths as they are, read on the URI's host."""
        if self.stage is None:
            return {}
        kind = "kvm" if accel_name == "kvm" else "qemu"
        if kind not in self._qemu_users:
            try:
                caps = self.conn.conn.getCapabilities()
            except libvirt.libvirtError:
                caps = ""
            self._qemu_users[kind] = libvirtstage.qemu_user(caps, kind)
        return self.stage.place(paths, self._qemu_users[kind])

    def starting(self, g):
        """g's domain is about to be created: it is destroyed with the
        others whatever happens next."""
        with self._lock:
            self._guests.append(g)

    def _destroy_all(self):
        with self._lock:
            guests, self._guests = self._guests, []
        items = []
        for g in guests:
            self.conn.unwatch(g.name)
            dom = g.proc.dom if g.proc is not None else self._lookup(g.name)
            if dom is not None:
                items.append((g.name, dom))
        failed = libvirtconn.destroy_all(items)
        self.not_destroyed += failed
        gone = {g.name for g in guests} - {n for n, _ in failed}
        for g in guests:
            if g.name in gone:
                g._collect_log()
        if failed:
            raise RuntimeError("could not destroy %s" % "; ".join("%s (%s)" % f for f in failed))

    def _lookup(self, name):
        """A domain whose creation was cut short (Ctrl-C) may exist anyway."""
        try:
            return self.conn.conn.lookupByName(name)
        except libvirt.libvirtError:
            return None

    def _close(self):
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def guest(self, spec, label, ifaces=None, pins=None):
        return DomainGuest(spec, label, self, ifaces, self.pins if pins is None else pins)

    def resolver(self, opts):
        return accel.Resolver(opts.accel, opts.image, opts.machine, probe=self._probe)

    def _probe(self, session, image, machine):
        """--accel auto: KVM only if this libvirtd offers kvm domains and a
        selftest domain of type kvm reaches its exit line."""
        conn = self.connection(session)
        try:
            conn.conn.getDomainCapabilities(None, "x86_64", machine, "kvm")
        except libvirt.libvirtError as e:
            return False, "libvirt on %s offers no kvm domain: %s" % (self.uri, err_line(e))
        return accel.run_probe(session, self.guest(accel.probe_spec(image, machine), "kvm-probe"))
