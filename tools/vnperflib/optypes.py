"""Argparse types of the runner's options: a bad value is one line and
status 64 (tools/vnperf's Parser), never a traceback or a value that
switches a check off."""

import argparse
import math


def digits(s):
    """s is one or more ASCII decimal digits: str.isdigit() also takes
    "\u00b2" and other digits that int() refuses (a traceback where a
    line was due)."""
    return bool(s) and s.isascii() and s.isdigit()


def finite(v, what="a number"):
    """float(v), refusing what is not a finite number: float() takes
    "nan" and "inf", and a NaN passes every comparison's else branch
    (--timeout nan ran without a timeout)."""
    try:
        f = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not %s" % (v, what))
    if not math.isfinite(f):
        raise argparse.ArgumentTypeError("%r is not %s (finite)" % (v, what))
    return f


def finite_float(v):
    """type= of a plain float option."""
    return finite(v)


def out_dir(v):
    """type= of --out: an empty path is no directory (it fell back to the
    default one silently)."""
    if not v.strip():
        raise argparse.ArgumentTypeError("%r: an empty path names no directory" % v)
    return v


def ifname(v):
    """type= of --tap and --bridge: a name the kernel takes for an
    interface (dev_valid_name: 1 to 15 bytes, no '/', ':' or whitespace,
    not . or ..)."""
    if (not v or len(v.encode()) > 15 or v in (".", "..")
            or any(c in "/:" or c.isspace() for c in v)):
        raise argparse.ArgumentTypeError("%r is not an interface name (1 to 15 characters, "
                                         "no '/', ':' or whitespace)" % v)
    return v
