"""Issue 13 F7-F11: bad runner options give one line and status 64, never a
traceback, a silently dropped option or a testpmd mode that is not the one
asked for. None of these gets as far as starting QEMU."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VNPERF = os.path.join(ROOT, "tools", "vnperf")
USAGE = 64


def vnperf(*args):
    return subprocess.run([sys.executable, VNPERF] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


@pytest.mark.parametrize("args,needle", [
    (["run", "--memory", "8"], "at least 12"),                       # F7: ValueError, status 70
    (["run", "--fwd-mode", "nosuch"], "invalid choice: 'nosuch'"),   # F9: ran testpmd in io mode
    (["run", "--", "size=64", "size=128"], "size given twice"),       # F10: last won silently
    (["run", "--size", "64", "--", "size=128"], "disagree"),          # F10: the word won silently
    (["run", "--json", "--csv"], "not allowed with argument --json"),  # F11: CSV dropped
    # F8; any file as the image: the directory is refused before it is read.
    (["sweep", "--size", "64", "--backend", "hub", "--image", VNPERF, "--out", "/proc/x"],
     "cannot create the results directory"),
    (["sweep", "--size", "64", "--", "rate=1k", "rate=2k"], "rate given twice"),
    # a whole-number word the guest would refuse: a traceback (status 70) before
    (["run", "--", "queues=x"], "config word queues=x is not a whole number"),
    (["run", "--", "duration=1.5"], "config word duration=1.5 is not a whole number"),
    (["run", "--", "count=\u00b2"], "config word count=\u00b2 is not a whole number"),
])
def test_bad_options_one_line_status_64(args, needle):
    r = vnperf(*args)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert needle in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_config_word_stands_for_an_option_not_given():
    """-- app=rr without --app is --app rr (the runner decides peers and
    partners by the app), and a word equal to its option is fine."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from vnperflib import options
    o = options.build(size=64, config=["app=rr", "duration=30", "size=64"])
    assert (o.app, o.duration, o.size) == ("rr", 30, 64)
    # the guest's own number forms (kernel/config.c): they crashed the runner before
    o = options.build(count=10000, config=["count=10k", "size=0x40", "duration=0x1e"])
    assert (o.count, o.size, o.duration) == (10000, 64, 30)
    assert options.build(config=["count=2Ki", "queues=2"]).count == 2048
