"""The device checks of `vnperf conform`, judged from the boots of one
feature combination (the guest's counters: vnet.tx/rx.rule_breaks,
len_mismatch, len_errors, interrupts and halts, config_out_of_range; the
runner's exact counts), and the table that shows them. Each cell:
pass, violation (with the spec section, virtio 1.2), not offered, n/a
(offered, not negotiated in this combination) or error (vnperf could not
run it: the boot's status says why)."""

from .. import exitcodes

# check -> (split ring section, packed ring section, what it checks)
CHECKS = {
    "reset": ("s2.4.1", "s2.4.1", "the device's status reads 0 after the reset"),
    "traffic": ("s5.1.6", "s5.1.6", "exact counts both ways at the device, no malformed frame "
                "(IPv4 and UDP checksums checked)"),
    "used_len": ("s2.7.8.2", "s2.8.4", "used lengths within what was offered to be written; 0 "
                 "for device-readable buffers; at least the header on RX"),
    "unavailable": ("s2.7.8.2", "s2.8.22", "no used entry for a buffer not made available"),
    "in_order": ("s2.7.9", "s2.8.8", "IN_ORDER: used in the order made available, a batch "
                 "covered by used.idx"),
    "suppression": ("s2.7.7.2", "s2.8.10", "no notification while the driver suppressed them "
                    "(EVENT_IDX: used_event; else the NO_INTERRUPT flag)"),
    "config": ("s5.1.4.1", "s5.1.4.1", "config fields in range (mtu >= 68, max_virtqueue_pairs, "
               "RSS limits); status never FAILED or NEEDS_RESET"),
    "hash_report": ("s5.1.6.4.4", "s5.1.6.4.4", "HASH_REPORT: each reported hash is the Toeplitz "
                    "hash of the frame, of a type configured and the frame's"),
    "uso": ("s5.1.6.2.2", "s5.1.6.2.2", "HOST_USO: each datagram taken whole and cut into "
            "exactly its gso_size segments, every one delivered, no UDP checksum error"),
    "ctrl": ("s5.1.6.5", "s5.1.6.5", "every control command of a negotiated feature (receive "
             "mode, MAC table and address, VLAN add, announce ack) answered VIRTIO_NET_OK, "
             "with a one-byte ack, in time"),
}
# check -> the feature it needs (offered, and on in the combination)
NEEDS = {"in_order": "in_order", "hash_report": "hash_report", "uso": "host_uso",
         "ctrl": "ctrl_vq"}
# check -> the traffic kind whose boots it judges (the rest: every boot; a
# shared reneg boot's set runs each kind of its traffic, "+" between them)
TRAFFIC_OF = {"uso": "uso"}

# Guest statuses after which the result still judges the device: the
# app's own failure (1), a device error (4), a timeout (8), the peer
# unreachable (9). Anything else is vnperf's or the host's.
FINDING_STATUSES = (0, 1, 4, 8, 9)
RESET_FAILED = "did not finish its reset"


def vnet_of(res):
    """The guest's vnet object of a boot's report (a result.RunResult),
    or None."""
    return res.sender_result.get("vnet")


def _cell(verdict, check, packed, detail="", boot=None, status=0):
    split, pk, _ = CHECKS[check]
    return {"verdict": verdict, "section": pk if packed else split, "detail": detail,
            "command": boot.command if boot is not None else "", "status": status}


def _console(boot):
    g = boot.report.sender
    return "\n".join(g.console_tail or ()) if g is not None else ""


def _ran(boot):
    """(vnet, None) for a boot that judges the device, else (None, cell
    args): reset failed, or an error of vnperf or the host."""
    vnet = vnet_of(boot.report)
    if RESET_FAILED in boot.why or RESET_FAILED in _console(boot):
        return None, ("violation", "device reset did not complete: " + boot.why)
    if boot.status not in FINDING_STATUSES or vnet is None:
        return None, ("error", "%s (status %d, %s)" % (boot.why, boot.status,
                                                        exitcodes.status_name(boot.status)))
    return vnet, None


