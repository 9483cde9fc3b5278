"""A run's typed result (result.RunResult) as a human table, a CSV row,
or JSON."""

import csv
import io

from .. import exitcodes
from ..analysis import renegsets
from ..analysis.stats import number as _num
from ..run import iperf
from .tables import fmt_count, fmt_num, kv_table

# Columns are added, never renamed: older readers find theirs (pps and bps
# are the guest's figures whatever the app; goodput_bps a stream's).
CSV_FIELDS = ("backend", "app", "machine", "accel", "size", "status", "pps", "bps", "packets",
              "bytes", "loss_pct", "lost", "tx_dropped", "cpu_pct", "sd_us_per_packet",
              "sd_us_per_kb", "sd_us_per_tx", "tps", "p50_ns", "p99_ns", "p999_ns",
              "kicks_per_packet", "suppressed_pct", "backend_batch", "agree", "bottleneck",
              "goodput_bps", "backend_batch_lo", "backend_batch_hi")


def _gbit(bps):
    return None if bps is None else "%.3f" % (bps / 1e9)


def _guest_only(g, backend):
    """No host-side count (hub and user have no host end; elsewhere the
    host end's counts are missing): say so, so that a rate nobody counted
    never reads like one that was delivered."""
    seen = ["%s %s" % (w, fmt_num(g[k])) for k, w in (("tx_packets", "sent"),
                                                       ("rx_packets", "received"))
            if g.get(k) is not None]
    return "guest only (%s): no host-side count over %s to check against, loss unknown" % (
        ", ".join(seen) or "no frames", backend)


# Each app is measured by its own figures first (docs/runner-run.md, "Headline
# figures"): iperf by its goodput, rr by its transactions and latency, the
# frame apps by frames. Their rates count Ethernet frames without FCS, as
# virtio carries them; on the wire each frame takes 24 bytes more (FCS 4,
# preamble and SFD 8, inter-frame gap 12).
FRAME_APPS = ("gen", "sink", "reflect", "fwd")
FRAME_GBIT = "Gbit/s (frames w/o FCS)"
L1_EXTRA_BYTES = 24
# Service demand per unit of what the app moves: no us/KB for rr's
# one-byte messages, no us/frame for a stream.
SERVICE_DEMAND = {
    "stream": (("sd_us_per_kb", "%.3f us/KB"),),
    "rr": (("sd_us_per_tx", "%.2f us/transaction"),),
    "frames": (("sd_us_per_packet", "%.3f us/frame"), ("sd_us_per_kb", "%.3f us/KB")),
    "other": (("sd_us_per_packet", "%.3f us/packet"), ("sd_us_per_kb", "%.3f us/KB"),
              ("sd_us_per_tx", "%.2f us/transaction")),
}


# Figures that mislead for an app, left out of its tables and plots: a
# stream's frames both ways and the guest's byte rate (its goodput is the
# receiver's count), rr's rates of one-byte messages.
MISLEADING = {"stream": ("pps", "bps"), "rr": ("pps", "bps", "sd_us_per_kb")}


def app_kind(app):
    """"stream" (iperf), "rr", "frames" (FRAME_APPS) or "other"."""
    if app == "iperf":
        return "stream"
    if app == "rr":
        return "rr"
    return "frames" if app in FRAME_APPS else "other"


def frame_gbit(m):
    """Gbit/s of frames without FCS, and at L1."""
    if m.get("bps") is None:
        return "-"
    if m.get("pps") is None:
        return _gbit(m["bps"])
    return "%s (%s at L1, +%d B a frame for FCS, preamble, SFD and IFG)" % (
        _gbit(m["bps"]), _gbit(m["bps"] + m["pps"] * L1_EXTRA_BYTES * 8), L1_EXTRA_BYTES)


def _latency(m):
    lat = [(k, m[k + "_ns"]) for k in ("p50", "p90", "p99", "p999", "max", "mean")
           if m.get(k + "_ns") is not None]
    if not lat:
        return []
    return [("latency", ", ".join("%s %.1f us" % (k.replace("p999", "p99.9"), v / 1e3)
                                  for k, v in lat))]


