"""What every backend is: the Backend interface, the no-NIC backend, and
the guest addressing and device properties the backends share."""

from ..run import qemucmd


class Backend:
    name = "none"
    lossless = False       # host side sees exactly what the guest sent
    needs_shared_mem = False
    netns = None           # namespace QEMU runs in, if any
    max_queues = 1         # queue pairs its netdev takes (--queues)

    def __init__(self, opts):
        self.opts = opts
        self.plan = None

    def place(self, plan):
        """--placement's plan (placement.Plan), before start: for the
        threads the backend places itself (testpmd's lcores)."""
        self.plan = plan

    def placed(self):
        """{thread: cpu} of the plan's threads the backend placed itself."""
        return {}

    def check(self):
        """Raises RunnerError(RUNNER_BACKEND_MISSING) when the host lacks it."""

    def programs(self):
        """[(what, path)]: the programs of build/ it starts on the host
        (artifacts.check refuses a run that lacks one)."""
        return []

    def start(self, session, nguests=1):
        """Starts peers/devices for nguests guests."""

    def nics(self, index):
        """The qemucmd.Nic list for guest index."""
        return []

    def guest_config(self, index):
        """Config words the backend decides (addresses, MACs)."""
        return []

    def qemu_extra(self, index):
        """Extra QEMU arguments for guest index."""
        return []

    def on_guest_ready(self, index):
        """Guest index can take frames now (senders start)."""

    def on_guest_done(self, index):
        """Guest index printed its result: its app stopped counting."""

    def tick(self):
        """Called about every 0.1 s while guests run (cheap sampling)."""

    def finish(self):
        """All guests ended: let the host side drain and stop it."""

    def processes(self):
        """[(role, pid)] of backend processes for CPU accounting."""
        return []

    def live(self):
        """Host-side counts now (cheap), for progress lines; {} if none."""
        return {}

    def collect(self):
        """Final host-side counts: {"rx_packets", "rx_bytes", "tx_packets",
        "tx_bytes", ...} as seen by the host end (rx = from the guest)."""
        return {}

    def healthy(self):
        """None, or one line saying which backend process died."""
        return None

    def notes(self):
        """Lines the runner says before boot: how the backend was set up
        where this host decided it (hash_note among them)."""
        note = self.hash_note()
        return [note] if note else []

    def hash_note(self):
        """One line where --queues > 1 runs without QEMU's rss=on,hash=on
        (the hash reports the guest checks); None where they are wired or
        one pair is used."""
        if (self.opts.queues or 1) < 2 or self.max_queues < 2:
            return None
        return "%s: no rss=on,hash=on: QEMU hashes (VIRTIO_NET_F_HASH_REPORT) only in its own " \
            "virtio-net (tap, vhost=off); hash reports not checked" % self.name


class NoBackend(Backend):
    """No NIC at all (selftest and the other non-network apps)."""


def guest_mac(index):
    return "52:54:00:00:00:%02x" % (index + 1)


def guest_ip(index):
    return "10.0.2.%d" % (15 + index)


def nic_props(opts):
    """virtio-net device properties from the runner options."""
    props = {}
    if opts.event_idx is not None:
        props["event_idx"] = "on" if opts.event_idx else "off"
    if opts.queue_size:
        props["rx_queue_size"] = opts.queue_size
        props["tx_queue_size"] = opts.queue_size
    props.update(qemucmd.mq_props(opts.queues, opts.machine))
    return props


def live_from_peer(pr):
    """Progress-line figures: what the host end counted so far."""
    if pr is None:
        return {}
    c = pr.live()
    if pr.mode == "send" and "sent" in c:
        return {"host sent": c["sent"]}
    if "packets" in c:
        out = {"host rx": c["packets"]}
        if "lost" in c:
            out["lost"] = c["lost"]
        return out
    return {}

