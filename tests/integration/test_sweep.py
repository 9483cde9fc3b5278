"""`vnperf sweep` with real short runs under TCG (the generator over the
dgram backend to the host peer, 1 s each): the results directory, the
axis values reaching the guest's driver, repeats, compare on the result,
and Ctrl-C in the middle."""

import csv
import json
import os
import signal
import subprocess
import time

from vnharness import PYTHON, VNPERF, exitcodes, run_vnperf
from vnperflib.report import plots

SWEEP = ["sweep", "--accel", "tcg", "--duration", "1", "--backend", "dgram", "--repeat", "1"]


def load(path):
    with open(path) as f:
        return json.load(f)


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_two_by_two_grid(image, peer, tmp_path):
    out = str(tmp_path / "sw")
    r = run_vnperf(SWEEP + ["--size", "64,512", "--kick-batch", "1,32", "--out", out],
                   timeout=150)
    assert r.returncode == 0, r.stderr
    res = load(os.path.join(out, "results.json"))
    assert list(res["axes"].items()) == [("backend", ["dgram"]), ("size", ["64", "512"]),
                                         ("kick_batch", ["1", "32"])]
    got = [(p["params"]["size"], p["params"]["kick_batch"]) for p in res["points"]]
    assert got == [("64", "1"), ("64", "32"), ("512", "1"), ("512", "32")]
    for p in res["points"]:
        assert p["statuses"] == [0] and p["ok"] == 1
        assert p["summary"]["pps"]["median"] > 0 and p["summary"]["pps"]["n"] == 1
        rep = load(os.path.join(out, p["runs"][0]))
        assert rep["status"] == 0 and rep["backend"] == "dgram"
        result = rep["guests"][-1]["result"]
        # The axis values reached the guest's driver and the generator.
        assert result["vnet"]["kick_batch"] == int(p["params"]["kick_batch"])
        assert result["sizes"] == [{"packets": result["packets"],
                                    "size": int(p["params"]["size"])}]
        # Each run carries the host side's counts too.
        assert rep["counts"]["directions"]["guest->host frames"]["sent"] > 0
        assert p["summary"]["packets"]["median"] == result["packets"]
    points = csv_rows(os.path.join(out, "results.csv"))
    assert [(row["size"], row["kick_batch"], row["runs_ok"]) for row in points] == [
        ("64", "1", "1"), ("64", "32", "1"), ("512", "1", "1"), ("512", "32", "1")]
    assert all(float(row["pps_median"]) > 0 for row in points)
    runs = csv_rows(os.path.join(out, "runs.csv"))
    assert [row["run"] for row in runs] == ["runs/%03d.json" % i for i in range(1, 5)]
    assert sorted(os.listdir(os.path.join(out, "runs"))) == ["%03d.json" % i
                                                             for i in range(1, 5)]
    # The table on stdout, one row per point.
    table = [l.split() for l in r.stdout.splitlines()]
    assert table[0][:4] == ["backend", "size", "kick_batch", "ok"]
    assert sum(1 for row in table if "1/1" in row) == 4
    if plots.available():
        assert res["plots"] == ["pps_vs_size.png", "gbps_vs_size.png", "cpu_pct_vs_size.png",
                                "sd_us_per_kb_vs_size.png", "loss_pct_vs_size.png",
                                "kicks_per_packet_vs_size.png"]
        for name in res["plots"]:
            assert os.path.getsize(os.path.join(out, name)) > 1000
    else:
        assert res["plots"] == [] and "python3-matplotlib is not importable" in r.stdout

    # kick batch 1 vs 32 from this one sweep, per size.
    c = run_vnperf(["compare", "--json", out, out, "--a-where", "kick_batch=1",
                    "--b-where", "kick_batch=32"])
    assert c.returncode == 0, c.stderr
    cmp = json.loads(c.stdout)
    assert cmp["key"] == ["size"] and cmp["differences"] == {"kick_batch": ["1", "32"]}
    assert [row["params"]["size"] for row in cmp["rows"]] == ["64", "512"]
    for row in cmp["rows"]:
        assert {"BW%", "pps%"} <= set(row["columns"])


