"""The second, real QEMU and DPDK: Debian 13 (trixie)'s qemu-system-x86
and dpdk, installed by `make next` (tools/fetch-next.sh) into build/next,
their versions in build/next.stamp. `--qemu next` and `--testpmd next` run
them through tools/next/run (that root's own loader, libraries, firmware
and drivers; no chroot, so host paths keep working); `system` names the
machine's own. Any other word is a binary, as before."""

import dataclasses
import os

from ..errors import missing

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
STAMP = os.path.join(ROOT, "build", "next.stamp")
WRAPPERS = os.path.join(ROOT, "tools", "next")
# What testpmd loads its drivers from (tools/next/run's -d is below it).
DRIVERS = os.path.join(ROOT, "build", "next", "usr")
# what: (the machine's own binary, the program in the root, its package).
PROGRAMS = {
    "qemu": ("qemu-system-x86_64", "qemu-system-x86_64", "qemu-system-x86"),
    "testpmd": ("dpdk-testpmd", "dpdk-testpmd", "dpdk-dev"),
}
MAKE_NEXT = "build/next is not installed: run make next"


def stamp():
    """{package: version} from the stamp `make next` writes last; None when
    it is not there (not run, or not finished) or not what it writes."""
    try:
        with open(STAMP) as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    pairs = [l.split(" ") for l in lines if l]
    if not pairs or any(len(p) != 2 for p in pairs):
        return None
    got = dict(pairs)
    return got if all(pkg in got for _, _, pkg in PROGRAMS.values()) else None


def open_above(path):
    """The first world-writable folder at or above path, or None. DPDK 24.11
    loads no driver whose real path has one (eal_dlopen's verify_perms):
    testpmd 24.11 cannot run from a tree under /tmp."""
    d = os.path.realpath(path)
    while True:
        try:
            if os.stat(d).st_mode & 0o002:
                return d
        except OSError:
            pass  # not made yet: what is above it decides
        if d == "/":
            return None
        d = os.path.dirname(d)


def binary(what, word):
    """The binary --qemu/--testpmd WORD runs: system -> the machine's,
    next -> the wrapper of build/next (refused with status 67 when `make
    next` has not run), anything else as given."""
    own, prog, _ = PROGRAMS[what]
    if word == "system":
        return own
    if word != "next":
        return word
    if stamp() is None:
        raise missing("--%s next: %s" % (what, MAKE_NEXT))
    above = open_above(DRIVERS) if what == "testpmd" else None
    if above:
        raise missing("--testpmd next: DPDK 24.11 loads no driver below the world-writable "
                      "%s: put the tree (build/next) elsewhere" % above)
    return os.path.join(WRAPPERS, prog)


def qemu(word):
    return binary("qemu", word)


def testpmd(word):
    return binary("testpmd", word)


def binaries(o):
    """RunOptions o with its --qemu and --testpmd words made binaries."""
    return dataclasses.replace(o, qemu=qemu(o.qemu), testpmd=testpmd(o.testpmd))


def package(binary_path):
    """(package, version) when binary_path is a wrapper of build/next, for
    the run identity (the machine's dpkg knows nothing of that root);
    None for any other binary."""
    for _, prog, pkg in PROGRAMS.values():
        if binary_path == os.path.join(WRAPPERS, prog):
            return pkg, (stamp() or {}).get(pkg, "?")
    return None


def describe():
    """doctor's row: the root's versions, or how to install it."""
    got = stamp()
    if got is None:
        return "absent: make next installs Debian 13's QEMU 10.0 and DPDK 24.11 " \
               "(--qemu next, --testpmd next)"
    return "build/next: " + ", ".join("%s %s" % (pkg, got[pkg])
                                      for _, _, pkg in PROGRAMS.values())
