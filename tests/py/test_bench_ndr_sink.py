"""bench/bench_ndr_sink.py's logic without a guest: its options, the sides
(one vnperf side per --notify mode, the A/A pairs, the baseline last), the
running order, reading `vnperf ndr --json`, the Linux guest's result as a
search trial, and the summary's ratios and significance test."""

import json
import os
import sys

import pytest
import vnpy

sys.path.insert(0, os.path.join(vnpy.ROOT, "bench"))

import bench_ndr_sink as b  # noqa: E402
from vnperflib.campaign import search  # noqa: E402


def refused(argv, capsys):
    with pytest.raises(SystemExit) as e:
        b.options(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


def test_bad_options_are_refused_with_one_line(capsys):
    assert "not the paced host peer" in refused(["--backend", "hub"], capsys)
    assert "vhost-user only" in refused(["--feeder", "testpmd"], capsys)
    assert "distinct modes" in refused(["--notify", "poll,spin"], capsys)
    assert "distinct modes" in refused(["--notify", "poll,poll"], capsys)
    assert "--aa" in refused(["--aa", "--notify", "poll"], capsys)
    assert "vnperf only" in refused(["--aa", "linux", "--", "rx_refill=16"], capsys)
    assert "--resolution" in refused(["--resolution", "150%"], capsys)
    assert "--size" in refused(["--size", "20"], capsys)


def test_sides_one_vnperf_per_mode_and_the_baseline_last():
    assert b.side_names(b.options([])) == ["vnperf", "linux"]
    assert b.side_names(b.options(["--notify", "poll,hybrid"])) == \
        ["vnperf poll", "vnperf hybrid", "linux"]
    assert b.side_names(b.options(["--aa"])) == ["linux", "linux'"]
    assert b.side_names(b.options(["--aa", "vnperf"])) == ["vnperf", "vnperf'"]


def test_vnperf_argv_carries_the_mode_and_the_words():
    o = b.options(["--notify", "hybrid", "--size", "128", "--", "rx_refill=16"])
    argv = b.vnperf_argv(o, "/tmp/x", "hybrid")
    assert argv[2:4] == ["ndr", "--accel"]
    assert argv[argv.index("--out") + 1] == "/tmp/x"
    # The guest words come last: an option after -- would be a word.
    assert argv.index("--out") < argv.index("--")
    assert argv[argv.index("--size") + 1] == "128"
    assert argv[argv.index("--notify") + 1] == "hybrid"
    assert argv[argv.index("--") + 1:] == ["rx_refill=16"]
    assert "--notify" not in b.vnperf_argv(b.options([]), "/tmp/x")
    argv = b.vnperf_argv(b.options(["--backend", "vhost-user", "--feeder", "testpmd"]), "/x")
    assert argv[argv.index("--feeder") + 1] == "testpmd" and argv.index("--feeder") < len(argv)
    assert "--feeder" not in b.vnperf_argv(b.options(["--backend", "vhost-user"]), "/x")
    assert "--" not in b.vnperf_argv(b.options([]), "/tmp/x")


def linux_trial_kwargs(monkeypatch, o):
    """The keyword arguments one Linux trial of options o hands to
    linuxguest.make_run."""
    made = []

    class Run:
        def execute(self):
            return {}
    monkeypatch.setattr(b.linuxguest, "make_run", lambda *a, **kw: made.append(kw) or Run())
    monkeypatch.setattr(b, "linux_result_trial", lambda res: res)
    b.linux_trial(o)(1000, "trial")
    return made[0]


def test_queue_size_reaches_both_guests(monkeypatch, capsys):
    """--queue-size is QEMU's queue size for vnperf's search and for every
    Linux trial alike; anything QEMU would refuse is refused first."""
    o = b.options(["--backend", "vhost-user", "--queue-size", "1024"])
    argv = b.vnperf_argv(o, "/x")
    assert argv[argv.index("--queue-size") + 1] == "1024" and argv.index("--queue-size") < len(argv)
    assert "--queue-size" not in b.vnperf_argv(b.options([]), "/x")
    assert linux_trial_kwargs(monkeypatch, o)["queue_size"] == 1024
    assert "one of 256, 512, 1024" in refused(["--queue-size", "300"], capsys)


def test_each_side_runs_its_own_search(monkeypatch):
    calls = []
    monkeypatch.setattr(b, "vnperf_search", lambda o, n, m, log: calls.append(("v", n, m)))
    monkeypatch.setattr(b, "run_search", lambda n, trial, spec, log: calls.append(("l", n)))
    for _, fn in b.sides(b.options(["--notify", "poll,hybrid"]), print):
        fn()
    assert calls == [("v", "vnperf poll", "poll"), ("v", "vnperf hybrid", "hybrid"),
                     ("l", "linux")]
    calls.clear()
    for _, fn in b.sides(b.options(["--aa", "vnperf"]), print):
        fn()
    assert calls == [("v", "vnperf", None), ("v", "vnperf'", None)]


def test_order_alternates():
    assert b.order(["a", "b", "c"], 0) == ["a", "b", "c"]
    assert b.order(["a", "b", "c"], 1) == ["c", "b", "a"]
    assert b.order(["a", "b", "c"], 2) == ["a", "b", "c"]


def test_search_of_reads_the_first_search_or_the_last_error_line():
    doc = {"points": [{"searches": [{"status": "ok", "rate_pps": 9000, "trials": [1]}]}]}
    assert b.search_of(json.dumps(doc), "", 0)["rate_pps"] == 9000
    r = b.search_of("not json", "starting\nvnperf: qemu died\n", 70)
    assert r["status"] == "failed" and r["why"] == "vnperf: qemu died"
    assert r["rate_pps"] is None and r["trials"] == []
    assert b.search_of("{}", "", 5)["why"] == "status 5"


def test_linux_result_as_a_trial():
    res = {"status": 0, "sent": 20000.0, "rx_packets": 19990.0, "rx_dropped": 0,
           "rx_missed_errors": 0, "cpu_total_pct": 150.0,
           "host": {"peer": {"mode": "send", "pps": 10000.0}, "tx_drops": [
               {"at": "ring", "what": "not placed in the guest's ring", "frames": 0},
               {"at": "qemu_socket", "what": "in QEMU's UDP socket buffer", "frames": 10}]}}
    t = b.linux_result_trial(res)
    assert (t["sent"], t["received"], t["achieved_pps"]) == (20000, 19990, 10000.0)
    assert t["where"] == "eth0 rx_dropped 0, missed 0; 10 in QEMU's UDP socket buffer"
    judged = search.judge(dict(t, target_pps=10000, kind="search"), search.Spec())
    assert (judged["lost"], judged["passed"], judged["missed"]) == (10, False, False)
    assert b.whole(1.5) is None and b.whole("x") is None


def search_result(rate):
    return {"status": search.OK if rate else search.NO_RATE, "why": "w", "rate_pps": rate,
            "offered_pps": 30000, "forwarded_pps": 20000.0, "trials": [{}] * 5}


def test_summary_ratios_and_significance():
    found = {"vnperf": [search_result(r) for r in (30000, 31000, 29500)],
             "linux": [search_result(r) for r in (15000, 15500, 14800)]}
    s = b.summarize(found)
    v = s["vs"]["vnperf"]
    assert v["ratio"] == pytest.approx(30000 / 15000)
    assert v["pair_ratios"] == pytest.approx([2.0, 2.0, 29500 / 14800])
    assert v["significant"] is True and v["p"] < 0.05
    assert "linux" not in s["vs"]


def test_aa_reads_not_significant_and_a_failed_search_is_skipped():
    found = {"vnperf": [search_result(r) for r in (16000, 17000, 15500)],
             "vnperf'": [search_result(r) for r in (16500, None, 15800)]}
    s = b.summarize(found)
    v = s["vs"]["vnperf"]
    assert s["vnperf'"]["rates"] == [16500, 15800]
    assert v["significant"] is False and v["p"] > 0.05
    assert len(v["pair_ratios"]) == 2
    assert "not significant" in b.verdict(v)
    one = b.summarize({"a": [search_result(1000)], "b": [search_result(900)]})
    assert one["vs"]["a"]["p"] is None and "no test" in b.verdict(one["vs"]["a"])


def test_render_names_every_side_against_the_baseline():
    o = b.options(["--notify", "poll,hybrid", "--repeat", "2"])
    found = {"vnperf poll": [search_result(20000), search_result(21000)],
             "vnperf hybrid": [search_result(30000), search_result(None)],
             "linux": [search_result(15000), search_result(16000)]}
    text = b.render(o, found, b.summarize(found))
    assert "vnperf poll / linux: 1.32x (pairs 1.33 1.31)" in text
    assert "vnperf hybrid / linux: 1.94x (pairs 2.00)" in text
    assert "vnperf hybrid: w" in text


def test_cpu_by_role_at_the_ndr_of_each_side():
    """The feeder's and the guest's CPU in the passing verification trial
    (the Linux guest's per-role figures too) are in the table."""
    lnx = b.linux_result_trial({"status": 0, "sent": 10, "rx_packets": 10, "host": {},
                                "cpu_pct": {"vcpu": 90.0, "peer-dpdk": 12.5}})
    assert lnx["cpu_roles"] == {"vcpu": 90.0, "peer-dpdk": 12.5}
    r = search_result(20000)
    r["trials"] = [{"kind": "max", "passed": False, "cpu_roles": {"vcpu": 1.0}},
                   {"kind": "verify", "passed": False, "cpu_roles": {"vcpu": 2.0}},
                   {"kind": "verify", "passed": True, "cpu_roles": {"vcpu": 95.0,
                                                                    "peer-dpdk": 11.0,
                                                                    "main": 0.0}}]
    assert b.cpu_at_ndr(r) == {"vcpu": 95.0, "peer-dpdk": 11.0, "main": 0.0}
    found = {"vnperf": [r], "linux": [search_result(None)]}
    text = b.render(b.options([]), found, b.summarize(found))
    assert "vnperf CPU at NDR: peer-dpdk 11%, vcpu 95%" in text
    assert "linux CPU at NDR: -" in text


def test_main_runs_the_sides_in_alternating_order(monkeypatch, capsys):
    ran = []

    def fake_sides(o, log):
        return [(n, lambda n=n: ran.append(n) or search_result(10000 if n == "linux" else None))
                for n in b.side_names(o)]
    monkeypatch.setattr(b.linuxguest, "ensure_built", lambda: None)
    monkeypatch.setattr(b, "sides", fake_sides)
    assert b.main(["--notify", "poll,hybrid", "--repeat", "2"]) == 1
    assert ran == ["vnperf poll", "vnperf hybrid", "linux", "linux", "vnperf hybrid",
                   "vnperf poll"]
    assert "NDR pps" in capsys.readouterr().out
    monkeypatch.setattr(b.linuxguest, "ensure_built", lambda: "no kernel")
    assert b.main([]) == 3


def test_sock_rcvbuf_reaches_both_guests(monkeypatch, capsys):
    """--sock-rcvbuf: vnperf's search and every Linux trial get the same
    runner-made socket buffer, and the table's header says which."""
    o = b.options(["--backend", "dgram", "--sock-rcvbuf", "4M"])
    argv = b.vnperf_argv(o, "/x")
    assert argv[argv.index("--sock-rcvbuf") + 1] == str(4 << 20)
    assert "--sock-rcvbuf" not in b.vnperf_argv(b.options([]), "/x")
    assert linux_trial_kwargs(monkeypatch, o)["sock_rcvbuf"] == 4 << 20
    assert "rcvbuf 4194304 bytes (the runner's, both guests)" in b.rcvbuf_text(o)
    assert "QEMU's own socket" in b.rcvbuf_text(b.options([]))
    assert "not a size in bytes" in refused(["--sock-rcvbuf", "4x"], capsys)
    assert "--backend dgram only" in refused(["--backend", "socket", "--sock-rcvbuf", "4M"],
                                             capsys)
