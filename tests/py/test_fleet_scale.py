"""bench/fleet_scale.py's logic without libvirt: the fleet specs it writes
are valid `vnperf fleet` specs of the intended shape, its options refuse
bad counts with one line, a fleet that fails or prints no report stops it,
and the repeats become median/min/max per point in the table."""

import os
import subprocess
import sys

import pytest
import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import fleet_scale as fs  # noqa: E402
from vnperflib.fleet import fleetspec  # noqa: E402


def spec_of(text, tmp_path):
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return fleetspec.load(str(p))


def test_startup_specs_are_valid_fleets(tmp_path):
    s = spec_of(fs.startup_spec(16, "selftest"), tmp_path)
    (g,) = s.groups
    assert (g.app, g.count, g.wire) == ("selftest", 16, ("none", None))
    assert (s.accel, s.parallel) == ("tcg", 4)
    (g,) = spec_of(fs.startup_spec(4, "sink"), tmp_path).groups
    assert (g.app, g.count, g.wire[0]) == ("sink", 4, "user")
    assert "duration=5" in g.config


def test_pairs_spec_pairs_every_gen_with_a_sink(tmp_path):
    s = spec_of(fs.pairs_spec(2, 7), tmp_path)
    sinks, gens = s.groups
    assert (sinks.app, sinks.count, gens.app, gens.count) == ("sink", 2, "gen", 2)
    assert gens.to is sinks and s.duration == 7 and "size=64" in gens.config


def test_bad_counts_are_refused(capsys):
    for argv in (["--startup", "1,x"], ["--pairs", "0"], ["--pairs", ""], ["--repeat", "0"]):
        with pytest.raises(SystemExit) as e:
            fs.options(argv)
        assert e.value.code == 2
    assert "at least 1" in capsys.readouterr().err
    o = fs.options(["--startup", "1,4", "--pairs", "2"])
    assert (o.sizes, o.pair_counts) == ([1, 4], [2])


def fake_completed(stdout, stderr=""):
    return subprocess.CompletedProcess([], 0, stdout, stderr)


def test_a_fleet_without_a_report_or_failing_stops_the_bench(monkeypatch, tmp_path):
    monkeypatch.setattr(fs.subprocess, "run", lambda *a, **k: fake_completed("", "boom"))
    with pytest.raises(RuntimeError, match="without a report: boom"):
        fs.fleet("x", str(tmp_path))
    monkeypatch.setattr(fs.subprocess, "run", lambda *a, **k: fake_completed(
        '{"status": 3, "why": "domain a-0 crashed"}'))
    with pytest.raises(RuntimeError, match="status 3: domain a-0 crashed"):
        fs.fleet("x", str(tmp_path))
    monkeypatch.setattr(fs.subprocess, "run", lambda *a, **k: fake_completed(
        '{"status": 0, "startup_s": 1.5}'))
    assert fs.fleet("x", str(tmp_path))["startup_s"] == 1.5


def test_measure_and_report(monkeypatch, capsys):
    got = iter(range(100))

    def fleet(text, tmp):
        k = next(got)
        if "gens" in text:
            return {"aggregate": {"pps": 1000.0 + k, "bps": 2e9, "loss_pct": 0.5},
                    "groups": {"sinks": {"pps": 990.0}}}
        return {"created_s": 0.1 * k, "startup_s": 1.0 + k}
    monkeypatch.setattr(fs, "fleet", fleet)
    monkeypatch.setattr(fs, "qemu_ready_s", lambda: 0.25)
    o = fs.options(["--startup", "2", "--pairs", "1", "--repeat", "3"])
    res = {"startup": [], "pairs": []}
    fs.measure(o, o.sizes, o.pair_counts, res)
    assert res["qemu_ready_s"] == {"median": 0.25, "min": 0.25, "max": 0.25, "n": 3}
    selftest, sink = res["startup"]
    assert (selftest["app"], selftest["startup_s"]["median"], selftest["startup_s"]["max"]) == \
        ("selftest", 2.0, 3.0)
    assert sink["app"] == "sink" and sink["startup_s"]["min"] == 4.0
    (pairs,) = res["pairs"]
    assert pairs["pps"] == {"median": 1007.0, "min": 1006.0, "max": 1008.0, "n": 3}
    assert pairs["gbps"]["median"] == 2.0
    fs.report(o, res)
    out = capsys.readouterr().out
    assert "selftest      2  0.10 (0.00..0.20)" in out
    assert "1007 (1006..1008)" in out


def test_a_failed_fleet_ends_main_with_status_1(monkeypatch, capsys):
    class Daemons:
        stopped = False

        def start(self):
            return self

        def stop(self):
            Daemons.stopped = True

    def fail(*a):
        raise RuntimeError("fleet status 3: no libvirt")
    monkeypatch.setattr(fs.libvirtd, "Daemons", Daemons)
    monkeypatch.setattr(fs, "measure", fail)
    assert fs.main(["--repeat", "1"]) == 1
    assert Daemons.stopped
    assert capsys.readouterr().err.strip() == "fleet_scale: fleet status 3: no libvirt"
