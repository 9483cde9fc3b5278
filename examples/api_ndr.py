#!/usr/bin/python3
"""An NDR search from Python (docs/api.md): the highest rate the guest's
sink takes over dgram without a loss, 64-byte frames, 1 s trials, to 50%,
at most 12 trials, on a 4 MiB UDP socket (QEMU's own 208 KiB overflows
whenever its main loop waits for a CPU: a loss of the host's, not the
sink's).

    examples/api_ndr.py OUTDIR"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from vnperflib import api  # noqa: E402


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    try:
        res = api.ndr(argv[0], backend="dgram", size=64, duration=1, resolution="50%",
                      max_trials=12, latency_at="none", sock_rcvbuf="4M")
    except api.VnperfError as e:
        print("api_ndr: %s (status %d)" % (e.line, e.status), file=sys.stderr)
        return e.status
    for p in res.points:
        for s in p.searches:
            print("api_ndr: size %s: %s (%d trials)" % (p.params["size"], s["why"],
                                                        len(s["trials"])))
    return res.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
