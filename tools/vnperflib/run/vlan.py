"""netif_vlan=: the guest's lwIP sends every frame 802.1Q-tagged with that
VLAN id and takes only frames of it (docs/lwip.md, "VLAN"); the runner
matches it on the host end of the namespace's tap (tap, vhost-net), the
app's host end (iperf, vnperf-rrserver) behind it: VLAN interfaces on
the tap (the kernel's 8021q) carrying the peer's address, or where the
kernel has none, a tc-bpf program on the tap popping and pushing the tags
(backends/vlantc.py), the tap carrying the address (choose_end, said in
one line). With --topology guests both guests get the word. Where the
host end cannot be tagged, the run is refused in one line (status 64)
before boot. netif_svlan= puts an 802.1ad service tag outside it (QinQ):
between two guests, or over tap (an 802.1ad interface with an 802.1Q one
on it, or the tc-bpf end)."""

import os
import platform

from ..optypes import digits
from . import identity
from .iperf import config_value

KEY = "netif_vlan"
SKEY = "netif_svlan"    # QinQ: an 802.1ad service tag outside KEY's (docs/lwip.md, "QinQ")
PKEY = "netif_pcp"      # the guest's priority; the tc-bpf end tags the host's frames with it
PCP_MAX = 7             # a 3-bit field (IEEE 802.1Q-2018 s6.9.3)
# --vlan-end: who matches the tag on the tap (auto: 802.1Q interfaces
# where the kernel makes them, else tc-bpf).
ENDS = ("auto", "interface", "tc-bpf")
VID_MAX = 4094          # 4095 is reserved (IEEE 802.1Q-2018 Table 9-2)
APPS = ("iperf", "rr")  # the apps whose traffic goes through lwIP
BACKENDS = ("tap", "vhost-net")
# Why the other host ends cannot match the tag.
UNTAGGED = {
    "user": "QEMU's slirp takes untagged frames only",
    "passt": "passt takes untagged frames only",
    "passt-vhost-user": "passt takes untagged frames only",
    "dgram": "the host peer answers untagged frames only",
    "socket": "the host peer answers untagged frames only",
}


def given(opts, key=KEY):
    """The netif_vlan= (or key=) word's value as given after -- (once:
    options.py), or None."""
    return config_value(identity.main_words(opts), key, None)


def vid(opts):
    """The VLAN id of a checked run (refusal() passed), or None."""
    v = given(opts)
    return None if v is None else int(v)


def vid_refusal(key, v, note=""):
    """One line when a word's value v is not a VLAN id (1..VID_MAX in
    ASCII digits), else None."""
    if digits(v) and 1 <= int(v) <= VID_MAX:
        return None
    return "%s=%s: a VLAN id is 1..%d%s" % (key, v, VID_MAX, note)


def svid(opts):
    """The service VLAN id of a checked run, or None."""
    s = given(opts, SKEY)
    return None if s is None else int(s)


def pcp(opts):
    """netif_pcp= of a checked run, or None."""
    p = given(opts, PKEY)
    return None if p is None else int(p)


def svlan_refusal(opts):
    """None when netif_svlan= and netif_pcp= (if given) can run, else one
    line why not: a VLAN id beside netif_vlan=, a priority 0..7."""
    p = given(opts, PKEY)
    if p is not None and not (digits(p) and int(p) <= PCP_MAX):
        return "%s=%s: a priority is 0..%d" % (PKEY, p, PCP_MAX)
    s = given(opts, SKEY)
    if s is None:
        return None
    why = vid_refusal(SKEY, s)
    if why:
        return why
    if given(opts) is None:
        return "%s= puts a service tag outside %s='s: give %s= too" % (SKEY, KEY, KEY)
    return None


def refusal(opts, app, topo):
    """None when netif_vlan=, netif_svlan= and --vlan-end (if given) can
    run, else one line why not."""
    v = given(opts)
    if v is None:
        if opts.vlan_end != "auto":
            return "--vlan-end %s: chooses the host end of netif_vlan=: give it" % opts.vlan_end
        return svlan_refusal(opts)
    why = vid_refusal(KEY, v, " (0, untagged, is the default)")
    if why:
        return why
    if app not in APPS:
        return "%s= tags lwIP's frames: app iperf or rr only (app %s builds its own frames; " \
            "a stream's vlan tags them, docs/streams.md)" % (KEY, app)
    if topo.vlan_refusal is not None:
        return "%s=: %s" % (KEY, topo.vlan_refusal)
    if topo.vlan_all_guests:
        if opts.vlan_end != "auto":
            return "--vlan-end %s: between two guests there is no host end" % opts.vlan_end
        return svlan_refusal(opts)  # guests: each one's lwIP matches the other's
    if opts.tap or opts.bridge:
        return "%s=: the runner puts no VLAN interface on your own tap or bridge" % KEY
    if opts.backend not in BACKENDS:
        return "%s=%s: the host end of %s cannot match the tag: %s (tap, vhost-net)" % (
            KEY, v, opts.backend, UNTAGGED.get(opts.backend, "it has no tagged host end"))
    return svlan_refusal(opts)


def kernel_refusal(proc_vlan="/proc/net/vlan", modules="/lib/modules"):
    """None when this host's kernel makes VLAN interfaces: 8021q loaded
    (/proc/net/vlan), or a module `ip link add ... type vlan` loads (in
    modules.dep); else one line why not."""
    if os.path.isdir(proc_vlan):
        return None
    dep = os.path.join(modules, platform.release(), "modules.dep")
    try:
        with open(dep) as f:
            if any(line.split(":", 1)[0].endswith(("/8021q.ko", "/8021q.ko.xz", "/8021q.ko.zst",
                                                   "/8021q.ko.gz")) for line in f):
                return None
    except OSError:
        pass
    return "%s=: this host's kernel has no 802.1Q VLAN interfaces (CONFIG_VLAN_8021Q; " \
        "modprobe 8021q) to match the guest's tag" % KEY


def choose_end(asked, kernel_why, bpf_why):
    """The tap's host end for --vlan-end asked: ("interface" or "tc-bpf",
    one line saying which and why), or (None, one line why neither can
    be); kernel_why is kernel_refusal()'s, bpf_why vlantc.refusal()'s."""
    if asked != "tc-bpf" and kernel_why is None:
        return "interface", "%s=: host end: VLAN interfaces on the tap (the kernel's 8021q)" % KEY
    if asked == "interface":
        return None, kernel_why
    if bpf_why is not None:
        if asked == "tc-bpf":
            return None, "--vlan-end tc-bpf: cannot build the tc program: %s" % bpf_why
        return None, "%s; nor can the runner use its tc-bpf end: %s" % (kernel_why, bpf_why)
    why = "--vlan-end tc-bpf" if asked == "tc-bpf" else \
        "this host's kernel has no 802.1Q VLAN interfaces, CONFIG_VLAN_8021Q"
    return "tc-bpf", "%s=: host end: a tc-bpf program on the tap pops and pushes the tags " \
        "(%s)" % (KEY, why)
