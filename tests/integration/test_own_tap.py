"""The user's own tap, bridge and QEMU command line (issue 26): `--tap IF`
uses a tap the test made (on a bridge, in a namespace of the test's own,
where the runner runs) as it is, `--bridge BR` adds a tap of the runner's
own to the test's bridge for the run, `--qemu-args-file` boots the
appliance on a NIC the file defines. Frame counts from both sides and the
interface's own counter agree; refusals are one line and their status."""

import json
import os
import subprocess

import pytest

from vnharness import PYTHON, ROOT, VNPERF, exitcodes, run_vnperf

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="tap/bridge/netns need root")
RUN = ["run", "--accel", "tcg", "--quiet", "--json"]
TAP, BR = "vnutap0", "vnubr0"
COUNT = 20000
# IFF_ONE_QUEUE: QEMU's TUNSETIFF adds it; the kernel has ignored it since
# Linux 3.8 (every tap's queue is one), so it is the only flag that moves.
IFF_ONE_QUEUE = 0x2000
GEN = ["--app", "gen", "--count", str(COUNT), "--rate", "20k", "--duration", "30"]
# TUNSETIFF (linux/if_tun.h): what QEMU does to attach to a tap.
HOLD = """
import fcntl, os, struct, sys, time
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", sys.argv[1].encode(), 0x5002))
print("held", flush=True)
time.sleep(120)
"""


def ip(*args):
    subprocess.run(["ip"] + list(args), check=True)


