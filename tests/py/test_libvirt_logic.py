"""The libvirt engine's pure parts (no daemon, no QEMU): domain XML from the
runner's options and backends, refusals of what libvirt 9 cannot express,
--engine parsing, a fleet's plan (addresses, wires, config words), and the
copies of what a domain's QEMU opens, staged where its user can read them."""

import grp
import os
import pwd
import shutil
import stat
import tempfile
import types
import xml.etree.ElementTree as ET

import pytest

import vnpy
from vnperflib.campaign import compare
from vnperflib.run import domxml, engine, engine_libvirt, libvirtconn, libvirtstage, proc, qemucmd
from vnperflib.fleet import fleet, fleetreport, fleetspec
from vnperflib.report import resultsdir
from vnperflib.errors import RunnerError

Q = "{%s}" % domxml.QEMU_NS
DGRAM = ("dgram,local.type=inet,local.host=127.0.0.1,local.port=5000,"
         "remote.type=inet,remote.host=127.0.0.1,remote.port=5001")


def spec(**kw):
    args = dict(machine="q35", config=["app=gen", "dst_ip=10.0.2.2"])
    args.update(kw)
    return qemucmd.GuestSpec("/img/vnperf.elf", **args)


def dom(s, ifaces=(), console=("file", "/tmp/c"), **kw):
    return ET.fromstring(domxml.Domain(s, "vnperf-1-1-x", list(ifaces), console, **kw).xml())


def test_pvh_domain_has_kernel_config_console_and_debug_exit():
    d = dom(spec())
    assert d.get("type") == "qemu"
    assert d.find("os/type").get("machine") == "q35"
    assert d.find("os/kernel").text == "/img/vnperf.elf"
    assert d.find("devices/serial[@type='file']/source").get("path") == "/tmp/c"
    assert [a.get("value") for a in d.findall(Q + "commandline/" + Q + "arg")] == [
        "-device", qemucmd.DEBUG_EXIT,
        "-fw_cfg", "name=opt/vnperf/config,string=app=gen dst_ip=10.0.2.2"]
    assert [d.find(x).text for x in ("on_poweroff", "on_reboot", "on_crash")] == ["destroy"] * 3
    assert d.find("memory").text == "128" and d.find("memory").get("unit") == "MiB"
    assert d.find("devices/memballoon").get("model") == "none"


def test_config_commas_and_files_reach_the_guest_as_qemu_would_get_them():
    """A comma inside a config word (flows=a,b) and the stream file's
    fw_cfg entry: the domain passes them exactly as the qemu engine does
    (libvirt's sysinfo fwcfg passed the comma unescaped and dropped files)."""
    s = spec(config=["app=gen", "flows=2,3"], files=(("opt/vnperf/streams", "s 0 a,b\n"),))
    d = dom(s)
    args = [a.get("value") for a in d.findall(Q + "commandline/" + Q + "arg")]
    assert args[2:] == qemucmd.fwcfg_args(s) == [
        "-fw_cfg", "name=opt/vnperf/config,string=app=gen flows=2,,3",
        "-fw_cfg", "name=opt/vnperf/streams,string=s 0 a,,b\n"]
    assert d.find("sysinfo") is None


def test_pty_console_kvm_and_extra_qemu_args():
    d = dom(spec(accel="kvm"), console=("pty",), qemu_args=["-S"])
    assert d.get("type") == "kvm"
    assert d.find("cpu").get("mode") == "host-passthrough"
    assert d.find("devices/serial").get("type") == "pty"
    assert d.find("devices/console/target").get("type") == "serial"
    assert [a.get("value") for a in d.findall(Q + "commandline/" + Q + "arg")][-1] == "-S"


def test_uefi_boots_ovmf_with_the_esp_read_only():
    d = dom(spec(boot="uefi", esp="/img/esp.img"))
    assert d.find("os/kernel") is None
    assert d.find("os/loader").text == qemucmd.DEFAULT_OVMF
    disk = d.find("devices/disk")
    assert disk.find("source").get("file") == "/img/esp.img"
    assert disk.find("readonly") is not None


