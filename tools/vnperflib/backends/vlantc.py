"""The tc-bpf host end of netif_vlan= (and netif_svlan=) on the
namespace's tap, for a kernel without 802.1Q interfaces (run/vlan.py
chooses it): tools/vlantc/vlan_tc.bpf.c, built per run by Debian's clang
with the run's tags as -D constants into the run's temporary directory,
attached to the tap's clsact ingress (tagged frames of the run popped to
the stack, others dropped) and egress (the stack's frames tagged). The
qdisc and its programs go with the tap when the namespace is deleted.
Its counts come from each program's vt_counts map (bpfmap.py)."""

import json
import os
import shutil
import struct
import sysconfig

from ..errors import failed
from ..run.proc import run_quiet
from . import bpfmap

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "vlantc",
                   "vlan_tc.bpf.c")
HELPERS = "/usr/include/bpf/bpf_helpers.h"   # Debian's libbpf-dev
MAP = "vt_counts"
# vt_counts' slots (enum vt_slot), in order; a count is (frames, bytes).
SLOTS = ("rx_passed", "rx_other", "rx_untagged", "tx_tagged", "failed")
SECTIONS = (("ingress", "vlan_ingress"), ("egress", "vlan_egress"))


def refusal():
    """None when this host can build and attach the program, else why not
    (one phrase)."""
    for prog, pkg in (("clang", "clang"), ("tc", "iproute2")):
        if shutil.which(prog) is None:
            return "no %s (Debian %s)" % (prog, pkg)
    if not os.path.exists(HELPERS):
        return "no %s (Debian libbpf-dev)" % HELPERS
    return None


def cflags(vid, svid=None, pcp=None):
    """The -D constants of one run's tags (validated by run/vlan.py)."""
    return ["-DVT_VID=%d" % vid, "-DVT_SVID=%d" % (svid or 0), "-DVT_PCP=%d" % (pcp or 0)]


def build(outdir, vid, svid=None, pcp=None):
    """The program built for these tags into outdir; its path."""
    obj = os.path.join(outdir, "vlan_tc.o")
    arch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    cmd = ["clang", "-O2", "-g", "-Wall", "-Werror", "-target", "bpf",
           "-I/usr/include/" + arch] + cflags(vid, svid, pcp) + ["-c", SRC, "-o", obj]
    rc, out = run_quiet(cmd)
    if rc != 0:
        raise failed("tc-bpf VLAN end: %s: %s" % (" ".join(cmd), out.strip()))
    return obj


def tc(ns, *args):
    rc, out = run_quiet(["tc", "-n", ns] + list(args))
    if rc != 0:
        raise failed("tc -n %s %s: %s" % (ns, " ".join(args), out.strip()))
    return out


def attach(ns, dev, obj):
    """The program on dev's ingress and egress (a clsact qdisc)."""
    tc(ns, "qdisc", "add", "dev", dev, "clsact")
    for hook, sec in SECTIONS:
        tc(ns, "filter", "add", "dev", dev, hook, "bpf", "da", "obj", obj, "sec", sec)


def prog_id(ns, dev, hook):
    """The id of the program on dev's hook, or None."""
    for f in json.loads(tc(ns, "-j", "filter", "show", "dev", dev, hook) or "[]"):
        prog = f.get("options", {}).get("prog")
        if prog:
            return prog["id"]
    return None


def decode(ingress, egress):
    """{slot: {"frames", "bytes"}} from the two programs' map values (each
    program has its own map: the rx slots are ingress's, tx egress's,
    failures both)."""
    def pair(values, i):
        frames, nbytes = struct.unpack("=QQ", values[i])
        return {"frames": frames, "bytes": nbytes}

    out = {}
    for i, name in enumerate(SLOTS):
        if name.startswith("rx_"):
            out[name] = pair(ingress, i)
        elif name.startswith("tx_"):
            out[name] = pair(egress, i)
        else:
            a, b = pair(ingress, i), pair(egress, i)
            out[name] = {k: a[k] + b[k] for k in a}
    return out


def counts(ns, dev):
    """The programs' counts on dev so far (decode)."""
    values = []
    for hook, _ in SECTIONS:
        pid = prog_id(ns, dev, hook)
        if pid is None:
            raise failed("tc-bpf VLAN end: no program on %s %s" % (dev, hook))
        try:
            values.append(bpfmap.array_values(pid, MAP))
        except OSError as e:
            raise failed("tc-bpf VLAN end: %s's %s map: %s" % (dev, hook, e))
    return decode(*values)


def since(base, now):
    """counts() now less counts() at base, slot by slot."""
    return {k: {f: now[k][f] - base[k][f] for f in now[k]} for k in now}
