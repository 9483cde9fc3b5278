"""App reneg (issue 27): several feature sets in one boot, each after a
device reset and a new negotiation (virtio 1.2 s2.4, s3.1.1), each set's
frames (N small, N of the MTU's size) sent on its own stream id, counted
exactly by the host peer over dgram and reflected back to the guest,
which counts them exactly per set too; each set negotiates what it asked
and carries its own driver counters; a bad set is one config line
(status 2)."""

import json
import os
import shutil

import pytest

from vnharness import run_vnperf
from vnperflib.run import nextroot

N = 2000
SETS = "all/-event_idx,-ring_packed/-mrg_rxbuf,indirect:off"
# virtio-pci modern with the packed ring offered: every set's switch shows
PCI_PACKED = ["--machine", "q35", "--qemu-arg=-global", "--qemu-arg=virtio-net-pci.packed=on"]


def run_json(args, timeout=300, backend="dgram"):
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", backend,
                    "--app", "reneg"] + args, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


def test_three_sets_in_one_boot_each_counted_exactly_both_ways(image):
    r, rep = run_json(PCI_PACKED + ["--count", str(N), "--sets", SETS, "--sock-rcvbuf", "4M"])
    g = rep["guests"][-1]
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res = g["result"]
    sets = res["sets"]
    assert [(s["set"], s["stream"], s["packets"], s["frame_sizes"]) for s in sets] == [
        ("all", 0, 2 * N, [64, 1514]), ("-event_idx,-ring_packed", 1, 2 * N, [64, 1514]),
        ("-mrg_rxbuf,indirect:off", 2, 2 * N, [64, 1514])]
    on = [set(s["features"]) for s in sets]
    asked = {"event_idx", "ring_packed", "mrg_rxbuf", "indirect_desc"}
    assert asked <= on[0], on[0]
    assert not on[1] & {"event_idx", "ring_packed"} and "mrg_rxbuf" in on[1], on[1]
    assert not on[2] & {"mrg_rxbuf", "indirect_desc"} and "ring_packed" in on[2], on[2]
    assert [s["ring_format"] for s in sets] == ["packed", "split", "packed"]
    assert sum("reset and negotiated again" in line for line in g["console_tail"]) == 3
    # guest->host: the peer counted each set's stream whole, checksums checked
    host = rep["host"]["peer"]
    assert host["mode"] == "reflect" and host["non_vnperf_by"]["bad_csum"] == 0, host
    counted = host["streams"]
    assert [(s["id"], s["packets"], s["unique"], s["lost"], s["dup"], s["reorder"])
            for s in counted] == [(k, 2 * N, 2 * N, 0, 0, 0) for k in range(3)], counted
    # host->guest: each set's frames back, counted by the guest on that set
    assert [(s["rx"]["packets"], s["rx"]["unique"], s["rx"]["lost"], s["rx"]["dup"],
             s["rx"]["malformed"]) for s in sets] == [(2 * N, 2 * N, 0, 0, 0)] * 3, sets
    assert [s["rx"]["bytes"] for s in sets] == [N * (64 + 1514)] * 3
    # each set's own driver counters (its sample line's, put in its entry by
    # the runner): its frames, kicks both ways, no rule broken
    samples = [x["vnet"] for x in g["samples"] if x.get("app") == "reneg"]
    assert [s["vnet"] for s in sets] == samples
    for s in sets:
        v = s["vnet"]
        assert v["tx"]["packets"] == 2 * N and v["rx"]["packets"] >= 2 * N, v
        assert v["tx"]["kicks"] > 0 and v["rx"]["kicks"] > 0, v
        assert v["rx"]["refilled"] >= 2 * N and v["tx"]["len_mismatch"] == 0, v
        assert sum(v["tx"]["rule_breaks"].values()) + sum(v["rx"]["rule_breaks"].values()) == 0
        assert "violation" not in v, v
    assert res["packets"] == 3 * 2 * N
    dirs = rep["counts"]["directions"]
    for k, t in enumerate(SETS.split("/")):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert d["verdict"] == "agree" and d["sent"] == d["received"] == 2 * N, d
    for name in ("guest->host", "guest->host frames", "host->guest frames"):
        assert dirs[name]["verdict"] == "agree", dirs[name]
    assert dirs["guest->host"]["sent"] == 3 * 2 * N


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="no dpdk-testpmd (Debian dpdk-dev)")
def test_over_vhost_user_testpmd_sends_each_set_back_exactly(image):
    """testpmd 5tswap sends each frame back on its port, as the host
    peer's reflect does: the guest counts each set back whole (checksums
    checked), testpmd's port totals are every frame each way (lwIP's
    too), and so each set is counted exactly both ways."""
    n, sets = 500, "all/-event_idx/-mrg_rxbuf,indirect:off"
    r, rep = run_json(["--count", str(n), "--sets", sets], backend="vhost-user")
    g = rep["guests"][-1]
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res = g["result"]
    assert [(s["rx"]["packets"], s["rx"]["unique"], s["rx"]["malformed"])
            for s in res["sets"]] == [(2 * n, 2 * n, 0)] * 3, res["sets"]
    pmd = rep["host"]["testpmd"]
    assert pmd["mode"] == "5tswap", pmd["mode"]
    host = rep["host"]
    assert host["rx_frames"] == host["tx_frames"] == res["tx_packets"] == res["rx_packets"]
    dirs = rep["counts"]["directions"]
    for k, t in enumerate(sets.split("/")):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert d["verdict"] == "agree" and d["sent"] == d["received"] == 2 * n, d


