"""Your own backend (issue 26): --vhost-user-socket PATH, --vhost-user-server
and --host-count SOURCE. The spec parser, DPDK telemetry's and OVS's
replies (text captured from DPDK 22.11.11's dpdk-testpmd and OVS 3.1.0
here), the refusals (one line, 64 for options, 67 for what the host lacks)
and doctor's rows; no QEMU, no testpmd."""

import os
import socket

import pytest

from vnpy import run_opts, run_vnperf, standin_image
from vnperflib.run import doctor, identity
from vnperflib import exitcodes
from vnperflib.analysis import hostcount
from vnperflib.backends import implied, make, ownvhost
from vnperflib.errors import RunnerError

# Captured from dpdk-testpmd 22.11.11 (--vdev net_vhost0,...) over its
# telemetry socket: the greeting, /ethdev/stats,0, a port it lacks, /ethdev/list.
GREETING = b'{"version":"DPDK 22.11.11","pid":32431,"max_output_len":16384}'
STATS = (b'{"/ethdev/stats":{"ipackets":20001,"opackets":3,"ibytes":1280060,"obytes":180,'
         b'"imissed":0,"ierrors":0,"oerrors":2,"rx_nombuf":1,"q_ipackets":[20001,0,0,0,0,0,0,0,'
         b'0,0,0,0,0,0,0,0],"q_opackets":[3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"q_ibytes":[1280060,'
         b'0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"q_obytes":[180,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],'
         b'"q_errors":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}}')
NO_PORT = b'{"/ethdev/stats":null}'
LIST = b'{"/ethdev/list":[0]}'
# `ovs-vsctl get Interface vhubr0 statistics`, OVS 3.1.0, userspace bridge.
OVS = ("{collisions=0, rx_bytes=642, rx_crc_err=0, rx_dropped=0, rx_errors=0, rx_frame_err=0, "
       "rx_missed_errors=0, rx_multicast_packets=0, rx_over_err=0, rx_packets=9, tx_bytes=0, "
       "tx_dropped=0, tx_errors=0, tx_packets=0}\n")


@pytest.mark.parametrize("text,spec", [
    ("none", ("none", None, None)),
    ("testpmd:0", ("testpmd", "rte", 0)),
    ("testpmd:3@my-prefix", ("testpmd", "my-prefix", 3)),
    ("testpmd:0@/run/x/dpdk_telemetry.v2", ("testpmd", "/run/x/dpdk_telemetry.v2", 0)),
    ("ovs:vhost-user-1", ("ovs", "vhost-user-1", None)),
    ("iface:tap0", ("iface", "tap0", None)),
])
def test_spec_parses(text, spec):
    s = hostcount.parse(text)
    assert (s.kind, s.target, s.port) == spec and s.text == text


@pytest.mark.parametrize("text", ["", "none:", "testpmd", "testpmd:", "testpmd:x", "testpmd:-1",
                                  "testpmd:70000", "testpmd:0@", "ovs:", "ovs:a b",
                                  "iface:../etc", "iface:waytoolonginterfacename", "snmp:x",
                                  "TESTPMD:0"])
def test_bad_spec_is_a_value_error(text):
    with pytest.raises(ValueError):
        hostcount.parse(text)


def test_bad_spec_on_the_command_line_is_one_line_64():
    r = run_vnperf(["run", "--host-count", "testpmd:x"])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.count("\n") == 1 and "PORT is a DPDK port number" in r.stderr


def test_telemetry_path_is_eal_runtime_dir():
    assert hostcount.telemetry_path("/x/y.sock") == "/x/y.sock"
    base = hostcount.dpdk_runtime_base()
    assert hostcount.telemetry_path("p1") == os.path.join(base, "p1", "dpdk_telemetry.v2")


def test_telemetry_replies_parse():
    assert hostcount.parse_reply("/ethdev/list", LIST) == [0]
    assert hostcount.parse_reply("/ethdev/stats,9", NO_PORT) is None
    snap = hostcount.ethdev_snapshot(hostcount.parse_reply("/ethdev/stats,0", STATS))
    assert snap == {"rx_frames": 20001, "rx_bytes": 1280060, "tx_frames": 3, "tx_bytes": 180,
                    "rx_missed": 0, "rx_nombuf": 1, "tx_errors": 2}


