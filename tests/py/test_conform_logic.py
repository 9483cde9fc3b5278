"""vnperf conform's judging (tools/vnperflib/campaign/conform_checks.py) and plan
words (conform.py): each device check turns into a violation with its
spec section when the guest's counters say the device broke its rule,
'not offered' / 'n/a' where the feature is missing, 'error' (and a
non-zero exit) only where vnperf could not run the boot; the features
conform switches are exactly the guest's switchable ones."""

import copy
import json
import os
import re

import vnpy
from vnperflib.campaign import conform, conform_checks as cc
from vnperflib import exitcodes, result

CHECKS = list(cc.CHECKS)


def queue(**kw):
    q = {"rule_breaks": {"unavailable": 0, "used_len": 0, "in_order": 0, "device": 0},
         "irq_vector": 48, "irq_shared": False, "interrupts": 0, "halts": 0}
    q.update(kw)
    return q


def report_json(status=0, tx=None, rx=None, dirs=None, malformed=0, why="ok", config_bad=0):
    """A boot's report as `vnperf run --json` writes it."""
    vnet = {"features_offered": ["in_order"], "features": [],
            "tx": tx or dict(queue(), len_mismatch=0), "rx": rx or dict(queue(), len_errors=0),
            "config_out_of_range": config_bad,
            "ctrl": {"sent": 5, "ok": 5, "err": 0, "bad_reply": 0, "timeouts": 0}}
    d = dirs or {"guest->host": {"verdict": "agree", "why": "ok"}}
    return {"status": status, "why": why, "counts": {"directions": d},
            "guests": [{"result": {"vnet": vnet, "malformed": malformed}, "console_tail": []}]}


def report(**kw):
    """A boot's report as the runner returns it (a result.RunResult)."""
    return result.RunResult.from_dict(report_json(**kw))


N_USO = 500


def uso_report(sizes=None, gso_frames=N_USO, rcvbuf=0, csum=0):
    """gen's uso=1400 boot of 500 datagrams of 8234 bytes: 5 x 1400 + 1192
    each at the host's socket."""
    r = report_json()
    res = r["guests"][0]["result"]
    res["packets"] = N_USO
    res["uso"] = {"gso_size": 1400, "segments_per_datagram": 6, "last_segment": 1192,
                  "segments": 6 * N_USO}
    res["vnet"]["tx"]["gso_frames"] = gso_frames
    r["counts"]["host"] = {"udp": {"sizes": sizes or {"1400": 5 * N_USO, "1192": N_USO},
                                   "rcvbuf_errors": rcvbuf, "csum_errors": csum}}
    return result.RunResult.from_dict(r)


def boot(rep, traffic="small"):
    return conform.Boot(traffic, "tools/vnperf run X", rep.status, rep.why, rep)


OFFERED = ("in_order", "hash_report", "host_uso", "ctrl_vq")


def judge(*reps, row=None, offered=OFFERED, uso=None):
    """The checks of boots reps and a uso boot (good unless given)."""
    boots = [boot(r) for r in reps] + [boot(uso or uso_report(), "uso")]
    return cc.judge(row or {"in_order": True, "host_uso": True}, set(offered), boots)


def verdicts(cells):
    return {k: v["verdict"] for k, v in cells.items()}


def test_a_good_device_passes_every_check():
    assert set(verdicts(judge(report(), report())).values()) == {"pass"}


def broken(check):
    """A report of a device that breaks check's rule, and the section."""
    r = report_json()
    v = r["guests"][0]["result"]["vnet"]
    if check == "used_len":
        v["tx"]["len_mismatch"] = 3
    elif check == "unavailable":
        v["rx"]["rule_breaks"]["unavailable"] = 1
        r["status"], r["why"] = 4, "device error"
    elif check == "in_order":
        v["rx"]["rule_breaks"]["in_order"] = 1
    elif check == "suppression":
        v["rx"]["interrupts"], v["rx"]["halts"] = 40, 3
    elif check == "config":
        v["config_out_of_range"] = 1
    elif check == "ctrl":
        v["ctrl"].update(ok=4, err=1)
        r["status"], r["why"] = 4, "device error"
    elif check == "uso":
        return uso_report(sizes={"1400": 5 * N_USO, "1192": N_USO - 1})
    elif check == "hash_report":
        v["hash_report"] = {"types": 63, "ok": 10, "bad_type": 0, "bad_value": 2}
    elif check == "traffic":
        r["counts"]["directions"]["host->guest"] = {
            "verdict": "disagree", "why": "host->guest: 5 more received than sent"}
    elif check == "reset":
        r.update(status=4, why="vnet: device did not finish its reset (status stays non-zero)")
        r["guests"][0]["result"] = {}
    return result.RunResult.from_dict(r)


