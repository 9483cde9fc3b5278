#!/usr/bin/python3
"""Zero-loss RX rate (RFC 2544 NDR) of vnperf's sink against a Linux
guest (bench/linuxguest.py rx: Debian's kernel counting eth0) receiving the
same paced flood from the same host sender on the same backend, in the same
run: one search each (vnperflib/campaign/search.py, the same trials and rules as
`vnperf ndr`), the order alternating per repeat, and the ratios.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_ndr_sink.py \\
        --backend dgram --size 60 --duration 2 --resolution 5% --repeat 2 \\
        [--notify poll,hybrid] [--aa linux|vnperf] [--feeder peer-dpdk|testpmd]
        [--queue-size 256|512|1024] [--sock-rcvbuf BYTES] [-- vnperf words]

The sender is the paced host peer: straight on dgram, socket, tap and
passt; over vhost-user vnperf-peer-dpdk on the guest's own port (or with
`--feeder testpmd` the socket peer through a tap port that testpmd forwards
to the guest's port), the same path for both guests (the flat-out trial
too: ndr_trial.FLAT_OUT). `--queue-size` sets QEMU's rx/tx queue size
for both guests (each driver takes the device's size); over dgram
`--sock-rcvbuf` gives both guests' QEMU a UDP socket the runner made with
that receive buffer (the header says which socket). `--notify poll,hybrid` runs one vnperf
side per notification mode (docs/driver.md). Words after `--` go to every
vnperf sink (rx_refill=16 ...). `--aa linux` (or `--aa`) puts the Linux
guest on both sides, `--aa vnperf` the same vnperf image: the noise floor
of the ratio, with Welch's test of the two sides' NDRs (it should read
"not significant"). The last side is the baseline of every ratio.
Exit status 0 when every search found a verified rate, 1 otherwise, 2 for
bad options, 3 when the Linux guest cannot be built."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import linuxguest  # noqa: E402
from vnperflib import result
from vnperflib.campaign import ndr_cli, ndr_trial, search
from vnperflib.analysis import stats  # noqa: E402
from vnperflib.errors import RunnerError  # noqa: E402
from vnperflib.report.tables import fmt_num, table  # noqa: E402

NOTIFY = ("poll", "irq", "hybrid")
QUEUE_SIZES = (256, 512, 1024)  # QEMU's virtio-net: a power of two, 256..1024


def vnperf_argv(o, out, notify=None):
    """`vnperf ndr --json --out OUT` of the sink: the same search, every
    trial a `vnperf run`; the guest words last, after `--`."""
    argv = [sys.executable, os.path.join(ROOT, "tools", "vnperf"), "ndr", "--accel", "tcg",
            "--backend", o.backend, "--size", str(o.size), "--duration", str(o.duration),
            "--resolution", o.resolution, "--latency-at", "none", "--json", "--out", out]
    if notify:
        argv += ["--notify", notify]
    if o.feeder:
        argv += ["--feeder", o.feeder]
    if o.queue_size:
        argv += ["--queue-size", str(o.queue_size)]
    if o.sock_rcvbuf:
        argv += ["--sock-rcvbuf", str(o.sock_rcvbuf)]
    return argv + (["--"] + o.words if o.words else [])


def search_of(stdout, stderr, status):
    """The first search of `vnperf ndr --json`'s output, or a failed search
    with the last line it printed on stderr."""
    try:
        return json.loads(stdout)["points"][0]["searches"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        lines = stderr.strip().splitlines()
        return {"status": "failed", "why": lines[-1] if lines else "status %d" % status,
                "rate_pps": None, "offered_pps": None, "forwarded_pps": None, "trials": []}


def vnperf_search(o, name, notify, log):
    out = tempfile.mkdtemp(prefix="bench-ndr-")
    t0 = time.monotonic()
    p = subprocess.run(vnperf_argv(o, out, notify), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    shutil.rmtree(out, ignore_errors=True)
    r = search_of(p.stdout, p.stderr, p.returncode)
    r["wall_s"] = time.monotonic() - t0
    log("%s: %s, %d trials, %.0f s" % (name, r["why"], len(r["trials"]), r["wall_s"]))
    return r


def whole(v):
    """A counter as an int (the Linux figures are deltas of floats)."""
    return int(v) if stats.is_number(v) and v == int(v) else None


def host_drops(res):
    """The backend's losses in front of the guest (counts.drop entries:
    QEMU's socket, testpmd's ports), the places that lost frames."""
    drops = (res.get("host") or {}).get("tx_drops") or ()
    return ["%s %s" % (d.get("frames"), d.get("what")) for d in drops
            if isinstance(d, dict) and d.get("frames")]


def linux_result_trial(res):
    """A search trial from one linuxguest rx result."""
    peer = (res.get("host") or {}).get("peer") or {}
    return {"status": res["status"], "why": res.get("why"), "sent": whole(res.get("sent")),
            "received": whole(res.get("rx_packets")),
            "achieved_pps": ndr_trial.sender_pps(result.RunResult(host={"peer": peer})),
            "where": "; ".join(["eth0 rx_dropped %s, missed %s" % (
                res.get("rx_dropped"), res.get("rx_missed_errors"))] + host_drops(res)),
            "cpu_pct": res.get("cpu_total_pct"), "cpu_roles": res.get("cpu_pct")}


def linux_trial(o):
    """A search trial: the Linux guest counting the host sender's frames."""
    def trial(target, kind):
        return linux_result_trial(linuxguest.make_run(
            "rx", o.backend, machine="microvm", duration=o.duration, size=o.size,
            rate=ndr_trial.FLAT_OUT if target is None else str(target),
            feeder=o.feeder, queue_size=o.queue_size, sock_rcvbuf=o.sock_rcvbuf).execute())
    return trial


