"""What a libvirt domain's QEMU opens on this host (kernel, ESP image,
firmware), copied where libvirt's QEMU user can read it.

libvirtd (qemu:///system) runs QEMU as an unprivileged user (Debian:
libvirt-qemu) without CAP_DAC_OVERRIDE. dynamic_ownership chowns a file to
that user, not the folders above it: a checkout under /root or in a
`mktemp -d` folder (0700) gives "could not open kernel file ...: Permission
denied". So each runner copies those files into one folder of its own
(0755, files 0644) under the first of BASES that user can enter, removed
when its session closes (a SIGKILLed runner's by the next one:
clean_stale). Where no such folder can be made, a file stays where it is if
that user can enter every folder above it; otherwise the domain is refused,
before it is defined, with one line naming the file, the folder and the
user."""

import grp
import os
import pwd
import re
import shutil
import stat
import tempfile
import threading
import xml.etree.ElementTree as ET

from ..errors import missing
from . import scratch

# Debian's folder for domain kernels (root, 0711), then /tmp (1777): not
# tempfile.gettempdir(), which TMPDIR may point into a 0700 folder.
BASES = ("/var/lib/libvirt/boot", "/tmp")
WHAT = "stage"
_STALE = re.compile(r"^vnperf-(\d+)-%s-" % WHAT)


class QemuUser:
    """Who libvirt's QEMU runs as: uid, gid, supplementary groups, name."""

    def __init__(self, uid, gid, groups=None, name=None):
        self.uid = uid
        self.gid = gid
        self.name = name or _user_name(uid)
        self.groups = set(groups if groups is not None else _groups(self.name, gid))
        self.groups.add(gid)

    def __str__(self):
        return self.name


def _user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return "uid %d" % uid


def _groups(name, gid):
    try:
        return os.getgrouplist(name, gid)
    except (KeyError, OSError):
        return [gid]


def qemu_user(caps_xml, domain_type):
    """The QemuUser from libvirt's capabilities XML (the DAC security
    model's <baselabel type=DOMAIN_TYPE>+UID:+GID</baselabel>); None when
    the daemon has no DAC model (QEMU runs as whoever libvirtd is)."""
    try:
        root = ET.fromstring(caps_xml)
    except ET.ParseError:
        return None
    for sm in root.iter("secmodel"):
        if sm.findtext("model") != "dac":
            continue
        for bl in sm.findall("baselabel"):
            m = re.fullmatch(r"\+?(\d+):\+?(\d+)", (bl.text or "").strip())
            if bl.get("type") == domain_type and m:
                return QemuUser(int(m.group(1)), int(m.group(2)))
    return None


def _may(st, user, bit):
    """Whether st's mode bits give user `bit` (4 read, 1 search): without
    CAP_DAC_OVERRIDE, also for root, only the owner/group/other class counts."""
    if st.st_uid == user.uid:
        return bool(st.st_mode >> 6 & bit)
    if st.st_gid in user.groups:
        return bool(st.st_mode >> 3 & bit)
    return bool(st.st_mode & bit)


def blocker(path, user):
    """None when user can enter every folder above path; else one phrase
    naming the first folder that stops it."""
    d = os.path.dirname(os.path.abspath(path))
    chain = []
    while True:
        chain.append(d)
        if d == os.path.dirname(d):
            break
        d = os.path.dirname(d)
    for d in reversed(chain):
        try:
            st = os.stat(d)
        except OSError as e:
            return "%s: %s" % (d, e.strerror)
        if not _may(st, user, 1):
            return "%s is %04o %s:%s" % (d, stat.S_IMODE(st.st_mode), _user_name(st.st_uid),
                                         _group_name(st.st_gid))
    return None


def _group_name(gid):
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


class Stage:
    """One runner's folder of copies for libvirt's QEMU. place() is safe
    from several threads (a fleet creates its domains in parallel)."""

    def __init__(self, bases=None):
        self.bases = bases or BASES
        self.dir = None
        self.why_none = None   # why no folder could be made, once tried
        self.copies = {}       # source path -> copy
        self._lock = threading.Lock()

    def place(self, paths, user):
        """{path: the path the domain is to use} for each of paths; user
        None: QEMU reads them as they are."""
        out = {}
        with self._lock:
            for p in paths:
                out[p] = p if user is None else self._one(p, user)
        return out

    def _one(self, path, user):
        src = os.path.abspath(path)
        if src in self.copies:
            return self.copies[src]
        if self.dir is None and self.why_none is None:
            self.dir, self.why_none = _make_dir(self.bases, user)
        if self.dir is None:
            why = blocker(src, user)
            if why is None:
                return src
            raise missing("libvirt: %s: libvirt's QEMU runs as %s, which cannot reach it "
                          "(%s), and no folder it can read could be made for a copy (%s)"
                          % (src, user, why, self.why_none))
        dst = os.path.join(self.dir, "%d-%s" % (len(self.copies), os.path.basename(src)))
        try:
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o644)
        except OSError as e:
            raise missing("libvirt: cannot copy %s to %s for libvirt's QEMU (%s): %s" % (
                src, dst, user, e.strerror or e))
        self.copies[src] = dst
        return dst

    def remove(self):
        with self._lock:
            d, self.dir = self.dir, None
            self.copies = {}
        if d is not None:
            shutil.rmtree(d)


def _make_dir(bases, user):
    """(folder, None) in the first base user can enter, or (None, why)."""
    whys = []
    for base in bases:
        try:
            d = tempfile.mkdtemp(prefix=scratch.prefix(WHAT), dir=base)
        except OSError as e:
            whys.append("%s: %s" % (base, e.strerror or e))
            continue
        os.chmod(d, 0o755)
        why = blocker(os.path.join(d, "x"), user)
        if why is None:
            return d, None
        os.rmdir(d)
        whys.append(why)
    return None, "; ".join(whys)


def clean_stale(bases=None):
    """Removes the folders of runners that died (their PID is gone)."""
    return scratch.remove_dead(bases or BASES, _STALE)
