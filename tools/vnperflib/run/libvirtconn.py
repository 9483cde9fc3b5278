"""Connections to libvirt daemons (python3-libvirt): one per URI, with
keepalive so that a host that stops answering fails calls within seconds
instead of hanging them, lifecycle events routed to the domains' owners,
and destroy calls bounded in time.

Every domain the runner starts is transient and started with
VIR_DOMAIN_START_AUTODESTROY: libvirtd destroys it itself when this
connection closes, also when the runner is SIGKILLed."""

import os
import re
import socket
import threading
import time
import urllib.parse

from ..errors import missing

try:
    import libvirt
    import libvirt_qemu
except ImportError:  # the engine says so when it is chosen
    libvirt = libvirt_qemu = None

KEEPALIVE_S = 2      # probe interval; the connection is dropped after
KEEPALIVE_COUNT = 3  # this many unanswered probes
DESTROY_WAIT_S = KEEPALIVE_S * (KEEPALIVE_COUNT + 2) + 5

_loop_lock = threading.Lock()
_loop_started = False

# vnperf-[TAG-]PID-SEQ-label: a runner's domains carry its PID.
STALE_RE = re.compile(r"^vnperf-(?:[0-9a-f]+-)?(\d+)-\d+-")


def available():
    """None, or one line why python3-libvirt cannot be used."""
    if libvirt is None:
        return "python3-libvirt is not importable by %s (apt-get install python3-libvirt)" \
            % os.path.realpath("/proc/self/exe")
    return None


def _start_event_loop():
    """libvirt's default event loop in a daemon thread: needed for
    keepalive, lifecycle events and the connection-closed callback; it
    must exist before the first connection opens."""
    global _loop_started
    with _loop_lock:
        if _loop_started:
            return
        libvirt.virEventRegisterDefaultImpl()
        _quiet()
        t = threading.Thread(target=_run_loop, name="libvirt-events", daemon=True)
        t.start()
        _loop_started = True


def _quiet():
    """libvirt prints every error on stderr by default; ours are reported."""
    libvirt.registerErrorHandler(lambda ctx, err: None, None)


def _run_loop():
    while True:
        libvirt.virEventRunDefaultImpl()


def describe(uri="qemu:///system"):
    """One line for `vnperf doctor`: the daemon's version, or what is
    missing for --engine libvirt and vnperf fleet."""
    why = available()
    if why:
        return "no: " + why
    _quiet()
    try:
        c = libvirt.openReadOnly(uri)
    except libvirt.libvirtError as e:
        return "no: cannot connect to %s: %s (as root: virtlogd -d; libvirtd -d)" % (
            uri, err_line(e))
    try:
        v = c.getLibVersion()
        return "libvirtd %d.%d.%d at %s: --engine libvirt and vnperf fleet ready" % (
            v // 1000000, v // 1000 % 1000, v % 1000, uri)
    finally:
        c.close()


def is_remote(uri):
    """True when the URI names a host (qemu+ssh://host/system): the console
    is then read through libvirt's stream, not from a local file."""
    return bool(urllib.parse.urlsplit(uri).hostname)


def err_line(e):
    """One line from a libvirtError."""
    return str(e).strip().splitlines()[0] if str(e).strip() else e.__class__.__name__


def no_domain(e):
    return e.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN


class Connection:
    """One open connection: domains' lifecycle events go to the callback
    registered for the domain's name; a lost connection tells them all."""

    def __init__(self, uri):
        self.uri = uri
        self.conn = None
        self.lost = None        # one line once the connection is gone
        self._owners = {}       # domain name -> on_stopped(detail or None, why)
        self._lock = threading.Lock()

    def open(self):
        why = available()
        if why:
            raise missing("libvirt: " + why)
        _start_event_loop()
        try:
            self.conn = libvirt.open(self.uri)
        except libvirt.libvirtError as e:
            raise missing("libvirt: cannot connect to %s: %s%s" % (
                self.uri, err_line(e), "" if is_remote(self.uri) else
                " (is libvirtd running? as root: virtlogd -d; libvirtd -d)"))
        try:
            self.conn.setKeepAlive(KEEPALIVE_S, KEEPALIVE_COUNT)
        except libvirt.libvirtError:
            pass  # a local driver without RPC has no keepalive to set
        self.conn.registerCloseCallback(self._closed, None)
        self.conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                         self._lifecycle, None)
        return self

    def hostname(self):
        try:
            return self.conn.getHostname()
        except libvirt.libvirtError as e:
            return "? (%s)" % err_line(e)

    def watch(self, name, on_stopped):
        with self._lock:
            self._owners[name] = on_stopped

    def unwatch(self, name):
        with self._lock:
            self._owners.pop(name, None)

    def _lifecycle(self, conn, dom, event, detail, opaque):
        if event != libvirt.VIR_DOMAIN_EVENT_STOPPED:
            return
        with self._lock:
            cb = self._owners.get(dom.name())
        if cb:
            cb(detail, None)

    def _closed(self, conn, reason, opaque):
        why = {libvirt.VIR_CONNECT_CLOSE_REASON_KEEPALIVE: "stopped answering (keepalive)",
               libvirt.VIR_CONNECT_CLOSE_REASON_EOF: "closed the connection",
               libvirt.VIR_CONNECT_CLOSE_REASON_ERROR: "connection error"}.get(
                   reason, "connection closed (%d)" % reason)
        self.lost = "%s %s" % (self.uri, why)
        with self._lock:
            owners = list(self._owners.values())
        for cb in owners:
            cb(None, self.lost)

    def close(self):
        if self.conn is None:
            return
        try:
            self.conn.unregisterCloseCallback()
        except libvirt.libvirtError:
            pass
        try:
            self.conn.close()
        except libvirt.libvirtError:
            pass
        self.conn = None


