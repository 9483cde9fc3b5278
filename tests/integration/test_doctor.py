"""`vnperf doctor`: one line per backend with ready or what is missing,
the accelerator and why, tool versions; exit 0 whatever the host lacks."""

import json
import os

from vnharness import run_vnperf
from vnperflib import backends
from vnperflib.run import nextroot, passtbin, support

NETWORK_BACKENDS = [b for b in backends.names() if b != "none"]


def lines_by_name(stdout):
    out = {}
    for line in stdout.splitlines():
        for name in sorted(EXPECTED, key=len, reverse=True):
            if line.startswith(name + " "):
                out[name] = line[len(name):].strip()
                break
    return out


# build/next (make next): its QEMU and testpmd, asked through the wrappers.
NEXT_ROWS = ["next qemu", "next dpdk-testpmd"] if nextroot.stamp() else []
EXPECTED = ["image", "host peer", "qemu", "ovmf", "dpdk-testpmd", "passt", "iperf", "python3",
            "matplotlib", "cpus", "/dev/kvm", "/dev/vhost-net", "/dev/net/tun", "ip netns",
            "accelerator", "summary", "next root"] + NEXT_ROWS + \
    ["backend " + b for b in NETWORK_BACKENDS]


def test_every_backend_and_tool_has_a_line(image, peer):
    r = run_vnperf(["doctor"], timeout=60)
    assert r.returncode == 0, r.stderr
    got = lines_by_name(r.stdout)
    assert sorted(got) == sorted(EXPECTED), r.stdout
    for b in NETWORK_BACKENDS:
        assert got["backend " + b] == "ready" or got["backend " + b].startswith(
            ("ready; app=", "missing: ")), got["backend " + b]
    # Ready for iperf only with a passt that carries the stream (issue 26).
    refusal = passtbin.stream_refusal(passtbin.path(), support.PASST_STREAM)
    if passtbin.path() is not None:
        assert got["backend passt"] == ("ready" if refusal is None
                                        else "ready; app=iperf refused: " + refusal)
    # Backends built into QEMU or served by our own peer are always there.
    for b in ("dgram", "socket", "hub", "user"):
        assert got["backend " + b] == "ready"
    assert got["accelerator"].split()[0] in ("kvm:", "tcg")
    assert got["qemu"].split()[0][0].isdigit()
    if NEXT_ROWS:
        assert got["next root"].startswith("build/next: qemu-system-x86 1:10.0.")
        assert got["next qemu"].startswith("10.0."), got["next qemu"]
        above = nextroot.open_above(nextroot.DRIVERS)
        assert got["next dpdk-testpmd"] == (
            "unusable: DPDK 24.11 loads no driver below the world-writable %s" % above
            if above else got["next dpdk-testpmd"]) and (
            above or "(Debian dpdk-dev 24.11." in got["next dpdk-testpmd"])
    else:
        assert got["next root"].startswith("absent: make next installs")
    if os.path.exists("/dev/vhost-net"):
        assert got["/dev/vhost-net"] == "present"
    else:
        assert got["backend vhost-net"].startswith("missing: vhost-net: /dev/vhost-net missing")
        assert "missing: vhost-net" in got["summary"]


def test_json_and_missing_image_still_exit_0(tmp_path):
    r = run_vnperf(["doctor", "--json", "--image", str(tmp_path / "none.elf")], timeout=60)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["image"] == "%s missing (run make)" % (tmp_path / "none.elf")
    assert d["accelerator"].startswith("not probed: ")
    assert set("backend " + b for b in NETWORK_BACKENDS) <= set(d)


def test_missing_qemu_is_reported_not_fatal(image):
    r = run_vnperf(["doctor", "--qemu", "/nonexistent/qemu"], timeout=60)
    assert r.returncode == 0, r.stderr
    got = lines_by_name(r.stdout)
    assert got["qemu"].startswith("/nonexistent/qemu not found")
    assert got["accelerator"] == "not probed: /nonexistent/qemu not found"
