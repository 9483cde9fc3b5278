"""Issue 26: measurements live in docs/bench.md's block, written by `make
bench` (bench/run_all.py) with the date, the host and each command, and
the README holds no typed figure."""

import os
import re
import sys

import pytest

import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import benchlib  # noqa: E402
import run_all  # noqa: E402

HOST = {"cpu": "Test CPU 9000", "cpus": 7, "kernel": "6.99.1-test", "qemu": "7.2.99 (Debian x)",
        "accel": "tcg", "tree": "abc1234-dirty", "load": "1.5 at the start, 2.5 at the end"}
META = {"date": "2031-02-03 04:05 UTC", "mode": "quick mode, testing", "host": HOST}


def series(*values, why=None):
    s = benchlib.Series()
    for v in values:
        s.add(v)
    if why:
        s.add(None, why)
    return s


def rows():
    return [("iperf over tap", "Gbit/s", series(1.0, 2.0, 3.0), "tools/vnperf run --backend tap"),
            ("boot", "ms", series(69.4), "bench/boot_time.py --boots 1 --json"),
            ("dgram", "Mpps", series(0.0312, 0.0298), "tools/vnperf run --backend dgram"),
            ("over vhost-user", "Mpps", series(why="status 67: no hugepages"),
             "tools/vnperf run --backend vhost-user"),
            ("Linux pktgen", "Mpps", series(why="not run: quick mode"), "bench/linuxguest.py")]


DOC = ("# Benchmarks\n\nHand-written analysis: 1.68 Gbit/s on 2026-11-29.\n\n"
       + run_all.BEGIN + "\nold figure 12.04 Gbit/s\n" + run_all.END + "\n\n## After\n\ntext\n")


def test_the_block_replaces_only_what_is_between_the_markers():
    block = run_all.render(META, rows())
    out = run_all.replace_block(DOC, block)
    head, tail = DOC.split(run_all.BEGIN)[0], DOC.split(run_all.END)[1]
    assert out.startswith(head) and out.endswith(tail)
    assert "12.04" not in out and block in out
    assert out.count(run_all.BEGIN) == 1 and out.count(run_all.END) == 1


def test_writing_the_block_twice_changes_nothing():
    block = run_all.render(META, rows())
    once = run_all.replace_block(DOC, block)
    assert run_all.replace_block(once, block) == once


def test_the_block_carries_date_host_commands_and_spread():
    block = run_all.render(META, rows())
    for v in ("2031-02-03 04:05 UTC", "Test CPU 9000", "7 CPUs", "6.99.1-test", "7.2.99",
              "accelerator tcg", "abc1234-dirty", "quick mode, testing",
              "load average 1.5 at the start, 2.5 at the end"):
        assert v in block
    for _, _, _, cmd in rows():
        assert "`%s`" % cmd in block
    assert "| iperf over tap | 2.00 Gbit/s | 1.00-3.00, ±100%, 3 runs |" in block
    assert "| boot | 69.4 ms | 1 run |" in block
    assert "| dgram | 0.0305 Mpps | 0.0298-0.0312, ±5%, 2 runs |" in block
    assert "| over vhost-user | FAIL | status 67: no hugepages |" in block
    assert "| Linux pktgen | - | not run: quick mode |" in block


def test_a_doc_without_markers_gets_the_block_appended():
    block = run_all.render(META, rows())
    out = run_all.replace_block("# T\n\ntext\n", block)
    assert out == "# T\n\ntext\n\n" + block + "\n"
    assert run_all.replace_block(out, block) == out


@pytest.mark.parametrize("text", [run_all.BEGIN + "\n", run_all.END + "\n" + run_all.BEGIN + "\n",
                                  DOC + DOC])
def test_broken_markers_are_refused_with_the_usage_status(text):
    with pytest.raises(run_all.errors.RunnerError) as e:
        run_all.replace_block(text, "x")
    assert e.value.status == 64 and "marker" in e.value.line


def test_docs_bench_md_has_one_block():
    with open(os.path.join(vnpy.ROOT, "docs", "bench.md")) as f:
        text = f.read()
    assert text.count(run_all.BEGIN) == 1
    run_all.replace_block(text, "x")


def fake_output(argv, parse):
    """What each command prints, made up: every figure readable."""
    if argv[0] == "size":
        return parse("   text    data     bss     dec     hex filename\n"
                     " 241664    1024 1572864 1815552  1bb400 build/vnperf.elf\n"), None
    if argv[0] == "stat":
        return parse("313344\n"), None
    if argv[0] == "bench/boot_time.py":
        return {"accel": "tcg", "rows": [{"case": c, "median_ms": 70.0, "over_floor_ms": 4.0}
                                         for c in ("pvh microvm", "pvh q35", "uefi q35",
                                                   "pvh microvm x4")]}, None
    return {"accel": "tcg", "metrics": {"pps": 4.5e6, "bps": 1.5e9, "tps": 4000.0,
                                        "p50_ns": 100e3},
            "guests": [{"result": {"duration_ns": 2e9, "vnet": {"tx": {"full_wait_ns": 1e9}}}}]}, \
        None


