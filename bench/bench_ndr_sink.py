#!/usr/bin/python3
"""Zero-loss RX rate (RFC 2544 NDR) of vnperf's sink against a Linux
guest (bench/linuxguest.py rx: Debian's kernel counting eth0) receiving the
same paced flood from the same host sender on the same backend, in the same
run: one search each (vnperflib/search.py, the same trials and rules as
`vnperf ndr`), the order alternating per repeat, and the ratio.

    flock /tmp/vnperf-qemu.lock /usr/bin/python3 bench/bench_ndr_sink.py \\
        --backend dgram --size 60 --duration 2 --resolution 5% --repeat 2

The sender must be paced: the host peer (dgram, socket, tap, passt).
vhost-user is refused: the sink's sender there is testpmd txonly, which
sends flat out and reports no rate, so no trial below the flat-out rate
could be offered to either guest. `--aa` puts the Linux
guest on both sides: the noise floor of the ratio. Exit status 0 when every
search found a verified rate, 1 otherwise, 2 for bad options, 3 when the
Linux guest cannot be built."""

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
from vnperflib import search, search_run, stats  # noqa: E402
from vnperflib.errors import RunnerError  # noqa: E402
from vnperflib.tables import fmt_num, table  # noqa: E402


def vnperf_search(o, log):
    """`vnperf ndr` of the sink (its JSON): the same search, every trial a
    `vnperf run`."""
    out = tempfile.mkdtemp(prefix="bench-ndr-")
    argv = [sys.executable, os.path.join(ROOT, "tools", "vnperf"), "ndr", "--accel", "tcg",
            "--backend", o.backend, "--size", str(o.size), "--duration", str(o.duration),
            "--resolution", o.resolution, "--latency-at", "none", "--json", "--out", out]
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shutil.rmtree(out, ignore_errors=True)
    try:
        r = json.loads(p.stdout)["points"][0]["searches"][0]
    except (ValueError, KeyError, IndexError):
        lines = p.stderr.strip().splitlines()
        r = {"status": "failed", "why": lines[-1] if lines else "status %d" % p.returncode,
             "rate_pps": None, "max_pps": None, "trials": []}
    r["wall_s"] = time.monotonic() - t0
    log("vnperf: %s, %d trials, %.0f s" % (r["why"], len(r["trials"]), r["wall_s"]))
    return r


def whole(v):
    """A counter as an int (the Linux figures are deltas of floats)."""
    return int(v) if stats.is_number(v) and v == int(v) else None


def linux_trial(o):
    """A search trial: the Linux guest counting the host sender's frames."""
    def trial(target, kind):
        res = linuxguest.make_run("rx", o.backend, machine="microvm", duration=o.duration,
                                  size=o.size, rate=None if target is None else str(target)
                                  ).execute()
        peer = (res.get("host") or {}).get("peer") or {}
        return {"status": res["status"], "why": res.get("why"), "sent": whole(res.get("sent")),
                "received": whole(res.get("rx_packets")),
                "achieved_pps": search_run.sender_pps({"host": {"peer": peer}}),
                "where": "eth0 rx_dropped %s, missed %s, QEMU socket %s" % (
                    res.get("rx_dropped"), res.get("rx_missed_errors"),
                    (res.get("host") or {}).get("tx_drops")),
                "cpu_pct": res.get("cpu_total_pct")}
    return trial


def run_search(name, trial, spec, log):
    t0 = time.monotonic()
    r = search.Search(spec, trial, lambda line: log("%s: %s" % (name, line))).run()
    r["wall_s"] = time.monotonic() - t0
    log("%s: %s, %d trials, %.0f s" % (name, r["why"], len(r["trials"]), r["wall_s"]))
    return r


# The backends whose sink sender is the host peer, paced by --rate.
PACED = ("dgram", "socket", "tap", "passt")
WHY_NOT_PACED = {
    "vhost-user": "the sink's sender is testpmd txonly: flat out only, no rate reported"}