def test_dgram_and_socket_become_udp_interfaces():
    for nd in (DGRAM, "socket,udp=127.0.0.1:5001,localaddr=127.0.0.1:5000"):
        nic = qemucmd.Nic(nd, "52:54:00:00:00:01", {"event_idx": "off", "rx_queue_size": 512,
                                                     "tx_queue_size": 512})
        i = dom(spec(), [domxml.iface_from_nic(nic, {})]).find("devices/interface")
        assert i.get("type") == "udp"
        assert (i.find("source").get("address"), i.find("source").get("port")) == (
            "127.0.0.1", "5001")
        assert i.find("source/local").get("port") == "5000"
        assert i.find("mac").get("address") == "52:54:00:00:00:01"
        assert i.find("model").get("type") == "virtio"
        assert i.find("driver").attrib == {"event_idx": "off", "rx_queue_size": "512",
                                           "tx_queue_size": "512"}
        assert i.find("alias").get("name") == "ua-net0"


def test_vhost_user_gets_its_socket_shared_memory_and_no_msix():
    chardevs, rest = domxml.split_extra(["-chardev", "socket,id=vu0,path=/run/x.sock", "-S"])
    assert (chardevs, rest) == ({"vu0": "/run/x.sock"}, ["-S"])
    nic = qemucmd.Nic("vhost-user,chardev=vu0", "52:54:00:00:00:01", {"vectors": 0})
    d = dom(spec(shared_mem=True), [domxml.iface_from_nic(nic, chardevs)])
    i = d.find("devices/interface")
    assert i.get("type") == "vhostuser"
    assert i.find("source").attrib == {"type": "unix", "path": "/run/x.sock", "mode": "client"}
    assert d.find("memoryBacking/source").get("type") == "memfd"
    assert d.find("memoryBacking/access").get("mode") == "shared"
    p = d.find(Q + "override/" + Q + "device[@alias='ua-net0']/" + Q + "frontend/" + Q
               + "property")
    assert p.attrib == {"name": "vectors", "type": "unsigned", "value": "0"}


@pytest.mark.parametrize("netdev,why", [
    ("hubport,hubid=0", "QEMU's hub is not a libvirt interface"),
    ("user,restrict=on,net=10.0.2.0/24", "no restrict=on"),
    ("stream,server=off,addr.type=unix,addr.path=/x", "starts passt itself"),
    ("tap,ifname=vntap0,script=no,downscript=no", "network namespace"),
    ("vhost-user,chardev=nope", "not one libvirt maps"),
])
def test_netdevs_libvirt_cannot_express_are_refused(netdev, why):
    with pytest.raises(RunnerError) as e:
        domxml.iface_from_nic(qemucmd.Nic(netdev, "52:54:00:00:00:01"), {})
    assert e.value.status == 64 and why in e.value.line


def test_unknown_device_property_and_microvm_are_refused():
    with pytest.raises(RunnerError, match="property speed has no libvirt equivalent"):
        domxml.Iface("udp", "52:54:00:00:00:01", {"speed": 100}, local=("a", 1),
                     remote=("b", 2))
    with pytest.raises(RunnerError, match="microvm has no PCI bus"):
        domxml.Domain(spec(machine="microvm"), "n", [], ("pty",))


@pytest.mark.parametrize("pins,vcpu,emu", [
    ({"vcpu": {0}, "main": {1}}, "0", "1"),
    ({"qemu": {0, 1}}, "0,1", "0,1"),
    ({"qemu": {0, 1}, "vcpu": {1}}, "1", "0,1"),
    ({"main": {0}}, None, "0"),
])
def test_pinning_becomes_cputune(pins, vcpu, emu):
    ct = dom(spec(), pins=pins).find("cputune")
    got_v = ct.find("vcpupin")
    assert (got_v.get("cpuset") if got_v is not None else None) == vcpu
    assert ct.find("emulatorpin").get("cpuset") == emu
    assert dom(spec()).find("cputune") is None


def test_fleet_interfaces():
    mac = "52:54:00:00:00:09"
    cases = {
        domxml.Iface("network", mac, name="default"): ("network", {"network": "default"}),
        domxml.Iface("bridge", mac, name="br0"): ("bridge", {"bridge": "br0"}),
        domxml.Iface("vhostuser", mac, path="/s0", mode="client"): (
            "vhostuser", {"type": "unix", "path": "/s0", "mode": "client"}),
    }
    for iface, (kind, src) in cases.items():
        e = iface.element()
        assert e.get("type") == kind and e.find("source").attrib == src
    e = domxml.Iface("ethernet", mac, dev="vnt0").element()
    assert e.find("target").attrib == {"dev": "vnt0", "managed": "yes"}
    e = domxml.Iface("passt", mac, ip=("10.0.2.15", 24), forwards=[("udp", 40000, 9000)]).element()
    assert e.get("type") == "user" and e.find("backend").get("type") == "passt"
    assert e.find("ip").attrib == {"family": "ipv4", "address": "10.0.2.15", "prefix": "24"}
    assert e.find("portForward").get("proto") == "udp"
    assert e.find("portForward/range").attrib == {"start": "40000", "to": "9000"}