@pytest.fixture
def userns(no_leftovers):
    """A namespace standing for the user's host: bridge BR (up, no
    address) and tap TAP (vnet_hdr, up) on it; IPv6 off so the kernel
    sends nothing of its own. Not vnperf-*: the runner must not create or
    delete it."""
    ns = "vnuser-%s" % no_leftovers
    ip("netns", "add", ns)
    try:
        for k in ("all", "default"):
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                            "net.ipv6.conf.%s.disable_ipv6=1" % k], check=True)
        ip("-n", ns, "link", "add", BR, "type", "bridge")
        ip("-n", ns, "tuntap", "add", "dev", TAP, "mode", "tap", "vnet_hdr")
        ip("-n", ns, "link", "set", TAP, "master", BR)
        ip("-n", ns, "link", "set", TAP, "up")
        ip("-n", ns, "link", "set", BR, "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def in_ns(ns, args, timeout=120):
    """tools/vnperf ARGS run inside namespace ns, as a user would."""
    return subprocess.run(["ip", "netns", "exec", ns, PYTHON, VNPERF] + args, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def link(ns, dev):
    """What the test reads of an interface itself: tun flags, MAC, master,
    RX frames."""
    out = subprocess.run(["ip", "-n", ns, "-s", "-d", "-j", "link", "show", dev],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    d = json.loads(out)[0]
    flags = subprocess.run(["ip", "netns", "exec", ns, "cat",
                            "/sys/class/net/%s/tun_flags" % dev], stdout=subprocess.PIPE,
                           text=True).stdout.strip()
    return {"tun_flags": int(flags, 16) & ~IFF_ONE_QUEUE if flags else None,
            "mac": d["address"], "master": d.get("master"), "rx": d["stats64"]["rx"]["packets"]}


def frames(r):
    """(guest sent, runner's host count) of a gen run's report."""
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    d = rep["counts"]["directions"]["guest->host frames"]
    assert d["verdict"] == "agree", d["why"]
    assert d["received"] == rep["host"]["rx_frames"]
    return d["sent"], d["received"]


def ports(ns, br):
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", "master", br],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return sorted(d["ifname"] for d in json.loads(out))


@needs_root
def test_own_tap_counts_agree_and_the_tap_is_left_as_it_was(image, userns):
    before = link(userns, TAP)
    r = in_ns(userns, RUN + ["--tap", TAP] + GEN)
    sent, host = frames(r)
    after = link(userns, TAP)
    assert sent == host == after["rx"] - before["rx"] >= COUNT
    assert json.loads(r.stdout)["backend"] == "tap"
    assert {k: after[k] for k in ("tun_flags", "mac", "master")} == \
        {k: before[k] for k in ("tun_flags", "mac", "master")}
    assert ports(userns, BR) == [TAP]


@needs_root
def test_own_bridge_counts_agree_and_its_tap_is_gone(image, userns):
    before = link(userns, BR)
    r = in_ns(userns, RUN + ["--bridge", BR] + GEN)
    sent, host = frames(r)
    # gen sends to the bridge's MAC: every frame passes up through it.
    assert sent == host == link(userns, BR)["rx"] - before["rx"] >= COUNT
    assert ports(userns, BR) == [TAP]


@needs_root
@pytest.mark.parametrize("args, line", [
    (["--tap", "nosuch0"], "--tap nosuch0: no interface nosuch0 in this network namespace"),
    (["--bridge", "nosuch0"], "--bridge nosuch0: no interface nosuch0 in this network "
                              "namespace"),
    (["--bridge", TAP], "--bridge %s: not a bridge (no /sys/class/net/%s/bridge)" % (TAP, TAP)),
    (["--tap", BR], "--tap %s: not a tap (no /sys/class/net/%s/tun_flags)" % (BR, BR)),
])
def test_absent_or_wrong_interface_is_one_line_and_67(image, userns, args, line):
    r = in_ns(userns, RUN + args + GEN)
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING, r.stderr
    assert r.stderr == "vnperf: %s\n" % line and not r.stdout


@needs_root
def test_busy_tap_is_one_line_naming_the_holder(image, userns):
    hold = subprocess.Popen(["ip", "netns", "exec", userns, PYTHON, "-c", HOLD, TAP],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert hold.stdout.readline() == "held\n"
        r = in_ns(userns, RUN + ["--tap", TAP] + GEN)
        assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING, r.stderr
        assert r.stderr == "vnperf: --tap %s: busy: process %d (python3) has it open\n" % (
            TAP, hold.pid), r.stderr
    finally:
        hold.kill()
        hold.wait()


def test_qemu_args_file_nic_of_its_own(image):
    """examples/qemu-args-hub.txt: the appliance's NIC on a hub of the
    file's own; the runner adds none and counts the guest's side only."""
    r = run_vnperf(RUN + ["--qemu-args-file", os.path.join(ROOT, "examples", "qemu-args-hub.txt"),
                          "--duration", "1"])
    assert r.stdout, r.stderr
    rep = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    assert rep["backend"] == "none" and rep["app"] == "gen" and rep["counts"] is None
    assert rep["guests"][0]["result"]["packets"] > 0


def report(r):
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    rep = json.loads(r.stdout)
    assert r.returncode == 0, (r.stderr, rep["why"])
    return rep


@needs_root
@pytest.mark.parametrize("own", [["--tap", TAP], ["--bridge", BR]])
@pytest.mark.parametrize("app, args", [
    ("sink", ["--count", "3000", "--rate", "10k", "--duration", "30"]),
    ("rr", ["--duration", "2"]),
    ("iperf", ["--duration", "2"]),
])
def test_apps_with_a_host_end_over_an_addressed_bridge(image, peer, userns, own, app, args):
    """The bridge has an address of this host: the sink's sender, the rr
    server and iperf's server run there, and the guest is at the ip= the
    user gave in that subnet."""
    ip("-n", userns, "addr", "add", "10.9.0.1/24", "dev", BR)
    rep = report(in_ns(userns, RUN + own + ["--app", app] + args + ["--", "ip=10.9.0.2"]))
    host = rep["host"]
    if app == "sink":
        d = rep["counts"]["directions"]["host->guest"]
        assert d["sent"] == d["received"] == 3000, d["why"]
        assert host["peer"]["packets"] == 3000
    elif app == "rr":
        assert host["rr"]["transactions"] > 0 and host["rr"]["io_errors"] == 0
        assert rep["counts"]["directions"]["rr transactions"]["verdict"] == "agree"
    else:
        assert host["iperf"]["host_role"] == "server" and host["iperf"]["bytes"] > 0
    assert ports(userns, BR) == [TAP]


@needs_root
def test_an_app_with_a_host_end_over_an_unaddressed_bridge_is_one_line(image, userns):
    r = in_ns(userns, RUN + ["--tap", TAP, "--app", "rr", "--duration", "2"])
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING, r.stderr
    assert r.stderr == ("vnperf: --tap %s: app rr needs an IPv4 address of this host on %s to "
                        "reach the guest from (the runner adds none to your network; gen needs "
                        "none)\n" % (TAP, BR))
