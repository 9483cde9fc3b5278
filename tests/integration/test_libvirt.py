"""The libvirt engine and fleets against a real libvirtd (started here when
none runs; skipped with the reason when libvirt cannot run at all). After
every test no domain of it may be left (`virsh list --all`)."""

import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

import libvirtd
import vnharness
from vnharness import run_vnperf

_why = libvirtd.why_not()
pytestmark = pytest.mark.skipif(_why is not None, reason="libvirt: %s" % _why)


@pytest.fixture(scope="module")
def daemon():
    d = libvirtd.Daemons().start()
    yield d
    d.stop()


@pytest.fixture(autouse=True)
def no_domains_left(no_leftovers, daemon):
    """Every domain a test starts carries its tag; none may outlive it, nor
    its QEMU log file."""
    prefix = "vnperf-%s-" % no_leftovers
    yield prefix
    left = libvirtd.domains(prefix)
    libvirtd.destroy(left)
    logs = libvirtd.logs(prefix)
    for path in logs:
        os.unlink(path)
    assert not left, "domains left behind: %s" % ", ".join(left)
    assert not logs, "domain logs left behind: %s" % ", ".join(logs)


@pytest.fixture
def closed_dir():
    """A 0700 folder as `mktemp -d` makes one, which libvirt's QEMU user
    (Debian: libvirt-qemu) cannot enter: where a fresh clone may lie."""
    d = tempfile.mkdtemp(prefix="vnperf-test-closed-")
    os.chmod(d, 0o700)
    yield d
    shutil.rmtree(d, True)


def copy_into(d, path):
    dst = os.path.join(d, os.path.basename(path))
    shutil.copyfile(path, dst)
    return dst


def stage_dirs():
    """The runners' folders of copies for libvirt's QEMU (libvirtstage.py)."""
    return sorted(glob.glob("/var/lib/libvirt/boot/vnperf-*-stage-*")
                  + glob.glob("/tmp/vnperf-*-stage-*"))


