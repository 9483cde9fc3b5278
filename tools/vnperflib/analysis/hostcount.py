"""--host-count SOURCE: the host-side count of a backend the user runs
(--vhost-user-socket), read where the user says before and after the run;
the difference is the run's host count, with rx what the host end received
from the guest, as every backend's collect() has it (docs/runner-run.md).

    testpmd:PORT[@PREFIX]  port PORT of a running DPDK process (testpmd,
                           a DPDK vhost application, OVS-DPDK's own EAL),
                           through its telemetry socket (DPDK 22.11
                           telemetry v2: /ethdev/stats,PORT); PREFIX is its
                           --file-prefix (default rte) or the socket's path
    ovs:IF                 `ovs-vsctl get Interface IF statistics`
    iface:IF               /sys/class/net/IF/statistics
    none                   no host-side count: the report says guest only
"""

import json
import os
import re
import socket
import time
from collections import namedtuple

from ..errors import RunnerError, failed, missing
from ..optypes import digits
from ..run.proc import run_quiet
from . import counts

KINDS = ("none", "testpmd", "ovs", "iface")
Spec = namedtuple("Spec", "kind target port text")

DPDK_PREFIX = "rte"          # EAL's --file-prefix when none is given
TELEMETRY = "dpdk_telemetry.v2"
TELEMETRY_TIMEOUT_S = 2.0
U64_MAX = 2 ** 64 - 1


def parse(text):
    """The Spec of a --host-count value; ValueError with one line if bad."""
    kind, colon, rest = text.partition(":")
    if kind == "none" and not colon:
        return Spec("none", None, None, text)
    if kind not in KINDS[1:] or not colon or not rest:
        raise ValueError("%r: testpmd:PORT[@FILE_PREFIX], ovs:IF, iface:IF or none" % text)
    if kind == "testpmd":
        port, _, prefix = rest.partition("@")
        if not re.fullmatch(r"\d{1,5}", port, re.ASCII) or int(port) > 65535:
            raise ValueError("%r: PORT is a DPDK port number 0..65535" % text)
        if "@" in rest and not prefix:
            raise ValueError("%r: an empty FILE_PREFIX after @" % text)
        return Spec(kind, prefix or DPDK_PREFIX, int(port), text)
    if any(c.isspace() or ord(c) < 32 for c in rest):
        raise ValueError("%r: an interface name has no spaces or control characters" % text)
    if kind == "iface" and ("/" in rest or rest in (".", "..") or len(rest) > 15):
        raise ValueError("%r: not a Linux interface name (at most 15 characters, no /)" % text)
    return Spec(kind, rest, None, text)


def dpdk_runtime_base():
    """Where EAL puts its runtime directories for this user (22.11
    eal_create_runtime_dir): /var/run/dpdk as root, else under
    XDG_RUNTIME_DIR or /tmp."""
    if os.geteuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/tmp", "dpdk")


def telemetry_path(prefix):
    """The telemetry socket of the DPDK process with that --file-prefix
    (a prefix with a / is the socket's own path)."""
    if "/" in prefix:
        return prefix
    return os.path.join(dpdk_runtime_base(), prefix, TELEMETRY)


def parse_reply(command, data):
    """The value of one telemetry reply ({"/ethdev/stats": {...}}): None
    when DPDK refused the command (a port it has not: null); ValueError
    when the reply is not that."""
    try:
        reply = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError("not JSON: %r" % data[:60])
    key = command.split(",", 1)[0]
    if not isinstance(reply, dict) or key not in reply:
        raise ValueError("no %s in the reply %r" % (key, data[:60]))
    return reply[key]


