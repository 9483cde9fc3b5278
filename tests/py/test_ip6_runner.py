"""vnperf run --ip6 (issue 29): lwIP's apps over IPv6. The guest's config
words and the host end's addressing per backend (tap: fd00:766e::/64 on
the namespace tap, nodad; user: slirp's IPv6 net), the host's iperf -V
and rrserver's IPv6 bind, the run's identity, and the one-line refusals
(status 64, before anything starts) where the runner has no IPv6 host
end."""

import subprocess
import time

import pytest

from test_queues_runner import FakeSession, device, netdev, runner_argv  # noqa: F401
from test_support import load_cli
from vnperflib import exitcodes, options
from vnperflib.run import identity, iperf, rrhost
from vnperflib.backends import netns, qemuonly, tap


def built(**kw):
    return options.build(**dict({"image": "/nonexistent/vnperf.elf"}, **kw))


def test_tap_gives_the_guest_both_ipv6_addresses():
    o = built(backend="tap", machine="q35", app="iperf", ip6=True)
    be = tap.Tap(o)
    be.dst_mac = "02:00:00:00:00:01"
    cfg = runner_argv(o, be)
    words = cfg[cfg.index("-fw_cfg") + 1].split()
    assert "ip6=fd00:766e::2" in words and "dst_ip6=fd00:766e::1" in words, words
    # without --ip6, nothing of it
    o4 = built(backend="tap", machine="q35", app="iperf")
    be4 = tap.Tap(o4)
    be4.dst_mac = "02:00:00:00:00:01"
    assert not any("ip6" in w for w in be4.guest_config(0))


def test_tap_addresses_the_namespace_end_without_dad(monkeypatch):
    calls = []
    monkeypatch.setattr(netns, "run_quiet", lambda argv: calls.append(argv) or (0, ""))
    monkeypatch.setattr(netns, "ip", lambda *a: calls.append(["ip"] + list(a)) or "")
    netns.face_guest6("ns1", "vntap0", "52:54:00:00:00:01")
    flat = [" ".join(c) for c in calls]
    assert any("net.ipv6.conf.vntap0.disable_ipv6=0" in c for c in flat), flat
    assert any("net.ipv6.conf.vntap0.accept_dad=0" in c for c in flat), flat
    assert "ip -n ns1 addr add fd00:766e::1/64 dev vntap0 nodad" in flat, flat
    assert "ip -n ns1 neigh replace fd00:766e::2 lladdr 52:54:00:00:00:01 dev vntap0 " \
        "nud permanent" in flat, flat


def test_user_turns_on_slirps_ipv6_net():
    o = built(backend="user", machine="q35", app="iperf", ip6=True)
    be = qemuonly.User(o)
    be.ports = (5001, 5002)
    be.iperf = type("I", (), {"role": "client"})()
    nd = be.nics(0)[0].netdev
    assert ",ipv4=on,ipv6=on,ipv6-net=fd00:766e:2::/64,ipv6-host=fd00:766e:2::2" in nd, nd
    words = be.guest_config(0)
    assert "ip6=fd00:766e:2::15" in words and "dst_ip6=fd00:766e:2::2" in words, words


def test_host_iperf_uses_ipv6_sockets(monkeypatch, tmp_path):
    monkeypatch.setattr(iperf.scratch, "mkdtemp", lambda s, n: str(tmp_path))
    s = FakeSession()
    srv = iperf.HostIperf(s, None, None, built(backend="user", app="iperf", ip6=True))
    assert "-V" in srv.argv and srv.argv[srv.argv.index("-B") + 1] == "::1", srv.argv
    cli = iperf.HostIperf(s, "ns1", netns.GUEST_IP6,
                          built(backend="tap", app="iperf", ip6=True,
                                config=["role=server"]))
    assert "-V" in cli.argv and cli.argv[cli.argv.index("-c") + 1] == "fd00:766e::2"
    v4 = iperf.HostIperf(s, "ns1", netns.GUEST_IP, built(backend="tap", app="iperf"))
    assert "-V" not in v4.argv
    s.close()


def test_rrserver_binds_the_hosts_ipv6_address(monkeypatch, tmp_path):
    monkeypatch.setattr(rrhost.scratch, "mkdtemp", lambda s, n: str(tmp_path))
    s = FakeSession()
    r = rrhost.HostRr(s, "ns1", netns.HOST_IP6, built(backend="tap", app="rr", ip6=True))
    assert r.argv[r.argv.index("--bind") + 1] == "fd00:766e::1"
    s.close()


def test_identity_tells_ipv6_runs_apart_and_leaves_ipv4_as_it_was():
    words = identity.main_words(built(backend="tap", app="iperf"))
    o4, o6 = built(backend="tap", app="iperf"), built(backend="tap", app="iperf", ip6=True)
    assert "ip_version" not in identity.of_run(o4, words, "tcg")
    assert identity.of_run(o6, words, "tcg")["ip_version"] == "6"


@pytest.mark.parametrize("argv,why", [
    (["--backend", "tap", "--app", "gen"], "--ip6: lwIP's apps only (iperf, rr); app gen"),
    (["--backend", "passt", "--app", "iperf"], "passt's IPv6 copies this host's own"),
    (["--backend", "dgram", "--app", "rr"], "--ip6: dgram has no host end over IPv6"),
    (["--backend", "user", "--app", "iperf", "--", "role=server"], "takes IPv4 addresses only"),
    (["--tap", "vnnosuch0", "--app", "iperf"], "no IPv6 address on your own tap"),
])
def test_no_ipv6_host_end_is_refused_before_anything_starts(argv, why, monkeypatch, capsys,
                                                            tmp_path):
    cli = load_cli()
    started = []

    def no_child(self, *a, **kw):
        started.append(a[0] if a else kw.get("args"))
        raise AssertionError("a refused run started %r" % (started[-1],))

    monkeypatch.setattr(subprocess.Popen, "__init__", no_child)
    t0 = time.monotonic()
    status = cli.main(["run", "--machine", "q35", "--ip6", "--image",
                       str(tmp_path / "none.elf")] + argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == exitcodes.RUNNER_USAGE, (argv, err)
    assert len(err) == 1 and why in err[0], (argv, err)
    assert time.monotonic() - t0 < 1.0 and started == []