def headline(res):
    """The app's own figures first (app_kind), then its counts: a count
    of frames is printed as one, never as a rate."""
    m = res.metrics.as_dict()
    kind = app_kind(res.app)
    if kind == "stream":
        _, who = iperf.receiver_bytes(res.sender_result, res.host)
        good = "%s Gbit/s (%s bytes in %.2f s, counted by %s)" % (
            _gbit(m["goodput_bps"]), fmt_count(m["goodput_bytes"]), m["duration_s"], who) \
            if m.get("goodput_bps") is not None else "- (the receiving end gave no count)"
        return [("goodput", good),
                ("frames", "%s at the guest's netif, both ways (ACKs included, a TSO "
                           "super-frame as one)" % fmt_count(m.get("packets")))]
    if kind == "rr":
        return ([("transactions", "%s, %s/s" % (fmt_count(m.get("transactions")),
                                                fmt_num(m.get("tps"))))] + _latency(m)
                + [("messages", "%s, requests and replies (%s bytes of payload)"
                    % (fmt_count(m.get("packets")), fmt_count(m.get("bytes"))))])
    return [("pps", fmt_num(m.get("pps"))), (FRAME_GBIT, frame_gbit(m)),
            ("frames", fmt_count(m.get("packets"))),
            ("bytes", fmt_count(m.get("bytes")))] + _latency(m)


def progress(s):
    """The figures of one sample line, the app's own first (headline)."""
    kind = app_kind(s.get("app"))
    if kind == "stream":
        return "%s Gbit/s goodput  frames %s" % (_gbit(_num(s.get("goodput_bps"))) or "-",
                                                 fmt_count(_num(s.get("packets"))))
    if kind == "rr":
        p99 = _num(s.get("p99_us"))
        return "%s tps  p99 %s us" % (fmt_num(_num(s.get("tps"))),
                                      "%.1f" % p99 if p99 is not None else "-")
    return "%s pps  %s %s" % (fmt_num(_num(s.get("pps"))), _gbit(_num(s.get("bps"))) or "-",
                              FRAME_GBIT)


def placement_line(p):
    """--placement's plan as applied: "auto: vcpu0 CPU 1, main CPU 0;
    notify=hybrid chosen"; None for a result recorded before it."""
    if not isinstance(p, dict):
        return None
    if not p.get("threads"):
        return "none" + (" (%s)" % p["why_none"] if p.get("why_none") else "")
    placed = p.get("placed") or {}
    parts = ["%s CPU %s%s" % (t["name"], t["cpu"], "" if t["name"] in placed else " (not placed)")
             for t in p["threads"]]
    line = "%s: %s" % (p.get("mode"), ", ".join(parts))
    if p.get("notify"):
        line += "; guest notify=%s chosen (a vCPU shares its CPU)" % p["notify"]
    return line


def human(res):
    """The table of a result.RunResult."""
    m = res.metrics.as_dict()
    rows = [("status", "%d (%s)%s" % (res.status, res.status_name,
                                      "" if res.status == 0 else ": " + res.why)),
            ("app", res.app), ("backend", res.backend),
            ("machine / accel", "%s / %s" % (res.machine, res.accel)),
            ("config", " ".join(res.config or ()))]
    if res.status == exitcodes.GUEST_CONFIG_ERROR:
        # The app never ran: counts, CPU and verdict would describe nothing.
        return kv_table(rows)
    feats = features_line(res)
    if feats:
        rows.append(("virtio features", feats))
    hashes = hash_line((res.sender_result.get("vnet") or {}).get("hash_report"))
    if hashes:
        rows.append(("hash reports", hashes))
    buf = (res.host or {}).get("sock_rcvbuf")
    if buf:
        rows.append(("QEMU socket rcvbuf", "%d bytes, the runner's socket (kernel SO_RCVBUF %s)"
                     % (buf["bytes"], ", ".join(map(str, buf["kernel"])) or "-")))
    place = placement_line(res.extra.get("placement"))
    if place:
        rows.append(("placement", place))
    guests = res.guests or ()
    for g in guests:
        if len(guests) > 1:
            rows.append(("guest " + g.label, "exit %s, %.2f s" % (g.status, g.wall_s)))
        if g.ready_s is not None and len(guests) == 1:
            rows.append(("boot to ready", "%.1f ms" % (g.ready_s * 1e3)))
    if res.backend == "none":
        rows += [("result " + k, v) for k, v in res.sender_result.items()
                 if k not in ("type", "app") and not isinstance(v, (dict, list))]
    elif res.metrics.packets is not None:
        rows += headline(res)
    if res.queues:
        rows.append(("per queue", queues_line(res.queues)))
        line = queue_counts_line(res.queues)
        if line:
            rows.append(("counts per queue", line))
        line = idle_queues_line(res.queues)
        if line:
            rows.append(("idle queues", line))
    if res.streams:
        rows += stream_lines(res.streams)
    if res.app == "reneg":
        rows += reneg_lines(res.sender_result)
    c = res.counts
    if c:
        for name, d in (c.directions or {}).items():
            rows.append(("counts " + name, "%s: %s" % (d.verdict, d.why.split(": ", 1)[-1])))
        if not c.host_counted:
            rows.append(("counts", _guest_only(c.guest or {}, res.backend)))
    for label, line in (res.waits or {}).items():
        rows.append(("waited in " + label, line))
    rows += notification_rows(res, m) + cpu_rows(res, m)
    rows += bottleneck_rows(res.verdict)
    return kv_table(rows)


