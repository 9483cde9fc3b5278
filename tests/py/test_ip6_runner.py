"""vnperf run --ip6 (issue 29): lwIP's apps over IPv6. The guest's config
words and the host end's addressing per backend (tap: fd00:766e::/64 on
the namespace tap, nodad; user: slirp's IPv6 net; passt: IPv6 only in a
namespace of the runner's with a veth end as its template), the host's
iperf -V and rrserver's IPv6 bind, the run's identity, and the one-line refusals
(status 64, before anything starts) where the runner has no IPv6 host
end."""

import subprocess
import time

import pytest

from test_queues_runner import FakeSession, device, netdev, runner_argv  # noqa: F401
from test_support import load_cli
from vnperflib import exitcodes, options, topologies
from vnperflib.errors import RunnerError
from vnperflib.run import identity, iperf, rrhost
from vnperflib.backends import netns, passt, passtns, qemuonly, tap
from vnperflib.run import support


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


def test_passt_copies_its_ipv6_template_from_the_runners_namespace(monkeypatch):
    calls = []
    monkeypatch.setattr(netns, "run_quiet", lambda argv: calls.append(argv) or (0, ""))
    monkeypatch.setattr(netns, "ip", lambda *a: calls.append(["ip"] + list(a)) or "")
    s = FakeSession()
    ns = passtns.create(s)
    flat = [" ".join(c) for c in calls]
    assert any("netns exec %s sysctl -qw net.ipv6.conf.lo.disable_ipv6=0" % ns in c
               for c in flat), flat
    assert "ip -n %s link add vnpt0 type veth peer name vnpt1" % ns in flat, flat
    assert any("net.ipv6.conf.vnpt0.accept_dad=0" in c for c in flat), flat
    assert "ip -n %s addr add fd00:766e:3::1/64 dev vnpt0 nodad" % ns in flat, flat
    # passt takes the interface of the default route first (conf.c, conf_ip6)
    assert flat[-1] == "ip -n %s -6 route add default dev vnpt0" % ns, flat
    s.close()


@pytest.mark.parametrize("role,forward", [("client", "none"), ("server", "::1/5002:5001")])
def test_passt_runs_ipv6_only_in_its_namespace_with_ndp(monkeypatch, role, forward):
    o = built(backend="passt", app="iperf", ip6=True, config=["role=" + role])
    be = passt.Passt(o)
    be.netns, be.ports = "ns1", (5001, 5002)
    spawned = []
    monkeypatch.setattr(passt.os.path, "exists", lambda p: True)
    sess = type("S", (), {"DAEMON": 1, "spawn": lambda self, argv, **kw: spawned.append(argv)})()
    monkeypatch.setattr(passt.scratch, "path", lambda *a: "/tmp/p.sock")
    be.spawn(sess, tcp=(5002, 5001) if role == "server" else None)
    argv = spawned[0]
    assert argv[:4] == ["ip", "netns", "exec", "ns1"], argv
    flags = " ".join(argv[5:])
    assert "-6 -a fd00:766e:3::15 -g fd00:766e:3::2 -t %s -u none" % forward in flags, argv
    # the guest resolves the gateway by neighbour discovery: passt answers
    assert "--no-ndp" not in argv and "--no-ra" in argv and "--no-dhcpv6" in argv, argv
    be.iperf = type("I", (), {"role": role})()
    words = be.guest_config(0)
    assert "ip6=fd00:766e:3::15" in words and "dst_ip6=fd00:766e:3::2" in words, words
    # IPv4's command line as it was
    v4 = passt.argv("/tmp/p.sock")
    assert "--no-ndp" in v4 and "-6" not in v4 and v4[0] != "ip", v4


def test_rr_over_passt_answers_on_its_loopback(monkeypatch, tmp_path):
    monkeypatch.setattr(rrhost.scratch, "mkdtemp", lambda s, n: str(tmp_path))
    s = FakeSession()
    o = built(backend="passt", app="rr", ip6=True, config=["role=client", "dst_port=9100"])
    be = passt.Passt(o)
    assert be.rr_port() == 9100
    be.port = 9100
    be.rr = rrhost.HostRr(s, "ns1", "::1", o, be.port)
    argv = be.rr.argv
    assert argv[:4] == ["ip", "netns", "exec", "ns1"], argv
    assert argv[argv.index("--bind") + 1] == "::1" and argv[argv.index("--port") + 1] == "9100"
    assert "dst_port=9100" in be.guest_config(0) and "dst_ip6=fd00:766e:3::2" in \
        be.guest_config(0)
    assert support.why_not("rr", "passt", "host") is None
    topo = topologies.topology_for(o)
    for app in ("iperf", "rr"):
        opts = built(backend="passt", app=app, ip6=True)
        p = identity.guest_params(identity.main_words(opts))
        assert support.ip6_refusal(opts, p, topo) is None, app
    s.close()


@pytest.mark.parametrize("port", ["9x", "0", "70000", "\u00b2"])
def test_rr_over_passt_refuses_a_dst_port_that_is_no_port(port):
    be = passt.Passt(built(backend="passt", app="rr", config=["dst_port=" + port]))
    with pytest.raises(RunnerError) as e:
        be.rr_port()
    assert e.value.status == exitcodes.RUNNER_USAGE and "a port, 1..65535" in e.value.line


@pytest.mark.parametrize("ip6,size,refused", [
    (False, 1472, False), (False, 1473, True), (True, 1452, False), (True, 1453, True)])
def test_rr_over_passt_takes_udp_messages_of_one_frame(ip6, size, refused):
    """passt neither fragments nor reassembles: a UDP request or answer
    must fit the guest's 1500-byte MTU; TCP is cut to the MSS."""
    for key in ("req_size", "resp_size"):
        o = built(backend="passt", app="rr", ip6=ip6, config=["%s=%d" % (key, size)])
        p = identity.guest_params(identity.main_words(o))
        line = support.passt_refusal(o, p)
        assert (line is not None) == refused, (key, line)
        assert line is None or "passt neither fragments" in line, line
    tcp = built(backend="passt", app="rr", ip6=ip6, config=["proto=tcp", "resp_size=3000"])
    assert support.passt_refusal(tcp, identity.guest_params(identity.main_words(tcp))) is None


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
    (["--backend", "passt", "--app", "rr", "--", "role=server"], "has no rr client"),
    (["--backend", "passt", "--app", "rr", "--", "proto=udp", "resp_size=1453"],
     "proto=udp resp_size=1453: over 1452 bytes (IPv6) a message is more than one frame"),
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
