"""What DPDK's testpmd printed inside the Linux guest (bench/linux-guest/init's
testpmd mode: txonly, --stats-period=1, stopped by SIGINT), as figures:
the frames it sent in total and per TX queue, and the Tx-pps of its
periodic port statistics. The blocks are the ones the runner's vhost-user
backend reads from the host's testpmd (tools/vnperflib/backends/testpmd.py)."""

import re

from vnperflib.backends import testpmd

BEGIN = "@lnx type=testpmd-log begin"
END = "@lnx type=testpmd-log end"
# The periodic port statistics (testpmd's nic_stats_display): "Tx-pps: N".
TX_PPS_RE = re.compile(r"Tx-pps:\s*(\d+)", re.ASCII)


def log_text(lines):
    """The testpmd output /init printed between its begin and end lines
    (console lines, as text); None when the end line never came."""
    out, inside = [], False
    for text in lines:
        text = text.rstrip("\r")
        if text == BEGIN:
            out, inside = [], True
        elif text == END and inside:
            return "\n".join(out)
        elif inside:
            out.append(text)
    return None


def figures(text, queues):
    """{"tx_packets": total, "queues": [{"queue", "tx_packets"}] or None,
    "tx_pps": [the periodic Tx-pps]} from testpmd's output; total and
    queues are testpmd's at its stop (the last forward statistics: one
    port, a stream per queue when there are several)."""
    fwd = testpmd.parse_fwd_stats(text)
    port = fwd[-1].get(0, {}) if fwd else {}
    per = None
    if queues > 1:
        streams = testpmd.parse_stream_stats(text)
        counts = testpmd.queue_counts(streams[-1], 0, queues) if streams else None
        per = [{"queue": c["queue"], "tx_packets": c["tx_packets"]} for c in counts] \
            if counts else None
    elif "TX-packets" in port:
        per = [{"queue": 0, "tx_packets": port["TX-packets"]}]
    return {"tx_packets": port.get("TX-packets"), "tx_dropped": port.get("TX-dropped"),
            "queues": per,
            "tx_pps": [testpmd.counter(v, "Tx-pps") for v in TX_PPS_RE.findall(text)]}
