"""The covering array of `vnperf conform` (tools/vnperflib/campaign/conform_pairs.py):
every pair of on/off values of every two features appears in some row,
every row respects the feature dependencies, the plan has each feature on
alone and off alone, and it is far smaller than the full product."""

import itertools

import pytest

import vnpy  # noqa: F401  (puts tools/ on sys.path)
from vnperflib.campaign import conform_pairs as cp

FEATS = ("csum", "guest_csum", "host_tso4", "guest_tso4", "mrg_rxbuf", "status", "ctrl_vq",
         "event_idx", "ring_packed", "in_order", "indirect_desc", "mtu", "mac")


@pytest.mark.parametrize("n", [2, 3, 4, 7, 12, 20])
def test_every_pair_of_independent_features_appears(n):
    feats = ["f%d" % i for i in range(n)]
    rows = cp.pairwise(feats)
    for f, g in itertools.combinations(feats, 2):
        for a, b in itertools.product((False, True), repeat=2):
            assert any(r[f] == a and r[g] == b for r in rows), (f, a, g, b, rows)
    # a covering array, not the product: O(log n) rows
    assert len(rows) <= 4 + 2 * n.bit_length() + 4, len(rows)


def test_every_coverable_pair_appears_with_dependencies():
    rows = cp.pairwise(FEATS)
    assert all(cp.valid(r) for r in rows)
    want = cp.coverable(FEATS)
    got = set()
    for r in rows:
        got |= {(f, r[f], g, r[g]) for f, g in itertools.combinations(FEATS, 2)}
    assert want <= got, sorted(want - got)
    assert len(rows) < 2 ** len(FEATS) // 100


def test_impossible_pairs_are_named_not_dropped_silently():
    imp = cp.impossible(FEATS)
    assert "csum=off host_tso4=on" in imp
    assert "guest_tso4=on mrg_rxbuf=off" in imp
    assert not any("status" in p for p in imp), imp


def test_plan_has_all_none_each_alone_and_is_deterministic():
    plan = cp.plan(FEATS)
    names = [n for n, _ in plan]
    assert names[:2] == ["all", "none"]
    rows = dict(plan)
    assert all(rows["all"].values()) and not any(rows["none"].values())
    for f in FEATS:
        off = rows["-" + f] if "-" + f in rows else None
        assert off is None or not off[f]
    # host_tso4 off alone leaves csum on; csum off alone takes host_tso4 with it
    assert rows["-host_tso4"]["csum"] and not rows["-csum"]["host_tso4"]
    # on alone brings what it needs
    assert rows["+host_tso4"] == dict({f: False for f in FEATS}, host_tso4=True, csum=True)
    assert all(cp.valid(r) for _, r in plan)
    assert cp.plan(FEATS) == plan
    # no row twice
    assert len({tuple(sorted(r.items())) for _, r in plan}) == len(plan)