def run_search(name, trial, spec, log):
    t0 = time.monotonic()
    r = search.Search(spec, trial, lambda line: log("%s: %s" % (name, line))).run()
    r["wall_s"] = time.monotonic() - t0
    log("%s: %s, %d trials, %.0f s" % (name, r["why"], len(r["trials"]), r["wall_s"]))
    return r


def side_names(o):
    """The sides, the baseline (Linux, or the A/A's second copy) last."""
    if o.aa:
        return [o.aa, o.aa + "'"]
    if not o.notify:
        return ["vnperf", "linux"]
    return ["vnperf " + m for m in o.notify] + ["linux"]


def sides(o, log):
    """[(name, fn() -> a search result)] in side_names' order."""
    out = []
    for name in side_names(o):
        if name.startswith("linux"):
            out.append((name, lambda n=name: run_search(n, linux_trial(o), o.spec, log)))
        else:
            mode = name.split(" ", 1)[1] if " " in name else None
            out.append((name, lambda n=name, m=mode: vnperf_search(o, n, m, log)))
    return out


def order(names, r):
    """Repeat r's running order: A B C, then C B A: the host's drift over
    the run hits every side alike."""
    return list(names) if r % 2 == 0 else list(reversed(names))


# The backends whose sink sender is the host peer, paced by --rate.
PACED = ("dgram", "socket", "tap", "passt", "vhost-user")