def test_repeats_give_median_and_range_and_event_idx_off(image, peer, tmp_path):
    out = str(tmp_path / "rep")
    r = run_vnperf(SWEEP + ["--event-idx", "off", "--repeat", "2", "--out", out], timeout=120)
    assert r.returncode == 0, r.stderr
    res = load(os.path.join(out, "results.json"))
    [p] = res["points"]
    assert p["params"]["event_idx"] == "off" and p["statuses"] == [0, 0]
    reps = [load(os.path.join(out, name)) for name in p["runs"]]
    pps = sorted(rep["metrics"]["pps"] for rep in reps)
    s = p["summary"]["pps"]
    assert (s["n"], s["min"], s["max"]) == (2, pps[0], pps[1])
    assert s["median"] == (pps[0] + pps[1]) / 2
    for rep in reps:
        assert "features=-event_idx" in rep["config"]
        assert "event_idx" not in rep["guests"][-1]["result"]["vnet"]["features"]
    assert len(csv_rows(os.path.join(out, "runs.csv"))) == 2


def test_ctrl_c_keeps_finished_points_and_leaves_nothing(image, peer, tmp_path):
    out = str(tmp_path / "int")
    p = subprocess.Popen([PYTHON, VNPERF] + SWEEP + ["--size", "64,128,256", "--out", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    # Interrupt during the second point, once the first is written.
    deadline = time.monotonic() + 60
    summary = os.path.join(out, "results.json")
    while time.monotonic() < deadline and not (
            os.path.exists(summary) and load(summary)["points"][0]["statuses"]):
        time.sleep(0.1)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == exitcodes.RUNNER_INTERRUPTED, stderr
    assert "torn down" in stderr.strip().splitlines()[-1]
    res = load(summary)
    assert res["points"][0]["statuses"] == [0]
    assert sum(len(p["statuses"]) for p in res["points"]) < 3
    # The table of what was measured is still printed.
    assert stdout.splitlines()[2].split()[:3] == ["dgram", "64", "1/1"]
    assert stdout.splitlines()[-1].startswith("results so far: " + out)


def test_guest_config_error_stops_the_sweep(image, peer, tmp_path):
    out = str(tmp_path / "cfg")
    r = run_vnperf(SWEEP + ["--ring", "3,64", "--out", out], timeout=60)
    assert r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("vnperf: sweep stopped at backend=dgram ring=3: guest: exit 2 "
                           "(config error)"), r.stderr
    res = load(os.path.join(out, "results.json"))
    assert [p["statuses"] for p in res["points"]] == [[2], []]


def test_aa_calibration_sweep(image, peer, tmp_path):
    """--aa: every point as two identical arms, interleaved; the A/A table
    and the re-split calibration follow the sweep's table."""
    out = str(tmp_path / "aa")
    r = run_vnperf(SWEEP[:-2] + ["--repeat", "3", "--aa", "--size", "64", "--out", out],
                   timeout=150)
    assert r.returncode == 0, r.stderr
    res = load(os.path.join(out, "results.json"))
    assert [p["params"]["aa"] for p in res["points"]] == ["a", "b"]
    assert [p["identity"]["aa"] for p in res["points"]] == ["a", "b"]
    # Interleaved: a b, b a, a b.
    order = [row["aa"] for row in csv_rows(os.path.join(out, "runs.csv"))]
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert "baseline A: arm a" in r.stdout and "A/A: " in r.stdout
    assert "Calibration, 5000 random re-splits" in r.stdout
    assert res["aa"]["calibration"]["rounds"] == 5000


def test_ab_of_two_builds_is_interleaved_and_compared(image, peer, tmp_path):
    """--image A,B: two builds (here two copies of one) as an axis, run
    round by round; compare DIR DIR --ab image pairs the arms by file name
    and, the builds being the same, finds no significant difference."""
    arms = [str(tmp_path / n) for n in ("a.elf", "b.elf")]
    for arm in arms:
        with open(image, "rb") as src, open(arm, "wb") as dst:
            dst.write(src.read())
    out = str(tmp_path / "ab")
    r = run_vnperf(SWEEP[:-2] + ["--repeat", "2", "--size", "64", "--image", ",".join(arms),
                                 "--out", out], timeout=120)
    assert r.returncode == 0, r.stderr
    res = load(os.path.join(out, "results.json"))
    assert [p["identity"]["image"] for p in res["points"]] == arms
    assert len({p["identity"]["image_sha"] for p in res["points"]}) == 1
    order = [row["image"] for row in csv_rows(os.path.join(out, "runs.csv"))]
    assert order == [arms[0], arms[1], arms[1], arms[0]]
    r = run_vnperf(["compare", out, out, "--ab", "image"])
    assert r.returncode == 0, r.stderr
    assert "baseline A: %s (image=%s)" % (out, arms[0]) in r.stdout
    assert "  image: %s -> %s" % tuple(arms) in r.stdout
    cmp = json.loads(run_vnperf(["compare", "--json", out, out, "--ab", "image"]).stdout)
    assert cmp["rows"] and not any(c["significant"] for row in cmp["rows"]
                                   for c in row["columns"].values()), r.stdout