@pytest.mark.parametrize("data", [b"", b"not json", GREETING, b'{"/ethdev/stats":{"ipackets":-1}}',
                                  b'{"/ethdev/stats":{"ipackets":true}}', b"[1]"])
def test_telemetry_replies_outside_the_format_are_value_errors(data):
    with pytest.raises(ValueError):
        hostcount.ethdev_snapshot(hostcount.parse_reply("/ethdev/stats,0", data))


def test_ovs_statistics_parse():
    stats = hostcount.parse_ovs_statistics(OVS)
    assert stats["rx_packets"] == 9 and stats["rx_bytes"] == 642 and len(stats) == 14
    assert hostcount.parse_ovs_statistics('{"rx_q0_good_packets"=5, rx_packets=1}') == {
        "rx_q0_good_packets": 5, "rx_packets": 1}
    assert hostcount.parse_ovs_statistics("{}") == {}
    for bad in ("", "rx_packets=1", "{rx_packets=x}", "{rx_packets=%d}" % 2 ** 64):
        with pytest.raises(ValueError):
            hostcount.parse_ovs_statistics(bad)


class Fake(hostcount.HostCount):
    """A HostCount whose reads are given."""

    def __init__(self, text, reads):
        super().__init__(hostcount.parse(text))
        self.reads = list(reads)

    def read(self):
        r = self.reads.pop(0)
        if isinstance(r, RunnerError):
            raise r
        return r


def snap(rx, tx, missed=0):
    return {"rx_frames": rx, "rx_bytes": rx * 64, "tx_frames": tx, "tx_bytes": tx * 64,
            "rx_missed": missed, "rx_nombuf": 0, "tx_errors": 0}


def test_collect_is_the_difference_with_the_drop_counters():
    h = Fake("testpmd:0", [snap(100, 5, 1), snap(20101, 5, 4)])
    h.base()
    out = h.collect()
    assert (out["rx_frames"], out["rx_bytes"], out["tx_frames"]) == (20001, 20001 * 64, 0)
    assert [d["frames"] for d in out["rx_drops"]] == [3, 0]
    assert out["host_count"] == "testpmd:0" and h.lossless


def test_collect_says_why_when_it_cannot_count():
    assert hostcount.HostCount(hostcount.parse("none")).collect() == {}
    h = Fake("testpmd:0", [snap(100, 5), snap(50, 5)])
    h.base()
    assert "went backwards" in h.collect()["host_count_error"]
    h = Fake("iface:x", [snap(1, 1), RunnerError(68, "gone")])
    h.base()
    assert h.collect() == {"host_count": "iface:x", "host_count_error": "gone"}
    assert not h.lossless


def test_iface_counts_are_the_kernel_statistics():
    h = hostcount.HostCount(hostcount.parse("iface:lo"))
    h.base()
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9))
    out = h.collect()
    assert out["rx_frames"] >= 1 and out["tx_frames"] >= 1


def test_unreachable_sources_are_status_67(tmp_path):
    for text in ("testpmd:0@" + str(tmp_path / "none.sock"), "iface:vnnosuch0"):
        with pytest.raises(RunnerError) as e:
            hostcount.HostCount(hostcount.parse(text)).probe()
        assert e.value.status == exitcodes.RUNNER_BACKEND_MISSING, e.value.line


def opts(**kw):
    base = dict(vhost_user_socket="/tmp/x.sock", vhost_user_server=False,
                host_count=hostcount.parse("none"), backend="none", app=None, rate=None,
                topology="host", fwd_mode=None, pmd_burst=None, pmd_rxd=None, pmd_txd=None,
                feeder=None, machine="q35", event_idx=None, queue_size=None, tap=None,
                bridge=None, qemu_args=[])
    return run_opts(**dict(base, **kw))


def test_the_socket_implies_vhost_user_and_its_own_backend():
    o = opts()
    ownvhost.resolve(o)
    assert implied(o, []) == implied(o, ["vhost-user"]) == "vhost-user"
    be = make("vhost-user", o)
    assert type(be) is ownvhost.OwnVhostUser and be.needs_shared_mem
    assert be.qemu_extra(0) == ["-chardev", "socket,id=vu0,path=/tmp/x.sock"]
    nic = be.nics(0)[0]
    assert nic.netdev == "vhost-user,chardev=vu0" and nic.props["vectors"] == 0
    server = make("vhost-user", opts(vhost_user_server=True, vhost_user_socket="/a,b"))
    assert server.qemu_extra(0) == ["-chardev", "socket,id=vu0,path=/a,,b,server=on,wait=off"]


