"""api.py (issue 30): keyword options are the CLI's options, made into the
same RunOptions by the same parser and options.build, refused where the
CLI refuses them with its status and line (VnperfError), before anything
boots; compare returns a typed result.Comparison."""

import os

import pytest

from vnpy import ROOT, cli_opts, run_vnperf, standin_image
from vnperflib import api, exitcodes, options, result
from vnperflib.errors import RunnerError

SWEEP = os.path.join(ROOT, "tests", "py", "fixtures", "results-2026-12-02")
RUN = os.path.join(ROOT, "tests", "py", "fixtures", "run-2026-12-02.json")


def test_keywords_are_the_cli_options():
    assert api.argv("run", backend="dgram", count=2000, size=[64, 128], quiet=True,
                    raw=False, timeout=None, qemu_args=["-S", "-no-reboot"],
                    config=["kick_batch=32"]) == [
        "run", "--backend=dgram", "--count=2000", "--size=64,128", "--quiet",
        "--qemu-arg=-S", "--qemu-arg=-no-reboot", "--", "kick_batch=32"]
    assert api.argv("compare", "A", "B", a_where=["size=64"], ab="size") == [
        "compare", "A", "B", "--a-where=size=64", "--ab=size"]


def test_run_options_are_the_clis(tmp_path):
    image = standin_image(tmp_path)
    kw = dict(image=image, backend="dgram", app="gen", count=2000, size=64,
              event_idx="off", config=["kick_batch=32"])
    got = api.run_options(**kw)
    _, ns = cli_opts("run", "--image", image, "--backend", "dgram", "--app", "gen",
                     "--count", "2000", "--size", "64", "--event-idx", "off", "--",
                     "kick_batch=32")
    assert isinstance(got, options.RunOptions)
    assert got == options.RunOptions.from_cli(ns)
    assert (got.count, got.size, got.event_idx, got.config) == (2000, 64, False,
                                                                ("kick_batch=32",))


# (keyword options, the CLI's arguments): each refused by both, same status and line.
REFUSED = [
    (dict(count=0), ["--count", "0"]),
    (dict(memory=8), ["--memory", "8"]),
    (dict(boot="uefi", machine="microvm"), ["--boot", "uefi", "--machine", "microvm"]),
    (dict(config=["size=64", "size=128"]), ["--", "size=64", "size=128"]),
    (dict(size=64, config=["size=128"]), ["--size", "64", "--", "size=128"]),
    (dict(backend="nope", app="gen"), ["--backend", "nope", "--app", "gen"]),
    (dict(frobnicate=1), ["--frobnicate=1"]),
]


@pytest.mark.parametrize("kw, args", REFUSED)
def test_run_refuses_as_the_cli_does(tmp_path, kw, args):
    image = standin_image(tmp_path)
    with pytest.raises(api.VnperfError) as e:
        api.run(image=image, **kw)
    assert isinstance(e.value, RunnerError)
    cli = run_vnperf(["run", "--image", image] + args)
    assert e.value.status == cli.returncode == exitcodes.RUNNER_USAGE
    assert "vnperf: " + e.value.line == cli.stderr.strip().splitlines()[-1]


def test_run_out_is_the_clis(tmp_path):
    """out= is `vnperf run --out`: a directory that cannot be made is refused
    before anything boots, as the CLI refuses it; make_run=True is `make
    run`'s defaults, as the CLI's --make-run."""
    image = standin_image(tmp_path)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    out = str(blocked / "run")
    with pytest.raises(api.VnperfError) as e:
        api.run(image=image, backend="dgram", app="gen", out=out)
    cli = run_vnperf(["run", "--image", image, "--backend", "dgram", "--app", "gen",
                      "--out", out])
    assert e.value.status == cli.returncode == exitcodes.RUNNER_USAGE
    assert "vnperf: " + e.value.line == cli.stderr.strip().splitlines()[-1]
    assert "cannot create the results directory" in e.value.line
    _, ns = cli_opts("run", "--image", image)
    made = api.run_options(image=image, make_run=True)
    assert made == options.RunOptions.from_cli(ns, make_run=True)
    assert (made.backend, made.app, made.size, made.duration) == ("dgram", "gen", 64, 5)


def test_sweep_ndr_fleet_refuse_before_anything_runs(tmp_path):
    out = str(tmp_path / "out")
    cases = [
        (lambda: api.sweep(out), "sweep: no axis given"),
        (lambda: api.sweep(None, size=[64]), "out= is the results directory"),
        (lambda: api.sweep(out, size=[64], repeat=0), "--repeat"),
        (lambda: api.ndr(out, size=[64], rate="10k"), "the search chooses the rate"),
        (lambda: api.fleet(str(tmp_path / "none.toml"), out), "none.toml"),
    ]
    for call, why in cases:
        with pytest.raises(api.VnperfError) as e:
            call()
        assert e.value.status == exitcodes.RUNNER_USAGE and why in e.value.line, e.value.line
        assert "\n" not in e.value.line
    assert not os.path.exists(out)


def test_compare_returns_a_typed_comparison():
    cmp = api.compare(SWEEP, SWEEP, a_where=["size=64"], b_where=["size=128"], ab="size")
    assert isinstance(cmp, result.Comparison) and cmp.vnperf_compare == 3
    (row,) = cmp.rows
    cell = row.columns["pps%"]
    sw = result.load(SWEEP)
    assert isinstance(cell, result.Cell)
    assert (cell.a, cell.b) == (sw.points[0].summary["pps"].median,
                                sw.points[1].summary["pps"].median)
    assert cell.significant in (True, False) and cmp.test == "welch"
    same = api.compare(RUN, RUN)
    assert same.rows[0].columns["pps%"].pct == 0.0 and not same.significant()
    with pytest.raises(api.VnperfError) as e:
        api.compare(SWEEP, SWEEP, alpha=2)
    assert e.value.status == exitcodes.RUNNER_USAGE and "--alpha 2" in e.value.line