def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="dgram", help="dgram, socket, tap or passt (the host peer paces)")
    ap.add_argument("--size", type=int, default=60, help="frame size without FCS")
    ap.add_argument("--duration", type=int, default=2, help="seconds per trial")
    ap.add_argument("--resolution", default="5%")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--aa", action="store_true", help="the Linux guest on both sides")
    ap.add_argument("--json", action="store_true")
    o = ap.parse_args(argv)
    if o.backend not in PACED:
        ap.error("--backend %s: no paced sender to search with (%s); one of %s" % (
            o.backend, WHY_NOT_PACED.get(o.backend, "not the host peer"), ", ".join(PACED)))
    if o.duration < 1 or o.repeat < 1 or not 60 <= o.size <= 1514:
        ap.error("--duration and --repeat at least 1, --size 60..1514")
    try:
        res, relative = search_run.parse_resolution(o.resolution)
        o.spec = search.Spec(resolution=res, relative=relative)
    except RunnerError as e:
        ap.error(e.line)
    return o


def render(o, found, out):
    """The table: per system the NDRs found, then the ratio of the medians
    and of each repeat's back-to-back pair."""
    rows = []
    for name, rs in found.items():
        s = out[name]
        rows.append([name, "%d/%d" % (len(s["rates"]), len(rs)),
                     fmt_num(s["median"]) if s["rates"] else "-",
                     "%s-%s" % (fmt_num(s["min"]), fmt_num(s["max"])) if s["rates"] else "-",
                     " ".join(fmt_num(x["max_pps"]) for x in rs),
                     " ".join(str(len(x["trials"])) for x in rs)])
    a, b = list(found)
    print("zero-loss RX, %s, %d-byte frames (%s with FCS), %d s trials, resolution %s" % (
        o.backend, o.size, search_run.rfc2544_label(o.size), o.duration, o.resolution))
    print(table(["guest", "ok", "NDR pps", "min-max", "flat out", "trials"], rows))
    pairs = out["pair_ratios"]
    print("%s / %s: %s (pairs %s)" % (a, b, "%.2fx" % out["ratio"] if out["ratio"] else "-",
                                      " ".join("%.2f" % x for x in pairs) or "-"))
    for name, rs in found.items():
        for x in rs:
            if x["status"] != search.OK:
                print("%s: %s" % (name, x["why"]))


def summarize(found):
    out = {}
    for name, rs in found.items():
        rates = [x["rate_pps"] for x in rs if x["rate_pps"] is not None]
        s = stats.summary(rates) or {}
        s["rates"] = rates
        out[name] = s
    a, b = list(found)
    ma, mb = out[a].get("median"), out[b].get("median")
    out["ratio"] = ma / mb if ma and mb else None
    out["pair_ratios"] = [x["rate_pps"] / y["rate_pps"] for x, y in zip(found[a], found[b])
                          if x["rate_pps"] and y["rate_pps"]]
    return out


def main(argv=None):
    o = options(argv)
    why = linuxguest.ensure_built()
    if why:
        print("bench_ndr_sink: " + why, file=sys.stderr)
        return 3

    def log(line):
        print("bench_ndr_sink: " + line, file=sys.stderr, flush=True)

    first = ("linux", lambda: run_search("linux", linux_trial(o), o.spec, log)) if o.aa \
        else ("vnperf", lambda: vnperf_search(o, log))
    second = "linux'" if o.aa else "linux"
    systems = dict([first, (second, lambda: run_search(second, linux_trial(o), o.spec, log))])
    found = {name: [] for name in systems}
    for r in range(o.repeat):
        # A B, then B A: the host's drift over the run hits both.
        order = list(systems) if r % 2 == 0 else list(reversed(list(systems)))
        for name in order:
            found[name].append(systems[name]())
    out = summarize(found)
    if o.json:
        print(json.dumps({"backend": o.backend, "size": o.size, "duration": o.duration,
                          "resolution": o.resolution, "searches": found, "summary": out},
                         indent=1, default=str))
    else:
        render(o, found, out)
    return 0 if all(x["status"] == search.OK for rs in found.values() for x in rs) else 1

if __name__ == "__main__":
    sys.exit(main())
