"""vnperf hostile booting the image (docs/hostile.md): the whole catalogue
over dgram ends with a verdict for every case and nothing left running
(conftest's no_leftovers); a case that makes QEMU die is recorded as such
and the next case still runs; the packed ring's cases run on a packed ring
over QEMU 7.2 and 10.0 (`--qemu next`, where build/next exists), and a
QEMU without the packed ring reports them not offered; over passt and its
vhost-user mode, a few cases each to a verdict, the one that ends passt
named for what it is."""

import json
import os
import shutil

import pytest

import vnharness
from vnperflib.campaign import hostile_cases, hostile_verdict
from vnperflib.run import nextroot, passtbin

QEMUS = ["system"] + (["next"] if nextroot.stamp() is not None else [])
PACKED = [c[0] for c in hostile_cases.PACKED_CASES]

needs_passt = pytest.mark.skipif(passtbin.path() is None, reason="no passt (Debian passt)")

# A stand-in QEMU: the real one, except that a guest configured for
# case=runt dies of SIGSEGV at once, as a QEMU that crashes on a case would.
CRASHER = """#!{py}
import os, signal, sys
if any("case=runt" in a for a in sys.argv):
    os.kill(os.getpid(), signal.SIGSEGV)
os.execv({real!r}, [{real!r}] + sys.argv[1:])
"""


# A stand-in QEMU without the packed ring: its virtio-net lists no packed
# property, so the runner cannot ask for it (and QEMU keeps it off).
NO_PACKED = """#!{py}
import os, subprocess, sys
if any(a.endswith(",help") for a in sys.argv):
    out = subprocess.run([{real!r}] + sys.argv[1:], capture_output=True, text=True).stdout
    sys.stdout.write("".join(ln for ln in out.splitlines(True) if "packed=" not in ln))
    sys.exit(0)
os.execv({real!r}, [{real!r}] + sys.argv[1:])
"""


def stand_in(tmp_path, text):
    real = shutil.which("qemu-system-x86_64")
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_text(text.format(py=vnharness.PYTHON, real=real))
    os.chmod(qemu, 0o755)
    return qemu