def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="dgram", help="one of %s (the host peer paces)"
                    % ", ".join(PACED))
    ap.add_argument("--size", type=int, default=60, help="frame size without FCS")
    ap.add_argument("--duration", type=int, default=2, help="seconds per trial")
    ap.add_argument("--resolution", default="5%")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--notify", default=None, help="one vnperf side per mode: poll,irq,hybrid")
    ap.add_argument("--aa", nargs="?", const="linux", choices=("linux", "vnperf"),
                    help="the same guest on both sides (default linux)")
    ap.add_argument("--feeder", choices=("peer-dpdk", "testpmd"), default=None,
                    help="vhost-user: the sender of both guests (default peer-dpdk)")
    ap.add_argument("--queue-size", type=int, default=None,
                    help="both guests' virtio-net rx/tx queue size (QEMU's, 256 by default; "
                         "vnperf's ring= follows it)")
    ap.add_argument("--sock-rcvbuf", type=linuxguest.rcvbuf_size, default=None,
                    metavar="BYTES", help="dgram: both guests' QEMU receive on a UDP socket "
                    "the runner made with this buffer (4M; default: QEMU's own)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("words", nargs="*", metavar="-- KEY=VALUE", help="vnperf guest words")
    o = ap.parse_args(argv)
    check(ap, o)
    return o


def check(ap, o):
    if o.backend not in PACED:
        ap.error("--backend %s: the sink's sender there is not the paced host peer; one of %s"
                 % (o.backend, ", ".join(PACED)))
    if o.duration < 1 or o.repeat < 1 or not 60 <= o.size <= 1514:
        ap.error("--duration and --repeat at least 1, --size 60..1514")
    if o.queue_size is not None and (o.queue_size not in QUEUE_SIZES):
        ap.error("--queue-size %d: one of %s" % (o.queue_size, ", ".join(map(str, QUEUE_SIZES))))
    if o.sock_rcvbuf and o.backend != "dgram":
        ap.error("--sock-rcvbuf: --backend dgram only (the runner makes QEMU's socket there)")
    if o.feeder and o.backend != "vhost-user":
        ap.error("--feeder picks vhost-user's sender: --backend vhost-user only")
    o.notify = [m for m in (o.notify or "").split(",") if m] or None
    bad = [m for m in o.notify or () if m not in NOTIFY]
    if bad or (o.notify is not None and len(set(o.notify)) != len(o.notify)):
        ap.error("--notify %s: distinct modes of %s" % (",".join(o.notify), ", ".join(NOTIFY)))
    if o.aa and o.notify:
        ap.error("--aa compares one guest with itself: no --notify axis with it")
    if o.aa == "linux" and o.words:
        ap.error("--aa linux: guest words go to vnperf only")
    try:
        res, relative = ndr_cli.parse_resolution(o.resolution)
        o.spec = search.Spec(resolution=res, relative=relative)
    except (RunnerError, ValueError) as e:
        ap.error("--resolution %s: %s" % (o.resolution, getattr(e, "line", e)))


def summarize(found):
    """Per side: the NDRs found and their summary; per side but the
    baseline (the last): the ratio of the medians, of each repeat's pair,
    and Welch's test of the two sides' NDRs (p, significant at ALPHA)."""
    names = list(found)
    base = names[-1]
    out = {}
    for name, rs in found.items():
        rates = [x["rate_pps"] for x in rs if x["rate_pps"] is not None]
        s = stats.summary(rates) or {}
        s["rates"] = rates
        out[name] = s
    out["vs"] = {}
    for name in names[:-1]:
        ma, mb = out[name].get("median"), out[base].get("median")
        t = stats.test(out[base]["rates"], out[name]["rates"])
        out["vs"][name] = {
            "ratio": ma / mb if ma and mb else None,
            "pair_ratios": [x["rate_pps"] / y["rate_pps"] for x, y in zip(found[name], found[base])
                            if x["rate_pps"] and y["rate_pps"]],
            "p": t["p"] if t else None,
            "significant": t["p"] < stats.ALPHA if t else None}
    return out


def verdict(v):
    if v["p"] is None:
        return "no test: fewer than 2 NDRs a side"
    return "p=%.3f, %ssignificant at %g" % (v["p"], "" if v["significant"] else "not ",
                                             stats.ALPHA)


def cpu_at_ndr(r):
    """Host CPU % by role (vcpu, peer-dpdk, testpmd, ...) in a search's
    passing verification trial, the one at the NDR; None without one."""
    v = [t for t in r.get("trials") or () if t.get("kind") == "verify" and t.get("passed")]
    return v[-1].get("cpu_roles") if v else None


def cpu_line(name, rs):
    """One line per side: each repeat's CPU by role at its NDR."""
    parts = []
    for x in rs:
        roles = cpu_at_ndr(x)
        parts.append(", ".join("%s %.0f%%" % (k, v) for k, v in sorted(roles.items()) if v)
                     if roles else "-")
    return "%s CPU at NDR: %s" % (name, " | ".join(parts))


def rcvbuf_text(o):
    """Which UDP socket QEMU read, the same for both guests."""
    if o.sock_rcvbuf:
        return "QEMU's socket rcvbuf %d bytes (the runner's, both guests)" % o.sock_rcvbuf
    return "QEMU's own socket (net.core.rmem_default)" if o.backend == "dgram" else \
        "no UDP socket"


def render(o, found, out):
    """The table: per side the NDRs found, then each side's ratio to the
    baseline: of the medians and of each repeat's back-to-back pair."""
    rows = []
    for name, rs in found.items():
        s = out[name]
        rows.append([name, "%d/%d" % (len(s["rates"]), len(rs)),
                     fmt_num(s["median"]) if s["rates"] else "-",
                     "%s-%s" % (fmt_num(s["min"]), fmt_num(s["max"])) if s["rates"] else "-",
                     " ".join(fmt_num(x["offered_pps"]) for x in rs),
                     " ".join(fmt_num(x["forwarded_pps"]) for x in rs),
                     " ".join(str(len(x["trials"])) for x in rs)])
    base = list(found)[-1]
    lines = ["zero-loss RX, %s, %d-byte frames (%s with FCS), %d s trials, resolution %s, %s" % (
        o.backend, o.size, ndr_trial.rfc2544_label(o.size), o.duration, o.resolution,
        rcvbuf_text(o)),
        table(["guest", "ok", "NDR pps", "min-max", "offered", "forwarded", "trials"], rows)]
    for name, v in out["vs"].items():
        lines.append("%s / %s: %s (pairs %s); %s" % (
            name, base, "%.2fx" % v["ratio"] if v["ratio"] else "-",
            " ".join("%.2f" % x for x in v["pair_ratios"]) or "-", verdict(v)))
    lines += [cpu_line(name, rs) for name, rs in found.items()]
    for name, rs in found.items():
        lines += ["%s: %s" % (name, x["why"]) for x in rs if x["status"] != search.OK]
    return "\n".join(lines)


def main(argv=None):
    o = options(argv)
    why = linuxguest.ensure_built()
    if why:
        print("bench_ndr_sink: " + why, file=sys.stderr)
        return 3

    def log(line):
        print("bench_ndr_sink: " + line, file=sys.stderr, flush=True)

    systems = dict(sides(o, log))
    found = {name: [] for name in systems}
    for r in range(o.repeat):
        for name in order(list(systems), r):
            found[name].append(systems[name]())
    out = summarize(found)
    if o.json:
        print(json.dumps({"backend": o.backend, "size": o.size, "duration": o.duration,
                          "resolution": o.resolution, "notify": o.notify, "words": o.words,
                          "sock_rcvbuf": o.sock_rcvbuf,
                          "searches": found, "summary": out}, indent=1, default=str))
    else:
        print(render(o, found, out))
    return 0 if all(x["status"] == search.OK for rs in found.values() for x in rs) else 1

if __name__ == "__main__":
    sys.exit(main())
