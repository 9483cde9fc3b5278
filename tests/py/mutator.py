"""Seeded random-input generator for the runner's parser harnesses
(tests/py/test_pyfuzz_*.py). Debian packages no coverage-guided fuzzer for
this Python, so each harness mutates committed seeds (tests/py/seeds/NAME)
with byte- and token-level edits and checks its parser's rule: one line and a
documented status, never a traceback.

The count comes from VNPERF_PYFUZZ_N: a smoke in `make pyunit`, 10^5 or more
in `make fuzz`. The seed is fixed per harness (VNPERF_PYFUZZ_SEED moves it),
so a finding reproduces from its index."""

import os
import random

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
