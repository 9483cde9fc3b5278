"""Seeded random-input generator for the runner's parser harnesses
(tests/py/test_pyfuzz_*.py). Debian packages no coverage-guided fuzzer for
this Python, so each harness mutates committed seeds (tests/py/seeds/NAME)
with byte- and token-level edits and checks its parser's rule: one line and a
documented status, never a traceback.

The count comes from VNPERF_PYFUZZ_N: a smoke in `make pyunit`, 10^5 or more
in `make fuzz`. The seed is fixed per harness (VNPERF_PYFUZZ_SEED moves it),
so a finding reproduces from its index."""

import collections
import copy
import json
import os
import random
import time

SMOKE_N = 2000
SEEDS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")

# Values that break parsers: huge, nested, non-finite, negative, control bytes.
_TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"-1", b"0", b"1e400", b"9" * 401, b"null",
           b"true", b"\"\"", b"[]", b"{}", b"[" * 2000, b"{\"a\":" * 500, b"\x00", b"\n",
           b"\r", b"\xff\xfe", b"\"x\"", b"18446744073709551616", b"-0", b"1.5", b" ",
           b"@vnperf ", b"=", b",", b":", b"\\u0000", b"\xc3\x28"]


def count():
    """How many inputs each harness runs."""
    return int(os.environ.get("VNPERF_PYFUZZ_N", SMOKE_N))


def load_seeds(name):
    """The committed seed inputs of harness NAME, as bytes, sorted by file."""
    d = os.path.join(SEEDS_DIR, name)
    out = []
    for f in sorted(os.listdir(d)):
        with open(os.path.join(d, f), "rb") as fh:
            out.append(fh.read())
    if not out:
        raise RuntimeError(f"no seeds in {d}")
    return out


def _mutate_once(rng, data):
    op = rng.randrange(7)
    pos = rng.randrange(len(data) + 1)
    if op == 0 and data:  # flip a byte
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
    if op == 1:  # insert a hostile token
        return data[:pos] + rng.choice(_TOKENS) + data[pos:]
    if op == 2 and data:  # delete a span
        end = min(len(data), pos + rng.randrange(1, 16))
        return data[:pos] + data[end:]
    if op == 3 and data:  # duplicate a span
        i = rng.randrange(len(data))
        j = min(len(data), i + rng.randrange(1, 64))
        return data[:pos] + data[i:j] + data[pos:]
    if op == 4:  # replace a number-looking run with a hostile token
        digits = [i for i, c in enumerate(data) if 0x30 <= c <= 0x39]
        if digits:
            i = rng.choice(digits)
            j = i
            while j < len(data) and (0x30 <= data[j] <= 0x39 or data[j] == 0x2E):
                j += 1
            return data[:i] + rng.choice(_TOKENS) + data[j:]
    if op == 5:  # random bytes
        return data[:pos] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))) + data[pos:]
    if op == 6 and data:  # truncate
        return data[:pos]
    return data + rng.choice(_TOKENS)


def inputs(name, seeds=None, n=None):
    """Yields (index, bytes): the seeds themselves, then n mutants, each of
    1-4 stacked mutations of a seed or of an earlier mutant."""
    seeds = load_seeds(name) if seeds is None else list(seeds)
    n = count() if n is None else n
    rng = random.Random(f"{name}:{os.environ.get('VNPERF_PYFUZZ_SEED', '0')}")
    pool = list(seeds)
    for i, s in enumerate(seeds):
        yield i, s
    for i in range(n):
        data = rng.choice(pool)
        for _ in range(rng.randrange(1, 5)):
            data = _mutate_once(rng, data)
        if len(pool) < 512 and rng.randrange(8) == 0:
            pool.append(data)
        yield len(seeds) + i, data


SLOW_S = 0.5


def one_line(text):
    """One printable line: no control character a terminal would act on."""
    return isinstance(text, str) and bool(text) and not any(c < " " or c == "\x7f" for c in text)


def members(v, out=None):
    """Every (container, key) of a parsed JSON value."""
    out = [] if out is None else out
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        out.append((v, k))
        members(x, out)
    return out


def tree_mutant(rng, tree, hostile, keys=None):
    """A copy of a parsed seed with one to three members removed, added (a
    name from keys, or one of its own) or replaced by a hostile value, as
    JSON bytes (NaN and Infinity as Python's json writes them): structure
    that a byte mutant rarely keeps parseable."""
    data = copy.deepcopy(tree)
    for _ in range(rng.randrange(1, 4)):
        slots = members(data)
        if not slots:
            break
        c, k = rng.choice(slots)
        op = rng.randrange(6)
        if op == 0 and isinstance(c, dict):
            del c[k]
        elif op == 1 and isinstance(c, dict):
            c[rng.choice(keys or list(c))] = copy.deepcopy(rng.choice(hostile))
        else:
            c[k] = copy.deepcopy(rng.choice(hostile))
    return json.dumps(data).encode()


def drive(name, check, seeds=None):
    """check(i, data) over inputs(name, seeds), each an iterable of outcome
    names; any exception or an input slower than SLOW_S is a finding.
    Returns the outcomes counted, after printing them."""
    seen = collections.Counter()
    n = slowest = 0
    t0 = time.monotonic()
    for i, data in inputs(name, seeds):
        t = time.monotonic()
        try:
            seen.update(check(i, data))
        except Exception as e:  # noqa: BLE001 - the rule: none escapes the parser's own
            raise AssertionError("%s input %d (%r...): %s: %s" % (
                name, i, data[:200], type(e).__name__, e)) from e
        took = time.monotonic() - t
        assert took < SLOW_S, "%s input %d took %.2f s: %r..." % (name, i, took, data[:120])
        slowest = max(slowest, took)
        n += 1
    print("pyfuzz %s: %d inputs in %.1f s, slowest %.1f ms, %s" % (
        name, n, time.monotonic() - t0, slowest * 1e3, dict(sorted(seen.items(), key=str))))
    return seen
