"""netif_vlan= (issue 29): lwIP's frames tagged with a VLAN id, the host
end matched. The runner's wiring over tap and vhost-net (a VLAN interface
TAP.ID on the namespace tap carries the host's addresses, tap itself left
unaddressed; the word reaches the guest; the interface's own counts in the
host result) and the one-line refusals (status 64, before anything
starts) of what cannot be matched; a host kernel without 802.1Q
interfaces said in one line."""

import platform
import subprocess
import time

import pytest

from test_queues_runner import runner_argv
from test_support import load_cli
from vnperflib import errors, exitcodes, options
from vnperflib.backends import netns, tap
from vnperflib.run import vlan


def built(**kw):
    return options.build(**dict({"image": "/nonexistent/vnperf.elf"}, **kw))


@pytest.fixture
def ip_calls(monkeypatch):
    """Every `ip` and sysctl the backend would run, none run; the links
    answer with counters that grow by 10 frames between reads."""
    calls = []
    reads = {}

    def link(ns, dev):
        n = reads[dev] = reads.get(dev, -1) + 1
        return "02:00:00:00:00:01", {"rx": {"packets": 10 * n, "bytes": 1000 * n},
                                     "tx": {"packets": 7 * n, "bytes": 700 * n}}
    monkeypatch.setattr(netns, "ip", lambda *a: calls.append(" ".join(("ip",) + a)) or "")
    monkeypatch.setattr(netns, "run_quiet", lambda argv: calls.append(" ".join(argv)) or (0, ""))
    monkeypatch.setattr(netns, "create", lambda session: "ns1")
    monkeypatch.setattr(netns, "link", link)
    monkeypatch.setattr(tap.Tap, "start_host_end", lambda self, s, g, bind=None: None)
    return calls


@pytest.mark.parametrize("backend", ["tap", "vhost-net"])
def test_the_host_end_speaks_tagged_on_a_vlan_interface(backend, ip_calls):
    o = built(backend=backend, machine="q35", app="iperf", config=["netif_vlan=100"])
    be = (tap.Tap if backend == "tap" else tap.VhostNet)(o)
    be.start(session=None)
    assert "ip -n ns1 link add link vntap0 name vntap0.100 type vlan id 100" in ip_calls
    assert "ip -n ns1 link set vntap0 up" in ip_calls
    assert "ip -n ns1 addr add 10.0.0.1/24 dev vntap0.100" in ip_calls, ip_calls
    assert any(c.startswith("ip -n ns1 neigh replace 10.0.0.2 lladdr ") and
               c.endswith(" dev vntap0.100 nud permanent") for c in ip_calls), ip_calls
    # the tap itself has no address: nothing of the host end is untagged
    assert not any("addr add" in c and c.endswith("dev vntap0") for c in ip_calls), ip_calls
    # the word reaches the guest as given
    cfg = runner_argv(o, be)
    assert "netif_vlan=100" in cfg[cfg.index("-fw_cfg") + 1].split()
    got = be.collect()["vlan"]
    assert got == {"dev": "vntap0.100", "id": 100, "rx_frames": 10, "rx_bytes": 1000,
                   "tx_frames": 7, "tx_bytes": 700}, got
    # without the word: the tap as before, no VLAN interface, no counts
    del ip_calls[:]
    plain = (tap.Tap if backend == "tap" else tap.VhostNet)(
        built(backend=backend, machine="q35", app="iperf"))
    plain.start(session=None)
    assert not any("type vlan" in c for c in ip_calls), ip_calls
    assert "ip -n ns1 addr add 10.0.0.1/24 dev vntap0" in ip_calls, ip_calls
    assert "vlan" not in plain.collect()


def test_ipv6_goes_on_the_vlan_interface_too(ip_calls):
    o = built(backend="tap", machine="q35", app="rr", ip6=True, config=["netif_vlan=7"])
    tap.Tap(o).start(session=None)
    # sysctl's name of vntap0.7 (its separator is the dot)
    assert any("net.ipv6.conf.vntap0/7.disable_ipv6=0" in c for c in ip_calls), ip_calls
    assert "ip -n ns1 addr add fd00:766e::1/64 dev vntap0.7 nodad" in ip_calls, ip_calls


def test_a_kernel_without_8021q_is_told_apart(tmp_path):
    assert vlan.kernel_refusal(proc_vlan=str(tmp_path)) is None  # 8021q loaded
    none = str(tmp_path / "none")
    why = vlan.kernel_refusal(proc_vlan=none, modules=none)
    assert "no 802.1Q VLAN interfaces (CONFIG_VLAN_8021Q" in why, why
    dep = tmp_path / "mods" / platform.release() / "modules.dep"
    dep.parent.mkdir(parents=True)
    dep.write_text("kernel/net/8021q/8021q.ko.xz: kernel/net/802/garp.ko.xz\n")
    assert vlan.kernel_refusal(proc_vlan=none, modules=str(tmp_path / "mods")) is None


