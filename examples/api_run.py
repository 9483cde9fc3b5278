#!/usr/bin/python3
"""One run from Python (docs/api.md): the generator over dgram to the host
peer, 2000 frames; prints the table and a few typed fields, exits with the
run's status.

    examples/api_run.py [COUNT]"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from vnperflib import api
from vnperflib.report import report  # noqa: E402


def main(argv):
    count = int(argv[0]) if argv else 2000
    try:
        res = api.run(backend="dgram", app="gen", count=count)
    except api.VnperfError as e:
        print("api_run: refused: %s (status %d)" % (e.line, e.status), file=sys.stderr)
        return e.status
    print(report.human(res))
    d = res.counts.directions["guest->host"]
    print("api_run: status %d, %.0f pps, guest->host %s (%s sent, %s received), bottleneck %s"
          % (res.status, res.metrics.pps, d.verdict, d.sent, d.received, res.verdict.side))
    return res.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
