"""What works: every app x backend x topology the runner can set up, and
one line why for the rest. `vnperf run` and `sweep` refuse an unsupported
combination with that line and status 64 before anything starts (no QEMU,
no backend, no KVM probe); docs/runner-run.md's table is `vnperf support
--markdown` (tests/py checks the two agree)."""

from .. import backends, optypes, topologies
from ..backends import testpmd, udphost, vhostpeer, wire
from ..topologies.host import PASST
from ..errors import usage
from . import identity, iperf, passtbin, qemucmd, vlan

NET_APPS = ("gen", "sink", "reflect", "fwd", "rr", "iperf", "replay", "reneg")
TOPOLOGIES = topologies.NAMES

# Seen in passt's own capture (-p) with the host's iperf wired as over
# slirp (docs/lwip.md): both directions stall, whatever the sessions. Said
# when the passt the runner would start is that old (passtbin.py).
PASST_STREAM = ("Debian's passt 0.0~git20230309 stalls lwIP's TCP: it drops the data of the "
                "segment that completes the guest's handshake (guest->host waits a 3 s "
                "retransmit) and ignores the guest's ACKs on a forwarded port (host->guest "
                "resends its first window every 2 s; the Linux guest's stream fails there too)")

# (app, topology) -> {backend: None (works) or why not}; a backend left
# out of a row gets the row's "*" entry. Each topology holds its rows.
TABLE = {(app, t.name): row for t in topologies.ALL.values() for app, row in t.rows.items()}
OWN_NIC = ("a virtio-net -device of your own has no host end the runner knows: gen only, "
           "one guest, guest-side counts")

# testpmd forward modes by app (vhost-user, one guest).
PMD_MODES = {"gen": ("rxonly", "io", "mac", "macswap", "5tswap"), "sink": ("txonly", "flowgen")}
PMD_KNOBS = ("fwd_mode", "pmd_burst", "pmd_rxd", "pmd_txd")


# Sweep axes only some apps read (docs/runner-sweep.md, "vnperf sweep"): an app
# not named for an axis ignores it, and every point would measure the
# same. The sender's frames (size, rate) are the host sender's for a sink
# and reflect, the tester's for fwd; an "app role=R" entry wins over the
# app's. The other axes (backend, the driver's and testpmd's knobs, pin,
# builds) are read by every app with a NIC.
APP_AXES = {
    "gen": ("size", "rate"),
    "sink": ("size", "rate"),
    "reflect": ("size", "rate"),
    "fwd": ("size", "rate"),
    "rr": ("sessions",),
    # An rr server answers every connection: sessions= is the client's.
    "rr role=server": (),
    "iperf": ("sessions", "msg_size"),
    # The receive window is the guest server's (iperf -w on the receiver).
    "iperf role=server": ("sessions", "msg_size", "window"),
}
APP_ONLY_AXES = tuple(sorted({a for axes in APP_AXES.values() for a in axes}))


def app_axes(app, role):
    """(who, axes): the app as APP_AXES names it (with its role where an
    entry names one) and the APP_ONLY_AXES it reads."""
    who = "%s role=%s" % (app, role)
    if any(k.startswith(app + " role=") for k in APP_AXES):
        return who, APP_AXES.get(who, APP_AXES.get(app, ()))
    return app, APP_AXES.get(app, ())


def check_axes(opts, axes):
    """Refuses (status 64, one line, before anything starts) a sweep or
    search axis the main guest's app ignores, as `run` refuses a config
    word that contradicts an option."""
    p = identity.guest_params(identity.main_words(opts))
    who, reads = app_axes(p["app"], p["role"])
    for name in axes:
        if name in APP_ONLY_AXES and name not in reads:
            raise usage("--%s: app %s does not read it, every point would measure the same "
                        "(%s: %s; --%s is for %s)" % (
                            _flag(name), who, who,
                            ", ".join("--" + _flag(a) for a in reads) or "none of these axes",
                            _flag(name), ", ".join(readers(name))))


def readers(axis):
    """The APP_AXES entries that read an axis; an app's role entry only
    where the app's own does not."""
    return [k for k, v in APP_AXES.items()
            if axis in v and axis not in (APP_AXES.get(k.split()[0]) if " " in k else ())]


def _flag(name):
    return name.replace("_", "-")


def why_not(app, backend, topology):
    """None when the combination works, else one line why not."""
    if app not in NET_APPS:
        return None  # the NIC, if any, is not used
    if backend == "none":
        return "app %s needs a network backend (--backend)" % app
    topo = topologies.named(topology)
    row = topo.rows.get(app)
    if row is None:
        return topo.no_row
    return row.get(backend, row["*"])


def host_refusal(app, backend):
    """None when this host can run what the runner supports of app over
    backend; else one line why not: the stream over a passt too old to
    carry it (passtbin.py)."""
    if app == "iperf" and backend in PASST:
        return passtbin.stream_refusal(passtbin.path(), PASST_STREAM)
    return None