def _queues(vnet):
    return [vnet.get("tx") or {}, vnet.get("rx") or {}]


def _sum_breaks(vnet, kind):
    return sum((q.get("rule_breaks") or {}).get(kind, 0) for q in _queues(vnet))


def _used_len(vnet):
    n = _sum_breaks(vnet, "used_len")
    n += (vnet.get("tx") or {}).get("len_mismatch", 0) + (vnet.get("rx") or {}).get("len_errors", 0)
    return n, "%d used lengths out of range (rule_breaks.used_len, tx.len_mismatch, " \
        "rx.len_errors)" % n


def _unavailable(vnet):
    n = _sum_breaks(vnet, "unavailable")
    return n, "%d used entries for buffers not made available" % n


def _in_order(vnet):
    n = _sum_breaks(vnet, "in_order")
    return n, "%d IN_ORDER batches not covered by used.idx" % n


def _suppression(vnet):
    """Interrupts beyond what the driver's halts armed: each halt allows
    one, and one more in flight as notifications go off again; each queue
    one more after DRIVER_OK (QEMU notifies once unconditionally until it
    has signalled a used index, its signalled_used_valid). A line the
    queues share (virtio-mmio) counts all in each, the control queue's
    first completion too where commands were sent."""
    qs = [(n, q) for n, q in zip(("tx", "rx"), _queues(vnet)) if q.get("irq_vector", -1) >= 0]
    if not qs:
        return 0, ""
    if all(q.get("irq_shared") for _, q in qs):
        halts = sum(q.get("halts", 0) for _, q in qs)
        irqs = qs[0][1].get("interrupts", 0)
        # the polled control queue shares the line: its first used buffer
        # may notify (used_event 0 without EVENT_IDX's parking)
        ctrl = 1 if (vnet.get("ctrl") or {}).get("sent") else 0
        if irqs > 2 * halts + len(qs) + ctrl:
            return 1, "%d interrupts on the shared line, %d halts armed" % (irqs, halts)
        return 0, ""
    over = ["%s: %d interrupts, %d halts armed" % (n, q.get("interrupts", 0), q.get("halts", 0))
            for n, q in qs if q.get("interrupts", 0) > 2 * q.get("halts", 0) + 1]
    return len(over), "; ".join(over)


def _config(vnet):
    n = vnet.get("config_out_of_range", 0) + _sum_breaks(vnet, "device")
    return n, "%d config fields out of range or status FAILED/NEEDS_RESET" % n


def _traffic(boot):
    """Violations of exact counts: a direction of the app's frames whose
    ends disagree or lost frames no count locates (counts.py: more
    received than sent, TCP bytes acknowledged but not delivered), and
    malformed frames the guest saw, a reneg set's TCP stream that failed.
    Loss a host-side count locates (a socket or tap queue the host
    overflowed) is flow control, no finding."""
    c = boot.report.counts
    dirs = (c.directions if c is not None else None) or {}
    # The app's own counts where there are: the '... frames' directions
    # also count the host kernel's frames (IPv6 neighbour discovery) sent
    # before DRIVER_OK, which a device may drop (s3.1.1: not live yet). A
    # reneg set's USO segments are the uso check's.
    app = {k: v for k, v in dirs.items()
           if not k.endswith((" frames", " uso guest->host"))} or dirs
    bad = [v.why if (v.why or "").startswith(k + ":") else "%s: %s" % (k, v.why or v.verdict)
           for k, v in sorted(app.items())
           if v.verdict == "disagree" or any(w.get("at") == "unexplained" for w in v.where or ())]
    res = boot.report.sender_result
    if res.get("malformed"):
        bad.append("%d malformed frames reached the guest" % res["malformed"])
    stream = res.get("tcp")
    if isinstance(stream, dict) and stream.get("ok") is False:
        # a set's TCP stream that failed midway (its boot went on)
        bad.append("the set's TCP stream failed after %s bytes acknowledged" % stream.get("bytes"))
    if boot.status != 0:
        bad.append("the guest ended with status %d (%s): %s" % (
            boot.status, exitcodes.status_name(boot.status), boot.why))
    return len(bad), "; ".join(bad)


