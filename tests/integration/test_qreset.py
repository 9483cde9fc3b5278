"""Queue reset (VIRTIO_F_RING_RESET, virtio 1.2 s2.6.1; issue 27): gen
resets its TX queue after qreset_at= frames and goes on, every frame
counted once at the host, on QEMU 7.2 and 10.0's virtio-net-pci, split
and packed. QEMU's virtio-mmio offers the feature but ignores QueueReset:
the driver sees the queue still enabled and says so (device error, 4).
Without the feature, qreset_at= is one config-error line (2)."""

import json

import pytest

from vnharness import run_vnperf
from vnperflib.run import nextroot

N = 3000
AT = 1000

QEMUS = ["system", pytest.param("next", marks=pytest.mark.skipif(
    nextroot.stamp() is None, reason="build/next not installed: make next"))]


def run_json(args, timeout=180):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "dgram",
                    "--app", "gen", "--count", str(N)] + args, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


@pytest.mark.parametrize("qemu", QEMUS)
@pytest.mark.parametrize("packed", [False, True], ids=["split", "packed"])
def test_gen_tx_queue_reset_mid_run_exact_counts(image, qemu, packed):
    glob = ["--qemu-arg=-global", "--qemu-arg=virtio-net-pci.packed=on"] if packed else []
    r, rep = run_json(["--machine", "q35", "--qemu", qemu] + glob + ["--", "qreset_at=%d" % AT])
    res = rep["guests"][-1]["result"]
    assert r.returncode == 0, (rep["why"], rep["guests"][-1]["console_tail"][-8:])
    v = res["vnet"]
    assert "ring_reset" in v["features"] and v["ring_format"] == ("packed" if packed else "split")
    assert v["tx"]["resets"] == 1 and v["rx"]["resets"] == 0, v["tx"]
    assert any("pair 0 tx queue reset and re-enabled" in ln
               for ln in rep["guests"][-1]["console_tail"]), rep["guests"][-1]["console_tail"]
    d = rep["counts"]["directions"]["guest->host frames"]
    # gen's frames and the driver's one ARP frame, each exactly once
    assert res["packets"] == N and d["sent"] == d["received"] == v["tx"]["packets"] == N + 1, d
    assert rep["counts"]["directions"]["guest->host"]["verdict"] == "agree"


def test_mmio_offers_ring_reset_but_ignores_queue_reset(image):
    r, rep = run_json(["--machine", "microvm", "--qemu-arg=-global",
                       "--qemu-arg=virtio-mmio.force-legacy=false", "--", "qreset_at=%d" % AT])
    assert r.returncode == 4, r.stderr
    err = [json.loads(ln.split(" ", 1)[1]) for ln in rep["guests"][-1]["console_tail"]
           if ln.startswith("@vnperf ") and '"type":"error"' in ln]
    assert len(err) == 1 and "ring_reset" in err[0]["vnet"]["features"], err
    assert "tx: queue still enabled after its reset completed" in err[0]["message"], err


def test_qreset_at_without_ring_reset_is_a_config_error(image):
    r, rep = run_json(["--machine", "q35", "--", "qreset_at=%d" % AT, "features=-ring_reset"])
    assert r.returncode == 2, r.stderr
    fatal = [ln for ln in rep["guests"][-1]["console_tail"] if ln.startswith("FATAL")]
    assert len(fatal) == 1 and "does not offer VIRTIO_F_RING_RESET" in fatal[0], fatal
