"""RFC 2544 throughput search (s26.1): the highest rate at which the device
under test loses no frame (NDR), or at most a stated share of them (PDR).

Pure logic: the trials are run by a function the caller gives (ndr_trial.py
boots a guest per trial; the tests give a simulated device). One trial at
the sender's flat-out rate measures the ceiling, and what came through
it is tried first (with one resolution above it); then a binary search
between the floor and that ceiling until the bracket above the highest
passing rate is no wider than the resolution (a share of that rate, or
pps); then a verification trial at the rate found. A verification
that loses frames makes the rate the new ceiling and the search goes on
below it (at most max_verify times). A trial that fails for any other
reason (a backend died, a guest error) stops the search with that reason.

Repeated trials (trials_per_load K, exceed_ratio R; the "goal duration
sum" and "goal exceed ratio" of MLRsearch, RFC 9971 (draft-ietf-bmwg-
mlrsearch), reduced to trials of one duration): every rate searched is a
load of up to K trials, and a load fails when more than R*K of them lose
frames beyond the allowed loss. It is classified as soon as the outcome is
decided: it passes once K - floor(R*K) trials passed, fails once more than
floor(R*K) failed. The bisection, the verification and the fall-back below
a failed verification go by the load, not one trial, so a trial that lost
frames to a stall of the host (3-13 ms of a vCPU, at random) no longer
moves the bracket for good. K=1, R=0 is one trial per load. The flat-out
trial measures the ceiling and stays one trial.

A trial is a dict (trial_fn's answer): status (0 when it ran), why, sent,
received (the tester's frames out and back in, both sides' counts), and
achieved_pps (the rate the sender really held). The search adds target_pps,
kind, lost, loss_pct, rate_error, missed, passed and load (the number of
its load in the result's loads: target_pps, kind, trials, passing,
failing, missed (a passing trial missed its target), passed)."""

import math

# Statuses of a search that ran its trials but has no rate to give.
NO_RATE = "no_rate"        # frames lost even at the floor
UNSTABLE = "unstable"      # verification failed max_verify times
MISSED = "missed"          # the result's trial missed its target rate
STOPPED = "stopped"        # a trial failed for a reason other than loss
MAX_TRIALS = "max_trials"  # the trial budget ran out
OK = "ok"


class Spec:
    """What a search is asked: loss_pct allowed (0: NDR), resolution as a
    fraction of the rate found (relative=True: the bracket above it is at
    most that share of it) or in pps, the floor in pps, and its trial
    budget (default: what LOADS_BUDGET clean loads cost); trials_per_load
    and exceed_ratio: how a load is judged (above)."""

    LOADS_BUDGET = 40

    def __init__(self, loss_pct=0.0, resolution=0.01, relative=True, floor_pps=1,
                 max_trials=None, max_verify=3, trials_per_load=1, exceed_ratio=0.0):
        if loss_pct < 0 or loss_pct >= 100:
            raise ValueError("loss %g%%: must be 0 <= loss < 100" % loss_pct)
        if resolution <= 0 or (relative and resolution >= 1):
            raise ValueError("resolution must be > 0%s" % (" and < 100%" if relative else ""))
        if floor_pps < 1:
            raise ValueError("floor %g pps: must be >= 1" % floor_pps)
        if trials_per_load < 1:
            raise ValueError("trials per load %d: must be >= 1" % trials_per_load)
        if not 0 <= exceed_ratio < 1:
            raise ValueError("exceed ratio %g: must be 0 <= ratio < 1" % exceed_ratio)
        self.loss_pct = float(loss_pct)
        self.resolution = float(resolution)
        self.relative = relative
        self.floor_pps = int(floor_pps)
        self.max_verify = max_verify
        self.trials_per_load = int(trials_per_load)
        self.exceed_ratio = float(exceed_ratio)
        # The failing trials a passing load may have; the epsilon keeps
        # 0.29 * 100 (28.999...) from flooring to 28.
        self.fails_allowed = int(math.floor(self.exceed_ratio * self.trials_per_load + 1e-9))
        # 40 for one trial per load, as before loads; 80 for K=3, R=0.5.
        self.max_trials = max_trials or self.LOADS_BUDGET * (self.trials_per_load -
                                                             self.fails_allowed)

    @property
    def mode(self):
        return "pdr" if self.loss_pct > 0 else "ndr"

    def resolution_pps(self, rate):
        """The resolution in pps at rate (at least 1 pps)."""
        return max(1.0, self.resolution * rate if self.relative else self.resolution)

    def floor(self, max_pps):
        """The lowest rate searched: --floor, at most the flat-out rate."""
        return max(1, min(self.floor_pps, int(max_pps)))


