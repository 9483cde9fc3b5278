"""A fleet's udp pair locates its loss at the receiving QEMU's UDP socket by
the same path as `run --topology guests` (udpdrops.sample,
outcome.receiver_socket_drops), not 'in between'."""

from types import SimpleNamespace as NS

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib.fleet import fleet, fleetreport
from vnperflib import result
from vnperflib.analysis import udpdrops

HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid" \
    "  timeout inode ref pointer drops\n"
ROW = "   0: 0100007F:%04X 0100007F:%04X 07 00000000:00000000 00:00000000 00000000" \
    "     0        0 1 2 ffff %d\n"


def test_the_receivers_socket_drops_are_read_and_kept(tmp_path):
    proc = tmp_path / "udp"
    proc.write_text(HEAD + ROW % (40001, 40000, 55) + ROW % (40000, 40001, 7))
    rx = NS(label="sinks-0", partner=object(), sender=False, ports=(40001, 40000))
    tx = NS(label="gens-0", partner=rx, sender=True, ports=(40000, 40001))
    alone = NS(label="user-0", partner=None, sender=False, ports=None)
    ports = fleet.receiver_ports([tx, rx, alone])
    assert ports == {"sinks-0": 40001}
    drops = {}
    udpdrops.sample(drops, ports, path=str(proc))
    assert drops == {"sinks-0": 55}
    # The receiving QEMU is gone: its last count stays.
    proc.write_text(HEAD)
    udpdrops.sample(drops, ports, path=str(proc))
    assert drops == {"sinks-0": 55}


def test_a_pairs_loss_at_the_socket_is_located():
    gen = result.FleetInstance.from_dict(
        {"app": "gen", "guest": {"result": {"app": "gen", "packets": 5000}}})
    sink = result.FleetInstance.from_dict(
        {"app": "sink", "guest": {"result": {"app": "sink", "packets": 4945, "lost": 55}}})
    d = fleetreport.pair_counts(gen, sink, 55).directions["tx guest->rx guest"]
    assert (d.sent, d.received, d.lost) == (5000, 4945, 55)
    assert "55 in the receiver QEMU's UDP socket buffer" in d.why, d.why
    assert "in between" not in d.why
    # Not read (another wire): no place is claimed.
    d = fleetreport.pair_counts(gen, sink).directions["tx guest->rx guest"]
    assert "UDP socket" not in d.why
    assert fleetreport.pair_counts(gen, result.FleetInstance(app="sink")) is None


def test_the_fleet_tables_print_frame_counts_as_whole_numbers():
    """`packets 5.000k` in the fleet table (issue 26): a count is printed
    as the number it is, rates keep their SI prefix."""
    m = fleetreport._metrics({"packets": 5000, "bytes": 320000, "pps": 2500.0, "bps": 1.28e6,
                              "duration_ns": 2000000000})
    inst = {"instance": "gens-0", "app": "gen", "role": None, "status": 0, "metrics": m,
            "ready_s": 0.4}
    agg = fleetreport.summarize([result.FleetInstance.from_dict(inst)], [None]).to_dict()
    rep = {"instances": [inst], "groups": {"gens": agg}, "aggregate": agg, "wall_s": 3.0,
           "created_s": 0.1, "startup_s": 0.5, "failed": [], "not_destroyed": []}
    rows = [l.split() for l in fleetreport.render(rep).splitlines()]
    head = rows[0]
    assert rows[2][head.index("packets")] == "5000", rows[2]
    assert rows[2][head.index("pps")] == "2.500k"
    ghead = next(r for r in rows if r and r[0] == "group")
    for name in ("gens", "fleet"):
        row = next(r for r in rows if r and r[0] == name)
        assert row[ghead.index("packets")] == "5000" and row[ghead.index("pps")] == "2.500k", row


def test_the_fleet_report_is_typed_and_its_json_unchanged():
    """render reads a result.FleetResult (issue 30); the report's JSON
    object comes back from the type key for key (fleet.json is unchanged)."""
    m = fleetreport._metrics({"packets": 5000, "bytes": 320000, "pps": 2500.0, "bps": 1.28e6,
                              "duration_ns": 2000000000})
    ok = {"instance": "gens-0", "group": "gens", "app": "rr", "role": "client", "uri": None,
          "partner": None, "domain": "vnperf-x-gens-0", "config": ["app=rr"], "status": 0,
          "why": "ok", "started": True, "guest": None, "ready_s": 0.4, "metrics": m}
    dead = dict(ok, instance="gens-1", status=124, why="gens-1: never started: x",
                started=False, metrics={}, ready_s=None)
    agg = fleetreport.summarize([result.FleetInstance.from_dict(ok),
                                 result.FleetInstance.from_dict(dead)], [None, None]).to_dict()
    assert (agg["instances"], agg["ok"], agg["pps"]) == (2, 1, 2500.0)
    rep = {"vnperf_fleet": 1, "instances": [ok, dead],
           "groups": {"gens": dict(agg, app="rr", role="client", wire="udp",
                                   receives_from=None, sends_to=None)},
           "aggregate": agg, "wall_s": 3.0, "created_s": 0.1, "startup_s": None,
           "failed": [{"instance": "gens-1", "status": 124, "why": "gens-1: never started: x"}],
           "not_destroyed": [["vnperf-x-gens-1", "busy"]], "accel": {"local": "tcg"}}
    typed = result.FleetResult.from_dict(rep)
    assert typed.instances[0].metrics.pps == 2500.0 and typed.groups["gens"].ok == 1
    assert typed.to_dict() == rep
    text = fleetreport.render(typed)
    assert text == fleetreport.render(rep)
    assert "rr client" in text and "failed: gens-1: status 124" in text
    assert "NOT DESTROYED: domain vnperf-x-gens-1: busy" in text