def destroy(dom):
    """Destroys a domain; None when it is gone (also if it already was),
    else one line why not."""
    try:
        dom.destroy()
    except libvirt.libvirtError as e:
        if no_domain(e):
            return None
        try:
            if not dom.isActive():
                return None
        except libvirt.libvirtError as e2:
            if no_domain(e2):
                return None
        return err_line(e)
    return None


def destroy_all(items, wait_s=DESTROY_WAIT_S):
    """Destroys [(label, dom)] in parallel. A host that stops answering
    does not hold the caller longer than wait_s. Returns [(label, why)]
    for each domain that could not be destroyed."""
    results = {}

    def one(label, dom):
        results[label] = destroy(dom)

    threads = []
    for label, dom in items:
        t = threading.Thread(target=one, args=(label, dom), daemon=True)
        t.start()
        threads.append((label, t))
    deadline = time.monotonic() + wait_s
    failed = []
    for label, t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            failed.append((label, "no answer within %.0f s" % wait_s))
        elif results.get(label):
            failed.append((label, results[label]))
    return failed


def _dead(name):
    m = STALE_RE.match(name)
    return m is not None and not os.path.exists("/proc/%s" % m.group(1))


def destroy_stale(conn, log_dir):
    """Destroys transient vnperf domains of runners that died on this host
    (their PID is gone) before AUTODESTROY could act, and removes their
    QEMU logs from log_dir (also of domains the daemon destroyed after
    their runner was gone). Local URIs only: elsewhere a PID means
    nothing. Returns the names of the domains destroyed."""
    out = []
    try:
        doms = conn.conn.listAllDomains(libvirt.VIR_CONNECT_LIST_DOMAINS_TRANSIENT)
    except libvirt.libvirtError:
        doms = []
    for d in doms:
        if _dead(d.name()) and destroy(d) is None:
            out.append(d.name())
    try:
        logs = [n for n in os.listdir(log_dir) if n.endswith(".log") and _dead(n)]
    except OSError:
        logs = []
    for n in logs:
        try:
            os.unlink(os.path.join(log_dir, n))
        except OSError:
            pass
    return out


_seq = 0
_seq_lock = threading.Lock()


def domain_name(label):
    """vnperf-[TAG-]PID-SEQ-label: unique per runner; the test harness's
    tag lets a test find its own; the PID lets the next runner remove what
    a dead one left (destroy_stale)."""
    global _seq
    with _seq_lock:
        _seq += 1
        n = _seq
    tag = os.environ.get("VNPERF_TEST_TAG")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label)[:40]
    return "vnperf-%s%d-%d-%s" % (tag + "-" if tag else "", os.getpid(), n, safe)


def this_host():
    return socket.gethostname()