def bisection_steps(width, res_pps):
    """Halvings that narrow a bracket of width pps to res_pps."""
    return 0 if width <= res_pps else int(math.ceil(math.log2(width / res_pps)))


class Stop(Exception):
    """Ends the search: status (one of the names above) and one line."""

    def __init__(self, status, why):
        super().__init__(why)
        self.status = status
        self.why = why


class Search:
    def __init__(self, spec, trial_fn, log=None):
        self.spec = spec
        self.trial_fn = trial_fn
        self.log = log or (lambda line: None)
        self.trials = []
        self.loads = []
        self.max_pps = None
        self.res_pps = None

    def run(self):
        """The search's result dict (trials, the rate found or why none)."""
        out = {"mode": self.spec.mode, "loss_allowed_pct": self.spec.loss_pct,
               "trials_per_load": self.spec.trials_per_load,
               "exceed_ratio": self.spec.exceed_ratio, "rate_pps": None, "verified": False}
        try:
            out["rate_pps"] = self._search()
            out["verified"] = True
            out["status"], out["why"] = OK, "%s %d pps (verified)" % (self.spec.mode.upper(),
                                                                       out["rate_pps"])
        except Stop as e:
            out["status"], out["why"] = e.status, e.why
        if out["rate_pps"] is not None:
            self.res_pps = self.spec.resolution_pps(out["rate_pps"])
        # The flat-out trial: offered (what the sender held) and forwarded
        # (what arrived), once it was judged with a rate.
        out.update(offered_pps=self.max_pps,
                   forwarded_pps=forwarding_rate(self.trials[0]) if self.max_pps else None,
                   resolution_pps=self.res_pps, trials=self.trials,
                   loads=self.loads,
                   floor_pps=self.spec.floor(self.max_pps) if self.max_pps else None)
        return out

    def _search(self):
        self._load(None, "max", single=True)
        top = self.trials[0]
        if top.get("achieved_pps") is None:
            raise Stop(STOPPED, "the flat-out trial: the sender reports no rate (a sender "
                       "without pacing cannot be searched with)")
        if top["achieved_pps"] <= 0:
            raise Stop(STOPPED, "the flat-out trial sent nothing")
        self.max_pps = top["achieved_pps"]
        lo, hi = self.spec.floor(self.max_pps), int(self.max_pps)
        if top["passed"]:
            # The device kept up with the sender's flat-out rate: the
            # sender, not the device, bounds the result.
            lo = hi
        else:
            lo, hi = self._first_bracket(lo, hi, top)
        for _ in range(self.spec.max_verify):
            lo = self._bisect(lo, hi)
            v = self._load(lo, "verify")
            if v["passed"]:
                self._check_pacing(lo)
                return lo
            self.log("verification at %d pps failed (%d of %d trials lost frames): searching "
                     "below it" % (lo, v["failing"], v["trials"]))
            hi = lo
            lo = self._passed_below(hi)
        raise Stop(UNSTABLE, "verification failed %d times (last at %d pps): the loss is not "
                   "repeatable at this trial duration" % (self.spec.max_verify, hi))

    def _first_bracket(self, lo, hi, top):
        """The first loads go to the rate that came through flat out (RFC
        2544 s26.3's forwarding rate at the maximum offered load) and one
        resolution above it: a device whose loss starts where its capacity
        ends is bracketed in two loads instead of a bisection from the
        sender's ceiling. Returns the bracket [lo, hi] to bisect."""
        fwd = int(forwarding_rate(top))
        if not lo < fwd < hi:
            return lo, hi
        if not self._load(fwd, "search")["passed"]:
            return lo, fwd
        above = int(fwd + self.spec.resolution_pps(fwd))
        if above >= hi:
            return fwd, hi
        return (above, hi) if self._load(above, "search")["passed"] else (fwd, above)

    def _bisect(self, lo, hi):
        """Narrows [lo, hi] to the resolution; lo must pass (it is tried
        when no load has passed it yet). Returns the highest passing rate."""
        while hi - lo > self.spec.resolution_pps(lo):
            mid = (lo + hi) // 2
            if self._load(mid, "search")["passed"]:
                lo = mid
            else:
                hi = mid
        if not any(x["passed"] and x["target_pps"] == lo for x in self.loads) and \
                not (lo == int(self.max_pps) and self.loads[0]["passed"]):
            if not self._load(lo, "floor")["passed"]:
                raise Stop(NO_RATE, "frames lost even at the floor, %d pps (%s)"
                           % (lo, self.trials[-1].get("where") or self.trials[-1].get("why")))
        return lo

    def _passed_below(self, rate):
        """The highest rate below rate whose load passed, or the floor."""
        below = [x["target_pps"] for x in self.loads if x["passed"] and x["target_pps"]
                 and x["target_pps"] < rate]
        return max(below) if below else min(self.spec.floor(self.max_pps), rate - 1)

    def _check_pacing(self, rate):
        """Refuses a rate whose passing trials missed their target by more
        than the resolution: the device was not offered that rate."""
        self.res_pps = self.spec.resolution_pps(rate)
        for t in self.trials:
            if t["target_pps"] == rate and t["passed"] and t["missed"]:
                raise Stop(MISSED, "the %s trial at %d pps sent %.0f pps (%+.2f%%): off by more "
                           "than the resolution (%.0f pps), so %d pps was not what the device "
                           "was offered" % (t["kind"], rate, t["achieved_pps"],
                                            100 * t["rate_error"], self.res_pps, rate))

    def _load(self, target, kind, single=False):
        """Trials at target until its load is classified (above): the
        load's dict, passed True or False. single: one trial decides (the
        flat-out trial, which measures the ceiling)."""
        k, fails_allowed = (1, 0) if single else (self.spec.trials_per_load,
                                                  self.spec.fails_allowed)
        load = {"target_pps": target, "kind": kind, "trials": 0, "passing": 0, "failing": 0,
                "missed": False, "passed": None}
        self.loads.append(load)
        while load["passed"] is None:
            t = self._trial(target, kind, len(self.loads))
            load["trials"] += 1
            load["passing" if t["passed"] else "failing"] += 1
            load["missed"] = load["missed"] or (t["passed"] and t["missed"])
            if load["failing"] > fails_allowed:
                load["passed"] = False
            elif load["passing"] >= k - fails_allowed:
                load["passed"] = True
        if k > 1:
            self.log("%s load at %d pps: %s, %d of %d trials lost frames" % (
                kind, target, "pass" if load["passed"] else "fail", load["failing"],
                load["trials"]))
        return load

    def _trial(self, target, kind, load):
        if len(self.trials) >= self.spec.max_trials:
            raise Stop(MAX_TRIALS, "%d trials without a verified rate" % self.spec.max_trials)
        t = dict(self.trial_fn(target, kind))
        t.update(target_pps=target, kind=kind, load=load)
        self.trials.append(t)
        if t.get("status", 0) != 0:
            raise Stop(STOPPED, "%s trial at %s failed: %s" % (
                kind, "flat out" if target is None else "%d pps" % target, t.get("why")))
        judge(t, self.spec)
        self.log(describe(t))
        return t


