"""What defines a run: everything a result depends on that the runner
knows (app and its parameters, backend and its knobs, topology, engine,
machine, accelerator, durations and sizes, QEMU and backend versions, host
CPUs and kernel, the image). Every value is a string. compare pairs only runs whose
identities agree, except in the dimensions it is told are the A/B ones."""

import hashlib

from .. import topologies
from . import pinning, priority, versions

# The guest's defaults (docs/config.md; tests/py checks the two agree), so
# that a word left out and the same word given with its default value
# name the same run.
GUEST_DEFAULTS = {
    "app": "selftest", "duration": "0", "count": "0", "seed": "1",
    "ring": "0", "kick_batch": "0", "rx_refill": "64",
    "rx_coalesce": "1", "rx_coalesce_us": "1000", "txfull": "wait", "features": "",
    "indirect": "auto", "qreset_at": "0",
    "size": "64", "rate": "max", "burst": "32", "flows": "", "imix": "", "path": "raw",
    "sessions": "1", "window": "262144", "role": "client", "proto": "udp", "req_size": "1",
    "resp_size": "1", "alloc_mb": "16", "fault": "pf", "case": "all", "notify": "poll",
    "sets": "",
}
# queues= and vcpus= are left out: a run without --queues has neither in
# its identity, as every result recorded before them, so the two pair in
# compare.

# Words that do not change what is measured: addresses and ports the
# runner picks per backend, console output.
NOT_DEFINING = ("ip", "mask", "gw", "dhcp", "dst_ip", "mac", "dst_mac", "src_port",
                "dst_port", "interval_ms", "verbose")

# The spellings of "as fast as possible" (docs/config.md, rate=).
_UNPACED = ("", "0", "max")


def guest_params(words):
    """The defining guest parameters of config words, defaults filled in;
    EVENT_IDX switched off through features= becomes event_idx=off, the
    rest stays in features ("none" when nothing else is switched off)."""
    p = dict(GUEST_DEFAULTS)
    for w in words:
        k, _, v = w.partition("=")
        if k not in NOT_DEFINING:
            p[k] = v
    if p["rate"].lower() in _UNPACED:
        p["rate"] = "max"
    feats = [f for f in p["features"].split(",") if f]
    p["event_idx"] = "off" if "-event_idx" in feats else "on"
    # EVENT_IDX has its own key (a sweep axis); features holds the other
    # bits switched off, and says so when there is none (an empty value
    # read as if nothing had been recorded).
    p["features"] = ",".join(f for f in feats if f != "-event_idx") or "none"
    return p


# Keys results recorded before them lack, and the value that meant then:
# no thread plan (--placement, 2026-12-02), the guest's polling default.
BEFORE = {"placement": "none", "notify": "poll"}


def recorded(ident):
    """An identity from a results file in today's terms: features was ''
    for no other bit switched off before it said none; BEFORE's keys."""
    out = dict(ident, features="none") if ident.get("features") == "" else dict(ident)
    for k, v in BEFORE.items():
        out.setdefault(k, v)
    return out


def app_words(opts):
    """The app's config words from the runner options (--app, --duration,
    --size, --rate, --count, --queues, --vcpus)."""
    words = ["app=%s" % opts.app]
    for name, fmt in (("duration", "%d"), ("size", "%d"), ("rate", "%s"), ("count", "%d"),
                      ("queues", "%d"), ("vcpus", "%d")):
        v = getattr(opts, name)
        if v is not None:
            words.append(("%s=" + fmt) % (name, v))
    if opts.sets is not None:
        words.append("sets=%s" % opts.sets)
    if opts.pcap is not None:
        from . import pcap
        words += pcap.words(opts)
    return words


def main_words(opts):
    """The main (sending) guest's config words but the backend's
    addresses: the app's, then those after --, which win."""
    return app_words(opts) + list(opts.config)


def _opt(opts, name, default="default"):
    v = getattr(opts, name)
    return default if v is None else str(v)


def of_run(opts, words, accel, pmd_mode=None):
    """The identity of a run of these runner options whose main guest gets
    config words (the runner's and those after --); accel: the one used;
    pmd_mode: testpmd's forward mode (vhost-user)."""
    ident = guest_params(words)
    if opts.event_idx is False:
        ident["event_idx"] = "off"
    if opts.stream_text is not None:
        # What the guest sends: the stream file as encoded (docs/streams.md).
        ident["streams"] = hashlib.sha256(opts.stream_text.encode()).hexdigest()[:16]
    image = [versions.file_id(opts.image)]
    if opts.boot == "uefi":
        image.append("esp " + versions.file_id(opts.esp))
    ident.update({
        "backend": opts.backend,
        "engine": opts.engine,
        "topology": opts.topology,
        "machine": opts.machine,
        "boot": opts.boot,
        "accel": accel,
        "memory_mb": str(opts.memory),
        "queue_size": _opt(opts, "queue_size", "device"),
        "pin": pinning.describe(opts.pin) or "none",
        "nice": priority.describe(opts.nice) or "none",
        "qemu_args": " ".join(opts.qemu_args or ()) or "none",
        "qemu": opts.qemu,
        "qemu_version": versions.qemu(opts.qemu),
        "backend_version": versions.backend(opts.backend, ident["app"],
                                            opts.testpmd) or "-",
        "host_cpus": str(versions.host_cpus()),
        "host_kernel": versions.host_kernel(),
        "image": opts.image,
        "image_sha": ", ".join(image),
    })
    if opts.sock_rcvbuf:
        ident["sock_rcvbuf"] = str(opts.sock_rcvbuf)
    if opts.pcap is not None:
        # Two captures are two runs to compare: the file and what it held.
        ident["pcap"] = "%s %s" % (opts.pcap, versions.file_id(opts.pcap))
    if opts.ip6:
        # Only when set: IPv4 runs pair with those recorded before --ip6.
        ident["ip_version"] = "6"
    ident.update(topologies.topology_for(opts).identity(opts))
    if opts.backend == "vhost-user":
        ident.update(fwd_mode=pmd_mode or _opt(opts, "fwd_mode"),
                     pmd_burst=_opt(opts, "pmd_burst"), pmd_rxd=_opt(opts, "pmd_rxd"),
                     pmd_txd=_opt(opts, "pmd_txd"),
                     feeder=_opt(opts, "feeder"))
        if opts.vhost_user_socket:
            # No testpmd: the user's backend, named by its socket and count.
            ident.update(fwd_mode="-", pmd_burst="-", pmd_rxd="-", pmd_txd="-", feeder="-",
                         backend_version="yours", vhost_user_socket=opts.vhost_user_socket,
                         vhost_user_qemu="server" if opts.vhost_user_server else "client",
                         host_count=opts.host_count.text)
    return ident