def test_engine_parse_and_remote_uris():
    assert engine.parse(None) == ("qemu", None)
    assert engine.parse("libvirt") == ("libvirt", None)
    assert engine.parse("libvirt=qemu+ssh://h/system") == ("libvirt", "qemu+ssh://h/system")
    for bad, why in (("xen", "one of qemu, libvirt"), ("qemu=x", "takes no URI"),
                     ("libvirt=", "URI is empty")):
        with pytest.raises(RunnerError, match=why):
            engine.parse(bad)
    assert libvirtconn.is_remote("qemu+ssh://host/system")
    assert libvirtconn.is_remote("qemu+tcp://10.0.0.2/system")
    assert not libvirtconn.is_remote("qemu:///system")
    assert not libvirtconn.is_remote("qemu+unix:///system?socket=/run/x")


def test_domain_names_carry_tag_and_pid(monkeypatch):
    monkeypatch.setenv("VNPERF_TEST_TAG", "abc123")
    a, b = libvirtconn.domain_name("tx 0/x"), libvirtconn.domain_name("tx")
    assert a.startswith("vnperf-abc123-%d-" % __import__("os").getpid())
    assert a != b and " " not in a and "/" not in a
    m = libvirtconn.STALE_RE.match(a)
    assert m and int(m.group(1)) == __import__("os").getpid()


def test_stale_logs_of_dead_runners_are_removed(tmp_path):
    class Conn:
        class conn:
            @staticmethod
            def listAllDomains(flags):
                return []
    dead = 2 ** 22 + 12345  # above pid_max: no such process
    me = __import__("os").getpid()
    names = ["vnperf-%d-1-a.log" % dead, "vnperf-abc123-%d-2-b.log" % dead,
             "vnperf-%d-1-mine.log" % me, "other.log", "vnperf-x.log"]
    for n in names:
        (tmp_path / n).write_text("x")
    assert libvirtconn.destroy_stale(Conn, str(tmp_path)) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[2:])


@pytest.mark.parametrize("args,why", [
    (["--machine", "microvm"], "microvm has no PCI bus"),
    (["--backend", "hub"], "backend hub: QEMU's hub is not a libvirt interface"),
    (["--backend", "tap"], "backend tap: the runner's tap lives in a network namespace"),
    (["--console", "file", "--engine", "libvirt=qemu+ssh://h/system"], "is another host"),
])
def test_run_refuses_before_anything_starts(args, why):
    a = ["run", "--engine", "libvirt", "--accel", "tcg"] + args
    if a.count("--engine") == 2:
        a = a[:1] + a[3:]
    r = vnpy.run_vnperf(a, timeout=30)
    assert r.returncode == 64, r.stderr
    assert why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_console_option_is_for_libvirt_only():
    r = vnpy.run_vnperf(["run", "--console", "stream"], timeout=30)
    assert r.returncode == 64 and "--console is for --engine libvirt" in r.stderr


PLAN = """\
[fleet]
duration = 4
[[group]]
name = "rx"
app = "sink"
count = 2
[[group]]
name = "tx"
app = "gen"
count = 2
to = "rx"
config = ["rate=1k"]
[[group]]
name = "b"
app = "gen"
wire = "bridge:br0"
queue_size = 256
[[group]]
name = "ps"
app = "rr"
role = "server"
wire = "passt"
[[group]]
name = "pc"
app = "rr"
to = "ps"
wire = "passt"
"""


