"""The RFC 2544 search (vnperflib/search.py) on a simulated device under
test with a known loss curve: no QEMU, no image."""

import random

import pytest

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import search


class Dut:
    """A device that loses every frame above step pps (the share above
    it), with a sender whose rate jitters by up to jitter (relative) and,
    below the step, a random loss of up to noise_pct (what PDR allows)."""

    def __init__(self, step, max_pps, jitter=0.001, noise_pct=0.0, seconds=2.0, seed=7):
        self.step, self.max_pps, self.jitter = step, max_pps, jitter
        self.noise_pct, self.seconds = noise_pct, seconds
        self.rng = random.Random(seed)
        self.calls = []

    def __call__(self, target, kind):
        self.calls.append((target, kind))
        rate = self.max_pps if target is None else target
        achieved = rate * (1 + self.rng.uniform(-self.jitter, self.jitter))
        sent = int(achieved * self.seconds)
        if achieved > self.step:
            lost = int(sent * (achieved - self.step) / achieved) + 1
        else:
            lost = int(sent * self.rng.uniform(0, self.noise_pct) / 100.0)
        return {"status": 0, "why": "ok", "sent": sent, "received": sent - lost,
                "achieved_pps": achieved}


@pytest.mark.parametrize("step", [123457, 250000, 400001, 601000])
@pytest.mark.parametrize("jitter", [0.0, 0.001])
def test_ndr_finds_the_step_within_the_resolution_in_the_expected_trials(step, jitter):
    dut = Dut(step, max_pps=1000000, jitter=jitter)
    spec = search.Spec(loss_pct=0, resolution=0.01)
    r = search.Search(spec, dut).run()
    assert r["status"] == search.OK and r["verified"], r["why"]
    res = r["resolution_pps"]
    assert res == pytest.approx(0.01 * r["rate_pps"])
    # Below the step (jitter may cost the last step) and within one
    # resolution of it.
    assert step - res - dut.jitter * step <= r["rate_pps"] <= step
    # The flat-out trial, the halvings of [floor, flat out] down to the
    # resolution at the rate found (one more when the last step moved the
    # rate up), the verification; a rate that passed on a low jitter and
    # fails its verification costs that verification and a step below.
    steps = search.bisection_steps(r["max_pps"] - spec.floor(r["max_pps"]), res)
    retried = [t["kind"] for t in r["trials"]].count("verify") - 1
    assert retried <= (1 if jitter else 0)
    assert 2 + steps <= len(r["trials"]) <= 3 + steps + 2 * retried
    kinds = [t["kind"] for t in r["trials"]]
    assert kinds[0] == "max" and kinds[-1] == "verify"
    assert set(kinds[1:-1]) == ({"search", "verify"} if retried else {"search"})
    assert r["trials"][-1]["target_pps"] == r["rate_pps"] and r["trials"][-1]["lost"] == 0
    # Every trial is in the result, with its judgement.
    for t in r["trials"]:
        assert {"target_pps", "sent", "received", "lost", "loss_pct", "passed",
                "rate_error", "missed"} <= set(t)


def test_pdr_tolerates_noise_below_the_step():
    dut = Dut(300000, max_pps=1000000, noise_pct=0.3)
    r = search.Search(search.Spec(loss_pct=0.5, resolution=0.01), dut).run()
    assert r["status"] == search.OK and r["mode"] == "pdr"
    # Above the step the loss grows as (rate - step) / rate: it reaches
    # 0.5% at step / 0.995, less the noise (up to 0.3%).
    assert 300000 - r["resolution_pps"] - 300 <= r["rate_pps"] <= 300000 / 0.995
    # NDR of the same device: the noise below the step is loss.
    ndr = search.Search(search.Spec(loss_pct=0, resolution=0.01),
                        Dut(300000, max_pps=1000000, noise_pct=0.3)).run()
    assert ndr["status"] != search.OK or ndr["rate_pps"] < 300000 - ndr["resolution_pps"]


def test_absolute_resolution():
    dut = Dut(77777, max_pps=200000, jitter=0.0)
    r = search.Search(search.Spec(resolution=500, relative=False), dut).run()
    assert r["resolution_pps"] == 500 and 77777 - 500 <= r["rate_pps"] <= 77777
    assert len(r["trials"]) == 2 + search.bisection_steps(200000 - 1, 500) == 11