def forwarding_rate(t):
    """RFC 2544 s26.3's forwarding rate of a judged trial: the frames that
    arrived, per second of the sender's (the rate it held, scaled by the
    share that came through). A flat-out trial's achieved_pps is the
    offered rate, not this."""
    return t["achieved_pps"] * t["received"] / t["sent"]


def judge(t, spec):
    """Adds lost, loss_pct, rate_error, missed (off its target by more
    than the resolution) and passed to trial t."""
    sent, got = t.get("sent"), t.get("received")
    if not isinstance(sent, int) or not isinstance(got, int) or sent <= 0:
        raise Stop(STOPPED, "%s trial: no frame count on both sides (sent %s, received %s)%s"
                   % (t["kind"], sent, got, ": " + t["why"] if t.get("why") else ""))
    if got > sent:
        raise Stop(STOPPED, "%s trial: %d received of %d sent: the counts disagree (frames from "
                   "elsewhere, or a counting bug)" % (t["kind"], got, sent))
    t["lost"] = sent - got
    t["loss_pct"] = 100.0 * t["lost"] / sent
    target, achieved = t["target_pps"], t.get("achieved_pps")
    if target and achieved is None:
        # testpmd txonly, say: the rate asked for never reached the wire.
        raise Stop(STOPPED, "%s trial at %d pps: the sender reports no rate, so the device "
                   "may not have been offered it (a sender without pacing?)" % (t["kind"], target))
    if target:
        t["rate_error"] = (achieved - target) / target
        t["missed"] = abs(achieved - target) > spec.resolution_pps(target)
    else:
        t["rate_error"], t["missed"] = None, False
    t["passed"] = t["lost"] == 0 if spec.loss_pct == 0 else t["loss_pct"] <= spec.loss_pct
    return t


def describe(t):
    """One progress line for a trial."""
    rate = "flat out" if t["target_pps"] is None else "%d pps" % t["target_pps"]
    err = "" if t.get("rate_error") is None else ", rate error %+.2f%%%s" % (
        100 * t["rate_error"], " (missed)" if t["missed"] else "")
    return "%s trial at %s: sent %d (%.0f pps%s), lost %d (%.4f%%): %s" % (
        t["kind"], rate, t["sent"], t.get("achieved_pps") or 0, err, t["lost"], t["loss_pct"],
        "pass" if t["passed"] else "fail")
