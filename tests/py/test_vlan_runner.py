"""netif_vlan= (issue 29): lwIP's frames tagged with a VLAN id, the host
end matched. The runner's wiring over tap and vhost-net (a VLAN interface
TAP.ID on the namespace tap carries the host's addresses, tap itself left
unaddressed; the word reaches the guest; the interface's own counts in the
host result), and where the kernel has no 802.1Q interfaces the tc-bpf end
(the program built with the run's tags, attached to the tap, which carries
the addresses; its counts in the host result); which end is used and why
(choose_end), and the one-line refusals (status 64, before anything
starts) of what cannot be matched."""

import platform
import subprocess
import time

import pytest

from test_queues_runner import runner_argv
from test_support import load_cli
from vnperflib import errors, exitcodes, options
from vnperflib.backends import netns, tap, vlantc
from vnperflib.run import scratch, vlan


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
    monkeypatch.setattr(vlan, "kernel_refusal", lambda: None)  # 8021q: VLAN interfaces
    return calls


@pytest.fixture
def tc_calls(ip_calls, monkeypatch, tmp_path):
    """ip_calls on a kernel without 8021q: the tc-bpf end's build and
    attach recorded, not run; its programs' counts fixed."""
    monkeypatch.setattr(vlan, "kernel_refusal", lambda: "netif_vlan=: no 802.1Q here")
    monkeypatch.setattr(vlantc, "refusal", lambda: None)
    monkeypatch.setattr(scratch, "mkdtemp", lambda session, what: str(tmp_path))
    monkeypatch.setattr(vlantc, "build", lambda d, *tags: ip_calls.append(
        "build %s %r" % (d, tags)) or d + "/vlan_tc.o")
    monkeypatch.setattr(vlantc, "attach", lambda ns, dev, obj: ip_calls.append(
        "attach %s %s %s" % (ns, dev, obj)))
    reads = []

    def counts(ns, dev):
        n = len(reads) + 1  # 1 at the tap's base, 2 at the end
        reads.append(dev)
        return {"rx_passed": {"frames": 40 * n, "bytes": 4000 * n},
                "rx_other": {"frames": 2 * n, "bytes": 120 * n},
                "rx_untagged": {"frames": n, "bytes": 60 * n},
                "tx_tagged": {"frames": 30 * n, "bytes": 3000 * n},
                "failed": {"frames": 0, "bytes": 0}}
    monkeypatch.setattr(vlantc, "counts", counts)
    return ip_calls


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
    assert got == {"host_end": "interface", "dev": "vntap0.100", "id": 100, "rx_frames": 10,
                   "rx_bytes": 1000, "tx_frames": 7, "tx_bytes": 700}, got
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


def test_qinq_over_tap_stacks_an_802_1q_interface_on_an_802_1ad_one(ip_calls):
    o = built(backend="tap", machine="q35", app="rr",
              config=["netif_vlan=100", "netif_svlan=4094"])
    be = tap.Tap(o)
    be.start(session=None)
    assert "ip -n ns1 link add link vntap0 name vntap0.4094 type vlan proto 802.1ad id 4094" \
        in ip_calls, ip_calls
    assert "ip -n ns1 link add link vntap0.4094 name vnq4094.100 type vlan id 100" in ip_calls
    assert "ip -n ns1 addr add 10.0.0.1/24 dev vnq4094.100" in ip_calls, ip_calls
    got = be.collect()["vlan"]
    assert (got["host_end"], got["dev"], got["id"], got["svid"]) == (
        "interface", "vnq4094.100", 100, 4094), got


@pytest.mark.parametrize("words,tags", [
    (["netif_vlan=100"], (100, None, None)),
    (["netif_vlan=100", "netif_svlan=200", "netif_pcp=3"], (100, 200, 3)),
])
def test_without_8021q_the_tap_gets_the_tc_bpf_end(words, tags, tc_calls, tmp_path):
    o = built(backend="tap", machine="q35", app="iperf", config=words)
    be = tap.Tap(o)
    be.start(session=None)
    # built with the run's tags, attached to the tap before it is up
    assert tc_calls[0].startswith("ip -n ns1 tuntap add dev vntap0"), tc_calls
    assert tc_calls[1:3] == ["build %s %r" % (tmp_path, tags),
                             "attach ns1 vntap0 %s/vlan_tc.o" % tmp_path], tc_calls
    assert not any("type vlan" in c for c in tc_calls), tc_calls
    # the tap itself carries the host's addresses
    assert "ip -n ns1 addr add 10.0.0.1/24 dev vntap0" in tc_calls, tc_calls
    assert be.notes() == ["tap: netif_vlan=: host end: a tc-bpf program on the tap pops and "
                          "pushes the tags (this host's kernel has no 802.1Q VLAN interfaces, "
                          "CONFIG_VLAN_8021Q)"]
    got = be.collect()["vlan"]
    want = {"host_end": "tc-bpf", "dev": "vntap0", "id": 100, "rx_frames": 40, "rx_bytes": 4000,
            "tx_frames": 30, "tx_bytes": 3000, "rx_other_tags": 2, "rx_untagged": 1,
            "failed": 0}
    if tags[1]:
        want["svid"] = tags[1]
    assert got == want, got


def test_the_tc_bpf_end_when_asked_even_with_8021q(tc_calls, monkeypatch):
    monkeypatch.setattr(vlan, "kernel_refusal", lambda: None)
    be = tap.Tap(built(backend="vhost-net", machine="q35", app="rr", vlan_end="tc-bpf",
                       config=["netif_vlan=5"]))
    be.start(session=None)
    assert any(c.startswith("attach ns1 vntap0 ") for c in tc_calls), tc_calls
    assert be.notes()[-1].endswith("pops and pushes the tags (--vlan-end tc-bpf)"), be.notes()


