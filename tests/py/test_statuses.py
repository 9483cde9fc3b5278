"""Issue 31: docs/protocol.md lists every status the runner can return,
each with the condition that gives it. The set is derived, not copied: the
guest codes and runner codes of tools/vnperflib/exitcodes.py, every
exitcodes name the runner's code returns or raises, and 128 + each signal
the runner stops on (proc.Session.SIGNALS)."""

import glob
import os
import re

from vnpy import ROOT

from vnperflib import exitcodes
from vnperflib.run.proc import Session

DOC = os.path.join(ROOT, "docs", "protocol.md")
SOURCES = [os.path.join(ROOT, "tools", "vnperf")] + sorted(
    glob.glob(os.path.join(ROOT, "tools", "vnperflib", "**", "*.py"), recursive=True))


def documented():
    """{status: condition} from the tables of docs/protocol.md's "Exit
    codes" section: rows "| 7 | ...", "| 129 / 130 / 143 | ...", "| 0..10 | ..."."""
    with open(DOC) as f:
        text = f.read()
    section = text[text.index("## Exit codes"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    out = {}
    for m in re.finditer(r"^\| *([0-9][0-9 ./]*?) *\|(.*)\|\s*$", section, re.M):
        cells, cond = m.group(1), m.group(2).strip(" |")
        for part in cells.split("/"):
            lo, _, hi = part.strip().partition("..")
            for n in range(int(lo), int(hi or lo) + 1):
                out.setdefault(n, "")
                out[n] += cond
    return out


def named_in_the_runner():
    """{exitcodes name: value} of every exitcodes.NAME the runner's code uses."""
    names = set()
    for p in SOURCES:
        with open(p) as f:
            names.update(re.findall(r"exitcodes\.([A-Z][A-Z_]+)\b", f.read()))
    return {n: getattr(exitcodes, n) for n in names}


def test_every_status_the_runner_can_return_is_documented():
    docs = documented()
    statuses = set(exitcodes.GUEST_CODES) | set(exitcodes.RUNNER_CODES)
    statuses |= set(named_in_the_runner().values())
    statuses |= {128 + int(s) for s in Session.SIGNALS}
    missing = sorted(s for s in statuses if s not in docs)
    assert not missing, "statuses not in docs/protocol.md: %s" % missing
    empty = sorted(s for s in statuses if len(docs[s]) < 8)
    assert not empty, "statuses without a condition: %s" % empty


def test_the_runner_names_only_statuses_exitcodes_defines():
    """A status is returned or raised by its exitcodes name, never a bare
    number (RunnerError(66, ...)) the table could miss."""
    for name, value in named_in_the_runner().items():
        assert value in exitcodes.GUEST_CODES or value in exitcodes.RUNNER_CODES, name
    bare = []
    for p in SOURCES:
        with open(p) as f:
            for i, line in enumerate(f, 1):
                if re.search(r"RunnerError\(\s*\d|\.exit\(\s*[1-9]|Interrupted\(\s*\d", line):
                    bare.append("%s:%d: %s" % (os.path.relpath(p, ROOT), i, line.strip()))
    assert not bare, bare


def test_every_defined_status_is_documented_once_per_table():
    """The runner's table lists each runner code (not only the guest's)."""
    with open(DOC) as f:
        text = f.read()
    runner_table = text[text.index("### Runner statuses"):]
    for code in exitcodes.RUNNER_CODES:
        assert re.search(r"^\|[^|]*\b%d\b[^|]*\|" % code, runner_table, re.M), code
