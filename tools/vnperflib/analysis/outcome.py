"""What a finished run amounts to: each guest's part of the report, both
sides' counts merged, the queue pairs and streams, the metrics sweep and
compare work on, and the run's status with one line why. Each is a typed
part of the run's result.RunResult (result.py), read by attribute."""

from .. import exitcodes, result
from ..errors import printable
from ..run import iperf
from . import counts, hostcpu, renegsets
from .stats import number as _num


def guest_report(g):
    """Guest g's result.GuestReport: every member written, None too."""
    c = g.console
    samples = tuple(c.all("sample"))
    return result.GuestReport.given(
        label=g.label, argv=tuple(g.argv), qemu_status=g.qemu_status, guest_code=g.guest_code,
        status=g.status(), status_name=exitcodes.status_name(g.status()),
        timed_out=g.timed_out, stopped=g.stopped, started=g.proc is not None,
        why_no_exit=g.why_no_exit() if g.guest_code is None else None,
        stderr_tail=g.stderr_text()[-2000:], console_tail=tuple(l.text for l in c.lines[-40:]),
        wall_s=g.wall_s, ready_s=g.t_ready, boot=c.first("boot"), config=c.last("config"),
        ready=c.first("ready"), samples=samples,
        result=renegsets.with_set_counters(c.last("result"), samples),
        error=c.last("error"), exit=c.last("exit"), problems=tuple(c.problems(g.guest_code)))


def receiver_socket_drops(frames):
    """A guest pair's loss at the receiving QEMU's UDP socket (`run
    --topology guests`, a fleet's udp pair) as counts drops; [] when the
    socket was never read."""
    if frames is None:
        return []
    return [counts.drop("qemu_socket", "in the receiver QEMU's UDP socket buffer", frames)]


def merged_counts(backend, app, guests, host, lossless):
    """Both sides' counts (counts.py) for the topology and app, of the
    guests' result.GuestReports: a result.Counts, None without a NIC."""
    return _merged(backend, app, [g.result for g in guests], host, lossless)


def _merged(backend, app, results, host, lossless):
    """counts.py's result.Counts of the guests' results (receivers first)."""
    sent = results[-1]
    if len(results) == 2:
        drops = receiver_socket_drops(host.get("qemu_socket_drops", {}).get(0, 0))
        ports = (host.get("testpmd") or {}).get("ports", {})
        if 0 in ports and 1 in ports:
            # io forwarding: what testpmd took from the sender (port 1) and
            # could not hand to the receiver (port 0).
            drops.append(counts.drop("backend", "taken by testpmd io forwarding, not passed on",
                                     max(0, ports[1].get("RX-packets", 0)
                                         - ports[0].get("TX-packets", 0))))
        return counts.merge_guests(app, sent, results[0], lossless=lossless, drops=drops)
    if backend == "none":
        return None
    if app == "iperf":
        return counts.merge_iperf(sent, host)
    if app == "fwd":
        return counts.merge_fwd(sent, host, lossless=lossless)
    return counts.merge(app, sent, host, lossless=lossless)


# What every queue pair's entry has, a null too.
PAIR_KEYS = ("queue", "tx_packets", "rx_packets", "tx_bytes", "rx_bytes", "cpu", "packets",
             "lost", "reorder")


def queue_pairs(sent, host=None):
    """The sending guest's queue pairs (a tuple of result.QueuePair), one
    per pair the driver used, when it used more than one; else None. sent:
    the sender's result message. The app's own per-pair entry (gen's,
    sink's and reflect's `queues`, by `queue`) gives the CPU, the app's
    count and (sink, reflect) the pair's loss and reordering; without
    one, packets is the driver's both ways. The backend's own per-queue
    counts (host's `queues`: testpmd's streams) are set beside the
    driver's, and whether they agree."""
    drv = ((sent or {}).get("vnet") or {}).get("queues") or []
    if len(drv) < 2:
        return None
    app = {q.get("queue"): q for q in (sent.get("queues") or []) if isinstance(q, dict)}
    hq = {q.get("queue"): q for q in ((host or {}).get("queues") or []) if isinstance(q, dict)}
    outlives = (host or {}).get("sender_outlives_guest")
    return tuple(_queue_pair(d, app.get(d.get("queue"), {}), hq.get(d.get("queue")), outlives)
                 for d in drv)