def test_identity_names_your_backend_not_testpmd():
    o = opts(backend="vhost-user", host_count=hostcount.parse("ovs:vhu1"), image="/nonexistent",
             vhost_user_server=True)
    ident = identity.of_run(o, ["app=gen"], "tcg", "rxonly")
    assert (ident["vhost_user_socket"], ident["vhost_user_qemu"], ident["host_count"]) == (
        "/tmp/x.sock", "server", "ovs:vhu1")
    assert ident["fwd_mode"] == "-" and ident["backend_version"] == "yours"


@pytest.mark.parametrize("kw,needle", [
    ({"fwd_mode": "io"}, "--fwd-mode configures the runner's own testpmd"),
    ({"pmd_burst": 4}, "--pmd-burst configures"),
    ({"feeder": "testpmd"}, "--feeder configures"),
    ({"testpmd": "next"}, "--testpmd configures the runner's own testpmd"),
    ({"topology": "guests"}, "--topology guests"),
    ({"app": "rr"}, "app rr needs an rr server"),
    ({"app": "iperf"}, "app iperf needs the host's iperf"),
    ({"app": "sink", "rate": "10k"}, "--rate paces the runner's feeder"),
    ({"vhost_user_socket": None, "vhost_user_server": True}, "--vhost-user-server: with"),
    ({"vhost_user_socket": None, "host_count": hostcount.parse("iface:x")},
     "--host-count iface:x: with --vhost-user-socket"),
])
def test_refusals_are_usage(kw, needle):
    with pytest.raises(RunnerError) as e:
        ownvhost.resolve(opts(**kw))
    assert e.value.status == exitcodes.RUNNER_USAGE and needle in e.value.line


@pytest.mark.parametrize("kw,named,needle", [
    ({}, ["dgram"], "--vhost-user-socket and --backend dgram: it is the vhost-user backend"),
    ({"tap": "tap0"}, [], "--vhost-user-socket and --tap: the guest takes one NIC"),
    ({"qemu_args": ["-device", "virtio-net-pci,netdev=x"]}, [], "and a virtio-net -device"),
])
def test_another_backend_or_nic_contradicts_the_socket(kw, named, needle):
    with pytest.raises(RunnerError) as e:
        implied(opts(**kw), named)
    assert e.value.status == exitcodes.RUNNER_USAGE and needle in e.value.line


@pytest.mark.parametrize("kw", [{}, {"app": "sink"}, {"app": "reflect"}, {"app": "gen",
                                                                         "rate": "10k"},
                                {"backend": "vhost-user"}, {"app": "selftest"}])
def test_apps_without_a_runner_peer_pass(kw):
    ownvhost.resolve(opts(**kw))


@pytest.fixture
def sockets(tmp_path):
    """A socket nobody listens on (bound, never listening) and one that
    listens."""
    dead, live = str(tmp_path / "dead.sock"), str(tmp_path / "live.sock")
    a = socket.socket(socket.AF_UNIX)
    a.bind(dead)
    b = socket.socket(socket.AF_UNIX)
    b.bind(live)
    b.listen(4)
    yield dead, live
    a.close()
    b.close()


def test_socket_facts(tmp_path, sockets):
    dead, live = sockets
    facts = dict(ownvhost.socket_facts(live, False))
    assert facts == {"exists": None, "is a socket": None, "accepts": None, "permissions": None}
    assert "no such socket" in dict(ownvhost.socket_facts(str(tmp_path / "no"), False))["exists"]
    assert "not a socket (a directory)" in dict(ownvhost.socket_facts(str(tmp_path),
                                                                      False))["is a socket"]
    assert "nobody accepts" in dict(ownvhost.socket_facts(dead, False))["accepts"]
    # QEMU as server: a free path or a dead socket will do; a live one is busy.
    assert not any(w for _, w in ownvhost.socket_facts(str(tmp_path / "new.sock"), True))
    assert not any(w for _, w in ownvhost.socket_facts(dead, True))
    assert "busy" in dict(ownvhost.socket_facts(live, True))["free for QEMU"]