def _whole(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64_MAX


def ethdev_snapshot(stats):
    """The host counts of DPDK's /ethdev/stats (struct rte_eth_stats)."""
    keys = ("ipackets", "ibytes", "opackets", "obytes", "imissed", "rx_nombuf", "oerrors")
    if not isinstance(stats, dict) or not all(_whole(stats.get(k)) for k in keys):
        raise ValueError("/ethdev/stats without the counters of rte_eth_stats")
    return {"rx_frames": stats["ipackets"], "rx_bytes": stats["ibytes"],
            "tx_frames": stats["opackets"], "tx_bytes": stats["obytes"],
            "rx_missed": stats["imissed"], "rx_nombuf": stats["rx_nombuf"],
            "tx_errors": stats["oerrors"]}


class Telemetry:
    """One connection to a DPDK process's telemetry socket (SOCK_SEQPACKET:
    a JSON greeting, then one JSON reply per command)."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(TELEMETRY_TIMEOUT_S)
        try:
            self.sock.connect(path)
            self.greeting = json.loads(self.sock.recv(65536).decode("utf-8"))
        except (OSError, ValueError):
            self.sock.close()
            raise
        self.max_len = self.greeting.get("max_output_len", 16384)

    def query(self, command):
        self.sock.send(command.encode())
        return parse_reply(command, self.sock.recv(max(self.max_len, 16384) + 1))

    def close(self):
        self.sock.close()


def parse_ovs_statistics(text):
    """{key: n} of `ovs-vsctl get Interface IF statistics` ("{rx_bytes=1,
    rx_packets=2, ...}", keys possibly quoted); ValueError if not that."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError("not an OVSDB map: %r" % body[:60])
    out = {}
    for item in filter(None, (i.strip() for i in body[1:-1].split(","))):
        m = re.fullmatch(r'"?([A-Za-z0-9_.:-]+)"?=(\d{1,20})', item, re.ASCII)
        if not m or int(m.group(2)) > U64_MAX:
            raise ValueError("not key=count: %r" % item[:60])
        out[m.group(1)] = int(m.group(2))
    return out


def ovs_refresh_s():
    """How often ovs-vswitchd writes Interface statistics to its database
    (other_config:stats-update-interval, default and minimum 5000 ms)."""
    rc, out = run_quiet(["ovs-vsctl", "get", "Open_vSwitch", ".",
                         "other_config:stats-update-interval"])
    ms = out.strip().strip('"')
    return max(int(ms), 5000) / 1000.0 if rc == 0 and digits(ms) else 5.0


def _kernel_style(stats, what):
    """The host counts of rx_/tx_ packets, bytes and dropped counters (OVS
    and the kernel name them alike)."""
    keys = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")
    if not all(k in stats for k in keys):
        raise ValueError("%s lacks %s" % (what, ", ".join(k for k in keys if k not in stats)))
    return {"rx_frames": stats["rx_packets"], "rx_bytes": stats["rx_bytes"],
            "tx_frames": stats["tx_packets"], "tx_bytes": stats["tx_bytes"],
            "rx_dropped": stats.get("rx_dropped", 0), "tx_dropped": stats.get("tx_dropped", 0)}


IFACE_STATS = ("rx_packets", "rx_bytes", "rx_dropped", "tx_packets", "tx_bytes", "tx_dropped")

# Where each source's own drop counters say frames were lost (counts.drop).
DROPS = {
    "rx_missed": ("rx_drops", "missed by the backend's port (imissed)"),
    "rx_nombuf": ("rx_drops", "no mbuf in the backend (rx_nombuf)"),
    "tx_errors": ("tx_drops", "not sent by the backend's port (oerrors: for a vhost port, "
                              "not placed in the guest's full RX ring)"),
    "rx_dropped": ("rx_drops", "dropped by the host end (rx_dropped)"),
    "tx_dropped": ("tx_drops", "dropped by the host end towards the guest (tx_dropped)"),
}


class HostCount:
    """The host-side count a Spec names: probe() at check time, base() at
    the start, collect() at the end (the difference, collect()'s format of
    backends/base.py)."""

    def __init__(self, spec):
        self.spec = spec
        self.first = None

    @property
    def lossless(self):
        """Counted at the vhost-user port itself (DPDK, OVS): every frame
        the guest's ring gave it, or a drop counter. An interface further
        on (iface:) is not."""
        return self.spec.kind in ("testpmd", "ovs")

    def probe(self):
        """One line (status 67) when the source cannot be read now."""
        if self.spec.kind != "none":
            self.read()

    def base(self):
        if self.spec.kind != "none":
            self.first = self.read()

    def collect(self):
        """{} for none; else the run's counts, or one line why not."""
        if self.first is None:
            return {}
        out = {"host_count": self.spec.text}
        if self.spec.kind == "ovs":
            # ovs-vswitchd writes the statistics column every interval:
            # after one, it holds every frame of the run.
            time.sleep(ovs_refresh_s() + 0.5)
        try:
            now = self.read()
        except RunnerError as e:
            out["host_count_error"] = e.line
            return out
        diff = {k: now[k] - self.first[k] for k in now}
        back = [k for k, v in diff.items() if v < 0]
        if back:
            out["host_count_error"] = "%s: %s went backwards (%d -> %d): the backend " \
                "restarted or reset its counters" % (self.spec.text, back[0], self.first[back[0]],
                                                     now[back[0]])
            return out
        out.update({k: diff[k] for k in ("rx_frames", "rx_bytes", "tx_frames", "tx_bytes")})
        out["rx_drops"], out["tx_drops"] = [], []
        for k, (side, what) in DROPS.items():
            if k in diff:
                out[side].append(counts.drop("backend", what, diff[k]))
        return out

    def read(self):
        """A snapshot; raises missing() (at start) with one line."""
        try:
            return getattr(self, "_read_" + self.spec.kind)()
        except ValueError as e:
            raise failed("--host-count %s: %s" % (self.spec.text, e))

    def _read_testpmd(self):
        path = telemetry_path(self.spec.target)
        try:
            tel = Telemetry(path)
        except (OSError, ValueError) as e:
            raise missing("--host-count %s: no DPDK telemetry at %s (%s): is the DPDK process "
                          "running, with that --file-prefix, and not --no-telemetry?"
                          % (self.spec.text, path, getattr(e, "strerror", None) or e))
        try:
            stats = tel.query("/ethdev/stats,%d" % self.spec.port)
            if stats is None:
                ports = tel.query("/ethdev/list")
                raise missing("--host-count %s: the DPDK process at %s (pid %s) has no port "
                              "%d (its ports: %s)" % (
                                  self.spec.text, path, tel.greeting.get("pid", "?"),
                                  self.spec.port, ", ".join(map(str, ports or [])) or "none"))
            return ethdev_snapshot(stats)
        except OSError as e:
            raise missing("--host-count %s: telemetry at %s: %s" % (self.spec.text, path, e))
        finally:
            tel.close()

    def _read_ovs(self):
        rc, out = run_quiet(["ovs-vsctl", "get", "Interface", self.spec.target, "statistics"])
        if rc == 127:
            raise missing("--host-count %s: ovs-vsctl not found (Debian openvswitch-switch)"
                          % self.spec.text)
        if rc != 0:
            raise missing("--host-count %s: ovs-vsctl: %s" % (
                self.spec.text, (out.strip().splitlines() or ["status %d" % rc])[-1]))
        return _kernel_style(parse_ovs_statistics(out), "the Interface's statistics")

    def _read_iface(self):
        d = os.path.join("/sys/class/net", self.spec.target, "statistics")
        if not os.path.isdir(d):
            raise missing("--host-count %s: no interface %s on this host (%s missing)"
                          % (self.spec.text, self.spec.target, d))
        stats = {}
        try:
            for k in IFACE_STATS:
                with open(os.path.join(d, k)) as f:
                    stats[k] = int(f.read())
        except OSError as e:
            raise missing("--host-count %s: %s: %s" % (self.spec.text, d, e.strerror))
        return _kernel_style(stats, d)