def _queue_pair(d, a, h, outlives):
    """One pair's result.QueuePair: the driver's entry d, the app's a, the
    backend's h (None without one)."""
    q = result.QueuePair(queue=d.get("queue"), tx_packets=d.get("tx_packets"),
                         rx_packets=d.get("rx_packets"), tx_bytes=d.get("tx_bytes"),
                         rx_bytes=d.get("rx_bytes"), cpu=a.get("cpu"),
                         packets=a.get("packets", d.get("packets")), lost=a.get("lost"),
                         reorder=a.get("reorder"), keys=PAIR_KEYS)
    if "hash_bad_type" in d:
        q = q.but(hash_bad=d.get("hash_bad_type", 0) + d.get("hash_bad_value", 0))
    if h is None:
        return q
    q = q.but(host_rx_packets=h.get("rx_packets"), host_tx_packets=h.get("tx_packets"))
    # a sender that goes on after the app stopped counting (txonly) sends
    # more than the guest took: that way is not judged; an app-level host
    # count (the peer's) meets the app's own per pair, each way: the
    # driver's also carry lwIP's and the host kernel's frames
    app_level = h.get("app_level")
    sent = a.get("packets") if app_level else q.tx_packets
    got = a.get("packets") if app_level else d.get("rx_packets")
    if None not in (sent, q.host_rx_packets) or (
            None not in (q.host_tx_packets, got) and not outlives):
        why = queue_disagreement(q, sent, got, outlives)
        q = q.but(why=why, agree=why is None)
    elif h.get("why"):
        # the backend says why it has no count to judge by
        q = q.but(why=h["why"])
    return q


def queue_disagreement(q, sent, received, outlives=False):
    """None when pair q's (a result.QueuePair) two sides agree each way
    (guest->host, the guest's count sent; host->guest, its count
    received, not judged when the host's sender outlives the guest), else
    one line that says which queue lost (or gained) how many frames."""
    bad = []
    ways = [("guest->host", sent, q.host_rx_packets)]
    if not outlives:
        ways.append(("host->guest", q.host_tx_packets, received))
    for what, sent, got in ways:
        if sent is None or got is None or sent == got:
            continue
        lost = sent - got
        bad.append("queue %s %s: %d sent, %d received (%s %d)" % (
            q.queue, what, sent, got, "lost" if lost > 0 else "gained", abs(lost)))
    return "; ".join(bad) or None


def stream_rows(sent, host, receivers, names=()):
    """gen's streams (a stream file's, or the config line's shorthand as
    stream 0; a tuple of result.StreamRow), one per stream and direction,
    by id: a tx stream's what gen sent and what the receiver counted of it
    (the host peer's streams, else a receiving guest's per_stream); an rx
    stream's what the host peer sent (its send line, host's peer_tx) and
    what gen counted of it (the stream's rx). None when the sender has no
    streams list."""
    out_streams = (sent or {}).get("streams")
    if not isinstance(out_streams, list):
        return None
    got = {}
    peer = (host or {}).get("peer") or {}
    for s in peer.get("streams") or []:
        got[s.get("id")] = s
    for r in receivers:
        for s in (r or {}).get("per_stream") or []:
            got.setdefault(s.get("stream"), s)
    peer_sent = {s.get("id"): s for s in ((host or {}).get("peer_tx") or {}).get("streams") or []}
    return tuple(_rx_stream_row(s, peer_sent.get(s.get("id")), names)
                 if s.get("direction") == "rx" else
                 _stream_row(s, got.get(s.get("id")), names) for s in out_streams)


def _name(i, names):
    return names[i] if isinstance(i, int) and i < len(names) else None


