"""--tap and --bridge without QEMU (issue 26): which
backend they stand for, what contradicts them, the user's tap left as it
is (QEMU opens it with the vnet header it has), and every refusal one line
with its status, before anything starts."""

import ipaddress

import pytest

from vnpy import cli_opts, run_opts, run_vnperf, standin_image
from vnperflib import backends, exitcodes
from vnperflib.run import doctor
from vnperflib.campaign import sweep
from vnperflib.backends import tap
from vnperflib.errors import RunnerError

USAGE, MISSING = exitcodes.RUNNER_USAGE, exitcodes.RUNNER_BACKEND_MISSING


def one_line(r, status, line):
    assert r.returncode == status, (r.returncode, r.stderr)
    assert r.stderr == "vnperf: %s\n" % line, r.stderr
    assert not r.stdout


@pytest.mark.parametrize("args, status, line", [
    (["--tap", "lo", "--backend", "dgram"], USAGE,
     "--tap lo and --backend dgram: it is the tap backend (or vhost-net)"),
    (["--bridge", "br0", "--backend", "hub"], USAGE,
     "--bridge br0 and --backend hub: it is the tap backend (or vhost-net)"),
    (["--tap", "a", "--bridge", "b"], USAGE,
     "--tap and --bridge: give one (--bridge adds a tap of the runner's own)"),
    (["--tap", "nosuch0"], MISSING, "--tap nosuch0: no interface nosuch0 in this network "
                                    "namespace"),
    (["--tap", "lo"], MISSING, "--tap lo: not a tap (no /sys/class/net/lo/tun_flags)"),
    (["--bridge", "nosuch0"], MISSING, "--bridge nosuch0: no interface nosuch0 in this "
                                       "network namespace"),
    (["--bridge", "lo", "--backend", "vhost-net"], MISSING,
     "--bridge lo: not a bridge (no /sys/class/net/lo/bridge)"),
])
def test_refusals_are_one_line_before_anything_starts(tmp_path, args, status, line):
    r = run_vnperf(["run", "--accel", "tcg", "--image", standin_image(tmp_path)] + args,
                   timeout=60)
    one_line(r, status, line)


@pytest.mark.parametrize("name", ["a/b", "0123456789abcdef", "", "..", "a b", "a:1"])
def test_a_malformed_interface_name_is_usage(tmp_path, name):
    for option in ("--tap", "--bridge"):
        r = run_vnperf(["run", "--image", standin_image(tmp_path), option, name], timeout=60)
        assert r.returncode == USAGE and "is not an interface name" in r.stderr, r.stderr
        assert len(r.stderr.splitlines()) == 1


def test_doctor_takes_tap_and_bridge_names_as_run_does():
    r = run_vnperf(["doctor", "--tap", "a/b"], timeout=60)
    assert r.returncode == USAGE and "is not an interface name" in r.stderr, r.stderr


def ns(**kw):
    base = dict(tap=None, bridge=None, qemu_args=[], app="gen", topology="host", config=[],
                backend="none", event_idx=None, queue_size=None, vhost_user_socket=None)
    return run_opts(**dict(base, **kw))


@pytest.mark.parametrize("kw, named, implied", [
    ({}, [], None),
    ({"tap": "t0"}, [], "tap"),
    ({"tap": "t0"}, ["vhost-net"], "tap"),
    ({"bridge": "b0"}, ["tap", "vhost-net"], "tap"),
])
def test_implied_backend(kw, named, implied):
    assert backends.implied(ns(**kw), named) == implied


def test_run_and_sweep_default_to_the_implied_backend():
    mod, o = cli_opts("run", "--tap", "t0")
    o = mod.options.RunOptions.from_cli(o)
    assert (o.backend, o.app) == ("tap", "gen")
    mod, o = cli_opts("run", "--tap", "t0", "--backend", "vhost-net")
    o = mod.options.RunOptions.from_cli(o)
    assert o.backend == "vhost-net"
    _, o = cli_opts("sweep", "--bridge", "br0", "--size", "64,128")
    assert sweep.base_opts(o).backend == "tap"
    _, o = cli_opts("sweep", "--bridge", "br0", "--backend", "tap,dgram")
    with pytest.raises(RunnerError) as e:
        sweep.base_opts(o)
    assert e.value.status == USAGE and "--backend dgram" in e.value.line


def test_make_gives_the_own_backends():
    assert type(backends.make("tap", ns(tap="t0"))) is tap.OwnTap
    be = backends.make("vhost-net", ns(bridge="b0"))
    assert type(be) is tap.BridgeTap and be.vhost and be.dev.startswith("vnb")
    assert tap.BRIDGE_TAP.match(be.dev) and len(be.dev) <= 15


