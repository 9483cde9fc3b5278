"""support.py: the app x backend x topology table. Every refused
combination is one line and status 64 in under a second, before anything
starts (no QEMU, no backend, no KVM probe); docs/runner-run.md shows the same
table; identity.py's guest defaults are docs/config.md's."""

import hashlib
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import time

import pytest

from vnpy import ROOT, VNPERF, run_opts, run_vnperf
from vnperflib import backends, exitcodes
from vnperflib.run import identity, support

MARK = "<!-- support.markdown() -->"


def load_cli():
    loader = importlib.machinery.SourceFileLoader("vnperf_cli", VNPERF)
    spec = importlib.util.spec_from_loader("vnperf_cli", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def refused():
    """(argv, line) for every combination the table refuses, plus the
    rules that depend on options."""
    out = []
    for app in support.NET_APPS:
        for topo in support.TOPOLOGIES:
            for b in backends.names():
                why = support.why_not(app, b, topo)
                if why is not None:
                    out.append((["--backend", b, "--app", app, "--topology", topo], why))
    for extra, why in ((["--", "proto=tcp"], "the host peer reflects UDP only"),
                       (["--", "role=server"], "no host client"),
                       (["--", "resp_size=100"], "resp_size must equal req_size")):
        out.append((["--backend", "dgram", "--app", "rr"] + extra, why))
    for b in ("tap", "vhost-net"):
        out.append((["--backend", b, "--app", "rr", "--", "role=server"], "has no rr client"))
    out.append((["--backend", "dgram", "--pmd-burst", "32"], "vhost-user only"))
    out.append((["--backend", "vhost-user", "--app", "sink", "--fwd-mode", "rxonly"],
                "--fwd-mode rxonly: one of txonly, flowgen"))
    out.append((["--backend", "dgram", "--", "app=iperf"], "iperf over dgram"))
    return out


def test_every_refusal_is_one_line_status_64_fast_and_starts_nothing(monkeypatch, capsys,
                                                                      tmp_path):
    cli = load_cli()
    started = []

    def no_child(self, *a, **kw):
        started.append(a[0] if a else kw.get("args"))
        raise AssertionError("a refused combination started %r" % (started[-1],))

    monkeypatch.setattr(subprocess.Popen, "__init__", no_child)
    cases = refused()
    assert len(cases) > 40
    for argv, why in cases:
        t0 = time.monotonic()
        status = cli.main(["run", "--accel", "auto", "--image", str(tmp_path / "none.elf")]
                          + argv)
        took = time.monotonic() - t0
        err = capsys.readouterr().err.strip().splitlines()
        assert status == exitcodes.RUNNER_USAGE, (argv, err)
        assert len(err) == 1 and why in err[0], (argv, err)
        assert took < 1.0, (argv, took)
    assert started == []


def test_a_run_asks_what_works_once(monkeypatch):
    """`vnperf run` (and api.run) asks support.check before the run's own
    modules load (run_report); the run's checks do not ask again (issue
    30: it ran twice per run). Stopped at the run's last check."""
    from vnperflib.run import artifacts, engine, runner
    cli = load_cli()
    asked = []
    real = support.check
    monkeypatch.setattr(support, "check", lambda o: asked.append(o) or real(o))
    monkeypatch.setattr(engine.QemuEngine, "check", lambda self, o: None)

    class Checked(Exception):
        pass

    def last_check(*a, **kw):
        raise Checked()
    monkeypatch.setattr(artifacts, "check", last_check)
    with pytest.raises(Checked):
        cli.run_report(run_opts(backend="dgram", app="gen", duration=1))
    assert len(asked) == 1


def test_refusal_through_the_command_line(tmp_path):
    t0 = time.monotonic()
    r = run_vnperf(["run", "--backend", "hub", "--app", "fwd", "--qemu",
                    str(tmp_path / "qemu-that-must-not-run")], timeout=10)
    assert time.monotonic() - t0 < 2.0
    assert r.returncode == exitcodes.RUNNER_USAGE and r.stdout == ""
    assert r.stderr == ("vnperf: fwd over hub: fwd needs two NICs; the runner wires them over "
                        "dgram and socket only\n")


def test_sweep_refuses_before_its_first_run(tmp_path):
    r = run_vnperf(["sweep", "--accel", "tcg", "--backend", "dgram,hub", "--app", "sink",
                    "--out", str(tmp_path / "o")], timeout=10)
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.strip().splitlines() == [
        "vnperf: sink over hub: QEMU alone: no host end sends to the guest or answers it"]
    assert not os.path.exists(tmp_path / "o")


def test_docs_show_the_runner_table():
    with open(os.path.join(ROOT, "docs", "runner-run.md")) as f:
        text = f.read()
    parts = text.split(MARK)
    assert len(parts) == 3, "docs/runner-run.md must hold the table between two %s lines" % MARK
    assert parts[1].strip() == support.markdown().strip(), \
        "docs/runner-run.md's table differs: paste `tools/vnperf support --markdown`"


def test_support_command_prints_the_table():
    r = run_vnperf(["support", "--markdown"], timeout=10)
    assert r.returncode == 0 and r.stdout.strip() == support.markdown().strip()
    r = run_vnperf(["support"], timeout=10)
    assert "sink    host   hub" in r.stdout and "gen     host   dgram" in r.stdout


def test_guest_defaults_are_the_documented_ones():
    with open(os.path.join(ROOT, "docs", "config.md")) as f:
        rows = re.findall(r"^\| `(\w+)=` \|([^|]*)\|", f.read(), re.M)
    documented = {k: v.strip().strip("`") for k, v in rows}
    for k, v in identity.GUEST_DEFAULTS.items():
        want = {"(max)": "max", "": ""}.get(documented[k], documented[k])
        assert v == want, (k, v, documented[k])


@pytest.mark.parametrize("words,key,value", [
    (["app=gen"], "kick_batch", "0"),
    (["app=gen", "kick_batch=0"], "kick_batch", "0"),
    (["app=gen", "rate=0"], "rate", "max"),
    (["app=gen", "features=-mrg_rxbuf,-event_idx"], "event_idx", "off"),
    (["app=gen", "features=-mrg_rxbuf,-event_idx"], "features", "-mrg_rxbuf"),
    # Nothing else switched off: said, not an empty string.
    (["app=gen", "features=-event_idx"], "features", "none"),
    (["app=gen"], "features", "none"),
    (["app=gen", "dst_port=4000", "ip=10.0.0.9"], "ip", None),
])
def test_identity_of_guest_words(words, key, value):
    assert identity.guest_params(words).get(key) == value


def test_identity_names_the_engine(tmp_path):
    """A run through libvirt is not the same experiment as one the runner
    spawned: compare must see the engine."""
    base = dict(backend="dgram", machine="microvm", image=str(tmp_path / "none.elf"),
                qemu="qemu-system-x86_64")
    ids = [identity.of_run(run_opts(**dict(base, **kw)), ["app=gen"], "tcg")
           for kw in ({}, {"engine": "qemu"}, {"engine": "libvirt"})]
    assert [i["engine"] for i in ids] == ["qemu", "qemu", "libvirt"]
    assert ids[0] == ids[1] != ids[2]


def test_identity_names_the_builds(tmp_path):
    """Image and QEMU binary as given, with the image's hash and QEMU's
    version: two builds of an A/B sweep differ in both."""
    img = tmp_path / "a.elf"
    img.write_bytes(b"vnperf")
    ident = identity.of_run(run_opts(backend="dgram", machine="microvm", image=str(img),
                                     qemu="/nonexistent/qemu"),
                            ["app=gen"], "tcg")
    assert ident["image"] == str(img)
    assert ident["image_sha"] == hashlib.sha256(b"vnperf").hexdigest()[:12]
    assert ident["qemu"] == "/nonexistent/qemu"
    assert ident["qemu_version"] == "/nonexistent/qemu not found"


def test_iperf_over_passt_depends_on_the_passt():
    """The table takes the stream over passt: whether this passt carries
    it is the version gate's (test_passtbin.py), whose line for bookworm's
    says where it stalls (passt's own capture, docs/lwip.md)."""
    assert support.why_not("iperf", "passt", "host") is None
    why = support.PASST_STREAM
    assert "0.0~git20230309" in why and "handshake" in why and "ACKs" in why, why


def test_identity_recorded_without_features_pairs_with_today():
    """Results recorded when features was '' for nothing switched off
    read as today's none, so old and new runs still pair in compare."""
    old = {"app": "gen", "features": "", "event_idx": "off"}
    assert identity.recorded(old) == dict(old, features="none", **identity.BEFORE)
    assert identity.recorded({"features": "-csum"}) == dict({"features": "-csum"},
                                                            **identity.BEFORE)
