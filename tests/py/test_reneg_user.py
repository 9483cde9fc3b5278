"""app=reneg over user (slirp) both ways (issue 27): the guest's frames to
the gateway reach a UDP socket on the host's loopback through slirp's NAT
(udpcount.py --echo), which sends each back to its source and counts each
set's stream id, so each set is counted both ways (back=1) and conform's
user cells run as shared reneg boots counted both ways. passt the same
way (it maps the gateway to the host's loopback too), judged lossy: a
loss there still names its set and way."""

import socket
import struct

import vnpy  # noqa: F401 (puts tools/ on the path)
from vnperflib.backends import passt, qemuonly, wire
from vnperflib.campaign import conform_plan as cp
from vnperflib.run import support, udpcount

import renegrep  # noqa: E402
from renegrep import N, SETS  # noqa: E402


def reneg_opts(**kw):
    return vnpy.run_opts(backend="user", app="reneg", sets="/".join(SETS), count=N, **kw)


class Echo:
    """udphost.UdpCount --echo after a run: its result line."""

    def __init__(self, streams):
        self.proc = None
        self.result = {"mode": "udpcount", "datagrams": sum(streams), "echoed": sum(streams),
                       "streams": [{"id": k, "packets": n} for k, n in enumerate(streams)]}


def test_reneg_over_user_counts_back_through_a_loopback_echo_not_restricted():
    assert support.why_not("reneg", "user", "host") is None
    assert "user" in wire.RENEG_BACK
    be = qemuonly.User(reneg_opts())
    be.ports, be.echo = [40001], Echo(())
    words = be.guest_config(0)
    assert "back=1" in words and "dst_port=40001" in words and "dst_ip=10.0.2.2" in words
    assert "restrict=on" not in be.nics(0)[0].netdev
    gen = qemuonly.User(vnpy.run_opts(backend="user", app="gen"))
    assert "restrict=on" in gen.nics(0)[0].netdev
    assert not any(w.startswith("back=") for w in gen.guest_config(0))


def test_the_echo_sends_each_datagram_back_and_counts_its_stream():
    echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    guest = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        echo.bind(("127.0.0.1", 0))
        guest.bind(("127.0.0.1", 0))
        guest.settimeout(2)
        small = struct.pack("<QQH", 0, 0, 1) + b"\0\0\0\0"       # 22 bytes: u16 stream
        mtu = struct.pack("<QQII", 1, 0, 2, udpcount.PL_MAGIC).ljust(1472, b"x")
        other = struct.pack("<QQII", 1, 0, 2, 0).ljust(1472, b"x")  # no magic
        for d in (small, mtu, other):
            guest.sendto(d, echo.getsockname())
        sizes, tally, streams = {}, [0, 0, 0], {}
        udpcount.count(echo, sizes, tally, streams, echo=True)  # loopback: queued at sendto
        assert tally == [3, 22 + 2 * 1472, 3] and streams == {1: {"22": 1}, 2: {"1472": 1}}
        assert [guest.recv(2048) for _ in range(3)] == [small, mtu, other]
    finally:
        echo.close()
        guest.close()


def test_reneg_over_passt_counts_back_through_the_same_echo():
    assert support.why_not("reneg", "passt", "host") is None
    assert "passt" in wire.RENEG_BACK
    assert support.why_not("reneg", "passt-vhost-user", "host") is not None
    be = passt.Passt(vnpy.run_opts(backend="passt", app="reneg", sets="all", count=N))
    be.port, be.echo = 40002, Echo(())
    words = be.guest_config(0)
    assert "back=1" in words and "dst_port=40002" in words
    gen = passt.Passt(vnpy.run_opts(backend="passt", app="gen"))
    gen.port = 40003
    assert "back=1" not in gen.guest_config(0)


def report(back=(N, N, N), host=(N, N, N), backend=qemuonly.User, lossless=True):
    """A reneg boot over user (or passt): each set N frames out, host[k]
    counted by the echo on its stream, back[k] counted back by the guest."""
    samples, res = renegrep.guest(back)
    be = backend(reneg_opts())
    be.echo = Echo(host)
    return renegrep.report(samples, res, be.collect(), lossless)


def traffic(rep):
    done, failure = renegrep.split(rep, "user" in wire.RENEG_BACK)
    assert failure is None
    return renegrep.traffic(done)


def test_each_set_counted_both_ways_and_a_loss_names_its_set_and_way():
    dirs = report().counts.directions
    for k, t in enumerate(SETS):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert (d.verdict, d.sent, d.received) == ("agree", N, N)
    assert [c["verdict"] for c in traffic(report())] == ["pass"] * 3
    cells = traffic(report(back=(N, N - 7, N)))
    assert [c["verdict"] for c in cells] == ["pass", "violation", "pass"]
    assert cells[1]["detail"].startswith("small+mtu: set 2 (-event_idx) host->guest: %d sent, "
                                         "%d received, 7 lost" % (N, N - 7))
    cells = traffic(report(host=(N, N, N - 4), back=(N, N, N - 4)))
    assert cells[2]["detail"].startswith("small+mtu: set 3 (indirect:off) guest->host: %d sent, "
                                         "%d received, 4 lost" % (N, N - 4))


def test_passt_is_lossy_and_a_loss_still_names_its_set_and_way():
    """passt copies between sockets (Passt.lossless False): an exact set
    passes, a loss no count locates is the traffic check's violation, as
    passt's fresh boots were judged (docs/conform.md)."""
    assert not passt.Passt.lossless
    rep = report(backend=passt.Passt, lossless=False)
    assert [c["verdict"] for c in traffic(rep)] == ["pass"] * 3
    cells = traffic(report(back=(N - 5, N, N), backend=passt.Passt, lossless=False))
    assert [c["verdict"] for c in cells] == ["violation", "pass", "pass"]
    assert cells[0]["detail"].startswith("small+mtu: set 1 (all) host->guest: %d sent, "
                                         "%d received, 5 lost" % (N, N - 5))


def test_conform_runs_user_as_shared_reneg_boots_both_ways():
    combos = [("all", []), ("-event_idx", ["features=-event_idx"]),
              ("-mrg_rxbuf", ["features=-mrg_rxbuf"])]
    groups = cp.plan(combos, [["small", "mtu"]] * 3, support.why_not("reneg", "user", "host"),
                     "user" in wire.RENEG_BACK)
    assert [(g.traffic, g.combos, g.sets) for g in groups] == [
        (cp.BOTH, (0, 1, 2), ("all", "-event_idx", "-mrg_rxbuf"))]