def hostile(args, timeout):
    r = vnharness.run_vnperf(["hostile", "--json"] + args, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.timeout_s(600)
def test_the_whole_catalogue_over_dgram_has_a_verdict_for_every_case(image):
    res = hostile(["--backend", "dgram", "--accel", "tcg"], timeout=590)
    assert [c["name"] for c in res["cases"]] == list(hostile_cases.NAMES)
    for c in res["cases"]:
        assert c["verdict"] in hostile_verdict.VERDICTS, c
        assert c["spec"] == hostile_cases.SPEC[c["name"]]
        if c["verdict"] != "crashed":
            assert c["guest"]["sent"] == 32, c
    assert res["wall_s"] < 600


@pytest.mark.timeout_s(240)
def test_a_case_that_kills_qemu_is_recorded_and_the_next_one_runs(image, tmp_path):
    qemu = stand_in(tmp_path, CRASHER)
    res = hostile(["--backend", "dgram", "--accel", "tcg", "--qemu", str(qemu),
                   "--case", "runt,len_zero"], timeout=230)
    crash, nxt = res["cases"]
    assert (crash["name"], crash["verdict"]) == ("runt", "crashed")
    assert crash["host"]["signal"] == "SIGSEGV" and "SIGSEGV" in crash["why"]
    assert "--qemu %s " % qemu in crash["command"] and crash["command"].endswith("-- case=runt")
    assert nxt["name"] == "len_zero" and nxt["verdict"] != "crashed"
    assert nxt["guest"]["completed"] == nxt["guest"]["sent"] == 32


@pytest.mark.timeout_s(300)
@pytest.mark.parametrize("qemu", QEMUS)
def test_the_packed_cases_run_on_a_packed_ring_with_a_verdict_each(image, qemu):
    res = hostile(["--backend", "dgram", "--accel", "tcg", "--qemu", qemu, "--case",
                   ",".join(PACKED)], timeout=290)
    assert [c["name"] for c in res["cases"]] == PACKED
    for c in res["cases"]:
        assert c["verdict"] in hostile_verdict.VERDICTS and c["verdict"] != "not-offered", c
        assert "--qemu-arg=virtio-net-device.packed=on" in c["command"], c
        if c["verdict"] != "crashed":
            g = c["guest"]
            assert (g["offered"], g["needs"], g["build"], g["sent"], g["completed"]) == \
                (True, "ring_packed", 0, 32, 32), c
    # the descriptors that are not available: never used, nothing more on the wire
    for c in res["cases"][:2]:
        assert (c["guest"]["bufs"], c["guest"]["used"], c["host"]["host_frames"]) == (0, 0, 32)


@pytest.mark.timeout_s(120)
def test_a_qemu_without_the_packed_ring_reports_the_case_not_offered(image, tmp_path):
    qemu = stand_in(tmp_path, NO_PACKED)
    res = hostile(["--backend", "dgram", "--accel", "tcg", "--qemu", str(qemu), "--case",
                   "packed_id_twice"], timeout=110)
    (c,) = res["cases"]
    assert (c["verdict"], c["guest"]["offered"], c["guest"]["needs"]) == \
        ("not-offered", False, "ring_packed"), c
    assert "did not offer ring_packed" in c["why"] and "packed=on" not in c["command"]
    assert c["guest"]["completed"] == c["guest"]["sent"] == 32


CTRL_AND_QUEUE = [n for n in hostile_cases.NAMES if n in hostile_cases.NEEDS
                  and not n.startswith("packed_")]


@pytest.mark.timeout_s(300)
@pytest.mark.parametrize("backend,qemu", [("tap", "system")] + [("dgram", q) for q in QEMUS])
def test_the_control_and_queue_cases_have_a_verdict_each(image, backend, qemu):
    """Over microvm: the control queue cases run (CTRL_VQ is QEMU's default)
    and record the ack; a malformed command it can parse is answered ERR.
    NOTIFICATION_DATA has no property in these QEMUs: not offered."""
    res = hostile(["--backend", backend, "--accel", "tcg", "--qemu", qemu, "--case",
                   ",".join(CTRL_AND_QUEUE)], timeout=290)
    assert [c["name"] for c in res["cases"]] == CTRL_AND_QUEUE
    by = {c["name"]: c for c in res["cases"]}
    for c in res["cases"]:
        assert c["verdict"] in hostile_verdict.VERDICTS, c
        assert c["guest"]["needs"] == ",".join(hostile_cases.NEEDS[c["name"]]), c
        assert c["guest"]["completed"] == c["guest"]["sent"] == 32, c
        if c["name"].startswith(("ctrl_", "rss_")):
            assert c["guest"]["offered"] and c["guest"]["ack"] in ("ok", "err", "none"), c
    for name in ("ctrl_class_unknown", "ctrl_cmd_unknown", "ctrl_short", "ctrl_mq_pairs0",
                 "ctrl_mq_pairs_over", "rss_table_len"):
        assert (by[name]["verdict"], by[name]["guest"]["ack"]) == ("handled", "err"), by[name]
    for name in ("notif_data_ahead", "notif_data_behind"):
        assert (by[name]["verdict"], by[name]["guest"]["offered"]) == ("not-offered", False)
    assert "--qemu-arg=virtio-net-device.mq=on" in by["ctrl_mq_pairs0"]["command"]


@pytest.mark.timeout_s(300)
@pytest.mark.parametrize("machine,qemu", [("microvm", q) for q in QEMUS] + [("q35", "system")])
def test_a_notification_for_a_disabled_queue_leaves_the_device_working(image, machine, qemu):
    """QEMU's control queue, there whether or not CTRL_VQ was negotiated: the
    runner boots the case without it, the guest finds that queue (2) and
    kicks it (virtio-mmio's QueueNotify, or on q35 queue 2's own notify
    address), then its valid buffer on the transmitq goes out at once."""
    res = hostile(["--backend", "dgram", "--accel", "tcg", "--qemu", qemu, "--machine", machine,
                   "--case", "notify_disabled_queue"], timeout=290)
    (c,) = res["cases"]
    g = c["guest"]
    assert (g["offered"], g["queue"], g["build"], g["bufs"], g["used"]) == (True, 2, 0, 1, 1), c
    assert (g["sent"], g["completed"], c["host"]["host_frames"]) == (32, 32, 33), c
    assert c["verdict"] == "handled" and c["command"].endswith("features=-ctrl_vq"), c


@pytest.mark.timeout_s(120)
def test_without_a_disabled_queue_the_case_says_why(image):
    """CTRL_VQ negotiated on a one-pair device: queues 0-2 all enabled, no
    queue 3; nothing to kick, and the line says so."""
    b = vnharness.boot("app=hostile case=notify_disabled_queue",
                       netdevs=[vnharness.dgram_netdev(*vnharness.free_udp_ports(2))], timeout=90)
    h = b.one("hostile")
    assert (h["offered"], h["queue"], h["build"], h["bufs"]) == (False, -2, 0, 0), h
    assert "left disabled" in h["skip"] and h["completed"] == h["sent"] == 32, h


needs_vu_passt = pytest.mark.skipif(
    passtbin.path() is None or not passtbin.has_vhost_user(passtbin.path()),
    reason="no passt with --vhost-user (make passt)")


@pytest.mark.timeout_s(240)
@pytest.mark.parametrize("backend,ends_passt", [
    # passt resets the guest's stream on a 10-byte frame and, started
    # with -1, leaves: the runner then kills QEMU (SIGKILL), which is not
    # QEMU's crash but the backend's end.
    pytest.param("passt", "runt", marks=needs_passt),
    # passt's own virtio code: a zero-length element takes passt down.
    pytest.param("passt-vhost-user", "len_zero", marks=needs_vu_passt),
])
def test_hostile_over_passt_gives_each_case_a_verdict(image, backend, ends_passt):
    names = ["len_zero", "runt", "head_twice"]
    res = hostile(["--backend", backend, "--accel", "tcg", "--case", ",".join(names)],
                  timeout=230)
    assert [c["name"] for c in res["cases"]] == names
    for c in res["cases"]:
        assert c["verdict"] in hostile_verdict.VERDICTS, c
    end = next(c for c in res["cases"] if c["name"] == ends_passt)
    assert end["verdict"] == "crashed" and "the backend failed: passt" in end["why"], end
    assert end["command"].startswith("tools/vnperf run --backend %s " % backend)
    # The case after it ran in a fresh boot to its check frames.
    after = res["cases"][names.index(ends_passt) + 1]
    assert after["verdict"] != "crashed" and after["guest"]["completed"] == 32, after
