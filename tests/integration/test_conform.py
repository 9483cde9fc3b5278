"""vnperf conform (issue 27): over tap and over vhost-user (testpmd), on
QEMU 7.2 and 10.0, a short run (two features as factors) ends in a table
with no vnperf error (exit 0, every cell a verdict), and QEMU's own
host_mtu=60 (a device MTU below the spec's 68, virtio 1.2 s5.1.4.1)
shows as a config violation while the exit stays 0. On QEMU 10.0 over tap
USO datagrams and the control commands are factors: each set's USO
segments exact in the shared boot, every command answered OK, the config's speed and duplex
read (speed=10000, duplex=full). The comparison of
`sweep --qemu system,next` is test_next.py's."""

import json
import os
import shlex
import shutil

import pytest

from vnharness import run_vnperf
from vnperflib.run import nextroot

NEXT = nextroot.stamp() is not None
QEMUS = ["system"] + (["next"] if NEXT else [])
TAP = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (tap in a namespace)")
BASE = ["conform", "--accel", "tcg", "--quiet", "--json", "--count", "300"]


def conform(args, timeout=600, feats=("event_idx", "indirect_desc"), stream=False):
    r = run_vnperf(BASE + ([] if stream else ["--no-stream"]) + ["--features", ",".join(feats)]
                   + args, timeout=timeout)
    assert r.stdout, "no result (status %d): %s" % (r.returncode, r.stderr[-3000:])
    res = json.loads(r.stdout)
    assert r.returncode == 0, (r.returncode, res["errors"], r.stderr[-3000:])
    assert res["errors"] == []
    assert res["factors"] == list(feats)
    # two features: all, none, each off alone (the other's on alone is the same row)
    assert [c["name"] for c in res["combinations"]] == ["all", "none", "-" + feats[0],
                                                        "+" + feats[0]]
    for c in res["combinations"]:
        for check, cell in c["checks"].items():
            assert cell["verdict"] in ("pass", "violation", "not offered", "n/a"), (c["name"],
                                                                                  check, cell)
            if cell["verdict"] in ("pass", "violation"):
                assert cell["command"].startswith("tools/vnperf run --backend "), cell
    return res


def verdicts(res, check):
    return {c["name"]: c["checks"][check]["verdict"] for c in res["combinations"]}


@TAP
@pytest.mark.timeout_s(600)
@pytest.mark.parametrize("qemu", QEMUS)
def test_conform_over_tap(image, qemu):
    res = conform(["--backend", "tap", "--qemu", qemu], stream=True)
    # small, mtu and the TCP stream as sets of one boot (app reneg over tap,
    # the host peer reflecting onto the tap, the host's iperf server taking
    # each set's stream), each set's frames counted exactly both ways and
    # its stream's bytes exactly
    assert res["reneg_failures"] == []
    for c in res["combinations"]:
        assert [(b["traffic"], b["boot"]) for b in c["boots"]] == [
            ("small+mtu+stream", "one boot")], c["boots"]
        counts = c["boots"][0]["counts"]
        ways = {k.split(") ", 1)[1]: d for k, d in counts.items()}
        assert sorted(ways) == ["guest->host", "host->guest", "stream guest->host"], counts
        assert all((ways[w]["verdict"], ways[w]["sent"], ways[w]["received"]) ==
                   ("agree", 600, 600) for w in ("guest->host", "host->guest")), counts
        tcp = ways["stream guest->host"]
        assert tcp["verdict"] == "agree" and tcp["sent"] == tcp["received"] > 0, tcp
    # QEMU's virtio-net keeps every rule these checks see
    for check in ("reset", "traffic", "used_len", "unavailable", "config"):
        assert set(verdicts(res, check).values()) == {"pass"}, (check, verdicts(res, check))


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="no dpdk-testpmd (Debian dpdk-dev)")
@pytest.mark.timeout_s(600)
@pytest.mark.parametrize("qemu", QEMUS)
def test_conform_over_vhost_user(image, qemu):
    args = ["--backend", "vhost-user", "--qemu", qemu]
    if qemu == "next":
        if nextroot.open_above(nextroot.DRIVERS) is not None:
            pytest.skip("DPDK 24.11 loads no driver below a world-writable folder")
        args += ["--testpmd", "next"]
    res = conform(args)
    assert set(verdicts(res, "used_len").values()) == {"pass"}


