"""App reneg (issue 27): several feature sets in one boot, each after a
device reset and a new negotiation (virtio 1.2 s2.4, s3.1.1), each set's
frames sent on its own stream id and counted exactly by the host peer
over dgram; each set negotiates what it asked; a bad set is one config
line (status 2)."""

import json

from vnharness import run_vnperf

N = 2000
SETS = "all/-event_idx,-ring_packed/-mrg_rxbuf,indirect:off"
# virtio-pci modern with the packed ring offered: every set's switch shows
PCI_PACKED = ["--machine", "q35", "--qemu-arg=-global", "--qemu-arg=virtio-net-pci.packed=on"]


def run_json(args, timeout=300):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "dgram",
                    "--app", "reneg"] + args, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


def test_three_sets_in_one_boot_each_counted_exactly_by_the_host_peer(image):
    r, rep = run_json(PCI_PACKED + ["--count", str(N), "--sets", SETS])
    g = rep["guests"][-1]
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res = g["result"]
    sets = res["sets"]
    assert [(s["set"], s["stream"], s["packets"]) for s in sets] == [
        ("all", 0, N), ("-event_idx,-ring_packed", 1, N), ("-mrg_rxbuf,indirect:off", 2, N)]
    on = [set(s["features"]) for s in sets]
    asked = {"event_idx", "ring_packed", "mrg_rxbuf", "indirect_desc"}
    assert asked <= on[0], on[0]
    assert not on[1] & {"event_idx", "ring_packed"} and "mrg_rxbuf" in on[1], on[1]
    assert not on[2] & {"mrg_rxbuf", "indirect_desc"} and "ring_packed" in on[2], on[2]
    assert [s["ring_format"] for s in sets] == ["packed", "split", "packed"]
    assert sum("reset and negotiated again" in line for line in g["console_tail"]) == 3
    counted = rep["host"]["peer"]["streams"]
    assert [(s["id"], s["packets"], s["unique"], s["lost"], s["dup"], s["reorder"])
            for s in counted] == [(k, N, N, 0, 0, 0) for k in range(3)], counted
    assert res["packets"] == 3 * N
    d = rep["counts"]["directions"]["guest->host"]
    assert d["verdict"] == "agree" and d["sent"] == d["received"] == 3 * N, d


def test_a_bad_set_is_one_config_line(image):
    r, rep = run_json(["--count", "10", "--sets", "all/-nosuch"], timeout=180)
    assert r.returncode == 2, rep["why"]
    lines = [line for line in rep["guests"][-1]["console_tail"] if "sets=" in line and
             "config:" in line and not line.startswith("@vnperf")]
    assert lines == [lines[0]] and "set 2: -nosuch:" in lines[0], lines


def test_sets_belong_to_app_reneg():
    r = run_vnperf(["run", "--backend", "dgram", "--app", "gen", "--sets", "all"], timeout=10)
    assert r.returncode == 64
    assert r.stderr == "vnperf: --sets: app reneg runs feature sets, not app gen\n"
    r = run_vnperf(["run", "--backend", "dgram", "--app", "reneg", "--sets", "all"], timeout=10)
    assert r.returncode == 64 and "needs --sets" in r.stderr and "--count" in r.stderr, r.stderr