@pytest.mark.parametrize("backend", ["user", "passt"])
def test_over_user_and_passt_each_set_comes_back_exactly(image, backend):
    """slirp (and passt) carries the guest's frames to the gateway onto a
    UDP socket on the host's loopback that sends each back to its source
    and counts each set's stream: the frames back (addresses rewritten,
    checksums slirp's or passt's own) are counted whole by the guest on
    their set, 1472-byte payloads included, so each set is counted
    exactly both ways."""
    if backend == "passt" and shutil.which("passt") is None:
        pytest.skip("no passt")
    n, sets = 1000, "all/-event_idx,-mrg_rxbuf/indirect:off"
    r, rep = run_json(["--count", str(n), "--sets", sets], backend=backend)
    g = rep["guests"][-1]
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    res = g["result"]
    assert [(s["frame_sizes"], s["rx"]["packets"], s["rx"]["unique"], s["rx"]["malformed"])
            for s in res["sets"]] == [([64, 1514], 2 * n, 2 * n, 0)] * 3, res["sets"]
    echo = rep["host"]["udp"]
    assert echo["echoed"] == echo["datagrams"] == 6 * n and echo["csum_errors"] == 0, echo
    assert echo["sizes"] == {"22": 3 * n, "1472": 3 * n}, echo["sizes"]
    dirs = rep["counts"]["directions"]
    for k, t in enumerate(sets.split("/")):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert d["verdict"] == "agree" and d["sent"] == d["received"] == 2 * n, d


@pytest.mark.parametrize("backend", ["tap", "user", "passt"])
def test_each_set_s_tcp_stream_is_counted_exactly(image, backend):
    """stream_s=1: after its frames each set runs one TCP stream (app
    iperf's client, the offloads on) to the host's iperf 2 server the
    backend starts (in tap's namespace, on the loopback behind slirp and
    passt):
    each set's acknowledged bytes, less iperf's 4-byte flags word, are
    exactly the server's stream of that set, in order, and the set's
    frames are still counted exactly both ways. The second set takes TSO
    away with the checksum offload left on: lwIP's segments fit the MTU
    again (the first set's TSO sizes once stayed, and the stream's IP
    fragments with offloaded checksums were never acknowledged over tap)."""
    if backend == "tap" and os.geteuid() != 0:
        pytest.skip("needs root (tap in a namespace)")
    if backend == "passt" and shutil.which("passt") is None:
        pytest.skip("no passt")
    n, sets = 300, "all/-host_tso4,-host_tso6/-event_idx"
    r, rep = run_json(["--count", str(n), "--sets", sets, "--", "back=1", "stream_s=1"],
                      backend=backend)
    g = rep["guests"][-1]
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    streams = [s["tcp"] for s in g["result"]["sets"]]
    assert [(st["ok"], st["unacked"]) for st in streams] == [(True, 0)] * 3, streams
    assert all(st["bytes"] > 4 for st in streams), streams
    server = rep["host"]["iperf"]["streams"]
    assert [s["bytes"] for s in server] == [st["bytes"] - 4 for st in streams], (server, streams)
    dirs = rep["counts"]["directions"]
    for k, t in enumerate(sets.split("/")):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert d["verdict"] == "agree" and d["sent"] == d["received"] == 2 * n, d
        d = dirs["set %d (%s) stream guest->host" % (k + 1, t)]
        assert (d["verdict"], d["sent"], d["received"]) == (
            "agree", streams[k]["bytes"] - 4, streams[k]["bytes"] - 4), d
    said = [line for line in g["console_tail"] if line.startswith("reneg: set ")
            and " stream " in line and " bytes in " in line]
    assert len(said) == 3, g["console_tail"][-8:]