def bottleneck_rows(v):
    """The verdict's row: which side bound the rate, and why."""
    if v and v.side in ("guest", "backend"):
        return [("bottleneck", "%s-bound: %s" % (v.side, v.why))]
    if v and v.side == "host":
        return [("bottleneck", "host CPU-bound: %s" % v.why)]
    if v and v.side == "neither":
        return [("bottleneck", "none: %s" % v.why)]
    return []


def notification_rows(res, m):
    """The notifications row: kicks per frame, the share the device
    suppressed, the backend's burst (metrics m)."""
    notify = [fmt % m[k] for k, fmt in (("kicks_per_packet", "%.3g kicks per frame"),
                                         ("suppressed_pct", "%.1f%% of notifications "
                                                            "suppressed by the device"),
                                         ("backend_batch", "backend %.1f frames per burst"))
              if m.get(k) is not None]
    rng = (res.host or {}).get("backend_batch_range")
    if m.get("backend_batch") is None and rng:
        notify.append("backend %.1f..%.0f frames per burst (testpmd gives its burst shares in "
                      "whole percents)" % tuple(rng))
    return [("notifications", ", ".join(notify))] if notify else []


def cpu_rows(res, m):
    """The host CPU rows (res.cpu): each role's share, each vCPU thread's,
    the waits for a CPU, the guest's notifications and the service demand
    (metrics m); none without a host end."""
    cpu = res.cpu
    if not cpu or res.backend == "none":
        return []
    roles = sorted((cpu.roles or {}).items())
    parts = ["%s %.0f%%" % (k, v.pct) for k, v in roles if v.pct >= 0.5]
    rows = [("host CPU", "%.0f%% total%s" % (cpu.total_pct,
                                              ": " + ", ".join(parts) if parts else ""))]
    vcpus = vcpu_threads_line(cpu)
    if vcpus:
        rows.append(("vCPU threads", vcpus))
    waits = ["%s %.0f%%" % (k, v.wait_pct) for k, v in roles
             if (v.wait_pct or 0.0) >= 0.5]
    if waits:
        rows.append(("waited for a CPU", "%s (%.1f threads runnable on average, %d CPUs)"
                     % (", ".join(waits), cpu.runnable_avg or 0.0, cpu.cpus or 0)))
    guest = guest_notify_line(res)
    if guest:
        rows.append(("guest", guest))
    sd = [fmt % m[k] for k, fmt in SERVICE_DEMAND[app_kind(res.app)]
          if m.get(k) is not None]
    if sd:
        rows.append(("service demand", ", ".join(sd)))
    return rows


def stream_lines(streams):
    """A row per stream of a stream file and one for them all: sent,
    received, lost, dup, reordered; latency where frames came back. With
    rx streams (host peer to guest) each row names its direction (tx: gen
    sent, the host counted; rx: the host sent, gen counted) and each
    direction of the file has its total."""
    def one(packets, received, lost, dup, reorder, lat=None):
        text = "%s sent, %s received" % (fmt_count(packets), fmt_count(received))
        text += ", %s lost, %s dup, %s reordered" % (fmt_count(lost), fmt_count(dup),
                                                       fmt_count(reorder))
        if lat and lat[0] is not None:
            text += ", latency p50 %.1f us, p99 %.1f us, max %.1f us" % lat
        return text

    def total(rows, k):
        vals = [getattr(s, k) for s in rows]
        return None if any(v is None for v in vals) else sum(vals)

    both = any(s.direction == "rx" for s in streams)

    def label(s):
        text = "stream %s (%s)" % (s.id, s.name) if s.name else "stream %s" % s.id
        return text + " " + s.direction if both else text

    rows = [(label(s), one(s.packets, s.received, s.lost, s.dup, s.reorder,
                           (s.p50_us, s.p99_us, s.max_us))) for s in streams]
    dirs = [d for d in ("tx", "rx") if any(s.direction == d for s in streams)]
    for d in dirs if both else (None,):
        part = [s for s in streams if d is None or s.direction == d]
        rows.append(("streams total" + (" " + d if d else ""),
                     one(*(total(part, k) for k in
                           ("packets", "received", "lost", "dup", "reorder")))))
    return rows