def test_each_check_fails_against_a_device_that_breaks_its_rule():
    sections = {"used_len": "s2.7.8.2", "unavailable": "s2.7.8.2", "in_order": "s2.7.9",
                "suppression": "s2.7.7.2", "config": "s5.1.4.1", "traffic": "s5.1.6",
                "hash_report": "s5.1.6.4.4", "uso": "s5.1.6.2.2", "ctrl": "s5.1.6.5",
                "reset": "s2.4.1"}
    assert set(sections) == set(CHECKS)
    for check in CHECKS:
        cells = judge(report(), uso=broken(check)) if check == "uso" else \
            judge(report(), broken(check))
        assert cells[check]["verdict"] == "violation", (check, cells[check])
        assert cells[check]["section"] == sections[check], (check, cells[check])
        assert cells[check]["command"] == "tools/vnperf run X"
        # packed ring sections where the combination has the packed ring
        packed = cc.judge({"in_order": True, "ring_packed": True, "host_uso": True},
                          set(OFFERED) | {"ring_packed"},
                          [boot(broken(check), "uso" if check == "uso" else "small")])
        assert packed[check]["section"] == cc.CHECKS[check][1]


def test_located_host_loss_is_no_violation_disagreement_is():
    lossy = report(dirs={"host->guest frames": {
        "verdict": "lossy", "lost": 50, "why": "50 in QEMU's UDP socket buffer"}})
    assert judge(lossy)["traffic"]["verdict"] == "pass"
    bad = report(malformed=2)
    assert judge(bad)["traffic"]["verdict"] == "violation"
    lost = report(dirs={"host->guest": {"verdict": "lossy", "lost": 3, "why": "3 lost", "where": [
        {"at": "unexplained", "frames": 3, "what": "in between"}]}})
    assert judge(lost)["traffic"]["verdict"] == "violation"
    # the host kernel's own frames before DRIVER_OK: the app's count decides
    early = report(dirs={"host->guest": {"verdict": "agree", "why": "ok"},
                         "host->guest frames": {"verdict": "disagree", "why": "6 unexplained"}})
    assert judge(early)["traffic"]["verdict"] == "pass"


def test_one_unconditional_notification_per_queue_on_a_shared_line_passes():
    sh = dict(irq_shared=True, interrupts=2, halts=0)
    assert judge(report(tx=dict(queue(**sh), len_mismatch=0),
                        rx=dict(queue(**sh), len_errors=0)))["suppression"]["verdict"] == "pass"
    sh["interrupts"] = 3
    assert judge(report(tx=dict(queue(**sh), len_mismatch=0),
                        rx=dict(queue(**sh), len_errors=0)))["suppression"]["verdict"] \
        == "pass"   # the control queue's first completion (report() sent 5 commands)
    r = report_json(tx=dict(queue(**sh), len_mismatch=0), rx=dict(queue(**sh), len_errors=0))
    r["guests"][0]["result"]["vnet"]["ctrl"]["sent"] = 0
    assert judge(result.RunResult.from_dict(r))["suppression"]["verdict"] == "violation"
    sh["interrupts"] = 4
    assert judge(report(tx=dict(queue(**sh), len_mismatch=0),
                        rx=dict(queue(**sh), len_errors=0)))["suppression"]["verdict"] \
        == "violation"
    # a queue that polls (no vector) is not judged
    assert judge(report(rx=dict(queue(irq_vector=-1, interrupts=99), len_errors=0)))[
        "suppression"]["verdict"] == "pass"


def test_in_order_not_offered_and_not_negotiated():
    for check in ("in_order", "hash_report", "uso", "ctrl"):
        assert judge(report(), offered=())[check]["verdict"] == "not offered", check
    assert judge(report(), row={"hash_report": False})["hash_report"]["verdict"] == "n/a"
    assert judge(report(), row={"in_order": False})["in_order"]["verdict"] == "n/a"
    assert judge(report(), row={"host_uso": False})["uso"]["verdict"] == "n/a"
    assert judge(report(), row={"ctrl_vq": False})["ctrl"]["verdict"] == "n/a"


