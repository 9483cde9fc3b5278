"""`vnperf doctor`: what this host has for vnperf (accelerator and why,
every backend and what it lacks, tool versions). Reports; never fails."""

import json
import os
import shutil
import sys

from .. import backends, options, optypes
from ..analysis import hostcount
from ..backends import ownvhost, tap
from ..errors import RunnerError
from ..report import plots
from ..report.tables import kv_table
from . import accel, libvirtconn, libvirtstage, nextroot, peer, qemucmd, scratch, support
from . import versions as versions_
from .proc import Session, run_quiet

OVMF = "/usr/share/ovmf/OVMF.fd"


def next_rows():
    """build/next (make next): its versions, and its QEMU asked through the
    wrapper the runner uses, so a root that cannot run shows here."""
    if nextroot.stamp() is None:
        return [("next root", nextroot.describe())]
    above = nextroot.open_above(nextroot.DRIVERS)
    return [("next root", nextroot.describe()),
            ("next qemu", versions_.qemu(nextroot.qemu("next"))),
            ("next dpdk-testpmd", "unusable: DPDK 24.11 loads no driver below the "
             "world-writable %s" % above if above else
             versions_.testpmd(nextroot.testpmd("next")))]


def versions(qemu, testpmd):
    found = shutil.which(qemu) is not None
    return [
        ("qemu", versions_.qemu(qemu) if found else "%s not found (Debian qemu-system-x86)" % qemu),
        ("ovmf", ("%s (Debian ovmf %s)" % (OVMF, versions_.package_version("ovmf") or "?"))
         if os.path.isfile(OVMF) else "%s missing (Debian ovmf): no UEFI boots" % OVMF),
        ("dpdk-testpmd", versions_.testpmd(testpmd)
         or "%s not found (Debian dpdk-dev): no vhost-user" % testpmd),
    ] + next_rows() + [
        ("passt", versions_.passt() or "not found (Debian passt): no passt backend"),
        ("iperf", versions_.iperf() or "not found (Debian iperf): no app=iperf peer"),
        ("python3", "%d.%d.%d (%s)" % (sys.version_info[:3] + (sys.executable,))),
        ("matplotlib", "present: sweeps write PNG plots" if plots.available()
         else "absent (Debian python3-matplotlib): sweeps write tables and CSV only"),
    ]


def accelerator(session, image, machine, qemu):
    if not os.path.isfile(image):
        return "not probed: %s missing (run make)" % image
    if shutil.which(qemu) is None:
        return "not probed: %s not found" % qemu
    ok, why = accel.probe_kvm(session, image, machine, qemu)
    return ("kvm: " if ok else "tcg (KVM unusable): ") + why


def netns_ability(session):
    """Creates and deletes a namespace: the tap backends' first step."""
    if shutil.which("ip") is None:
        return "no: ip not found (Debian iproute2)"
    if os.geteuid() != 0:
        return "no: needs root (CAP_NET_ADMIN)"
    ns = "vnperf-doctor-%d" % os.getpid()
    rc, out = run_quiet(["ip", "netns", "add", ns])
    if rc != 0:
        return "no: ip netns add: %s" % (out.strip() or "status %d" % rc)
    session.on_close(run_quiet, ["ip", "netns", "del", ns], what="delete namespace " + ns)
    return "yes (created and deleted %s)" % ns


def backend_rows(opts):
    """(rows, ready names, missing names)."""
    rows, ready, missing = [], [], []
    for name in backends.names():
        if name == "none":
            continue
        try:
            backends.make(name, opts).check()
        except RunnerError as e:
            rows.append(("backend " + name, "missing: " + e.line))
            missing.append(name)
            continue
        refused = [(app, why) for app in support.NET_APPS
                   if support.why_not(app, name, "host") is None
                   for why in (support.host_refusal(app, name),) if why is not None]
        rows.append(("backend " + name, "ready" + "".join(
            "; app=%s refused: %s" % r for r in refused)))
        ready.append(name + "".join(" (not %s)" % app for app, _ in refused))
    return rows, ready, missing