KERNEL = "netif_vlan=: no 802.1Q here"


@pytest.mark.parametrize("asked,kernel,bpf,end,line", [
    ("auto", None, None, "interface", "host end: VLAN interfaces on the tap (the kernel's 8021q)"),
    ("auto", None, "no clang", "interface", "VLAN interfaces on the tap"),
    ("auto", KERNEL, None, "tc-bpf", "a tc-bpf program on the tap pops and pushes the tags "
     "(this host's kernel has no 802.1Q VLAN interfaces"),
    ("auto", KERNEL, "no clang (Debian clang)",
     None, KERNEL + "; nor can the runner use its tc-bpf end: no clang (Debian clang)"),
    ("interface", KERNEL, None, None, KERNEL),
    ("interface", None, "no clang", "interface", "VLAN interfaces on the tap"),
    ("tc-bpf", None, None, "tc-bpf", "(--vlan-end tc-bpf)"),
    ("tc-bpf", None, "no tc (Debian iproute2)",
     None, "--vlan-end tc-bpf: cannot build the tc program: no tc (Debian iproute2)"),
])
def test_the_host_end_chosen_and_said_in_one_line(asked, kernel, bpf, end, line):
    got, said = vlan.choose_end(asked, kernel, bpf)
    assert got == end and line in said and "\n" not in said, (got, said)


def test_the_programs_tags_are_its_constants():
    assert vlantc.cflags(100) == ["-DVT_VID=100", "-DVT_SVID=0", "-DVT_PCP=0"]
    assert vlantc.cflags(7, 4094, 7) == ["-DVT_VID=7", "-DVT_SVID=4094", "-DVT_PCP=7"]


def test_the_programs_counts_decoded_by_slot():
    import struct
    ing = [struct.pack("=QQ", 10 * i + 1, 100 * i + 1) for i in range(len(vlantc.SLOTS))]
    egr = [struct.pack("=QQ", 10 * i + 2, 100 * i + 2) for i in range(len(vlantc.SLOTS))]
    got = vlantc.decode(ing, egr)
    assert got == {"rx_passed": {"frames": 1, "bytes": 1}, "rx_other": {"frames": 11, "bytes": 101},
                   "rx_untagged": {"frames": 21, "bytes": 201},
                   "tx_tagged": {"frames": 32, "bytes": 302},
                   "failed": {"frames": 41 + 42, "bytes": 401 + 402}}, got


@pytest.mark.skipif(vlantc.refusal() is not None, reason="needs clang and libbpf-dev")
@pytest.mark.parametrize("tags", [(100, None, None), (100, 200, 3), (4094, 4094, 7)])
def test_the_program_builds_for_each_set_of_tags(tags, tmp_path):
    obj = vlantc.build(str(tmp_path), *tags)
    out = subprocess.run(["llvm-objdump", "-h", obj], stdout=subprocess.PIPE, text=True).stdout
    for sec in ("vlan_ingress", "vlan_egress", ".maps"):
        assert sec in out, out


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


@pytest.mark.parametrize("backend,topology", [("dgram", "guests"), ("tap", "host"),
                                              ("vhost-net", "host")])
def test_a_service_tag_between_two_guests_or_over_tap_is_taken(backend, topology):
    from vnperflib import topologies
    o = built(backend=backend, topology=topology, app="rr",
              config=["netif_vlan=100", "netif_svlan=200", "netif_pcp=7"])
    assert vlan.refusal(o, "rr", topologies.topology_for(o)) is None
    assert (vlan.vid(o), vlan.svid(o), vlan.pcp(o)) == (100, 200, 7)


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
    (["--tap", "vnnosuch0", "--app", "rr", "--", "netif_vlan=100", "netif_svlan=200"],
     "no VLAN interface on your own tap"),
    (["--backend", "tap", "--app", "rr", "--", "netif_vlan=100", "netif_pcp=8"],
     "netif_pcp=8: a priority is 0..7"),
    (["--backend", "tap", "--app", "rr", "--", "netif_vlan=100", "netif_pcp=\u00b3"],
     "netif_pcp=\u00b3: a priority is 0..7"),
    (["--backend", "tap", "--app", "rr", "--vlan-end", "tc-bpf"],
     "--vlan-end tc-bpf: chooses the host end of netif_vlan=: give it"),
    (["--topology", "guests", "--backend", "dgram", "--app", "rr", "--vlan-end", "interface",
      "--", "netif_vlan=100"], "--vlan-end interface: between two guests there is no host end"),
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


def test_tap_says_a_kernel_without_8021q_nor_tc_bpf_before_boot(monkeypatch):
    monkeypatch.setattr(tap.os, "geteuid", lambda: 0)
    monkeypatch.setattr(tap.os.path, "exists", lambda p: True)
    monkeypatch.setattr(vlan, "kernel_refusal", lambda: "netif_vlan=: no 802.1Q here")
    monkeypatch.setattr(vlantc, "refusal", lambda: "no clang (Debian clang)")
    tap.Tap(built(backend="tap", app="iperf")).check()  # without the word: as before
    with pytest.raises(errors.RunnerError) as e:
        tap.Tap(built(backend="tap", app="iperf", config=["netif_vlan=100"])).check()
    assert e.value.status == exitcodes.RUNNER_BACKEND_MISSING
    assert str(e.value) == "tap: netif_vlan=: no 802.1Q here; nor can the runner use its " \
        "tc-bpf end: no clang (Debian clang)"
