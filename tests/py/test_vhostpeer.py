"""backends/vhostpeer.py: a vhost-user sink with a rate or a count is fed
by vnperf-peer-dpdk on the guest's own port (unless --feeder testpmd or a
testpmd knob asks for testpmd); its command line paces and addresses the
guest like the socket peer; its ring_full count is the located loss."""

import argparse

import pytest

from vnpy import run_opts, run_vnperf
from vnperflib import backends, exitcodes
from vnperflib.analysis import counts
from vnperflib.run import peer
from vnperflib.backends import pvp, testpmd, vhostpeer


def opts(**kw):
    base = dict(app="sink", topology="host", rate=None, count=None, size=60, duration=5,
                machine="microvm", fwd_mode=None, pmd_burst=None, pmd_rxd=None, pmd_txd=None,
                feeder=None, event_idx=None, queue_size=None, vhost_user_socket=None)
    return run_opts(**dict(base, **kw))


@pytest.mark.parametrize("kw,cls", [
    ({"rate": "100k"}, vhostpeer.VhostUserPeer),
    ({"count": 5000}, vhostpeer.VhostUserPeer),
    ({"rate": "max"}, vhostpeer.VhostUserPeer),
    ({"rate": "100k", "feeder": "peer-dpdk"}, vhostpeer.VhostUserPeer),
    ({"rate": "100k", "feeder": "testpmd"}, testpmd.VhostUser),
    ({"rate": "100k", "pmd_burst": 8}, testpmd.VhostUser),
    ({}, testpmd.VhostUser),                       # txonly, no peer
    ({"app": "reflect", "rate": "10k"}, testpmd.VhostUser),
    ({"app": "gen"}, testpmd.VhostUser),
])
def test_feeder_picks_the_backend(kw, cls):
    assert type(backends.make("vhost-user", opts(**kw))) is cls


def test_sender_paces_and_addresses_the_guest():
    args = vhostpeer.sender_args(opts(rate="250k", size=64, duration=3), "/x/vhost0.sock")
    assert args[:2] == ["--tx-vhost", "/x/vhost0.sock"] and "--start-on-usr1" in args
    valued = [a for a in args if a != "--start-on-usr1"]
    pairs = dict(zip(valued[::2], valued[1::2]))
    assert pairs["--rate"] == "250000" and pairs["--size"] == "64"
    # The guest still counts when the sender stops.
    assert pairs["--duration"] == "2.5"
    assert pairs["--dst-mac"] == "52:54:00:00:00:01" and pairs["--dst-ip"] == "10.0.2.15"
    assert pairs["--src-mac"] == peer.PEER_MAC and pairs["--src-ip"] == peer.PEER_IP


def test_sender_count_and_flat_out():
    args = vhostpeer.sender_args(opts(count=5000, rate="max"), "/s")
    assert "--count" in args and "5000" in args
    assert "--rate" not in args and "--duration" not in args


def test_guest_sends_nothing_but_to_the_peer():
    be = vhostpeer.VhostUserPeer(opts(rate="1k"))
    assert be.guest_config(0) == ["ip=10.0.2.15", "dst_ip=" + peer.PEER_IP,
                                  "dst_mac=" + peer.PEER_MAC]


@pytest.mark.parametrize("machine,vectors", [("microvm", None), ("q35", 0)])
def test_vhost_nic_without_msix_on_pci(machine, vectors):
    nic = vhostpeer.vhost_nic(opts(machine=machine), 0)
    assert nic.netdev == "vhost-user,chardev=vu0"
    assert nic.props.get("vectors") == vectors


class FakeSender:
    def __init__(self, result):
        self.result = result


def test_ring_full_is_the_located_loss():
    be = vhostpeer.VhostUserPeer(opts(rate="1m"))
    be.peer = FakeSender({"type": "peer", "mode": "send", "packets": 1000, "bytes": 60000,
                            "errors": {"ring_full": 40}})
    c = be.collect()
    assert c["tx_packets"] == 1000 and c["feeder"] == "peer-dpdk"
    assert c["tx_drops"] == [counts.drop("ring", "not placed in the guest's full RX ring by "
                                         "vnperf-peer-dpdk (ring_full)", 40)]


def test_peer_argv_without_a_socket_address(tmp_path, monkeypatch):
    class S:
        def on_close(self, *a, **kw):
            pass
    monkeypatch.setattr(peer.scratch, "mkdtemp", lambda s, n: str(tmp_path))
    p = peer.Peer(S(), "/b/vnperf-peer-dpdk", "send", None, None, ["--tx-vhost", "/s"])
    assert p.argv[:2] == ["/b/vnperf-peer-dpdk", "send"] and "--local" not in p.argv
    assert "--remote" not in p.argv and p.argv[-2:] == ["--tx-vhost", "/s"]


@pytest.mark.parametrize("argv,needle", [
    (["--backend", "dgram", "--app", "sink", "--feeder", "peer-dpdk"], "vhost-user only"),
    (["--backend", "vhost-user", "--app", "gen", "--feeder", "testpmd"], "only a sink"),
    (["--backend", "vhost-user", "--app", "sink", "--rate", "1k", "--feeder", "peer-dpdk",
      "--pmd-burst", "4"], "--pmd-burst is a testpmd knob"),
])
def test_feeder_refusals_are_one_line(argv, needle):
    r = run_vnperf(["run"] + argv)
    assert r.returncode == exitcodes.RUNNER_USAGE, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("make", [lambda o: vhostpeer.VhostUserPeer(o),
                                  lambda o: pvp.ChainVhostPeer(o, 1)], ids=["sink", "pvp"])
def test_a_killed_peers_runtime_dir_is_removed_at_close(tmp_path, monkeypatch, make):
    """SIGKILL leaves EAL's runtime directory: the session removes it, for
    the sink's feeder and the PVP tester alike."""
    undo = []

    class S:
        def on_close(self, fn, *a, **kw):
            undo.append((fn, a))

    class P:
        def __init__(self, *a, **kw):
            self.proc = argparse.Namespace(pid=4242)

        def start(self, wait_s):
            pass

    monkeypatch.setattr(vhostpeer.scratch, "mkdtemp", lambda s, n: str(tmp_path))
    monkeypatch.setattr(vhostpeer.peer, "Peer", P)
    monkeypatch.setattr(pvp.scratch, "mkdtemp", lambda s, n: str(tmp_path))
    make(opts(rate="1k")).start(S())
    assert (vhostpeer.shutil.rmtree, ("/var/run/dpdk/vnperf-peer-4242", True)) in undo