def fleet_spec(tmp_path, text, name="spec.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def run_fleet(tmp_path, text, timeout=240):
    r = run_vnperf(["fleet", fleet_spec(tmp_path, text), "--json", "-q",
                    "--out", str(tmp_path / "out")], timeout=timeout)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        raise AssertionError("no JSON report (status %d): %s" % (r.returncode, r.stderr))
    return r, rep


def by_name(rep):
    return {i["instance"]: i for i in rep["instances"]}


@pytest.mark.timeout_s(120)
def test_run_engine_libvirt_gen_to_dgram_peer_exact(image, peer):
    r = run_vnperf(["run", "--engine", "libvirt", "--accel", "tcg", "--backend", "dgram",
                    "--app", "gen", "--count", "5000", "--rate", "5k", "--json", "-q"])
    rep = json.loads(r.stdout)
    assert r.returncode == 0, (rep["why"], r.stderr)
    assert rep["engine"].startswith("libvirt qemu:///system")
    assert rep["machine"] == "q35"
    d = rep["counts"]["directions"]["guest->host"]
    assert d["sent"] == d["received"] == 5000
    assert rep["counts"]["agree"] is True
    g = rep["guests"][0]
    assert g["guest_code"] == 0 and g["exit"]["code"] == 0
    assert g["argv"][0] == "libvirt"


@pytest.mark.timeout_s(120)
def test_run_engine_libvirt_guest_error_is_its_exit_code(image):
    # ring=3: the guest refuses its config (exit 2); no QEMU exit status
    # comes through libvirt, the exit line says it.
    r = run_vnperf(["run", "--engine", "libvirt", "--accel", "tcg", "--json", "-q", "--",
                    "ring=3"])
    rep = json.loads(r.stdout)
    assert r.returncode == 2, (rep["why"], r.stderr)
    assert "ring" in rep["why"]
    assert rep["guests"][0]["qemu_status"] is None


PAIRS = """\
[fleet]
accel = "tcg"
duration = 8

[[group]]
name = "sinks"
app = "sink"
count = 4
config = ["count=1000"]

[[group]]
name = "gens"
app = "gen"
count = 4
to = "sinks"
config = ["count=1000", "rate=500"]
"""


@pytest.mark.timeout_s(300)
def test_fleet_four_gen_four_sink_paced_exact_per_pair(image, tmp_path):
    r, rep = run_fleet(tmp_path, PAIRS)
    assert r.returncode == 0, (rep["why"], r.stderr)
    inst = by_name(rep)
    for k in range(4):
        g, s = inst["gens-%d" % k], inst["sinks-%d" % k]
        assert g["partner"] == s["instance"]
        assert g["guest"]["result"]["packets"] == 1000
        assert s["guest"]["result"]["packets"] == 1000
        assert g["counts"]["directions"]["tx guest->rx guest"]["lost"] == 0
    agg = rep["aggregate"]
    gens = [inst["gens-%d" % k] for k in range(4)]
    assert agg["instances"] == 4 and agg["ok"] == 4
    assert agg["packets"] == sum(g["metrics"]["packets"] for g in gens) == 4000
    assert agg["pps"] == pytest.approx(sum(g["metrics"]["pps"] for g in gens))
    assert agg["bps"] == pytest.approx(sum(g["metrics"]["bps"] for g in gens))
    assert agg["loss_pct"] == 0.0 and agg["sent"] == 4000
    assert rep["groups"]["sinks"]["packets"] == 4000
    assert rep["startup_s"] is not None and rep["startup_s"] < rep["wall_s"]
    assert rep["not_destroyed"] == [] and rep["failed"] == []
    # The results directory compare reads: one point per group and the fleet.
    cmp = run_vnperf(["compare", str(tmp_path / "out"), str(tmp_path / "out"), "--json"])
    assert cmp.returncode == 0, cmp.stderr
    rows = {row["params"]["group"]: row for row in json.loads(cmp.stdout)["rows"]}
    assert set(rows) == {"sinks", "gens", "fleet"}
    assert rows["fleet"]["columns"]["pps%"]["a"] == pytest.approx(agg["pps"])


RR = """\
[fleet]
accel = "tcg"
duration = 4

[[group]]
name = "servers"
app = "rr"
role = "server"
count = 2

[[group]]
name = "clients"
app = "rr"
count = 2
to = "servers"
"""


@pytest.mark.timeout_s(300)
def test_fleet_rr_pairs_aggregate_is_sum_and_latency_merged(image, tmp_path):
    r, rep = run_fleet(tmp_path, RR)
    assert r.returncode == 0, (rep["why"], r.stderr)
    inst = by_name(rep)
    clients = [inst["clients-%d" % k] for k in range(2)]
    for c in clients:
        res = c["guest"]["result"]
        assert res["transactions"] > 0 and res["role"] == "client"
        # the client's own hist lines hold all its transactions
        assert c["metrics"]["latency_samples"] == res["transactions"]
    agg = rep["aggregate"]
    assert agg["tps"] == pytest.approx(sum(c["metrics"]["tps"] for c in clients))
    assert agg["transactions"] == sum(c["metrics"]["transactions"] for c in clients)
    assert agg["latency_samples"] == agg["transactions"]
    # Merged, not averaged: the fleet's p50 lies within the clients' range
    # and its max is the largest client's max.
    p50s = [c["metrics"]["p50_ns"] for c in clients]
    assert min(p50s) <= agg["p50_ns"] <= max(p50s)
    assert agg["max_ns"] == max(c["metrics"]["max_ns"] for c in clients)


BAD_ONE = """\
[fleet]
accel = "tcg"
duration = 3

[[group]]
name = "rx"
app = "sink"
config = ["count=500"]

[[group]]
name = "tx"
app = "gen"
to = "rx"
config = ["count=500", "rate=500"]

[[group]]
name = "broken"
app = "selftest"
config = ["ring=3"]
"""


@pytest.mark.timeout_s(240)
def test_fleet_one_failing_instance_reported_and_all_destroyed(image, tmp_path):
    r, rep = run_fleet(tmp_path, BAD_ONE)
    assert r.returncode == 2, (rep["why"], r.stderr)
    assert [f["instance"] for f in rep["failed"]] == ["broken-0"]
    assert "ring" in rep["failed"][0]["why"]
    inst = by_name(rep)
    assert inst["tx-0"]["status"] == 0 and inst["rx-0"]["status"] == 0
    assert inst["rx-0"]["guest"]["result"]["packets"] == 500
    # The fleet row: the pair's sender and the partnerless group.
    assert rep["aggregate"]["ok"] == 1 and rep["aggregate"]["instances"] == 2
    assert rep["groups"]["rx"]["ok"] == 1
    assert rep["not_destroyed"] == []


LONG = """\
[fleet]
accel = "tcg"

[[group]]
name = "idle"
app = "sink"
count = 2
wire = "user"
config = ["duration=120"]
"""


def _start_fleet(tmp_path, text):
    return subprocess.Popen([vnharness.PYTHON, vnharness.VNPERF, "fleet",
                             fleet_spec(tmp_path, text), "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_ready(p, timeout=120):
    """Reads the fleet's progress until every instance is ready."""
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "instances ready after" in line:
            return lines
    p.kill()
    raise AssertionError("fleet never got ready: %s" % "".join(lines))


@pytest.mark.timeout_s(180)
def test_fleet_ctrl_c_destroys_every_domain(image, tmp_path, no_domains_left):
    p = _start_fleet(tmp_path, LONG)
    _wait_ready(p)
    assert len(libvirtd.domains(no_domains_left)) == 2
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "stopped, everything torn down" in err
    assert libvirtd.domains(no_domains_left) == []


@pytest.mark.timeout_s(180)
def test_fleet_unanswering_daemon_fails_named_then_autodestroyed(image, tmp_path, daemon,
                                                                 no_domains_left):
    """A libvirtd that stops answering (SIGSTOP here; a remote host that
    went away elsewhere): the fleet ends on its own within seconds, the
    instance fails with the reason, the domain it could not destroy is
    named; resumed, the daemon destroys it (AUTODESTROY)."""
    if not daemon.started_here:
        pytest.skip("libvirtd was not started by the tests: not stopping someone else's")
    p = _start_fleet(tmp_path, LONG.replace("count = 2", "count = 1"))
    _wait_ready(p)
    pid = daemon.pid("libvirtd")
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        out, err = p.communicate(timeout=90)
        took = time.monotonic() - t0
    finally:
        os.kill(pid, signal.SIGCONT)
    assert p.returncode == 66, err
    assert "stopped answering" in out, out
    assert "NOT DESTROYED: domain %s" % no_domains_left in out, out
    assert took < 60, "the fleet took %.0f s to notice a stopped daemon" % took
    # Back again, libvirtd finds our connection gone: AUTODESTROY acts.
    deadline = time.monotonic() + 30
    while libvirtd.domains(no_domains_left) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert libvirtd.domains(no_domains_left) == []
    # That happened after the runner ended: the next runner removes its log
    # (destroy_stale); this test does not start one.
    for path in libvirtd.logs(no_domains_left):
        os.unlink(path)


@pytest.mark.timeout_s(150)
@pytest.mark.parametrize("boot", ["pvh", "uefi"])
def test_run_engine_libvirt_boots_files_from_a_0700_folder(image, closed_dir, boot):
    """The kernel (or ESP) in a folder libvirt's QEMU user cannot enter:
    the runner hands the domain a copy that user can read, and removes it."""
    before = stage_dirs()
    if boot == "pvh":
        args = ["--image", copy_into(closed_dir, image)]
    else:
        args = ["--boot", "uefi", "--esp",
                copy_into(closed_dir, os.path.join(vnharness.BUILD, "esp.img"))]
    r = run_vnperf(["run", "--engine", "libvirt", "--accel", "tcg", "--json", "-q"] + args)
    rep = json.loads(r.stdout)
    assert r.returncode == 0, (rep["why"], r.stderr)
    assert rep["guests"][0]["guest_code"] == 0 and rep["boot"] == boot
    assert stage_dirs() == before


FROM_CLOSED = """\
[fleet]
accel = "tcg"
duration = 3
image = "%s"

[[group]]
name = "rx"
app = "sink"
count = 2
config = ["count=200"]

[[group]]
name = "tx"
app = "gen"
count = 2
to = "rx"
config = ["count=200", "rate=200"]
"""


@pytest.mark.timeout_s(240)
def test_fleet_boots_its_image_from_a_0700_folder(image, tmp_path, closed_dir):
    before = stage_dirs()
    r, rep = run_fleet(tmp_path, FROM_CLOSED % copy_into(closed_dir, image))
    assert r.returncode == 0, (rep["why"], r.stderr)
    assert rep["aggregate"]["packets"] == 400 and rep["failed"] == []
    assert stage_dirs() == before