def own_rows(opts):
    """--tap IF, --bridge BR: what the run would check of them, one row
    each (exists, is a tap or bridge, is up, permissions)."""
    rows = []
    for option, dev, facts in (("--tap", opts.tap, tap.tap_facts),
                               ("--bridge", opts.bridge, tap.bridge_facts)):
        if dev:
            rows += [("%s %s %s" % (option, dev, what), "yes" if why is None else "no: " + why)
                     for what, why in facts(dev)]
    return rows


def vhost_user_rows(opts):
    """--vhost-user-socket PATH: one row per fact about the socket (exists,
    is a socket, accepts or is free for QEMU to listen, permissions);
    --host-count: whether it can be read now. Each "yes" or what is missing."""
    rows = []
    if opts.vhost_user_socket:
        rows += [("vhost-user socket " + name, "yes" if why is None else "no: " + why)
                 for name, why in ownvhost.socket_facts(opts.vhost_user_socket,
                                                        opts.vhost_user_server)]
    if opts.host_count.kind != "none":
        try:
            hostcount.HostCount(opts.host_count).probe()
            rows.append(("host count", "%s: readable" % opts.host_count.text))
        except RunnerError as e:
            rows.append(("host count", "no: " + e.line))
    return rows


def report(opts):
    """[(name, value)] for the table, and the same as a dict."""
    img, qemu = opts.image, opts.qemu
    rows = [("image", img if os.path.isfile(img) else "%s missing (run make)" % img)]
    pb = peer.peer_binary()
    rows.append(("host peer", pb if os.access(pb, os.X_OK) else "%s missing (run make)" % pb))
    rows += versions(qemu, opts.testpmd)
    rows.append(("cpus", "%d online" % (os.cpu_count() or 0)))
    rows.append(("/dev/kvm", "present" if os.path.exists("/dev/kvm") else "missing"))
    rows.append(("/dev/vhost-net", "present" if os.path.exists("/dev/vhost-net")
                 else "missing: no vhost-net backend"))
    rows.append(("/dev/net/tun", "present" if os.path.exists("/dev/net/tun")
                 else "missing: no tap backends"))
    with Session() as s:
        rows.append(("ip netns", netns_ability(s)))
        rows.append(("accelerator", accelerator(s, img, opts.machine, qemu)))
    rows.append(("libvirt", libvirtconn.describe()))
    brows, ready, missing = backend_rows(opts)
    rows += brows + own_rows(opts) + vhost_user_rows(opts)
    rows.append(("summary", "%d backends ready (%s)%s" % (
        len(ready), ", ".join(ready), "; missing: " + ", ".join(missing) if missing else "")))
    return rows


def add_arguments(p):
    p.add_argument("--image", default=qemucmd.default_image())
    p.add_argument("--machine", choices=qemucmd.MACHINES, default="microvm")
    p.add_argument("--qemu", default=qemucmd.DEFAULT_QEMU,
                   help="QEMU binary, or system, or next (make next)")
    p.add_argument("--testpmd", default=options.default("testpmd"),
                   help="dpdk-testpmd binary, or system, or next (make next)")
    p.add_argument("--json", action="store_true", help="print the report as a JSON object")
    p.add_argument("--tap", type=optypes.ifname, default=None, metavar="IF",
                   help="also check your own tap for `run --tap IF`")
    p.add_argument("--bridge", type=optypes.ifname, default=None, metavar="BR",
                   help="also check your own bridge for `run --bridge BR`")
    p.add_argument("--clean", action="store_true", help="only remove what runners killed with "
                   "SIGKILL left (their temp directories, DPDK prefixes, libvirt staging "
                   "folders: those whose PID is gone), and say what")


def clean():
    """`vnperf doctor --clean`: what dead runners left, removed."""
    removed = scratch.clean_stale() + libvirtstage.clean_stale()
    for p in removed:
        print("removed " + p)
    print("%d left by dead runners removed" % len(removed))
    return 0


def main(ns):
    """`vnperf doctor`: prints the report; 0 whatever the host lacks."""
    if ns.clean:
        return clean()
    # Backend checks look at the options a plain `vnperf run` would have.
    # Not options.build: doctor reports each option's row (--host-count
    # without a socket, --tap with --bridge) where a run refuses them.
    opts = nextroot.binaries(options.RunOptions(**options.run_fields(ns), app="gen"))
    rows = report(opts)
    if opts.json:
        print(json.dumps(dict(rows), indent=1, sort_keys=True))
    else:
        print(kv_table(rows))
    return 0