def test_a_stream_without_the_host_s_iperf_is_refused(image):
    r = run_vnperf(["run", "--accel", "tcg", "--backend", "dgram", "--app", "reneg",
                    "--count", "10", "--sets", "all", "--", "stream_s=1"], timeout=60)
    assert r.returncode == 64 and r.stderr.strip().startswith(
        "vnperf: reneg over dgram: stream_s=1: each set's TCP stream needs the host's iperf 2 "
        "server"), r.stderr


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


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (tap in a namespace)")
@pytest.mark.skipif(nextroot.stamp() is None, reason="build/next not installed: make next")
def test_each_set_s_uso_segments_are_counted_exactly_over_tap_on_qemu_10(image):
    """uso=1400 over a vnet_hdr tap on QEMU 10.0 (HOST_USO offered): each
    set that negotiated it sends N datagrams of 8192 payload bytes after
    its frames, every segment the host's stack cuts (5 x 1400 + 1192)
    stamped on stream 0x100 + the set's index: the namespace's UDP socket
    gets exactly 6 N a set, of those sizes; a set without HOST_USO sends
    none; the host peer leaves the GSO frames to the stack (reflect_gso)
    and still counts and reflects each set's frames exactly."""
    n, sets = 300, "all/-host_uso/-event_idx"
    r, rep = run_json(["--machine", "q35", "--qemu", "next", "--count", str(n), "--sets", sets,
                       "--", "uso=1400"], backend="tap")
    g = rep["guests"][-1]
    assert r.returncode == 0, (rep["why"], g["console_tail"][-8:])
    got = [s["uso"] for s in g["result"]["sets"]]
    assert got == [{"gso_size": 1400, "segments_per_datagram": 6, "last_segment": 1192,
                    "datagrams": n if on else 0, "segments": 6 * n if on else 0,
                    "stream": 0x100 + k, "host_uso": on}
                   for k, on in enumerate((True, False, True))], got
    udp = {s["id"]: s for s in rep["host"]["udp"]["streams"]}
    for k in (0, 2):
        assert udp[0x100 + k]["sizes"] == {"1400": 5 * n, "1192": n}, udp
    assert 0x101 not in udp and rep["host"]["udp"]["csum_errors"] == 0
    assert rep["host"]["peer"]["reflect_gso"] == 2 * n, rep["host"]["peer"]
    dirs = rep["counts"]["directions"]
    for k, t in enumerate(sets.split("/")):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert d["verdict"] == "agree" and d["sent"] == d["received"] == 2 * n, d
        d = dirs.get("set %d (%s) uso guest->host" % (k + 1, t))
        assert (d is None) == (k == 1), (k, d)
        assert d is None or (d["verdict"], d["sent"], d["received"]) == ("agree", 6 * n, 6 * n)
    for name in ("guest->host", "guest->host frames", "uso guest->host"):
        assert dirs[name]["verdict"] == "agree", dirs[name]
    said = [line for line in g["console_tail"] if "USO datagrams" in line]
    assert len(said) == 3 and "no USO datagrams (HOST_USO not negotiated)" in said[1], said


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (tap in a namespace)")
@pytest.mark.parametrize("uso, line", [
    ("10", "config: uso=10: app=reneg takes 24 to 8168 (each segment of its 8192-byte datagrams "
     "starts with the 24-byte payload header, two segments at least)"),
    ("1473", "config: uso=1473: a segment's payload is at most 1472 (MTU 1500)")])
def test_a_uso_out_of_range_is_one_config_line(image, uso, line):
    r, rep = run_json(["--count", "10", "--sets", "all", "--", "uso=" + uso], backend="tap",
                      timeout=180)
    assert r.returncode == 2, rep["why"]
    tail = rep["guests"][-1]["console_tail"]
    lines = [x for x in tail if "config: uso=" in x and not x.startswith("@vnperf")]
    assert len(lines) == 1 and lines[0].endswith(line), tail[-4:]
