"""bench/bench_ring.py --icount: every side's QEMU runs with -icount
shift=0,sleep=off, and the one figure is the guest's own instructions per
frame (own time in ns over frames), with the ratios side by side."""

import os
import sys
import types

import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import bench_ring  # noqa: E402
import benchlib  # noqa: E402


def fake_rep(image, frames, own_ns, wait_ns, tsc_hz=2e9):
    """A report of `frames` frames in own_ns + wait_ns, the wait spent on
    a full TX ring."""
    dur = own_ns + wait_ns
    return {"status": 0, "image": image, "guests": [{
        "boot": {"tsc_hz": tsc_hz},
        "result": {"duration_ns": dur, "pps": frames * 1e9 / dur,
                   "vnet": {"ring_format": "split",
                            "tx": {"packets": frames,
                                   "full_wait_cycles": wait_ns * tsc_hz / 1e9}}}}]}


def test_figures_under_icount_are_instructions_per_frame():
    rep = fake_rep("x", 1000, 135000, 300000)
    assert bench_ring.figures(rep, "split", icount=True) == {"own_insn": 135.0}
    # Without --icount the TSC figures, own cycles at the guest's TSC rate.
    f = bench_ring.figures(rep, "split")
    assert set(f) == {"mpps", "cyc", "own_cyc"}
    assert abs(f["own_cyc"] - 270.0) < 1e-9


def test_without_icount_no_qemu_args(monkeypatch):
    seen = []

    def run(args, timeout):
        seen.append([a for a in args if a.startswith("--qemu-arg")])
        return fake_rep("x", 1000, 135000, 0)
    monkeypatch.setattr(benchlib, "vnperf_run", run)
    opts = types.SimpleNamespace(machine="pc", duration=2, icount=False)
    f = bench_ring.Side("split", opts, "new.elf", "split")(("hub", 64))
    assert seen == [[]] and set(f) == set(bench_ring.figure_keys(False))


def test_icount_sides_pass_the_qemu_args_and_compare_instructions(monkeypatch):
    seen = []
    own = {"old.elf": 135000, "new.elf": 143000}

    def run(args, timeout):
        image = args[args.index("--image") + 1]
        seen.append((image, [a for a in args if a.startswith("--qemu-arg")]))
        return fake_rep(image, 1000, own[image], 500000)
    monkeypatch.setattr(benchlib, "vnperf_run", run)
    opts = types.SimpleNamespace(machine="pc", duration=2, icount=True)
    sides = [bench_ring.Side("before", opts, "old.elf", "split"),
             bench_ring.Side("split", opts, "new.elf", "split")]
    keys = bench_ring.figure_keys(True)
    per, ratios = bench_ring.run([("hub", 64)], sides, 2, keys)
    assert seen == [(img, bench_ring.ICOUNT_ARGS) for img in ("old.elf", "new.elf") * 2]
    assert per[("hub", 64)]["before"]["own_insn"].values == [135.0, 135.0]
    r = ratios[("hub", 64)]["split/before"]["own_insn"]
    assert r.values == [143.0 / 135.0] * 2
    table = []
    monkeypatch.setattr(benchlib, "print_table", lambda header, rows: table.extend([header] + rows))
    bench_ring.table([("hub", 64)], sides, per, ratios, keys)
    assert table == [["point", "figure", "before", "split", "split/before"],
                     ["hub 64", "own_insn", "135.0 ±0%", "143.0 ±0%", "1.059 (1.06-1.06)"]]



def test_direct_and_indirect_sides_differ_by_one_word(monkeypatch):
    seen = []
    own = {"indirect=off": 135000, "indirect=on": 137000}

    def run(args, timeout):
        word = args[args.index("--") + 1]
        seen.append(args[args.index("--"):])
        return fake_rep("x", 1000, own[word], 0)
    monkeypatch.setattr(benchlib, "vnperf_run", run)
    opts = types.SimpleNamespace(machine="pc", duration=2, icount=True)
    sides = [bench_ring.Side("direct", opts, "new.elf", "split"),
             bench_ring.Side("direct'", opts, "new.elf", "split"),
             bench_ring.Side("indirect", opts, "new.elf", "split")]
    per, ratios = bench_ring.run([("hub", 64)], sides, 1, bench_ring.figure_keys(True))
    assert seen == [["--", "indirect=off"], ["--", "indirect=off"], ["--", "indirect=on"]]
    assert ratios[("hub", 64)]["indirect/direct"]["own_insn"].values == [137.0 / 135.0]
    # The A/A beside it: direct again, its ratio to direct.
    assert ratios[("hub", 64)]["direct'/direct"]["own_insn"].values == [1.0]


def test_stream_sides_send_their_files_and_compare_with_the_shorthand(monkeypatch):
    seen = []
    own = {"--size": 140000, "one.toml": 147000, "four.toml": 150000}

    def run(args, timeout):
        frames = args[args.index("--streams") + 1] if "--streams" in args else "--size"
        seen.append((frames, "--size" in args))
        return fake_rep("x", 1000, own[frames], 0)
    monkeypatch.setattr(benchlib, "vnperf_run", run)
    opts = types.SimpleNamespace(machine="pc", duration=2, icount=True, streams="one.toml",
                                 streams2="four.toml")
    sides = [bench_ring.Side(n, opts, "new.elf", "split") for n in ("split", "stream", "stream2")]
    per, ratios = bench_ring.run([("hub", 64)], sides, 1, bench_ring.figure_keys(True))
    # The stream sides send their file instead of the point's size.
    assert seen == [("--size", True), ("one.toml", False), ("four.toml", False)]
    r = ratios[("hub", 64)]
    assert r["stream/split"]["own_insn"].values == [147.0 / 140.0]
    assert r["stream2/stream"]["own_insn"].values == [150.0 / 147.0]


def test_words_go_to_every_side_before_its_own(monkeypatch):
    """--word flows=...: every side's guest gets it (before and after
    images alike), a side's own word after it."""
    seen = []

    def run(args, timeout):
        seen.append((args[args.index("--image") + 1], args[args.index("--"):]))
        return fake_rep("x", 1000, 135000, 0)
    monkeypatch.setattr(benchlib, "vnperf_run", run)
    opts = types.SimpleNamespace(machine="pc", duration=2, icount=True)
    words = ["flows=sport:1000-1015"]
    sides = [bench_ring.Side("before", opts, "old.elf", "split", words),
             bench_ring.Side("split", opts, "new.elf", "split", words),
             bench_ring.Side("direct", opts, "new.elf", "split", words)]
    bench_ring.run([("hub", 64)], sides, 1, bench_ring.figure_keys(True))
    assert seen == [("old.elf", ["--", "flows=sport:1000-1015"]),
                    ("new.elf", ["--", "flows=sport:1000-1015"]),
                    ("new.elf", ["--", "flows=sport:1000-1015", "indirect=off"])]