def vcpu_threads_line(cpu):
    """Each vCPU thread's CPU% (and its wait for a CPU, from 0.5%) with
    several: 'CPU 0/TCG 52% (waited 40%), CPU 1/TCG 49%', each named with
    its guest where the roles are (a:vcpu); None with one."""
    threads = [t for t in cpu.per_thread or () if t.role.split(":")[-1] == "vcpu"]
    if len(threads) < 2:
        return None
    return ", ".join("%s%s %.0f%%%s" % (t.role[:-len("vcpu")], t.name, t.pct,
                                        " (waited %.0f%%)" % t.wait_pct
                                        if (t.wait_pct or 0.0) >= 0.5 else "")
                     for t in threads)


def _dig(obj, *keys):
    """obj[k1][k2]... where each is a dict, else None."""
    for k in keys:
        obj = obj.get(k) if isinstance(obj, dict) else None
    return obj


def _rule_breaks(vnet):
    """Both ways' rule breaks of a vnet object, every kind ('-': none)."""
    qs = [_dig(vnet, q, "rule_breaks") for q in ("tx", "rx")]
    if not all(isinstance(q, dict) for q in qs):
        return "-"
    return sum(v for q in qs for v in q.values() if isinstance(v, int))


def reneg_lines(result):
    """app=reneg: a row per feature set, its ring, frame sizes and the
    driver's counters of its bring-up (its sample line's, docs/apps.md,
    reneg), its TCP stream (stream_s=); its frames each way and its
    stream's bytes are the counts rows."""
    def get(obj, *keys):
        obj = _dig(obj, *keys)
        return "-" if obj is None or isinstance(obj, (dict, list)) else obj

    rows = []
    sets = result.get("sets")
    for k, s in enumerate(sets if isinstance(sets, list) else ()):
        sizes = s.get("frame_sizes") if isinstance(s, dict) else None
        rows.append((renegsets.set_label(k, s), (
            "%s ring, frames of %s B; driver tx %s kicks (%s suppressed), %s ring full; "
            "rx %s kicks (%s suppressed), %s length errors, %s bad headers; %s rule breaks") % (
                get(s, "ring_format"),
                " and ".join(map(str, sizes)) if isinstance(sizes, list) else "-",
                get(s, "vnet", "tx", "kicks"), get(s, "vnet", "tx", "kicks_suppressed"),
                get(s, "vnet", "tx", "ring_full"), get(s, "vnet", "rx", "kicks"),
                get(s, "vnet", "rx", "kicks_suppressed"), get(s, "vnet", "rx", "len_errors"),
                get(s, "vnet", "rx", "bad_hdr"), _rule_breaks(_dig(s, "vnet"))) +
            _tcp_stream_text(renegsets.tcp_stream(s))))
    return rows


def _tcp_stream_text(st):
    """A reneg set's TCP stream (stream_s=) for its row; "" without one."""
    if st is None:
        return ""
    ns, gbps = st.get("duration_ns"), st.get("gbps")
    return "; TCP stream %s bytes acknowledged in %s s (%s Gbit/s)%s" % (
        st.get("bytes"), "%.3f" % (ns / 1e9) if isinstance(ns, int) else "-",
        "%.3f" % gbps if isinstance(gbps, (int, float)) else "-",
        "" if st.get("ok") else ", failed")


def queues_line(pairs):
    """Each queue pair's count, its CPU, its streams' loss and reordering
    (sink, reflect) and the driver's frames each way (the backend's beside
    them where it counts per queue), and the device's wrong hash reports
    where there were any."""
    parts = []
    for q in pairs:
        cpu = "" if q.cpu is None else "cpu %d, " % q.cpu
        seq = "" if q.lost is None else "lost %s, reorder %s, " % (fmt_count(q.lost),
                                                                   fmt_count(q.reorder))
        host = "" if q.agree is None else ", host rx %s, tx %s" % (
            fmt_count(q.host_rx_packets), fmt_count(q.host_tx_packets))
        bad = ", %d wrong hash reports" % q.hash_bad if q.hash_bad else ""
        parts.append("%s: %s (%s%stx %s, rx %s%s%s)" % (q.queue, fmt_count(q.packets), cpu, seq,
                                                        fmt_count(q.tx_packets),
                                                        fmt_count(q.rx_packets), host, bad))
    return "; ".join(parts)