def test_the_word_is_read_from_the_config_line():
    assert vlan.vid(built(backend="tap", app="iperf", config=["netif_vlan=6"])) == 6
    assert vlan.vid(built(backend="tap", app="iperf")) is None


def test_a_service_tag_between_two_guests_is_taken():
    from vnperflib import topologies
    o = built(backend="dgram", topology="guests", app="rr",
              config=["netif_vlan=100", "netif_svlan=200"])
    assert vlan.refusal(o, "rr", topologies.topology_for(o)) is None


@pytest.mark.parametrize("argv,why", [
    (["--backend", "tap", "--app", "iperf", "--", "netif_vlan=4095"],
     "netif_vlan=4095: a VLAN id is 1..4094"),
    (["--backend", "tap", "--app", "iperf", "--", "netif_vlan=0"], "a VLAN id is 1..4094"),
    (["--backend", "tap", "--app", "iperf", "--", "netif_vlan=x"], "a VLAN id is 1..4094"),
    # a digit to str.isdigit() but not to int(): a traceback before
    (["--backend", "tap", "--app", "iperf", "--", "netif_vlan=\u00b2"],
     "netif_vlan=\u00b2: a VLAN id is 1..4094"),
    (["--backend", "tap", "--app", "gen", "--", "netif_vlan=100"],
     "app iperf or rr only (app gen builds its own frames"),
    (["--backend", "user", "--app", "iperf", "--", "netif_vlan=100"],
     "the host end of user cannot match the tag: QEMU's slirp takes untagged frames only"),
    (["--backend", "passt", "--app", "iperf", "--", "netif_vlan=100"],
     "passt takes untagged frames only"),
    (["--backend", "dgram", "--app", "rr", "--", "netif_vlan=100"],
     "the host peer answers untagged frames only"),
    (["--tap", "vnnosuch0", "--app", "iperf", "--", "netif_vlan=100"],
     "no VLAN interface on your own tap"),
    (["--backend", "tap", "--app", "rr", "--", "netif_vlan=100", "netif_svlan=200"],
     "netif_svlan=: the runner matches a service tag between two guests only"),
    (["--topology", "guests", "--backend", "dgram", "--app", "rr", "--", "netif_svlan=200"],
     "netif_svlan= puts a service tag outside netif_vlan='s: give netif_vlan= too"),
    (["--topology", "guests", "--backend", "dgram", "--app", "rr", "--", "netif_vlan=100",
      "netif_svlan=4095"], "netif_svlan=4095: a VLAN id is 1..4094"),
    (["--topology", "guests", "--backend", "dgram", "--app", "rr", "--", "netif_vlan=100",
      "netif_svlan=0"], "netif_svlan=0: a VLAN id is 1..4094"),
    (["--topology", "guests", "--backend", "dgram", "--app", "rr", "--", "netif_vlan=100",
      "netif_svlan=\u00b2"], "netif_svlan=\u00b2: a VLAN id is 1..4094"),
])
def test_what_cannot_be_matched_is_refused_before_anything_starts(argv, why, monkeypatch,
                                                                  capsys, tmp_path):
    cli = load_cli()
    started = []

    def no_child(self, *a, **kw):
        started.append(a[0] if a else kw.get("args"))
        raise AssertionError("a refused run started %r" % (started[-1],))

    monkeypatch.setattr(subprocess.Popen, "__init__", no_child)
    t0 = time.monotonic()
    status = cli.main(["run", "--machine", "q35", "--image", str(tmp_path / "none.elf")] + argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == exitcodes.RUNNER_USAGE, (argv, err)
    assert len(err) == 1 and why in err[0], (argv, err)
    assert time.monotonic() - t0 < 1.0 and started == []


def test_tap_says_a_kernel_without_8021q_before_boot(monkeypatch):
    monkeypatch.setattr(tap.os, "geteuid", lambda: 0)
    monkeypatch.setattr(tap.os.path, "exists", lambda p: True)
    monkeypatch.setattr(vlan, "kernel_refusal", lambda: "netif_vlan=: no 802.1Q here")
    tap.Tap(built(backend="tap", app="iperf")).check()  # without the word: as before
    with pytest.raises(errors.RunnerError) as e:
        tap.Tap(built(backend="tap", app="iperf", config=["netif_vlan=100"])).check()
    assert e.value.status == exitcodes.RUNNER_BACKEND_MISSING
    assert str(e.value) == "tap: netif_vlan=: no 802.1Q here"
