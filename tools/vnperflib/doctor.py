"""`vnperf doctor`: what this host has for vnperf, and what is missing."""

import os
import re
import shutil

from . import accel, backends, peer, plots, qemucmd
from .errors import RunnerError
from .proc import run_quiet


def version(argv, pattern=r"\d+\.\d+(\.\d+)?"):
    if shutil.which(argv[0]) is None:
        return None
    rc, out = run_quiet(argv, timeout=10)
    m = re.search(pattern, out)
    return m.group(0) if m else out.strip().splitlines()[0] if out.strip() else "?"


def check_backend(name, opts):
    be = backends.make(name, opts)
    try:
        be.check()
    except RunnerError as e:
        return False, e.line
    return True, "ready"


def report(opts, session):
    rows = []
    img = opts.image
    rows.append(("image", img if os.path.isfile(img) else "%s missing (run make)" % img))
    q = version([opts.qemu, "--version"])
    rows.append(("qemu", q or "%s not found (Debian qemu-system-x86)" % opts.qemu))
    rows.append(("ovmf", "/usr/share/ovmf/OVMF.fd" if os.path.isfile("/usr/share/ovmf/OVMF.fd")
                 else "missing (Debian ovmf)"))
    rows.append(("dpdk-testpmd", version(["dpdk-testpmd", "--version"], r"DPDK \S+")
                 or "not found (Debian dpdk-dev)"))
    rows.append(("passt", "present" if shutil.which("passt") else "not found (Debian passt)"))
    rows.append(("iperf", version(["iperf", "--version"]) or "not found (Debian iperf)"))
    rows.append(("host peer", peer.peer_binary() if os.access(peer.peer_binary(), os.X_OK)
                 else "%s missing (run make)" % peer.peer_binary()))
    rows.append(("matplotlib", "present (PNG plots)" if plots.available()
                 else "absent (tables and CSV only; Debian python3-matplotlib)"))
    if os.path.isfile(img) and q:
        ok, why = accel.probe_kvm(session, img, opts.machine, opts.qemu)
        rows.append(("accelerator", ("kvm: " if ok else "tcg: ") + why))
    else:
        rows.append(("accelerator", "not probed (needs the image and QEMU)"))
    missing = 0
    for name in backends.names():
        if name == "none":
            continue
        ok, why = check_backend(name, opts)
        missing += not ok
        rows.append(("backend " + name, why))
    return rows, missing