def test_uso_counts_exact_segments_and_checksums():
    def uso(**kw):
        return judge(report(), uso=uso_report(**kw))["uso"]
    assert uso()["verdict"] == "pass"
    # segments the host's full socket dropped are flow control, counted there
    assert uso(sizes={"1400": 5 * N_USO - 3, "1192": N_USO}, rcvbuf=3)["verdict"] == "pass"
    # one lost that no count locates, a wrong size, a datagram not sent as GSO, a bad checksum
    for bad in (dict(sizes={"1400": 5 * N_USO - 1, "1192": N_USO}),
                dict(sizes={"1400": 5 * N_USO, "1192": N_USO - 1, "1191": 1}),
                dict(gso_frames=N_USO - 1), dict(csum=2)):
        cell = uso(**bad)
        assert cell["verdict"] == "violation" and cell["detail"].startswith("uso: "), (bad, cell)
    # the uso check judges the uso boot only: the small boot has no USO counts
    assert judge(report())["uso"]["verdict"] == "pass"
    # host_uso offered but not a factor (--features without it): not asked, no uso boot
    cells = cc.judge({"event_idx": True}, set(OFFERED), [boot(report())])
    assert cells["uso"]["verdict"] == "n/a"
    # host_uso on but no uso boot ran: vnperf's error, not a pass
    cells = cc.judge({"host_uso": True}, set(OFFERED), [boot(report())])
    assert cells["uso"]["verdict"] == "error"


def test_ctrl_malformed_or_missing_reply_is_a_violation():
    for kind in ("bad_reply", "timeouts"):
        r = report_json()
        r["guests"][0]["result"]["vnet"]["ctrl"][kind] = 1
        assert judge(result.RunResult.from_dict(r))["ctrl"]["verdict"] == "violation", kind


def test_a_vnperf_error_is_an_error_cell_and_the_exit_status():
    err = report(status=exitcodes.RUNNER_BACKEND_FAILED, why="testpmd died")
    cells = judge(err)
    assert set(verdicts(cells).values()) == {"error"}
    res = {"combinations": [{"name": "all", "checks": cells}]}
    res["errors"] = conform.errors(res["combinations"])
    assert conform.exit_status(res) == exitcodes.RUNNER_BACKEND_FAILED
    # a violation is a finding: exit 0
    res = {"combinations": [{"name": "all", "checks": judge(broken("config"))}]}
    res["errors"] = conform.errors(res["combinations"])
    assert conform.exit_status(res) == 0


def test_table_marks_cells_and_lists_commands():
    cells = judge(broken("config"))
    boots = [{"traffic": "small", "boot": "one boot", "id": "r1", "set": 1, "sets": ["all"]},
             {"traffic": "stream", "boot": "fresh boot", "why": "iperf"}]
    res = {"backend": "tap", "qemu": "next", "testpmd": "system", "factors": ["mtu"],
           "wall_s": 3.0, "combinations": [{"name": "all", "row": {"mtu": True},
                                            "boots": boots, "checks": cells}],
           "boots": [{"id": "r1", "traffic": "small", "sets": ["all", "-mtu"]}],
           "reneg_failures": [{"boot": "r1", "completed": 1, "sets": ["all", "-mtu"],
                               "status": 4, "why": "reset"}]}
    text = cc.table(res)
    assert "VIOLATION s5.1.4.1" in text and "tools/vnperf run X" in text
    md = cc.table(res, markdown=True)
    # where each traffic kind ran: a shared boot (one boot, its sets listed) or fresh
    assert "| all | - | small r1, stream fresh |" in md
    assert "r1: one boot, small, sets all/-mtu" in md
    assert "r1 failed after 1 of 2 sets (status 4): reset; the rest rerun in fresh boots" in md
    # the config fields the probe read (s5.1.4), unknown where null
    res["config"] = {"mtu": 1500, "speed_mbps": 10000, "duplex": None}
    assert "config: mtu 1500, speed_mbps 10000, duplex unknown" in cc.table(res)