@pytest.mark.timeout_s(600)
def test_conform_over_dgram_counts_each_set_both_ways_in_one_boot(image):
    """The four combinations differ only in features: one boot of app
    reneg runs them as its sets, each set's small frames then the MTU's,
    the host peer reflecting each; every cell is judged by its own set's
    counters and its frames counted exactly both ways; a cell's command
    repeats its boot."""
    res = conform(["--backend", "dgram"])
    assert res["reneg_failures"] == []
    shared = [(g["traffic"], len(g["sets"])) for g in res["boots"] if g["sets"]]
    assert shared == [("small+mtu", 4)], res["boots"]
    for k, c in enumerate(res["combinations"]):
        marks = [(b["traffic"], b["boot"], b["set"], b["status"]) for b in c["boots"]]
        assert marks == [("small+mtu", "one boot", k + 1, 0)], marks
        label = "set %d (%s)" % (k + 1, res["boots"][0]["sets"][k])
        # 300 small and 300 MTU frames each way, exact
        assert c["boots"][0]["counts"] == {
            label + " guest->host": {"verdict": "agree", "sent": 600, "received": 600},
            label + " host->guest": {"verdict": "agree", "sent": 600, "received": 600}}
        for check in ("reset", "traffic", "used_len", "unavailable", "config", "suppression"):
            assert c["checks"][check]["verdict"] == "pass", (c["name"], check, c["checks"][check])
    cmd = res["combinations"][1]["checks"]["used_len"]["command"]
    assert " --app reneg " in cmd and " --sets " in cmd, cmd
    argv = shlex.split(cmd)[1:]
    cut = argv.index("--")
    r = run_vnperf(argv[:cut] + ["--quiet", "--json"] + argv[cut:], timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    sets = json.loads(r.stdout)["guests"][-1]["result"]["sets"]
    assert [s["set"] for s in sets] == res["boots"][0]["sets"]
    # each set's driver counters: its sample line's, in its entry
    assert all(s["vnet"]["tx"]["kicks"] > 0 and "rule_breaks" in s["vnet"]["rx"] for s in sets)


@TAP
@pytest.mark.timeout_s(600)
def test_a_device_mtu_below_68_is_a_config_violation_not_an_error(image):
    res = conform(["--backend", "tap", "--qemu-arg=-global",
                   "--qemu-arg=virtio-net-device.host_mtu=60"])
    cfg = res["combinations"][0]["checks"]["config"]
    assert cfg["verdict"] == "violation" and cfg["section"] == "s5.1.4.1", cfg
    assert "host_mtu=60" in cfg["command"]
    assert "1 config fields out of range" in cfg["detail"], cfg


@TAP
@pytest.mark.timeout_s(600)
@pytest.mark.skipif(not NEXT, reason="build/next not installed: make next")
def test_uso_and_the_control_commands_over_tap_on_qemu_10(image):
    res = conform(["--backend", "tap", "--qemu", "next"], feats=("host_uso", "ctrl_vlan"),
                  stream=True)
    assert res["config"] == {"mtu": 1500, "speed_mbps": 10000, "duplex": "full"}, res["config"]
    assert "speed_duplex" in res["features_negotiated"]
    uso = verdicts(res, "uso")
    assert uso == {"all": "pass", "none": "n/a", "-host_uso": "n/a", "+host_uso": "pass"}, uso
    assert set(verdicts(res, "ctrl").values()) == {"pass"}, verdicts(res, "ctrl")
    for c in res["combinations"]:
        kinds = [b["traffic"] for b in c["boots"]]
        # small, mtu, the stream and the USO datagrams share the one reneg
        # boot (each boot has a host_uso combination); a set that negotiated
        # HOST_USO has its segments counted exactly (300 datagrams of 6)
        assert kinds == ["small+mtu+stream+uso"], kinds
        ways = {k.split(") ", 1)[1]: d for k, d in c["boots"][0]["counts"].items()}
        if c["row"]["host_uso"]:
            d = ways["uso guest->host"]
            assert (d["verdict"], d["sent"], d["received"]) == ("agree", 1800, 1800), d
        else:
            assert "uso guest->host" not in ways, ways
        assert ("vlan=5" in c["words"]) == c["row"]["ctrl_vlan"], c
        for check in ("reset", "traffic", "used_len", "unavailable", "config"):
            assert c["checks"][check]["verdict"] == "pass", (c["name"], check, c["checks"][check])
