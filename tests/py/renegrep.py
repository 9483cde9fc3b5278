"""A reneg boot's guest side, its report and conform's split of it, for the
tests of app reneg counted both ways over a backend (test_reneg_user,
test_reneg_vhostuser): three sets of N frames each."""

import dataclasses

import vnpy  # noqa: F401 (puts tools/ on the path)
from vnperflib import result
from vnperflib.analysis import counts
from vnperflib.campaign import conform, conform_checks, conform_plan as cp, conform_reneg

N = 500
SETS = ("all", "-event_idx", "indirect:off")


def guest(back, extra=0):
    """The guest's samples and result: each set N frames out, back[k]
    counted back; extra: the boot's own frames (lwIP's) both ways."""
    sets = [{"set": t, "stream": k, "packets": N,
             "rx": {"packets": back[k], "unique": back[k], "lost": 0, "dup": 0,
                    "malformed": 0}} for k, t in enumerate(SETS)]
    samples = [{"app": "reneg", "set": k, "packets": N, "vnet": {}} for k in range(len(SETS))]
    res = {"type": "result", "app": "reneg", "packets": len(SETS) * N,
           "tx_packets": len(SETS) * N + extra, "rx_packets": sum(back) + extra, "sets": sets}
    return samples, res


def report(samples, res, host, lossless):
    """The run's result with the host's collect() and the merged counts."""
    rep = result.RunResult.from_dict({
        "status": 0, "why": "ok", "host": host,
        "guests": [{"samples": samples, "result": res, "console_tail": []}]})
    return dataclasses.replace(rep, counts=counts.merge("reneg", res, host, lossless))


def split(rep, counts_back):
    """conform's reading of the boot: (the sets' boots, a failure or None)."""
    group = cp.Group("r1", cp.BOTH, (0, 1, 2), SETS)
    b = conform.Boot(cp.BOTH, "tools/vnperf run X", rep.status, rep.why, rep)
    return conform_reneg.split(b, group, lambda r: conform.Boot(cp.BOTH, b.command, 0, "", r),
                               counts_back)


def traffic(done):
    return [conform_checks.judge({"event_idx": True}, {"event_idx"}, [b])["traffic"]
            for b in done]
