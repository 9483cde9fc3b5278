"""Versions of what a run depends on: QEMU, the backend's host tool, the
host kernel and CPU count, the image. Each asked once per runner process
(a sweep asks for every point)."""

import functools
import hashlib
import os
import re
import shutil

from . import nextroot, passtbin
from .proc import run_quiet


@functools.lru_cache(maxsize=None)
def package_version(pkg):
    rc, out = run_quiet(["dpkg-query", "-W", "-f=${Version}", pkg])
    return out.strip() if rc == 0 and out.strip() else None


@functools.lru_cache(maxsize=None)
def tool_version(argv, pattern, pkg):
    """"VERSION (Debian PKG VERSION)" from the tool's own output and dpkg
    (build/next's stamp for its programs); None when the tool is not on
    PATH. argv is a tuple (cached)."""
    if shutil.which(argv[0]) is None:
        return None
    _, out = run_quiet(list(argv), timeout=10)
    m = re.search(pattern, out)
    pkg, deb = nextroot.package(argv[0]) or (pkg, package_version(pkg))
    parts = [m.group(1)] if m else []
    if deb:
        parts.append("(Debian %s %s)" % (pkg, deb))
    return " ".join(parts) or "present, version unknown"


def qemu(binary):
    return tool_version((binary, "--version"), r"version (\S+)", "qemu-system-x86") or \
        "%s not found" % binary


def testpmd(binary):
    """"BINARY (Debian PKG VERSION)": testpmd prints no version of its own."""
    if shutil.which(binary) is None:
        return None
    pkg, deb = nextroot.package(binary) or ("dpdk-dev", package_version("dpdk-dev"))
    return "%s (Debian %s %s)" % (binary, pkg, deb or "?")


def passt():
    return passtbin.describe()


def iperf():
    return tool_version(("iperf", "--version"), r"iperf version (\S+)", "iperf")


def backend(name, app, testpmd_binary):
    """The version of the backend's own host tool ("" when QEMU, the kernel
    or this tree's peer are all there is); testpmd_binary: the one
    --testpmd runs."""
    parts = []
    if name == "vhost-user":
        parts.append(testpmd(testpmd_binary) or "missing")
    elif name == "passt":
        parts.append(passt() or "missing")
    if app == "iperf":
        parts.append("iperf " + (iperf() or "missing"))
    return "; ".join(parts)


def host_kernel():
    return os.uname().release


def host_cpus():
    return os.cpu_count() or 0


@functools.lru_cache(maxsize=None)
def _file_id(path, size, mtime_ns):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def file_id(path):
    """The first 12 hex digits of the file's SHA-256 (what build it was);
    "missing" when it cannot be read."""
    try:
        st = os.stat(path)
        return _file_id(os.path.abspath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        return "missing"
