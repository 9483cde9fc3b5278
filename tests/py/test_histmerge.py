"""histmerge: the guests' `hist` lines read back, merged across guests,
percentiles of the merged distribution (not averages of percentiles)."""

import random

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.analysis import histmerge as hm


def lines(samples, unit_ns=1.0, per_line=256, name="latency"):
    """The `hist` lines a guest prints for these recorded values
    (apps_common.c app_hist_lines)."""
    b = {}
    for v in samples:
        b[hm.index(v)] = b.get(hm.index(v), 0) + 1
    pairs = sorted(b.items())
    chunks = [pairs[k:k + per_line] for k in range(0, len(pairs), per_line)] or [[]]
    out = []
    for k, chunk in enumerate(chunks):
        m = {"type": "hist", "name": name, "unit_ns": unit_ns, "part": k,
             "b": [[i, n] for i, n in chunk], "last": k == len(chunks) - 1}
        if k == 0:
            m.update(count=len(samples), min=min(samples), max=max(samples), sum=sum(samples),
                     sub_bits=hm.SUB_BITS)
        out.append(m)
    return out


def exact(values, q):
    s = sorted(values)
    return s[max(1, -(-int(q * len(s) * 1000000) // 1000000)) - 1]


def test_buckets_tile_the_range_like_apps_hist():
    for i in range(hm.BUCKETS - 1):
        assert hm.bucket_low(i) <= hm.bucket_high(i)
        assert hm.bucket_high(i) + 1 == hm.bucket_low(i + 1)
    assert hm.bucket_high(hm.BUCKETS - 1) == 2 ** 64 - 1
    for v in (0, 1, 31, 32, 33, 63, 64, 65, 1000, 123456789, 2 ** 64 - 1):
        i = hm.index(v)
        assert hm.bucket_low(i) <= v <= hm.bucket_high(i)


def test_merged_percentiles_are_those_of_the_union():
    rnd = random.Random(7)
    guests = [[rnd.randint(10000, 20000) for _ in range(3000)],
              [rnd.randint(200000, 400000) for _ in range(1000)],
              [rnd.randint(10000, 5000000) for _ in range(500)]]
    h = hm.merged(hm.from_lines(lines(g)) for g in guests)
    union = [v for g in guests for v in g]
    assert h.count == len(union)
    assert h.min == min(union) and h.max == max(union)
    assert h.sum == sum(union)
    for name, q in hm.PERCENTILES:
        want = exact(union, q)
        got = h.summary()[name]
        # The guest's own rule: a bucket's highest value, at most 1/32 above.
        assert want <= got <= want + want // hm.SUB + 1, name
    assert h.summary()["mean_ns"] == pytest.approx(sum(union) / len(union))


def test_merging_is_not_averaging_percentiles():
    fast = [10000] * 900
    slow = [1000000] * 100
    h = hm.merged([hm.from_lines(lines(fast)), hm.from_lines(lines(slow))])
    # 90% of all transactions took 10 us: the fleet's p50 and p90 say so;
    # the mean of the two guests' p50s would say ~505 us.
    ten_us = hm.bucket_high(hm.index(10000))  # the guest's own rounding
    assert h.quantile(0.5) == ten_us
    assert h.quantile(0.9) == ten_us
    assert h.quantile(0.95) == 1000000


def test_cycles_are_moved_to_nanoseconds_within_a_bucket():
    rnd = random.Random(3)
    cycles = [rnd.randint(5000, 90000) for _ in range(2000)]
    unit = 1e9 / 2.1e9
    h = hm.from_lines(lines(cycles, unit_ns=unit))
    ns = [c * unit for c in cycles]
    for name, q in hm.PERCENTILES:
        want = exact(ns, q)
        assert want * (1 - 1 / 32) <= h.summary()[name] <= want * (1 + 2 / 32) + 1, name
    assert h.max == pytest.approx(max(ns))


def test_many_parts_are_joined():
    values = list(range(0, 40000, 7))  # hundreds of buckets
    ls = lines(values, per_line=10)
    assert len(ls) > 3
    h = hm.from_lines(ls)
    assert h.count == len(values)
    assert h.quantile(1.0) == max(values)


def test_no_lines_no_histogram_and_empty_merge():
    assert hm.from_lines([]) is None
    assert hm.from_lines(lines([5]), name="other") is None
    assert hm.merged([None, None]).summary() == {}


def _broken(mutate):
    ls = lines(list(range(0, 4000, 3)), per_line=20)
    mutate(ls)
    return ls


@pytest.mark.parametrize("mutate,why", [
    (lambda ls: ls.pop(), "last part is missing"),
    (lambda ls: ls.pop(1), "part 2 where part 1 was due"),
    (lambda ls: ls[0].update(count=ls[0]["count"] + 1), "count says"),
    (lambda ls: ls[0].update(unit_ns=0), "unit_ns 0 is not a positive number"),
    (lambda ls: ls[0].update(unit_ns="1"), "is not a positive number"),
    (lambda ls: ls[1].update(unit_ns=2.0), "unit_ns changes between parts"),
    (lambda ls: ls[0].update(sub_bits=4), "sub_bits 4"),
    (lambda ls: ls[1]["b"].append([hm.BUCKETS, 1]), "out of range or repeated"),
    (lambda ls: ls[1]["b"].append(list(ls[0]["b"][0])), "out of range or repeated"),
    (lambda ls: ls[1]["b"].append([3]), r"is not \[index, count\]"),
    (lambda ls: ls[1]["b"].append([3, -1]), "bucket count -1"),
    (lambda ls: ls[1]["b"].append([True, 1]), "bucket index True"),
    (lambda ls: ls[0].update(min=-5), "min -5"),
])
def test_broken_lines_are_refused_with_one_line(mutate, why):
    with pytest.raises(ValueError, match=why):
        hm.from_lines(_broken(mutate))