def idle_queues_line(pairs):
    """The pairs that carried nothing either way, None when every pair
    did: the flows all hashed elsewhere (a Toeplitz hash is linear, so a
    few consecutive ports can share one pair), which a per-queue sweep
    would otherwise read as the backend's scaling."""
    idle = [str(q.queue) for q in pairs if not (q.tx_packets or 0) + (q.rx_packets or 0)]
    if not idle:
        return None
    return "%s of %d carried nothing: every flow hashed to the other pairs; more flows or " \
        "wider flows= ranges spread them (docs/apps.md, gen)" % (
            ", ".join(idle), len(pairs))


def hash_line(h):
    """The guest's verdicts on the device's hash reports (docs/driver.md,
    "Hash reports"); None when none were checked."""
    if not h or not h.get("types"):
        return None
    bad = h.get("bad_type", 0) + h.get("bad_value", 0)
    return "%d checked: %d right, %d not hashed (NONE), %d skipped, %d wrong (%d of a wrong " \
        "type, %d with a wrong hash)" % (
            h.get("ok", 0) + h.get("none", 0) + h.get("skipped", 0) + bad, h.get("ok", 0),
            h.get("none", 0), h.get("skipped", 0), bad, h.get("bad_type", 0),
            h.get("bad_value", 0))


def queue_counts_line(pairs):
    """Whether both sides agree per queue pair: None without host counts;
    why not, where the backend says."""
    judged = [q for q in pairs if q.agree is not None]
    if not judged:
        why = next((q.why for q in pairs if q.why), None)
        return "not judged: " + why if why else None
    bad = [q.why for q in judged if not q.agree]
    return "disagree: " + "; ".join(bad) if bad else "agree on each of %d queue pairs" % len(
        judged)


def features_line(res):
    """The virtio features of the main guest: those its driver negotiated
    (the result's vnet.features) and those the run switched off (the
    identity's event_idx and features: features= or the device's
    property); None when the report has neither."""
    vnet = res.sender_result.get("vnet") or {}
    ident = res.identity or {}
    parts = []
    if isinstance(vnet.get("features"), list):
        parts.append("negotiated " + (" ".join(vnet["features"]) or "none"))
    if ident:
        off = ["event_idx"] if ident.get("event_idx") == "off" else []
        off += [f.lstrip("-") for f in str(ident.get("features", "none")).split(",")
                if f not in ("", "none")]
        parts.append("switched off: " + (" ".join(off) or "none"))
    return "; ".join(parts) or None


def guest_notify_line(res):
    """How the guest waited: its notification modes, interrupts per frame
    per queue and the share of the run its vCPU was halted (docs/driver.md,
    "Notification modes"); None for a guest that reports neither."""
    r = res.sender_result
    vnet, idle = r.get("vnet") or {}, r.get("idle") or {}
    parts = []
    for q in ("tx", "rx"):
        d = vnet.get(q) or {}
        if d.get("notify") and d["notify"] != "poll":
            parts.append("%s %s %.3g interrupts/frame" % (q, d["notify"],
                                                         d.get("interrupts_per_1000", 0) / 1e3))
    if idle.get("share") is not None and (parts or idle.get("halts")):
        parts.append("vCPU halted %.0f%% of the run" % (100.0 * idle["share"]))
    return ", ".join(parts) or None


def csv_row(res):
    """The CSV row of a result.RunResult."""
    m = res.metrics.as_dict()
    row = {"backend": res.backend, "app": res.app, "machine": res.machine,
           "accel": res.accel, "size": res.config_value("size"), "status": res.status,
           "agree": res.counts.agree if res.counts else None,
           "bottleneck": res.verdict.side if res.verdict else None}
    for k in CSV_FIELDS:
        if k in m:
            row[k] = m[k]
    return row


def to_csv(rows, fields=CSV_FIELDS):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(fields), extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def to_json(res):
    """The JSON of a result.RunResult: today's keys and schema_version."""
    return res.to_json()


# `vnperf run --out DIR`: the report as --json prints it.
OUT_FILE = "run.json"
