"""Which passt the runner starts and whether it carries a TCP stream.
`make passt` builds Debian trixie's passt into build/passt/passt
(tools/fetch-passt.sh); the runner prefers it to the machine's. Bookworm's
passt 0.0~git20230309 stalls lwIP's TCP (docs/lwip.md), so the stream
(app=iperf) needs a passt at least as new as STREAM_MIN. passt's
vhost-user mode (`--vhost-user`, passt 2024_11_27 on; the passt-vhost-user
backend) is known from its --help."""

import functools
import os
import re
import shutil

from . import versions
from .proc import run_quiet

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILT = os.path.join(ROOT, "build", "passt", "passt")
SYSTEM_PASST = "/usr/bin/passt"
# The oldest passt seen to carry lwIP's stream both ways (the one `make
# passt` builds); bookworm's 20230309 does not, none between was tried.
STREAM_MIN = 20250503
MAKE_PASST = ("`make passt` builds Debian trixie's passt 0.0~git20250503 into "
              "build/passt/passt, which the runner uses")


def path(built=None):
    """build/passt/passt (or built) when it is there, else passt on PATH,
    else None."""
    built = built or BUILT
    if os.access(built, os.X_OK):
        return built
    return shutil.which("passt")


def snapshot_date(version):
    """The upstream snapshot's date as YYYYMMDD from a Debian version
    (0.0~git20250503.587980c-2) or an upstream tag (2025_05_03.587980c);
    None when the string names none."""
    m = re.search(r"git(\d{4})(\d{2})(\d{2})", version or "") or \
        re.search(r"(?<!\d)(\d{4})_(\d{2})_(\d{2})(?!\d)", version or "")
    if m is None:
        return None
    y, mo, d = (int(g) for g in m.groups())
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return None
    return y * 10000 + mo * 100 + d


@functools.lru_cache(maxsize=None)
def version(binary):
    """What the binary says it is; Debian's package version for the
    machine's passt, which bookworm built without one ("unknown")."""
    # passt prints its version with fprintf and leaves by _exit(): into a
    # pipe, only a line-buffered stdout gets out.
    rc, out = run_quiet(["stdbuf", "-oL", binary, "--version"], timeout=10)
    m = re.search(r"passt (\S+)", out) if rc == 0 else None
    own = m.group(1) if m and m.group(1) != "unknown" else None
    if own is None and os.path.realpath(binary) == SYSTEM_PASST:
        return versions.package_version("passt")
    return own


@functools.lru_cache(maxsize=None)
def has_vhost_user(binary):
    """Whether this passt has a vhost-user mode: its --help names
    --vhost-user (bookworm's does not, trixie's does). Older passts end
    --help with status 1: only the text counts."""
    out = run_quiet(["stdbuf", "-oL", binary, "--help"], timeout=10)[1]
    return re.search(r"^\s*--vhost-user\b", out, re.M) is not None


def describe(binary=None):
    """One line for doctor and the run's versions; None without a passt."""
    binary = binary or path()
    if binary is None:
        return None
    v = version(binary)
    deb = " (Debian passt)" if os.path.realpath(binary) == SYSTEM_PASST else ""
    return "%s %s%s" % (v or "version unknown", binary, deb)


def stream_refusal(binary, why):
    """None when this passt carries the stream; else why (the old passt's
    failure), the version found and how to get a newer one."""
    if binary is None:
        return None  # the backend's own check says passt is missing
    v = version(binary)
    date = snapshot_date(v)
    if date is not None and date >= STREAM_MIN:
        return None
    return "%s; found %s %s; %s" % (why, binary, v or "(version unknown)", MAKE_PASST)