def check(opts):
    """Raises a usage error (status 64) with one line when the options
    name something that cannot work; before anything starts."""
    backends.known(opts.backend)
    p = identity.guest_params(identity.main_words(opts))
    topo = topologies.topology_for(opts)
    if opts.backend == "none" and qemucmd.own_nic(opts.qemu_args):
        line = None if p["app"] not in NET_APPS or topo.own_nic_app(p["app"]) else OWN_NIC
    else:
        line = why_not(p["app"], opts.backend, topo.name)
    if line is None:
        line = topo.app_refusal(opts.backend, p)
    if line is None:
        line = ip6_refusal(opts, p, topo) or passt_refusal(opts, p)
    if line is None:
        line = vlan.refusal(opts, p["app"], topo)
    if line is None:
        line = host_refusal(p["app"], opts.backend)
    if line is None:
        line = topo.option_refusal(opts) or _pmd_knobs(opts, p, topo) or _feeder(opts, p)
    if line is None:
        line = queues_refusal(opts, topo) or reneg_refusal(opts)
    if line is not None:
        raise usage("%s over %s%s: %s" % (p["app"], opts.backend, topo.flag, line))


def reneg_refusal(opts):
    """App reneg without its sets or frames per set, with a stream_s= no
    host iperf end serves, or a uso= whose segments no host end counts: one
    line; else None."""
    if opts.app != "reneg":
        return None
    if opts.sets is None or opts.count is None:
        return "needs --sets (e.g. all/-event_idx,-ring_packed) and --count (frames per set)"
    secs = iperf.reneg_stream_s(opts)
    if secs is None:
        return "stream_s=%s: the seconds of each set's TCP stream, 0..%d" % (
            iperf.config_value(opts.config, "stream_s", ""), iperf.RENEG_STREAM_MAX_S)
    if secs and not wire.reneg_stream_end(opts):
        return "stream_s=%d: each set's TCP stream needs the host's iperf 2 server, which " \
            "the runner starts over %s or %s (in its own namespace's tap, not your own --tap " \
            "or --bridge)" % (secs, ", ".join(wire.RENEG_STREAM[:-1]), wire.RENEG_STREAM[-1])
    if secs and opts.backend in PASST:
        return passtbin.stream_refusal(passtbin.path(), PASST_STREAM)
    if udphost.reneg_uso(opts) and not wire.reneg_uso_end(opts):
        return "uso=%s: each set's USO segments are counted by a UDP socket the runner starts " \
            "over %s only (in its own namespace's tap, not your own --tap or --bridge; IPv4)" \
            % (iperf.config_value(opts.config, "uso", ""), " and ".join(wire.RENEG_USO))
    return None


def queues_refusal(opts, topo):
    """--queues and --vcpus: what has one queue pair, or cannot give the
    guest more CPUs, in one line; None when they can run."""
    for name in ("queues", "vcpus"):
        n = getattr(opts, name)
        if n is not None and not 1 <= n <= qemucmd.MAX_QUEUES:
            return "--%s %d: 1..%d (the guest's %s=)" % (name, n, qemucmd.MAX_QUEUES, name)
    q = opts.queues or 1
    if q == 1 and (opts.vcpus or 1) == 1:
        return None
    if opts.engine != "qemu" and q > 1 and opts.backend != "vhost-user":
        return "--queues %d: --engine libvirt only over vhost-user (its dgram and socket " \
            "interfaces have one queue pair)" % q
    line = topo.queues_refusal(opts)
    if line is not None:
        return line
    if q == 1:
        return None
    if opts.tap or opts.bridge:
        return "--queues %d: your own tap is opened as it is, with one queue (the runner's " \
            "namespace tap is multi_queue)" % q
    most = backends.REGISTRY[opts.backend].max_queues
    # none: no NIC of the runner's; a -device of your own says its queues.
    if q > most and opts.backend != "none":
        return "--queues %d: %s has one queue pair (tap, vhost-net or vhost-user have %d)" % (
            q, opts.backend, qemucmd.MAX_QUEUES)
    if opts.backend == "vhost-user" and not opts.vhost_user_socket and \
            vhostpeer.feeder(opts, testpmd.plan(opts)[1]) == "peer-dpdk":
        return "--queues %d: the peer-dpdk feeder drives one queue pair (--feeder testpmd)" % q
    return None


# rr over passt: a UDP message must fit one frame at the guest's MTU of
# 1500 (1500 - 20 - 8 over IPv4, 1500 - 40 - 8 over IPv6): passt sends each
# datagram whole, where the driver drops a frame over the MTU (len_errors),
# and takes none of the guest's in fragments (tap.c, tap4_is_fragment: "Can't
# process IPv4 fragments"; ip.c, ipv6_l4hdr steps over IPv6's fragment
# header as over any other, reassembling nothing).
PASST_UDP_MOST = {False: 1472, True: 1452}


def passt_refusal(opts, p):
    """rr over passt with a UDP message over one frame: one line; else None."""
    if opts.backend != "passt" or p["app"] != "rr" or p["proto"] != "udp":
        return None
    most = PASST_UDP_MOST[opts.ip6]
    for key in ("req_size", "resp_size"):
        if optypes.digits(p[key]) and int(p[key]) > most:
            return "proto=udp %s=%s: over %d bytes (IPv%d) a message is more than one frame " \
                "at the guest's 1500-byte MTU, and passt neither fragments the datagrams it " \
                "sends nor reassembles the guest's (proto=tcp, or %s=%d at most)" % (
                    key, p[key], most, 6 if opts.ip6 else 4, key, most)
    return None


