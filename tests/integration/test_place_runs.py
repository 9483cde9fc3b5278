"""--placement with real short runs under TCG on this host (issue 25): the
plan applied to the threads it names and the halting waits it chose
reaching the guest's driver, none keeping today's run, and USERS.md
experiments 1 and 5 as README.md writes them, shrunk to two points."""

import json
import os
import re
import shlex

import pytest

from vnharness import ROOT, run_vnperf

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tap/netns need root")
RUN = ["run", "--accel", "tcg", "--quiet", "--json", "--backend", "dgram", "--app", "gen",
       "--duration", "1"]


def readme_commands(row_start):
    """The `tools/vnperf ...` commands of README.md's experiment row."""
    with open(os.path.join(ROOT, "README.md")) as f:
        row = next(l for l in f if l.startswith("| " + row_start))
    return [shlex.split(c)[1:] for c in re.findall(r"`(tools/vnperf [^`]+)`", row)]


def shrink(argv, out, **axes):
    """A README command with its axes cut to a few values, short runs and
    its results directory in out."""
    argv = list(argv)
    for name, value in axes.items():
        argv[argv.index("--" + name.replace("_", "-")) + 1] = value
    argv[argv.index("--out") + 1] = out
    return argv + ["--accel", "tcg", "--repeat", "1", "--duration", "1"]


def runs(out):
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    for p in res["points"]:
        with open(os.path.join(out, p["runs"][0])) as f:
            yield p["params"], json.load(f)


def test_auto_places_each_thread_and_halts_the_vcpu_that_shares(image, peer):
    r = run_vnperf(RUN, timeout=120)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    plan = rep["placement"]
    ncpu = len(os.sched_getaffinity(0))
    names = [t["name"] for t in plan["threads"]]
    assert names == ["vcpu0", "main", "peer"] and plan["mode"] == "auto"
    # every planned thread got its CPU: the vCPU from QMP's thread id, the peer
    assert plan["placed"] == {t["name"]: t["cpu"] for t in plan["threads"]}
    assert plan["not_placed"] == {}
    sharing = ncpu < 3
    assert (plan["notify"] == "hybrid") == sharing
    tx = rep["guests"][-1]["result"]["vnet"]["tx"]
    assert tx["notify"] == ("hybrid" if sharing else "poll")
    assert rep["identity"]["placement"] == "auto"
    assert rep["identity"]["notify"] == tx["notify"]
    assert "roles" in rep["cpu"] and {"vcpu", "main", "peer"} <= set(rep["cpu"]["roles"])


def test_none_is_todays_run(image, peer):
    r = run_vnperf(RUN + ["--placement", "none"], timeout=120)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["placement"]["threads"] == [] and rep["placement"]["placed"] == {}
    assert rep["guests"][-1]["result"]["vnet"]["tx"]["notify"] == "poll"
    assert (rep["identity"]["placement"], rep["identity"]["notify"]) == ("none", "poll")


@needs_root
def test_experiment_1_as_the_readme_writes_it(image, tmp_path):
    """Sessions x message size x queue pairs, then compare: BW%, SD%, CPU%."""
    sweep, compare = readme_commands("USERS.md experiment 1")
    base = str(tmp_path / "base")
    r = run_vnperf(shrink(sweep, base, sessions="2", msg_size="512", queues="1,2"),
                   timeout=300)
    assert r.returncode == 0, r.stderr
    got = list(runs(base))
    assert [(p["sessions"], p["msg_size"], p["queues"]) for p, _ in got] == [
        ("2", "512", "1"), ("2", "512", "2")]
    for p, rep in got:
        assert rep["status"] == 0 and rep["metrics"]["goodput_bps"] > 0
        assert rep["identity"]["placement"] == "auto"
        assert rep["guests"][-1]["result"]["vcpus"] == int(p["queues"])
    compare = [base if a in ("results/base", "results/patched") else a for a in compare]
    r = run_vnperf(compare, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, l in enumerate(lines) if "BW%" in l)
    head = lines[at].split()
    assert {"BW%", "SD%", "CPU%", "queues"} <= set(head), r.stdout
    # the rows between the rule under the head and "average" (a one-queue
    # guest and a two-vCPU one both halt where a vCPU shares its CPU)
    rows = [l.split() for l in lines[at + 2:] if l.strip()]
    rows = rows[:next(i for i, row in enumerate(rows) if row[0] == "average")]
    assert [row[head.index("queues")] for row in rows] == ["1", "2"], r.stdout
    assert any(l.startswith("average") for l in r.stdout.splitlines()), r.stdout


def test_experiment_5_as_the_readme_writes_it(image, tmp_path):
    """vCPU 0 and testpmd's forwarding lcore apart, then on one CPU."""
    sweep, compare = readme_commands("thread placement")
    out = str(tmp_path / "place")
    r = run_vnperf(shrink(sweep, out, queues="1"), timeout=300)
    assert r.returncode == 0, r.stderr
    got = {p["placement"]: rep for p, rep in runs(out)}
    assert sorted(got) == ["shared", "spread"]
    for mode, rep in got.items():
        placed = rep["placement"]["placed"]
        assert rep["status"] == 0 and placed["vcpu0"] is not None and "lcore1" in placed
        assert (placed["vcpu0"] == placed["lcore1"]) == (mode == "shared"), placed
        assert rep["placement"]["notify"] is None
    compare = [out if a == "results/place" else a for a in compare]
    r = run_vnperf(compare, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "placement: spread -> shared" in r.stdout and "pps%" in r.stdout, r.stdout