@pytest.mark.parametrize("which,server,needle", [
    ("absent", False, "no such socket"), ("dead", False, "nobody accepts"),
    ("live", True, "busy"), ("file", False, "is not a socket")])
def test_run_refuses_an_unusable_socket_in_one_line_67(tmp_path, sockets, which, server,
                                                        needle):
    dead, live = sockets
    path = {"absent": str(tmp_path / "absent.sock"), "dead": dead, "live": live,
            "file": standin_image(tmp_path)}[which]
    r = run_vnperf(["run", "--image", standin_image(tmp_path), "--vhost-user-socket", path]
                   + (["--vhost-user-server"] if server else []))
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING, r.stderr
    assert r.stderr.count("\n") == 1 and needle in r.stderr and not r.stdout


def test_sweep_refuses_a_contradicting_backend_axis(tmp_path):
    r = run_vnperf(["sweep", "--image", standin_image(tmp_path), "--size", "64",
                    "--vhost-user-socket", "/tmp/x.sock", "--backend", "dgram,vhost-user"])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.count("\n") == 1 and "--vhost-user-socket and --backend dgram:" in r.stderr


@pytest.mark.parametrize("cmd", [["ndr"], ["sweep", "--search", "ndr", "--size", "64"]])
def test_no_throughput_search_over_your_own_backend(tmp_path, cmd):
    r = run_vnperf(cmd + ["--image", standin_image(tmp_path), "--vhost-user-socket", "/x.sock"])
    assert r.returncode == exitcodes.RUNNER_USAGE
    assert r.stderr.count("\n") == 1 and "no throughput search" in r.stderr


def test_server_mode_ends_the_run_when_nobody_connects(monkeypatch, tmp_path):
    be = make("vhost-user", opts(vhost_user_server=True,
                                 vhost_user_socket=str(tmp_path / "q.sock")))
    be.t_start = 0.0
    monkeypatch.setattr(ownvhost, "_connected", lambda path: False)
    assert "no backend connected to" in be.healthy()
    monkeypatch.setattr(ownvhost, "_connected", lambda path: True)
    assert be.healthy() is None and be.linked


def test_a_connection_shows_in_proc_net_unix(tmp_path):
    """The listener alone is not a connection; one pending (QEMU blocked
    before accepting it) and one accepted are."""
    path = str(tmp_path / "l.sock")
    with socket.socket(socket.AF_UNIX) as lis, socket.socket(socket.AF_UNIX) as c:
        lis.bind(path)
        lis.listen(1)
        assert not ownvhost._connected(path)
        c.connect(path)
        assert ownvhost._connected(path)
        with lis.accept()[0]:
            assert ownvhost._connected(path)


def test_your_backend_may_send_after_the_app_stopped(monkeypatch):
    """Up to a ring's worth in the guest's RX ring is located, not a
    disagreement; without a host count, nothing is said."""
    be = make("vhost-user", opts(host_count=hostcount.parse("testpmd:0")))
    be.count = Fake("testpmd:0", [snap(0, 0), snap(0, 2000)])
    be.count.base()
    assert be.collect()["sender_outlives_guest"] is True
    assert make("vhost-user", opts()).collect() == {}


def test_doctor_rows_one_line_each(tmp_path, sockets):
    dead, live = sockets
    o = run_opts(vhost_user_socket=live, vhost_user_server=False,
                 host_count=hostcount.parse("iface:lo"))
    rows = dict(doctor.vhost_user_rows(o))
    assert rows == {"vhost-user socket exists": "yes", "vhost-user socket is a socket": "yes",
                    "vhost-user socket accepts": "yes", "vhost-user socket permissions": "yes",
                    "host count": "iface:lo: readable"}
    o = run_opts(vhost_user_socket=dead, vhost_user_server=False,
                 host_count=hostcount.parse("iface:vnnosuch0"))
    rows = dict(doctor.vhost_user_rows(o))
    assert rows["vhost-user socket accepts"].startswith("no: ")
    assert rows["host count"].startswith("no: --host-count iface:vnnosuch0: no interface")
    assert all("\n" not in v for v in rows.values())