def test_feature_words():
    assert conform.feature_words({"mtu": False, "event_idx": True, "indirect_desc": False}) == [
        "features=-mtu", "indirect=off"]
    assert conform.feature_words({"mtu": True}) == []
    # the control features on send their commands (s5.1.6.5.1-3)
    assert conform.feature_words({"ctrl_vq": True, "ctrl_rx": True, "ctrl_mac_addr": True,
                                  "ctrl_vlan": True}) == [
        "promisc=0", "allmulti=0", "mac_set=1", "vlan=%d" % conform.VLAN_ID]
    # the driver's own address (no mac): the host end sends to the device's,
    # which mac_set=1 would take from the filter, so promiscuous mode stays on
    assert conform.feature_words({"mac": False, "ctrl_rx": True, "ctrl_mac_addr": False}) == [
        "features=-mac,-ctrl_mac_addr", "promisc=1", "allmulti=0"]
    assert conform.feature_words({"mac": False, "ctrl_rx": True, "ctrl_mac_addr": True}) == [
        "features=-mac", "promisc=1", "allmulti=0", "mac_set=1"]
    # mac_set=1 sends MAC_TABLE_SET too: only with ctrl_rx
    assert conform.feature_words({"ctrl_vq": True, "ctrl_rx": False, "ctrl_mac_addr": True,
                                  "ctrl_vlan": False}) == ["features=-ctrl_rx,-ctrl_vlan"]


def test_asked_features_are_factors_where_offered():
    """host_uso and ctrl_vlan are negotiated only when asked: factors
    wherever the device offers them; host_uso on adds the uso boot."""
    offered = {"mtu", "host_uso", "ctrl_vlan", "ctrl_vq", "csum"}
    assert conform.factors(offered, {"mtu", "ctrl_vq"}) == ["mtu", "ctrl_vq", "host_uso",
                                                            "ctrl_vlan"]
    assert conform.factors({"mtu"}, {"mtu"}) == ["mtu"]
    base = conform.options.build(backend="tap", app="gen", machine="microvm")
    names = [t[0] for t in conform.traffics(base, False, {"host_uso": True})]
    assert names == ["small", "mtu", "uso"]
    uso = conform.traffics(base, False, {"host_uso": True})[2]
    assert uso[1]["size"] == 8234 and "uso=1400" in uso[2]
    assert [t[0] for t in conform.traffics(base, False, {"host_uso": False})] == ["small", "mtu"]


def test_switchable_features_are_the_guests():
    src = open(os.path.join(vnpy.ROOT, "drivers/virtio/vnet_features.c")).read()
    guest = set(re.findall(r'\{[A-Z0-9_]+, "([a-z0-9_]+)", true\}', src))
    assert set(conform.SWITCHABLE) | {"version_1"} == guest


def test_a_boot_in_the_json_is_what_ran_and_its_status():
    """conform's JSON names each boot's command, status and count
    directions, without its report (a result.RunResult)."""
    b = boot(report(status=4, why="device error", dirs={
        "set 2 (-mtu) guest->host": {"verdict": "agree", "sent": 9, "received": 9},
        "set 2 (-mtu) host->guest": {"verdict": "disagree", "sent": 9, "received": 7}}))
    assert json.loads(json.dumps(b.as_json())) == {
        "traffic": "small", "command": "tools/vnperf run X", "status": 4, "why": "device error",
        "counts": {"set 2 (-mtu) guest->host": {"verdict": "agree", "sent": 9, "received": 9},
                   "set 2 (-mtu) host->guest": {"verdict": "disagree", "sent": 9,
                                                "received": 7}}}


def test_judge_does_not_change_the_reports():
    r = broken("used_len")
    before = copy.deepcopy(r.to_dict())
    judge(r)
    assert r.to_dict() == before


def test_unknown_backend_refused_before_the_probe_boot():
    """An unknown --backend is the runner's one refusal line, not a probe
    boot's failure with a command to repeat it."""
    p = vnpy.run_vnperf(["conform", "--backend", "nosuch"], timeout=30)
    assert p.returncode == exitcodes.RUNNER_USAGE
    assert p.stderr.splitlines() == [
        "vnperf: unknown backend 'nosuch': one of none, dgram, socket, hub, user, tap, "
        "vhost-net, vhost-user, passt, passt-vhost-user"]
