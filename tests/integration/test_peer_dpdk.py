"""vnperf-peer-dpdk (docs/peer.md): the host peer on DPDK net_vhost ports,
the vhost-user sink's feeder. Paced frames go straight into the guest's RX
ring and both sides count the same frames; it counts a guest's frames on
an --rx-vhost port (PVP's return side) with the socket peer's sequence
tracking; a guest that never comes up is one line and exit 3."""

import json
import os
import subprocess
import time

import pytest

import vnharness
from vnharness import run_vnperf

PEER_DPDK = os.path.join(vnharness.BUILD, "tools", "vnperf-peer-dpdk")
needs_peer_dpdk = pytest.mark.skipif(not os.path.exists(PEER_DPDK),
                                     reason="vnperf-peer-dpdk not built (Debian libdpdk-dev)")
N = 20000


@needs_peer_dpdk
def test_no_guest_is_one_line_and_exit_3(tmp_path):
    sock = str(tmp_path / "vhost0.sock")
    ready = tmp_path / "ready"
    r = subprocess.run([PEER_DPDK, "send", "--tx-vhost", sock, "--link-wait", "1",
                        "--ready-file", str(ready)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 3, r.stderr
    # EAL's own log never reaches the result's stdout.
    assert r.stdout == ""
    assert "no guest driver came up on the vhost ports within 1.0 s" in \
        r.stderr.strip().splitlines()[-1]
    assert json.loads(ready.read_text())["local"] == sock
    # The port's socket and EAL's runtime directory are gone with it.
    assert not os.path.exists(sock)
    assert not os.path.exists("/var/run/dpdk/vnperf-peer-%d" % json.loads(
        ready.read_text())["pid"])


@needs_peer_dpdk
def test_sink_fed_by_peer_dpdk_counts_agree(image):
    """2 s paced at 10k pps: the sink gets every frame the peer sent, in
    order, and nothing waits for or drops at testpmd (there is none)."""
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--json", "--backend", "vhost-user",
                    "--app", "sink", "--count", str(N), "--rate", "10k", "--duration", "30"],
                   timeout=180)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    res = rep["guests"][-1]["result"]
    assert res["packets"] == N and res["lost"] == 0 and res["complete"] is True
    assert 9000 <= res["pps"] <= 11000, res["pps"]
    host = rep["host"]
    assert host["feeder"] == "peer-dpdk" and "testpmd" not in host
    assert host["peer"]["packets"] == N and host["peer"]["errors"]["ring_full"] == 0
    d = rep["counts"]["directions"]["host->guest"]
    assert d["verdict"] == "agree" and d["sent"] == d["received"] == N, d
    assert rep["cpu"]["roles"]["peer-dpdk"]["threads"] >= 1


@needs_peer_dpdk
def test_count_a_gen_guest_on_an_rx_port(tmp_path):
    """count --rx-vhost: every frame of a gen guest, in order, as the
    socket peer counts them (PVP's return side)."""
    sock, ready = str(tmp_path / "rx.sock"), tmp_path / "ready"
    p = subprocess.Popen([PEER_DPDK, "count", "--rx-vhost", sock, "--idle", "1",
                          "--link-wait", "30", "--ready-file", str(ready)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "peer did not start: %s" % (p.poll(), )
        b = vnharness.boot(["app=gen", "count=5000", "rate=10k", "size=64", "ip=10.0.2.15",
                            "dst_ip=10.0.2.2", "dst_mac=02:00:00:00:00:01"],
                           netdevs=["vhost-user,chardev=vu0"], shared_mem=True,
                           extra=["-chardev", "socket,id=vu0,path=" + sock], timeout=60)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert b.code == 0 and p.returncode == 0, (b.console[-800:], err)
    res = json.loads(out)
    assert (res["mode"], res["stop"], res["local"]) == ("count", "idle", sock)
    # Besides lwIP's gratuitous ARP, every frame is the gen's, in order.
    assert res["vnperf"] == 5000 and res["sizes"]["64"] == 5000, res
    s = res["streams"][0]
    assert (s["first_seq"], s["max_seq"], s["lost"], s["dup"], s["reorder"]) == \
        (0, 4999, 0, 0, 0), res