def test_fleet_plan_wires_addresses_and_words(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(PLAN)
    insts = fleet.plan(fleetspec.load(str(p)))
    fleet.udp_ifaces(insts)
    i = {x.label: x for x in insts}
    rx, tx = i["rx-0"], i["tx-0"]
    assert tx.partner is rx and rx.partner is tx and i["tx-1"].partner is i["rx-1"]
    # The pair's UDP sockets face each other.
    assert tx.iface.source["local"] == rx.iface.source["remote"]
    assert tx.iface.source["remote"] == rx.iface.source["local"]
    assert len({x.mac for x in insts}) == len(insts)
    assert len({x.ip for x in insts}) == len(insts)
    assert "duration=14" in rx.words  # the sender's 4 s + RX_EXTRA_S
    assert "duration=4" in tx.words and "rate=1k" in tx.words and "app=gen" in tx.words
    assert "dst_ip=%s" % rx.ip in tx.words and "dst_mac=%s" % rx.mac in tx.words
    assert "dst_ip=%s" % tx.ip in rx.words
    b = i["b-0"]
    assert b.iface.kind == "bridge" and b.iface.source == {"name": "br0"}
    assert b.iface.props == {"rx_queue_size": 256, "tx_queue_size": 256}
    assert not any(w.startswith("dst_") for w in b.words)
    ps, pc = i["ps-0"], i["pc-0"]
    assert ps.iface.source["forwards"] == [("udp", ps.host_port, fleet.APP_PORT)]
    assert "role=server" in ps.words and "role=client" in pc.words
    assert "dst_port=%d" % ps.host_port in pc.words and "dst_ip=10.0.2.2" in pc.words


def fleet_rep(pps):
    return {"name": "pairs", "accel": {"qemu:///system": "tcg"},
            "groups": {"gens": {"app": "gen", "role": None, "wire": "udp", "pps": pps}},
            "aggregate": {"pps": pps},
            "instances": [{"group": "gens", "instance": "gens-0", "status": 0, "why": "ok"}]}


def test_fleet_results_directory_carries_identities_compare_pairs(tmp_path):
    """A fleet's results directory: one point per group and the fleet, each
    with its identity, so that compare pairs two fleets of one spec."""
    for name, pps in (("a", 1000.0), ("b", 1100.0)):
        fleetreport.write_results(fleet_rep(pps), str(tmp_path / name))
    a, b = (resultsdir.load(str(tmp_path / n)) for n in "ab")
    assert [p["params"]["group"] for p in a] == ["gens", "fleet"]
    assert a[0]["params"]["app"] == "gen" and a[0]["params"]["accel"] == "tcg"
    cmp = compare.compare(a, b)
    assert [r.params["group"] for r in cmp.rows] == ["fleet", "gens"]
    assert all(r.columns["pps%"].pct == pytest.approx(10.0) for r in cmp.rows)


# ---- staging what the domain's QEMU opens (libvirtstage.py, issue 31)
CAPS = """<capabilities><host>
  <secmodel><model>none</model><doi>0</doi></secmodel>
  <secmodel><model>dac</model><doi>0</doi>
    <baselabel type='kvm'>+64055:+64055</baselabel>
    <baselabel type='qemu'>+64055:+107</baselabel></secmodel>
</host></capabilities>"""
# Not the runner (root here) and in no group of the files: mode bits decide.
QEMU = libvirtstage.QemuUser(54321, 54321, groups=[], name="qemu-user")
ME, MY_GROUP = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name


@pytest.fixture
def open_dir():
    """A 0755 folder in /tmp (pytest's tmp_path lies in a 0700 one)."""
    d = tempfile.mkdtemp(dir="/tmp", prefix="vnperf-test-stage-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, True)


def closed_checkout(tmp_path):
    """A kernel and an ESP the way a clone in `mktemp -d` holds them."""
    root = tmp_path / "clone"
    (root / "build").mkdir(parents=True)
    os.chmod(root, 0o700)
    kernel, esp = root / "build" / "vnperf.elf", root / "build" / "esp.img"
    kernel.write_bytes(b"\x7fELF kernel")
    esp.write_bytes(b"FAT esp")
    os.chmod(kernel, 0o600)
    return str(root), str(kernel), str(esp)


def test_qemu_user_is_the_dac_baselabel_of_the_domain_type():
    u = libvirtstage.qemu_user(CAPS, "qemu")
    assert (u.uid, u.gid) == (64055, 107) and 107 in u.groups
    assert libvirtstage.qemu_user(CAPS, "kvm").gid == 64055
    assert libvirtstage.qemu_user(CAPS.replace("dac", "selinux"), "qemu") is None
    assert libvirtstage.qemu_user("<capabilities", "qemu") is None
    assert libvirtstage.qemu_user("", "qemu") is None


def test_blocker_names_the_folder_that_user_cannot_enter(tmp_path, open_dir):
    root, kernel, _ = closed_checkout(tmp_path)
    why = libvirtstage.blocker(kernel, QEMU)
    # pytest's own 0700 folder above tmp_path stops it first, or the clone.
    assert why is not None and " is 0700 %s:" % ME in why, why
    inner = os.path.join(open_dir, "sub", "f")
    os.makedirs(os.path.dirname(inner))
    assert libvirtstage.blocker(inner, QEMU) is None
    os.chmod(os.path.dirname(inner), 0o750)  # the runner's group only
    assert libvirtstage.blocker(inner, QEMU) == "%s is 0750 %s:%s" % (
        os.path.dirname(inner), ME, MY_GROUP)
    in_group = libvirtstage.QemuUser(54321, os.getgid(), groups=[], name="g")
    assert libvirtstage.blocker(inner, in_group) is None


def test_stage_copies_into_one_readable_folder_removed_at_close(tmp_path, open_dir):
    _, kernel, esp = closed_checkout(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "vnperf.elf").write_bytes(b"another kernel")
    st = libvirtstage.Stage(bases=[str(tmp_path / "missing"), str(tmp_path), open_dir])
    got = st.place([kernel, esp], QEMU)
    d = st.dir
    # The first base does not exist, the second is inside a 0700 folder.
    assert os.path.dirname(d) == open_dir
    assert os.path.basename(d).startswith("vnperf-%d-stage-" % os.getpid())
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o755
    assert sorted(os.listdir(d)) == ["0-vnperf.elf", "1-esp.img"]
    assert got == {kernel: os.path.join(d, "0-vnperf.elf"), esp: os.path.join(d, "1-esp.img")}
    for src, dst in got.items():
        assert open(dst, "rb").read() == open(src, "rb").read()
        assert stat.S_IMODE(os.stat(dst).st_mode) == 0o644
        assert libvirtstage.blocker(dst, QEMU) is None
    # The same file again (a fleet's next domain): the same copy; another
    # file of the same name: its own.
    assert st.place([kernel], QEMU) == {kernel: got[kernel]}
    again = st.place([str(other / "vnperf.elf")], QEMU)
    assert again == {str(other / "vnperf.elf"): os.path.join(d, "2-vnperf.elf")}
    st.remove()
    assert not os.path.exists(d) and st.dir is None
    st.remove()  # twice: nothing left to do


def test_stage_refuses_with_one_line_naming_file_folder_and_user(tmp_path, open_dir):
    _, kernel, _ = closed_checkout(tmp_path)
    st = libvirtstage.Stage(bases=[str(tmp_path / "missing"), str(tmp_path)])
    with pytest.raises(RunnerError) as e:
        st.place([kernel], QEMU)
    line = e.value.line
    assert e.value.status == 67 and "\n" not in line
    assert line.startswith("libvirt: %s: libvirt's QEMU runs as qemu-user" % kernel), line
    assert " is 0700 %s:" % ME in line and "missing: No such file or directory" in line
    assert st.dir is None and [n for n in os.listdir(tmp_path)
                               if n.startswith("vnperf-")] == []
    # A file that user reaches where it is stays there.
    ok = os.path.join(open_dir, "vnperf.elf")
    open(ok, "wb").close()
    assert st.place([ok], QEMU) == {ok: ok}
    # No DAC model: QEMU reads the files as they are, nothing is copied.
    st2 = libvirtstage.Stage(bases=[open_dir])
    assert st2.place([kernel], None) == {kernel: kernel} and st2.dir is None


def test_stage_of_a_file_that_cannot_be_copied_is_one_line(tmp_path, open_dir):
    st = libvirtstage.Stage(bases=[open_dir])
    with pytest.raises(RunnerError) as e:
        st.place([str(tmp_path / "nope.elf")], QEMU)
    assert e.value.status == 67 and "nope.elf" in e.value.line
    assert "No such file or directory" in e.value.line
    st.remove()


def test_stale_stage_folders_of_dead_runners_are_removed(open_dir):
    dead = 2 ** 22 + 12345  # above pid_max: no such process
    names = ["vnperf-%d-stage-abc" % dead, "vnperf-%d-stage-mine" % os.getpid(),
             "vnperf-%d-run-abc" % dead]
    for n in names:
        os.mkdir(os.path.join(open_dir, n))
    assert libvirtstage.clean_stale([open_dir]) == [os.path.join(open_dir, names[0])]
    assert sorted(os.listdir(open_dir)) == sorted(names[1:])


def test_domain_names_the_staged_kernel_esp_and_firmware():
    d = domxml.Domain(spec(), "n", [], ("pty",))
    assert d.host_files() == ["/img/vnperf.elf"]
    d.files = {"/img/vnperf.elf": "/stage/0-vnperf.elf"}
    assert ET.fromstring(d.xml()).find("os/kernel").text == "/stage/0-vnperf.elf"
    u = domxml.Domain(spec(boot="uefi", esp="/img/esp.img"), "n", [], ("pty",))
    assert u.host_files() == [qemucmd.DEFAULT_OVMF, "/img/esp.img"]
    u.files = {qemucmd.DEFAULT_OVMF: "/stage/0-OVMF.fd", "/img/esp.img": "/stage/1-esp.img"}
    x = ET.fromstring(u.xml())
    assert x.find("os/loader").text == "/stage/0-OVMF.fd"
    assert x.find("devices/disk/source").get("file") == "/stage/1-esp.img"


class FakeConnection:
    """libvirtconn.Connection without a daemon: capabilities only."""

    def __init__(self, uri):
        self.uri = uri
        self.lost = None
        self.conn = types.SimpleNamespace(getCapabilities=lambda: CAPS)

    def open(self):
        return self

    def close(self):
        self.conn = None


def test_engine_stages_for_this_host_and_removes_on_an_error_path(tmp_path, open_dir,
                                                                  monkeypatch):
    _, kernel, _ = closed_checkout(tmp_path)
    monkeypatch.setattr(libvirtconn, "Connection", FakeConnection)
    monkeypatch.setattr(libvirtconn, "destroy_stale", lambda conn, log_dir: [])
    monkeypatch.setattr(libvirtstage, "BASES", (open_dir,))
    eng = engine_libvirt.LibvirtEngine("qemu:///system")
    with pytest.raises(RuntimeError, match="after staging"):
        with proc.Session() as s:
            eng.connection(s)
            got = eng.place([kernel], "tcg")
            assert os.path.dirname(got[kernel]) == eng.stage.dir
            assert eng._qemu_users["qemu"].uid == 64055
            raise RuntimeError("after staging")
    assert s.errors == [] and os.listdir(open_dir) == []
    # Another host reads its own paths: nothing is staged.
    remote = engine_libvirt.LibvirtEngine("qemu+ssh://h/system")
    with proc.Session() as s:
        remote.connection(s)
        assert remote.place([kernel], "tcg") == {}
    assert os.listdir(open_dir) == []


def test_queue_pairs_and_vcpus_in_the_domain():
    """--queues 2 over vhost-user through libvirt: <driver queues='2'/>
    (libvirt sets mq=on itself), vectors=0 still through the override, and
    <vcpu>2</vcpu>; a one-queue interface or mq=on without pairs refused."""
    chardevs, _ = domxml.split_extra(["-chardev", "socket,id=vu0,path=/run/x.sock"])
    nic = qemucmd.Nic("vhost-user,chardev=vu0,queues=2", "52:54:00:00:00:01",
                      {"vectors": 0, "mq": "on"})
    d = dom(spec(shared_mem=True, smp=2), [domxml.iface_from_nic(nic, chardevs)])
    assert d.find("vcpu").text == "2"
    assert d.find("devices/interface/driver").attrib == {"queues": "2"}
    p = d.find(Q + "override/" + Q + "device[@alias='ua-net0']/" + Q + "frontend/" + Q
               + "property")
    assert p.attrib == {"name": "vectors", "type": "unsigned", "value": "0"}
    # a tap-based interface: libvirt counts the vectors (2N+2) itself
    i = domxml.Iface("bridge", "52:54:00:00:00:02", {"mq": "on", "vectors": 10}, queues=4,
                     name="br0")
    assert i.props == {} and i.element().find("driver").attrib == {"queues": "4"}
    assert dom(spec())[1].tag and dom(spec()).find("vcpu").text == "1"
    with pytest.raises(RunnerError, match="a udp interface has one queue pair"):
        domxml.Iface("udp", "52:54:00:00:00:01", {}, queues=2, local=("a", 1), remote=("b", 2))
    with pytest.raises(RunnerError, match="mq=on without queue pairs"):
        domxml.Iface("bridge", "52:54:00:00:00:01", {"mq": "on"}, name="br0")


def test_fleet_queues_give_each_instance_pairs_and_vcpus(tmp_path):
    p = tmp_path / "q.toml"
    p.write_text('[[group]]\nname = "b"\napp = "sink"\nwire = "bridge:br0"\nqueues = 2\n')
    insts = fleet.plan(fleetspec.load(str(p)))
    b = insts[0]
    assert b.iface.queues == 2 and b.iface.element().find("driver").attrib == {"queues": "2"}
    assert "queues=2" in b.words and "vcpus=2" in b.words