def test_a_trial_failure_stops_the_search_with_its_reason():
    dut = Dut(250000, max_pps=1000000)

    def trial(target, kind):
        if len(dut.calls) == 3:
            return {"status": 68, "why": "testpmd died (status 139): segfault"}
        return dut(target, kind)

    r = search.Search(search.Spec(), trial).run()
    assert r["status"] == search.STOPPED and r["rate_pps"] is None and not r["verified"]
    assert "testpmd died (status 139): segfault" in r["why"]
    assert len(r["trials"]) == 4 and r["trials"][-1]["status"] == 68


def test_flat_out_without_loss_is_sender_bound():
    dut = Dut(10 ** 9, max_pps=500000, jitter=0.0)
    r = search.Search(search.Spec(), dut).run()
    assert r["status"] == search.OK and r["rate_pps"] == 500000
    assert [t["kind"] for t in r["trials"]] == ["max", "verify"]


def test_loss_even_at_the_floor():
    dut = Dut(1000, max_pps=1000000, jitter=0.0)
    r = search.Search(search.Spec(resolution=0.01, floor_pps=10000), dut).run()
    assert r["status"] == search.NO_RATE and "floor, 10000 pps" in r["why"]
    assert r["trials"][-1]["kind"] == "floor"


def test_failed_verification_searches_below():
    dut = Dut(250000, max_pps=1000000, jitter=0.0)
    first = []

    def trial(target, kind):
        t = dut(target, kind)
        if kind == "verify" and not first:
            first.append(target)
            t["received"] = t["sent"] - 5   # a burst of loss at the first verification
        return t

    r = search.Search(search.Spec(), trial).run()
    assert r["status"] == search.OK and r["rate_pps"] < first[0]
    assert [t["kind"] for t in r["trials"]].count("verify") == 2


def test_unstable_loss_gives_no_rate():
    dut = Dut(250000, max_pps=1000000, jitter=0.0)

    def trial(target, kind):
        t = dut(target, kind)
        if kind == "verify":
            t["received"] = t["sent"] - 1
        return t

    r = search.Search(search.Spec(max_verify=2), trial).run()
    assert r["status"] == search.UNSTABLE and r["rate_pps"] is None


def test_a_result_whose_trial_missed_its_rate_is_refused():
    # The sender never holds more than 90% of what it is asked above 200k.
    dut = Dut(10 ** 9, max_pps=1000000, jitter=0.0)

    def trial(target, kind):
        t = dut(target, kind)
        if target is not None and target > 200000:
            t["achieved_pps"] = target * 0.9
            t["received"] = t["sent"] = int(t["achieved_pps"] * 2)
        if target is None:
            t["received"] = t["sent"] - 1   # flat out loses: a search follows
        return t

    r = search.Search(search.Spec(), trial).run()
    assert r["status"] == search.MISSED and r["rate_pps"] is None
    assert "was not what the device was offered" in r["why"]
    assert any(t["missed"] for t in r["trials"])


def test_more_received_than_sent_stops():
    def trial(target, kind):
        return {"status": 0, "sent": 100, "received": 101, "achieved_pps": 50.0}

    r = search.Search(search.Spec(), trial).run()
    assert r["status"] == search.STOPPED and "counts disagree" in r["why"]


def test_a_sender_without_a_rate_stops_the_search():
    dut = Dut(250000, max_pps=1000000)

    def trial(target, kind):
        t = dut(target, kind)
        if target is not None:
            t["achieved_pps"] = None    # unpaced: only the flat-out rate is known
        return t

    r = search.Search(search.Spec(), trial).run()
    assert r["status"] == search.STOPPED and "the sender reports no rate" in r["why"]
    assert len(r["trials"]) == 2

    def unpaced(target, kind):
        return dict(dut(target, kind), achieved_pps=None)

    r = search.Search(search.Spec(), unpaced).run()
    assert r["status"] == search.STOPPED and len(r["trials"]) == 1
    assert "without pacing cannot be searched with" in r["why"]


def test_trial_budget():
    dut = Dut(250000, max_pps=1000000)
    r = search.Search(search.Spec(max_trials=4), dut).run()
    assert r["status"] == search.MAX_TRIALS and len(r["trials"]) == 4


@pytest.mark.parametrize("kw", [{"loss_pct": -1}, {"loss_pct": 100}, {"resolution": 0},
                                {"resolution": 1.0}, {"floor_pps": 0}])
def test_bad_spec(kw):
    with pytest.raises(ValueError):
        search.Spec(**kw)