@pytest.mark.parametrize("flags, vnet_hdr", [(0x1002, "off"), (0x5002, "on")])
def test_own_tap_is_opened_with_the_vnet_header_it_has(monkeypatch, flags, vnet_hdr):
    """QEMU's TUNSETIFF sets the tap's flags to its own: asking for the
    header the tap has leaves its flags as they were."""
    be = backends.make("tap", ns(tap="t0"))
    monkeypatch.setattr(tap, "tun_flags", lambda dev: flags)
    monkeypatch.setattr(tap.netns, "link", lambda n, dev: (None, {"rx": {"packets": 5}}))
    monkeypatch.setattr(tap, "host_end", lambda dev: ("02:00:00:00:00:0b", None))
    be.start(None)
    [nic] = be.nics(0)
    assert nic.netdev == "tap,ifname=t0,script=no,downscript=no,vnet_hdr=" + vnet_hdr
    assert be.netns is None
    assert be.guest_config(0) == ["ip=10.0.0.2", "dst_ip=10.0.0.1",
                                  "dst_mac=02:00:00:00:00:0b"]


def test_own_tap_sends_to_the_hosts_address_when_it_has_one(monkeypatch):
    be = backends.make("tap", ns(tap="t0"))
    monkeypatch.setattr(tap, "tun_flags", lambda dev: 0x5002)
    monkeypatch.setattr(tap.netns, "link", lambda n, dev: (None, {}))
    monkeypatch.setattr(tap, "host_end", lambda dev: ("02:00:00:00:00:0b",
                                                      ipaddress.ip_interface("192.0.2.1/24")))
    be.start(None)
    assert "dst_ip=192.0.2.1" in be.guest_config(0)
    assert be.sender is be.rr is be.iperf is None  # gen: no host end started


@pytest.mark.parametrize("app, addr, config, status, line", [
    ("sink", None, [], MISSING, "--tap t0: app sink needs an IPv4 address of this host on br9 "
                                "to reach the guest from (the runner adds none to your "
                                "network; gen needs none)"),
    ("rr", "192.0.2.1/24", [], USAGE, "--tap t0: app rr needs the guest's address in "
                                      "192.0.2.0/24 after -- (ip=A): the runner picks none on "
                                      "your network"),
    ("iperf", "192.0.2.1/24", ["ip=198.51.100.2"], USAGE,
     "--tap t0: -- ip=198.51.100.2 is no address of 192.0.2.0/24 but the host's 192.0.2.1"),
    ("iperf", "192.0.2.1/24", ["ip=192.0.2.1"], USAGE,
     "--tap t0: -- ip=192.0.2.1 is no address of 192.0.2.0/24 but the host's 192.0.2.1"),
    ("reflect", "192.0.2.1/24", ["ip=bad"], USAGE,
     "--tap t0: -- ip=bad is no address of 192.0.2.0/24 but the host's 192.0.2.1"),
    ("rr", "192.0.2.1/24", ["ip=192.0.2.9"], None, None),
    ("gen", None, [], None, None),
])
def test_apps_with_a_host_end_need_one_the_runner_reaches(monkeypatch, app, addr, config,
                                                          status, line):
    be = backends.make("tap", ns(tap="t0", app=app, config=config))
    monkeypatch.setattr(tap, "master", lambda dev: "br9")
    monkeypatch.setattr(tap, "host_end",
                        lambda dev: ("02:00:00:00:00:0b", addr and ipaddress.ip_interface(addr)))
    if status is None:
        be.check_app()
        return
    with pytest.raises(RunnerError) as e:
        be.check_app()
    assert (e.value.status, e.value.line) == (status, line)


def test_tap_facts(monkeypatch):
    sysfs = {"flags": "0x1003", "owner": "-1", "group": "-1"}
    monkeypatch.setattr(tap.os.path, "exists", lambda p: True)
    monkeypatch.setattr(tap, "_sys", lambda dev, leaf: sysfs.get(leaf))
    monkeypatch.setattr(tap, "tun_flags", lambda dev: 0x5102)
    monkeypatch.setattr(tap, "holder", lambda dev: "42 (qemu-system-x86)")
    monkeypatch.setattr(tap, "net_admin", lambda: False)
    facts = dict(tap.tap_facts("t0"))
    assert facts["single queue"].startswith("multi-queue (tun_flags 0x5102)")
    assert facts["free"] == "busy: process 42 (qemu-system-x86) has it open"
    assert facts["up"] is None and facts["permissions"] is None  # no owner: anyone may
    sysfs.update(flags="0x1002", owner="4242")
    facts = dict(tap.tap_facts("t0"))
    assert facts["up"].startswith("down: the runner does not change your tap")
    assert facts["permissions"].startswith("needs root (CAP_NET_ADMIN)")
    monkeypatch.setattr(tap, "tun_flags", lambda dev: 0x1001)
    assert dict(tap.tap_facts("t0"))["is a tap"] == "not a tap (a tun: layer 3)"


def test_doctor_rows_one_line_each():
    rows = doctor.own_rows(run_opts(tap="lo", bridge="nosuch0"))
    assert rows == [("--tap lo exists", "yes"),
                    ("--tap lo is a tap", "no: not a tap (no /sys/class/net/lo/tun_flags)"),
                    ("--bridge nosuch0 exists",
                     "no: no interface nosuch0 in this network namespace")]
    assert doctor.own_rows(run_opts()) == []