def test_quick_mode_writes_the_block_from_the_runs(tmp_path, monkeypatch):
    seen = []

    def run_once(argv, parse):
        seen.append(argv)
        return fake_output(argv, parse)
    monkeypatch.setattr(run_all, "run_once", run_once)
    doc = tmp_path / "bench.md"
    doc.write_text(DOC)
    assert run_all.main(["--quick", "--doc", str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith(DOC.split(run_all.BEGIN)[0]) and text.endswith("\n\n## After\n\ntext\n")
    quick = run_all.QUICK
    # every command of the quick set ran QUICK's repeats (the build's figures once), with
    # QUICK's run length; the Linux guest is left out and says so
    runs = [m for m in run_all.MEASURES if not m.full_only]
    assert len(seen) == sum(1 if m.once else quick["repeat"] for m in runs)
    assert ["--duration", str(quick["duration"])] == seen[1][seen[1].index("--duration"):][:2]
    assert not any("linuxguest" in " ".join(a) for a in seen)
    assert "| 4.50 Mpps | 4.50-4.50, ±0%, 2 runs |" in text
    assert "| 50.0 % |" in text and "| 236 KB | 1 run |" in text
    assert "not run: quick mode" in text and "accelerator tcg" in text
    assert re.search(r"load average [0-9.]+ at the start, [0-9.]+ at the end", text)


def test_a_failed_command_fails_make_bench_but_writes_its_row(tmp_path, monkeypatch):
    def run_once(argv, parse):
        if "vhost-user" in argv:
            return None, "status 67: dpdk-testpmd: no hugepages"
        return fake_output(argv, parse)
    monkeypatch.setattr(run_all, "run_once", run_once)
    doc = tmp_path / "bench.md"
    doc.write_text(DOC)
    assert run_all.main(["--quick", "--doc", str(doc)]) == 1
    assert "| FAIL | status 67: dpdk-testpmd: no hugepages |" in doc.read_text()


# A measured figure: a number and a unit of rate, time or size.
FIGURE = re.compile(r"\d[\d.,]*\s*(Gbit/s|Mbit/s|Mpps|kpps|pps|tps|ms|us|KB|MB|MiB)\b|"
                    r"\d[\d.]*x\b")


def test_the_readme_holds_no_typed_measurement():
    with open(os.path.join(vnpy.ROOT, "README.md")) as f:
        readme = f.read()
    typed = [m.group(0) for m in FIGURE.finditer(readme)]
    assert not typed, "README.md types measurements (move them to docs/bench.md's block, " \
        "written by make bench): %s" % typed
    assert "docs/bench.md" in readme[readme.index("## Measured here"):]


def test_boot_time_reads_each_microvm_row_against_the_floor_with_its_vcpus():
    import boot_time

    def row(case, floor, pvh, vcpus, ms):
        return {"case": case, "floor": floor, "pvh_microvm": pvh, "vcpus": vcpus,
                "median_ms": ms}
    rows = [row("pvh microvm", False, True, 1, 75.0), row("pvh q35", False, False, 1, 120.0),
            row("floor microvm", True, True, 1, 60.0), row("pvh microvm x4", False, True, 4, 95.0),
            row("floor microvm x4", True, True, 4, 70.0)]
    boot_time.over_floor(rows)
    assert [r.get("over_floor_ms") for r in rows] == [15.0, None, None, 25.0, None]


def test_boot_time_sets_the_before_image_beside_this_one_per_vcpus():
    import boot_time

    def row(case, floor, vcpus, ms, ready, before=False):
        return {"case": case, "floor": floor, "pvh_microvm": True, "vcpus": vcpus,
                "median_ms": ms, "guest_ready_ms": ready, "before": before}
    rows = [row("pvh microvm", False, 1, 75.0, 14.0), row("floor microvm", True, 1, 60.0, 0.0),
            row("pvh microvm x4", False, 4, 95.0, 20.0), row("floor microvm x4", True, 4, 70.0, 0.0),
            row("before microvm", False, 1, 100.0, 40.0, True),
            row("before microvm x4", False, 4, 120.0, 46.0, True)]
    assert [c[0] for c in boot_time.cases("old.elf")[-2:]] == ["before microvm",
                                                               "before microvm x4"]
    assert boot_time.cases(None) == boot_time.CASES
    boot_time.over_floor(rows)
    assert boot_time.before_after(rows) == [
        {"vcpus": 1, "before_ms": 40.0, "after_ms": 15.0, "before_ready_ms": 40.0,
         "after_ready_ms": 14.0},
        {"vcpus": 4, "before_ms": 50.0, "after_ms": 25.0, "before_ready_ms": 46.0,
         "after_ready_ms": 20.0}]
    assert boot_time.before_after(rows[:4]) == []
