"""Console echo of the guests' lines and the live progress line of each
sample (the guest's rate next to what the host end counted so far)."""

import os
import re
import sys

from ..analysis.stats import number as _num
from ..report import report


# Terminal control sequences firmware writes to the serial console (OVMF
# clears the screen and sets modes): echoed as is they garble the runner's
# output, so human lines are shown without them (--raw keeps them).
_TERM_ESCAPES = re.compile(r"\x1b(\[[0-9;=?]*[A-Za-z]|c)")


class Echo:
    """Console echo and live progress lines."""

    def __init__(self, opts, multi, live=None):
        self.live = live
        self.quiet = opts.quiet
        self.raw = opts.raw
        self.multi = multi
        self.out = sys.stderr if opts.json or opts.csv else sys.stdout

    def __call__(self, g, line):
        if self.quiet:
            return
        try:
            self._show(g, line)
        except BrokenPipeError:
            # The reader went away (| head): the run goes on, silently.
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())
            self.quiet = True

    def _show(self, g, line):
        tag = "[%s] " % g.label if self.multi else ""
        if self.raw:
            print(tag + line.text, file=self.out, flush=True)
            return
        if line.msg is None:
            print(tag + _TERM_ESCAPES.sub("", line.text), file=self.out, flush=True)
            return
        m = line.msg
        if m["type"] == "sample":
            extra = ""
            for k, what in (("lost", "lost"), ("tx_dropped", "dropped"), ("timeouts", "timeouts")):
                if _num(m.get(k)) is not None:
                    extra += "  %s %d" % (what, m[k])
            if self.live is not None:
                for k, v in self.live().items():
                    extra += "  %s %d" % (k, v)
            t = _num(m.get("t"))
            print("%s[%5.1fs] %s%s" % (tag, t if t is not None else 0.0, report.progress(m),
                                       extra), file=self.out, flush=True)
        elif m["type"] == "error":
            print("%sguest error: %s" % (tag, m.get("message", m)), file=self.out, flush=True)