def _hash_report(vnet):
    h = vnet.get("hash_report") or {}
    n = h.get("bad_type", 0) + h.get("bad_value", 0)
    return n, "%d hash reports wrong (%d of a wrong type, %d with a wrong hash; %d checked)" % (
        n, h.get("bad_type", 0), h.get("bad_value", 0), h.get("ok", 0) + n)


def _ctrl(vnet):
    c = vnet.get("ctrl") or {}
    n = c.get("err", 0) + c.get("bad_reply", 0) + c.get("timeouts", 0)
    return n, "%d of %d control commands not answered OK (%d VIRTIO_NET_ERR, %d malformed " \
        "replies, %d never answered)" % (n, c.get("sent", 0), c.get("err", 0),
                                          c.get("bad_reply", 0), c.get("timeouts", 0))


def _uso_expected(uso, packets):
    """{payload size: segments} the host's socket must get: every datagram
    cut into segments_per_datagram, the last last_segment bytes."""
    segs, gso, last = uso["segments_per_datagram"], uso["gso_size"], uso["last_segment"]
    want = {str(gso): packets * (segs - 1)} if segs > 1 else {}
    want[str(last)] = want.get(str(last), 0) + packets
    return want


def _uso(boot):
    """The uso boot's datagrams (gen's; a reneg set's: its own, its
    stream's segments, conform_reneg.set_report): each left the guest as
    one GSO frame, the host's socket got every segment of exactly the
    sizes gso_size cuts (segments its full socket buffer dropped are flow
    control, counted by the host: then only fewer of the right sizes), no
    checksum error."""
    res = boot.report.sender_result
    tx = (res.get("vnet") or {}).get("tx") or {}
    uso = res.get("uso")
    n = (uso or {}).get("datagrams", res.get("packets", 0))
    c = boot.report.counts
    udp = ((c.host if c is not None else None) or {}).get("udp")
    if not uso or udp is None:
        return 1, "no USO datagrams counted (guest uso: %s, host udp: %s)" % (uso, udp)
    bad = []
    gso = tx.get("gso_frames")
    # a reneg set's TCP stream (stream_s=) left TSO frames too
    if gso != n and not (res.get("tcp") and isinstance(gso, int) and gso > n):
        bad.append("%s of %d datagrams left as GSO frames" % (gso, n))
    want = _uso_expected(uso, n)
    got = udp.get("sizes") or {}
    dropped = udp.get("rcvbuf_errors", 0)
    short = sum(want.values()) - sum(got.values())
    if set(got) - set(want) or any(got[k] > want[k] for k in got) or short != dropped:
        bad.append("the host's socket got segments %s, expected %s (%d dropped for its full "
                   "buffer)" % (got, want, dropped))
    if udp.get("csum_errors"):
        bad.append("%d segments with a bad UDP checksum" % udp["csum_errors"])
    return len(bad), "; ".join(bad)


COUNTERS = {"used_len": _used_len, "unavailable": _unavailable, "in_order": _in_order,
            "suppression": _suppression, "config": _config, "hash_report": _hash_report,
            "ctrl": _ctrl}
# Checks judged from the whole boot (counts, the host's view), not vnet only.
BOOT_CHECKS = {"traffic": _traffic, "uso": _uso}


def _needs(check, row, offered):
    """'not offered' / 'n/a' when the check needs a feature this
    combination does not have, else None."""
    feat = NEEDS.get(check)
    if feat is None:
        return None
    if feat not in offered:
        return "not offered"
    if check in TRAFFIC_OF and feat not in row:
        return "n/a"   # its boot runs only where the combination asks for it
    return None if row.get(feat, True) else "n/a"


