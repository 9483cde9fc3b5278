"""Multiqueue (issue 25): QEMU's virtio-net-pci with mq=on over a
multiqueue tap (queues=2). The guest negotiates CTRL_VQ and MQ, sets two
queue pairs (VQ_PAIRS_SET) and reports both in the result's "queues";
gen sends on pair 0 and the tap counts every frame the driver sent. With
rss=on (QEMU's software RSS) the RSS_CONFIG command is accepted too.
queues= above what the device offers is a config error in one line."""

import os
import subprocess

import pytest

import vnharness
from vnharness import guest, qemucmd
from vnperflib import peer as vnpeer

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a multiqueue tap needs root")
N = 3000
ADDR = ["ip=" + vnpeer.GUEST_IP, "dst_ip=" + vnpeer.PEER_IP, "dst_mac=" + vnpeer.PEER_MAC]


@pytest.fixture
def mqtap(no_leftovers):
    """A multiqueue tap (vnet_hdr, up, IPv6 off: the kernel sends nothing
    into it) that QEMU opens with queues=2."""
    name = "vnmq%s" % no_leftovers[:8]
    subprocess.run(["ip", "tuntap", "add", "dev", name, "mode", "tap", "multi_queue",
                    "vnet_hdr"], check=True)
    try:
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % name], check=True)
        subprocess.run(["ip", "link", "set", name, "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "link", "del", name])


def tap_rx(name):
    with open("/sys/class/net/%s/statistics/rx_packets" % name) as f:
        return int(f.read())


def boot_mq(tap, cfg, props):
    nic = qemucmd.Nic("tap,ifname=%s,script=no,downscript=no,queues=2,vhost=off" % tap,
                      "52:54:00:00:00:01", dict({"mq": "on", "vectors": "6"}, **props))
    spec = qemucmd.GuestSpec(vnharness.IMAGE, machine="q35", memory_mb=128, accel="tcg",
                             config=cfg, nics=[nic], name="vnperf-test")
    g = guest.Guest(spec)
    with vnharness.Session() as s:
        g.start(s)
        guest.pump([g], 60)
    return vnharness.Boot(g)


def gen_on_two_pairs(tap, props):
    before = tap_rx(tap)
    b = boot_mq(tap, ["app=gen", "size=64", "count=%d" % N, "queues=2"] + ADDR, props)
    assert b.code == 0, b.console
    v = b.one("result")["vnet"]
    assert {"ctrl_vq", "mq"} <= set(v["features"]), v["features"]
    assert v["max_queue_pairs"] == 2 and len(v["queues"]) == 2, v
    assert v["ctrl"]["timeouts"] == 0 and v["ctrl"]["err"] == 0, v["ctrl"]
    q0, q1 = v["queues"]
    # gen sends on pair 0 only; what the driver sent, the tap received
    assert q0["tx_packets"] == v["tx"]["packets"] >= N, v
    assert q1["tx_packets"] == 0, v
    assert tap_rx(tap) - before == q0["tx_packets"], (tap_rx(tap), before, v)
    assert "queues 2 of 2" in b.console
    return v


@needs_root
def test_two_queue_pairs_over_a_multiqueue_tap(image, mqtap):
    v = gen_on_two_pairs(mqtap, {})
    assert v["ctrl"]["sent"] == v["ctrl"]["ok"] == 1, v["ctrl"]  # VQ_PAIRS_SET
    assert not v["rss"], v


@needs_root
def test_rss_config_accepted(image, mqtap):
    v = gen_on_two_pairs(mqtap, {"rss": "on"})
    assert "rss" in v["features"] and v["rss"], v
    assert v["ctrl"]["sent"] == v["ctrl"]["ok"] == 2, v["ctrl"]  # and RSS_CONFIG


@needs_root
def test_more_queues_than_the_device_has_is_a_config_error(image, mqtap):
    b = boot_mq(mqtap, ["app=gen", "count=10", "queues=3"] + ADDR, {})
    assert b.code == 2, b.console
    fatal = [ln for ln in b.console.splitlines() if ln.startswith("FATAL")]
    assert len(fatal) == 1, b.console
    assert "queues=3: more queue pairs than the device has" in fatal[0], b.console
    assert b.one("error")["reason"] == "config_error", b.console