# --ip6: the backends whose host end the runner addresses in IPv6.
IP6_BACKENDS = ("tap", "vhost-net", "user", "passt")
IP6_APPS = ("iperf", "rr")


def ip6_refusal(opts, p, topo):
    """--ip6: lwIP's apps over the runner's own addressing only; None
    when it can run, else one line why not."""
    if not opts.ip6:
        return None
    if p["app"] not in IP6_APPS:
        return "--ip6: lwIP's apps only (iperf, rr); app %s builds its own IPv4 frames" % p["app"]
    if not topo.ip6:
        return "--ip6: --topology host only"
    if opts.tap or opts.bridge:
        return "--ip6: the runner puts no IPv6 address on your own tap or bridge (give " \
            "ip6= and dst_ip6= after -- without --ip6)"
    if opts.backend not in IP6_BACKENDS:
        return "--ip6: %s has no host end over IPv6 (%s)" % (opts.backend,
                                                              ", ".join(IP6_BACKENDS))
    if opts.backend == "user" and p["role"] == "server":
        return "--ip6: over user, the guest server is reached through hostfwd=, which " \
            "takes IPv4 addresses only in QEMU 7.2 (role=client, or tap)"
    return None


def _pmd_knobs(opts, p, topo):
    given = [k for k in PMD_KNOBS if getattr(opts, k) is not None]
    if not given:
        return None
    if opts.backend != "vhost-user":
        return "--%s is a testpmd knob: vhost-user only" % given[0].replace("_", "-")
    line = topo.pmd_refusal(opts, given[0])
    if line is not None:
        return line
    mode = opts.fwd_mode
    if mode is None:
        return None
    allowed = PMD_MODES.get(p["app"], ())
    if mode not in allowed:
        return "--fwd-mode %s: %s" % (mode, "one of %s for app %s" % (", ".join(allowed),
                                                                     p["app"])
                                      if allowed else "app %s sets its own" % p["app"])
    return None


def _feeder(opts, p):
    """--feeder: vhost-user's, for a sink; peer-dpdk runs no testpmd."""
    f = opts.feeder
    if f is None:
        return None
    if opts.backend != "vhost-user":
        return "--feeder picks vhost-user's sender: vhost-user only"
    if p["app"] != "sink":
        return "--feeder %s: only a sink is fed by a choice of sender" % f
    knob = next((k for k in PMD_KNOBS if getattr(opts, k) is not None), None)
    if f == "peer-dpdk" and knob:
        return "--%s is a testpmd knob: the peer-dpdk feeder runs no testpmd (--feeder " \
            "testpmd)" % knob.replace("_", "-")
    return None


def markdown():
    """The table of docs/runner-run.md: one row per app and topology, one
    column per backend; numbered reasons under it."""
    names = [b for b in backends.REGISTRY if b != "none"]
    reasons = []
    rows = ["| app | topology | " + " | ".join("`%s`" % b for b in names) + " |",
            "|---|---|" + "---|" * len(names)]
    for app in NET_APPS:
        for topo in TOPOLOGIES:
            cells = []
            for b in names:
                why = why_not(app, b, topo)
                if why is None:
                    cells.append("yes")
                    continue
                if why not in reasons:
                    reasons.append(why)
                cells.append("no (%d)" % (reasons.index(why) + 1))
            rows.append("| `%s` | %s | %s |" % (app, topo, " | ".join(cells)))
    rows.append("")
    rows += ["%d. %s" % (i + 1, why) for i, why in enumerate(reasons)]
    rows.append("")
    rows.append("Over dgram and socket, rr runs against the host peer, which sends each UDP "
                "request back as it is: `proto=udp`, `role=client` and `resp_size` equal to "
                "`req_size` only (the rest: `--topology guests`). Over tap and vhost-net, "
                "vnperf-rrserver answers a `role=client` guest, UDP or TCP, any sizes. Over "
                "passt it answers on the host's loopback (`--ip6`: the `::1` of passt's "
                "namespace), where passt maps the guest's gateway, on a port the runner finds "
                "free there (the guest's `dst_port=`, unless given); UDP requests and answers "
                "one frame each (at most 1472 bytes, 1452 with `--ip6`: passt forwards a "
                "datagram whole and reassembles no fragments), refused above. passt keeps the "
                "data the guest has not acknowledged in its socket (it peeks, `tcp.c`) and "
                "exits with QEMU, so a TCP run's server may count up to one `io_errors` per "
                "session at the end (the reset of that close), the transactions still "
                "agreeing.")
    rows.append("")
    rows.append("iperf over passt needs a passt newer than bookworm's 0.0~git20230309, which "
                "stalls lwIP's TCP (docs/lwip.md): `make passt` builds trixie's "
                "0.0~git20250503 into build/passt/passt, which the runner prefers; with the "
                "old one the run is refused with that reason.")
    return "\n".join(rows)