def _stream_row(s, r, names):
    """Stream s as gen sent it, r as its receiver counted it (None: not)."""
    i = s.get("id")
    rx = s.get("rx") or {}
    mine = r or {}
    return result.StreamRow.given(
        id=i, name=_name(i, names), direction=s.get("direction", "tx"),
        packets=s.get("packets"), bytes=s.get("bytes"),
        received=mine.get("packets") if r else None, lost=mine.get("lost") if r else None,
        dup=mine.get("dup") if r else None, reorder=mine.get("reorder") if r else None,
        p50_us=rx.get("p50_us"), p99_us=rx.get("p99_us"), max_us=rx.get("max_us"))


def _rx_stream_row(s, p, names):
    """rx stream s as gen counted it (its rx), p as the host peer sent it
    (None: no send line). No latency: its stamps are the host's TSC, not
    the guest's clock."""
    i = s.get("id")
    rx = s.get("rx") or {}
    return result.StreamRow.given(
        id=i, name=_name(i, names), direction="rx",
        packets=p.get("packets") if p else None, bytes=p.get("bytes") if p else None,
        received=rx.get("packets"), lost=rx.get("lost"), dup=rx.get("dup"),
        reorder=rx.get("reorder"))


def metrics(res):
    """The numbers compare and sweep work on (a result.Metrics) of run res
    (a result.RunResult with its guests, counts, host and CPU)."""
    r = res.sender_result
    duration_ns = _num(r.get("duration_ns"))
    m = {"pps": _num(r.get("pps")), "bps": _num(r.get("bps")),
         "packets": _num(r.get("packets")), "bytes": _num(r.get("bytes")),
         "duration_s": duration_ns / 1e9 if duration_ns else None}
    m.update(latency_metrics(r))
    m.update({k: _num(r.get(k)) for k in ("tps", "transactions", "timeouts", "tx_dropped")})
    m.update(zip(("loss_pct", "lost"), counts.run_loss(res.counts)))
    m.update(notify_metrics(res.app, r))
    m.update(_guest_waits(r))
    m.update(batch_metrics(res.host or {}))
    if res.app == "iperf":
        m.update(goodput_metrics(r, res.host, m["duration_s"]))
    if res.cpu:
        m.update(cpu_metrics(res.cpu, m["packets"], m.get("goodput_bytes", m["bytes"]),
                             m.get("transactions")))
    return result.Metrics(**{k: v for k, v in m.items() if v is not None})


def cpu_metrics(cpu, packets, nbytes, transactions):
    """The host's CPU over the window (a result.Cpu) and its service
    demand per packet, KB its receiver got and transaction."""
    vcpu = (cpu.roles or {}).get("vcpu")
    sd = hostcpu.service_demand(cpu.total_cpu_s, packets, nbytes, transactions)
    return {"cpu_pct": cpu.total_pct, "vcpu_pct": vcpu.pct if vcpu is not None else None,
            "cpu_wait_pct": cpu.wait_pct, "sd_us_per_packet": sd["us_per_packet"],
            "sd_us_per_kb": sd["us_per_kb"], "sd_us_per_tx": sd["us_per_transaction"]}


def batch_metrics(host):
    """Frames per burst of the backend (vhost-user): the figure when
    testpmd's shares pin it, and always its bounds (backend_batch_lo,
    _hi), so that a table can show the range where there is no figure."""
    m = {"backend_batch": _num(host.get("backend_batch"))}
    rng = host.get("backend_batch_range")
    if isinstance(rng, list) and len(rng) == 2:
        m["backend_batch_lo"], m["backend_batch_hi"] = _num(rng[0]), _num(rng[1])
    return m


def goodput_metrics(result, host, duration_s):
    """app=iperf: the stream's goodput from its receiver's count
    (iperf.receiver_bytes) over the guest's run; {} without that count."""
    nbytes, _ = iperf.receiver_bytes(result, host)
    if nbytes is None or not duration_s:
        return {}
    return {"goodput_bytes": nbytes, "goodput_bps": nbytes * 8 / duration_s}


LATENCY_KEYS = ("p50", "p90", "p99", "p999", "max", "mean")


