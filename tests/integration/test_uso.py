"""USO (VIRTIO_NET_F_HOST_USO, virtio 1.2 s5.1.6.2; issue 27): gen's
uso= sends 8234-byte frames (8192 bytes of UDP payload) that QEMU 10.0's
virtio-net-pci hands a vnet_hdr tap whole, with gso_type UDP_L4; the host's
stack cuts each into 1400-byte segments and its UDP socket in the tap's
namespace gets exactly 5 x 1400 + 1 x 1192 per datagram. QEMU 7.2 does not
offer USO: uso= is one config-error line (status 2)."""

import json
import os

import pytest

from vnharness import run_vnperf
from vnperflib.run import nextroot

N = 500
SIZE = 8234
GSO = 1400
SEGS, LAST = 6, 1192  # 8192 = 5 * 1400 + 1192


def run_json(qemu, words, timeout=180):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "tap",
                    "--machine", "q35", "--qemu", qemu, "--app", "gen", "--size", str(SIZE),
                    "--count", str(N), "--rate", "2000", "--"] + words, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="tap needs root")
@pytest.mark.skipif(nextroot.stamp() is None, reason="build/next not installed: make next")
def test_uso_on_qemu_10_host_gets_exact_segments(image):
    r, rep = run_json("next", ["uso=%d" % GSO])
    assert r.returncode == 0, (rep["why"], rep["guests"][-1]["console_tail"][-8:])
    res = rep["guests"][-1]["result"]
    v = res["vnet"]
    assert "host_uso" in v["features"], v["features"]
    assert res["packets"] == N
    assert res["uso"] == {"gso_size": GSO, "segments_per_datagram": SEGS, "last_segment": LAST,
                          "segments": N * SEGS}
    # each datagram left the guest whole, with a UDP_L4 header
    assert v["tx"]["gso_frames"] == N and v["tx"]["gso_bytes"] == N * SIZE, v["tx"]
    host = rep["counts"]["host"]
    # the tap saw the datagrams whole (and lwIP's own frames: ARP, IPv6 ND),
    # every frame the driver sent ...
    assert host["rx_frames"] == v["tx"]["packets"] == N + res["net"]["lwip"]["tx"], host
    # ... and the host's socket every segment, of exactly these sizes
    udp = host["udp"]
    assert udp["rcvbuf_errors"] == 0, udp
    assert udp["sizes"] == {str(GSO): N * (SEGS - 1), str(LAST): N}, udp
    assert udp["datagrams"] == N * SEGS and udp["bytes"] == N * (SIZE - 42), udp


@pytest.mark.skipif(os.geteuid() != 0, reason="tap needs root")
def test_uso_on_qemu_7_2_is_one_config_error(image):
    r, rep = run_json("system", ["uso=%d" % GSO], timeout=120)
    assert r.returncode == 2, r.stderr
    fatal = [ln for ln in rep["guests"][-1]["console_tail"] if ln.startswith("FATAL")]
    assert len(fatal) == 1 and "does not offer VIRTIO_NET_F_HOST_USO" in fatal[0], fatal


@pytest.mark.skipif(os.geteuid() != 0, reason="tap needs root")
@pytest.mark.skipif(nextroot.stamp() is None, reason="build/next not installed: make next")
def test_uso_switched_off_by_features_is_one_config_error(image):
    r, rep = run_json("next", ["uso=%d" % GSO, "features=-host_uso"], timeout=120)
    assert r.returncode == 2, r.stderr
    fatal = [ln for ln in rep["guests"][-1]["console_tail"] if ln.startswith("FATAL")]
    assert len(fatal) == 1 and "does not offer VIRTIO_NET_F_HOST_USO" in fatal[0], fatal