def judge(row, offered, boots):
    """{check: cell} for one combination from its boots (in order; a
    cell names the first boot that decided it)."""
    packed = bool(row.get("ring_packed")) and "ring_packed" in offered
    cells = {}
    ran = []
    for b in boots:
        vnet, bad = _ran(b)
        if bad is not None:
            verdict, detail = bad
            key = "reset" if verdict == "violation" else "error"
            cells.setdefault(key, (verdict, detail, b, b.status))
        else:
            ran.append((b, vnet))
    out = {}
    for check in CHECKS:
        if check == "reset" and "reset" in cells:
            v, d, b, st = cells["reset"]
            out[check] = _cell(v, check, packed, d, b, st)
            continue
        if "error" in cells and not ran:
            v, d, b, st = cells["error"]
            out[check] = _cell(v, check, packed, d, b, st)
            continue
        need = _needs(check, row, offered)
        if need:
            out[check] = _cell(need, check, packed)
            continue
        out[check] = _judge_one(check, packed, ran, cells)
    return out


def _judge_one(check, packed, ran, cells):
    judged = 0
    for b, vnet in ran:
        kind = TRAFFIC_OF.get(check)
        if check == "reset" or kind is not None and kind not in b.traffic.split("+"):
            continue
        judged += 1
        n, detail = BOOT_CHECKS[check](b) if check in BOOT_CHECKS else COUNTERS[check](vnet)
        if n:
            return _cell("violation", check, packed, "%s: %s" % (b.traffic, detail), b)
    if "error" in cells:
        v, d, b, st = cells["error"]
        return _cell(v, check, packed, d, b, st)
    if check in TRAFFIC_OF and not judged:
        return _cell("error", check, packed, "no %s boot ran" % TRAFFIC_OF[check],
                     status=exitcodes.RUNNER_INTERNAL)
    return _cell("pass", check, packed, "", ran[0][0] if ran else None)


def _mark(cell):
    v = cell["verdict"]
    if v == "violation":
        return "VIOLATION " + cell["section"]
    return v


def _boots(c):
    """Where a combination's traffic kinds ran: the shared boot's id (one
    boot: its set) or fresh."""
    return ", ".join("%s %s" % (b["traffic"], b["id"] if b["boot"] == "one boot" else "fresh")
                     for b in c["boots"])


def _shared_notes(res):
    """The shared boots (one boot: their sets) and those that failed."""
    notes = ["%s: one boot, %s, sets %s" % (g["id"], g["traffic"], "/".join(g["sets"]))
             for g in res["boots"] if g["sets"]]
    notes += ["%s failed after %d of %d sets (status %d): %s; the rest rerun in fresh boots"
              % (f["boot"], f["completed"], len(f["sets"]), f["status"], f["why"])
              for f in res["reneg_failures"]]
    return notes


def table(res, markdown=False):
    """combination x check, one row per combination."""
    head = ["combination", "features off", "boots"] + list(CHECKS)
    rows = []
    for c in res["combinations"]:
        off = [f for f, on in c["row"].items() if not on]
        rows.append([c["name"], ",".join(off) or "-", _boots(c)]
                     + [_mark(c["checks"][k]) for k in CHECKS])
    title = "conform %s (qemu %s%s): %d combinations of %d features, %.0f s" % (
        res["backend"], res["qemu"], ", testpmd " + res["testpmd"]
        if res["backend"] == "vhost-user" else "", len(rows), len(res["factors"]), res["wall_s"])
    cfg = res.get("config") or {}
    if cfg:
        title += "\nconfig: " + ", ".join("%s %s" % (k, "unknown" if v is None else v)
                                         for k, v in cfg.items())
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
        lines = ["  ".join(str(r[i]).ljust(w[i]) for i in range(len(head))).rstrip()
                 for r in [head] + rows]
    found = [(c["name"], k, v) for c in res["combinations"] for k, v in c["checks"].items()
             if v["verdict"] in ("violation", "error")]
    notes = ["%s %s: %s %s: %s\n    %s" % (n, k, v["verdict"], v["section"], v["detail"],
                                          v["command"]) for n, k, v in found]
    shared = _shared_notes(res)
    return "\n".join([title, ""] + lines + ([""] + shared if shared else [])
                     + ([""] + notes if notes else []))