def latency_metrics(r):
    """{"p50_ns", ...} of a result; none from an rr server (it reports
    zeros) or from a run that measured nothing (all zeros: no sample)."""
    if r.get("role") == "server":
        return {}
    lat = {}
    for k in LATENCY_KEYS:
        if _num(r.get(k + "_ns")) is not None:
            lat[k + "_ns"] = _num(r.get(k + "_ns"))
        elif _num(r.get(k + "_us")) is not None:
            lat[k + "_ns"] = _num(r.get(k + "_us")) * 1e3
    return lat if any(lat.values()) else {}


def notify_metrics(app, result):
    """Kicks per frame and the share of notifications the device
    suppressed, on the queue the app's traffic uses (RX for sink, else
    TX): they show whether kick_batch and friends acted."""
    q = counts.vnet_queue(result, "rx" if app == "sink" else "tx")
    kicks, supp, frames = (_num(q.get(k)) for k in ("kicks", "kicks_suppressed", "packets"))
    out = {}
    if kicks is not None and frames:
        out["kicks_per_packet"] = kicks / frames
    if kicks is not None and supp is not None and kicks + supp:
        out["suppressed_pct"] = 100.0 * supp / (kicks + supp)
    return out


def _guest_waits(r):
    """Interrupts per frame (both queues, a shared line counted once) and
    the share of the run the vCPU was halted, from the guest's counters."""
    m = {}
    vnet, idle = r.get("vnet") or {}, r.get("idle") or {}
    tx, rx = vnet.get("tx") or {}, vnet.get("rx") or {}
    irqs = _num(rx.get("interrupts")) or 0
    if not tx.get("irq_shared"):
        irqs += _num(tx.get("interrupts")) or 0
    packets = _num(r.get("packets"))
    if "interrupts" in rx and packets:
        m["irq_per_packet"] = irqs / packets
    if _num(idle.get("share")) is not None:
        m["idle_pct"] = 100.0 * idle["share"]
    return m


def _host_resets(host):
    """Why a guest iperf server missed streams the host opened: the host's
    client saw them reset before they reached the guest."""
    n = ((host or {}).get("iperf") or {}).get("streams_reset") or 0
    if not n:
        return ""
    return ("; the backend reset %d of the host's iperf streams before the guest accepted "
            "them (host iperf: Connection reset by peer)" % n)


def _guest_aborts(g):
    """Why a guest iperf server failed although its streams arrived: some
    were reset before their FIN (counted apart from the finished ones)."""
    n = iperf.guest_aborted(g.result)
    if not n:
        return ""
    return ("; %d of the guest's iperf streams were aborted (reset) before the client's FIN"
            % n)


def overall_status(res, backend_dead):
    """(status, one line) of run res (a result.RunResult: its guests,
    counts and host). A guest that did not exit cleanly decides it; then a
    dead backend; then protocol problems; then the guests' codes; a sender
    that never started only when nothing else explains it."""
    guests = res.guests or ()
    started = [g for g in guests if g.started is not False]
    for g in started:
        if g.status in (exitcodes.RUNNER_TIMEOUT, exitcodes.RUNNER_NO_GUEST_EXIT):
            if backend_dead:
                return exitcodes.RUNNER_BACKEND_FAILED, backend_dead
            return g.status, g.why_no_exit or g.status_name
    if backend_dead:
        return exitcodes.RUNNER_BACKEND_FAILED, backend_dead
    for g in started:
        if g.problems:
            return exitcodes.RUNNER_PROTOCOL, "%s: %s" % (g.label, g.problems[0])
    stall = counts.stalled(res.counts)
    if stall:
        # Whatever the guest made of it, its traffic never reached it.
        return exitcodes.RUNNER_BACKEND_FAILED, stall
    for g in started:
        if g.guest_code != 0:
            err = g.error or {}
            return g.guest_code, "%s: exit %d (%s)%s%s" % (
                g.label, g.guest_code, exitcodes.status_name(g.guest_code),
                ": " + printable(err["message"]) if err.get("message") else "",
                _guest_aborts(g) + _host_resets(res.host))
    for g in started:
        if _guest_aborts(g):
            return exitcodes.GUEST_TEST_FAILED, "%s: iperf%s" % (g.label, _guest_aborts(g))
    for g in guests:
        if g.started is False:
            return exitcodes.RUNNER_TIMEOUT, g.why_no_exit
    return 0, "ok"
