"""app=reneg over vhost-user both ways (issue 27): testpmd forwards in
5tswap, sending each frame back on its port as the host peer's reflect
does (MACs, IP addresses and UDP ports swapped), the guest counts each
set back (back=1); testpmd counts no set, so each set's host count comes
from the guest's per-set counts where testpmd's port totals show one way
lossless (renegsets.echo_peer), and conform's vhost-user cells run as
shared reneg boots counted both ways."""


import vnpy  # noqa: F401 (puts tools/ on the path)
from vnperflib.backends import testpmd, wire
from vnperflib.campaign import conform_plan as cp
from vnperflib.run import support

import renegrep  # noqa: E402
from renegrep import N, SETS  # noqa: E402

LWIP = 2   # the boot's own frames (lwIP's ARP), sent back too


def reneg_opts(**kw):
    return vnpy.run_opts(backend="vhost-user", app="reneg", sets="/".join(SETS), count=N, **kw)


def test_reneg_over_vhost_user_gets_5tswap_and_back_the_other_apps_keep_their_modes():
    assert support.why_not("reneg", "vhost-user", "host") is None
    assert testpmd.plan(reneg_opts()) == ("5tswap", False)
    assert "back=1" in testpmd.VhostUser(reneg_opts()).guest_config(0)
    for app, mode in (("gen", "rxonly"), ("sink", "txonly")):
        be = testpmd.VhostUser(vnpy.run_opts(backend="vhost-user", app=app))
        assert be.mode == mode and not any(w.startswith("back=") for w in be.guest_config(0))
    assert testpmd.plan(vnpy.run_opts(backend="vhost-user", app="gen",
                                      fwd_mode="5tswap")) == ("5tswap", False)
    gen = testpmd.VhostUser(vnpy.run_opts(backend="vhost-user", app="gen", fwd_mode="5tswap"))
    assert "back=1" not in gen.guest_config(0)


def host_of(rx_frames, tx_frames, tx_dropped=0):
    """testpmd's collect() after a reneg run: its port's totals."""
    be = testpmd.VhostUser(reneg_opts())
    be.socks = ["vhost0.sock"]
    be.stats = {0: {"RX-packets": rx_frames, "TX-packets": tx_frames, "RX-bytes": 0,
                    "TX-bytes": 0, "RX-missed": 0, "RX-nombuf": 0}}
    be.fwd = [{0: {"RX-packets": rx_frames, "TX-packets": tx_frames,
                   "TX-dropped": tx_dropped}}]
    return be.collect()


def report(back=(N, N, N), rx_frames=None, tx_frames=None):
    """A reneg boot over vhost-user: the guest's samples and result (each
    set N frames out, back[k] counted back) and testpmd's totals (by
    default every frame out reached it, and it sent every one back)."""
    samples, res = renegrep.guest(back, LWIP)
    tx, rx = res["tx_packets"], res["rx_packets"]
    host = host_of(tx if rx_frames is None else rx_frames,
                   rx if tx_frames is None else tx_frames)
    return renegrep.report(samples, res, host, True)


def split(rep):
    return renegrep.split(rep, "vhost-user" in wire.RENEG_BACK)


traffic = renegrep.traffic


def test_each_set_counted_both_ways_from_testpmd_s_totals():
    rep = report()
    dirs = rep.counts.directions
    for k, t in enumerate(SETS):
        for way in ("guest->host", "host->guest"):
            d = dirs["set %d (%s) %s" % (k + 1, t, way)]
            assert (d.verdict, d.sent, d.received) == ("agree", N, N)
    done, failure = split(rep)
    assert failure is None and len(done) == 3
    assert [c["verdict"] for c in traffic(done)] == ["pass"] * 3


def test_a_set_s_frames_lost_back_name_the_set_and_the_way():
    """testpmd got every frame (its RX the guest's tx): each set's frames
    reached it, the guest's count back per set is the finding."""
    rep = report(back=(N, N - 7, N), tx_frames=3 * N + LWIP)
    done, failure = split(rep)
    assert failure is None
    cells = traffic(done)
    assert [c["verdict"] for c in cells] == ["pass", "violation", "pass"]
    assert cells[1]["detail"].startswith("small+mtu: set 2 (-event_idx) host->guest: %d sent, "
                                         "%d received, 7 lost" % (N, N - 7))


def test_a_set_s_frames_lost_out_name_the_set_and_the_way():
    """testpmd sent back all it got and the guest got them all: the loss
    is guest->host, on the set that got fewer back; lost both ways, the
    sets are not counted (testpmd counts no set) and rerun fresh."""
    rep = report(back=(N, N, N - 4), rx_frames=3 * N + LWIP - 4)
    assert rep.counts.directions["guest->host frames"].lost == 4
    cells = traffic(split(rep)[0])
    assert [c["verdict"] for c in cells] == ["pass", "pass", "violation"]
    assert cells[2]["detail"].startswith("small+mtu: set 3 (indirect:off) guest->host: %d sent, "
                                         "%d received, 4 lost" % (N, N - 4))
    # Lost both ways: which sets lost which is not known, they rerun fresh.
    rep = report(back=(N, N - 3, N), rx_frames=3 * N + LWIP - 1)
    assert rep.counts.directions["set 1 (all) guest->host"].verdict == "unknown"
    done, failure = split(rep)
    assert done == [] and "guest->host: no count" in failure["why"]


def test_conform_runs_vhost_user_as_shared_reneg_boots_both_ways():
    combos = [("all", []), ("-event_idx", ["features=-event_idx"]),
              ("-mtu", ["features=-mtu"])]
    groups = cp.plan(combos, [["small", "mtu"]] * 3,
                     support.why_not("reneg", "vhost-user", "host"),
                     "vhost-user" in wire.RENEG_BACK)
    assert [(g.traffic, g.combos, g.sets) for g in groups] == [
        (cp.BOTH, (0, 1, 2), ("all", "-event_idx", "-mtu"))]
