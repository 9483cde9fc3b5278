"""A fleet's udp pair locates its loss at the receiving QEMU's UDP socket by
the same path as `run --topology guests` (udpdrops.sample,
outcome.receiver_socket_drops), not 'in between'."""

from types import SimpleNamespace as NS

import vnpy  # noqa: F401 (the runner's library on sys.path)
from vnperflib import fleet, fleetreport, udpdrops

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
    gen = {"app": "gen", "guest": {"result": {"app": "gen", "packets": 5000}}}
    sink = {"app": "sink", "guest": {"result": {"app": "sink", "packets": 4945, "lost": 55}}}
    d = fleetreport.pair_counts(gen, sink, 55)["directions"]["tx guest->rx guest"]
    assert (d["sent"], d["received"], d["lost"]) == (5000, 4945, 55)
    assert "55 in the receiver QEMU's UDP socket buffer" in d["why"], d["why"]
    assert "in between" not in d["why"]
    # Not read (another wire): no place is claimed.
    d = fleetreport.pair_counts(gen, sink)["directions"]["tx guest->rx guest"]
    assert "UDP socket" not in d["why"]
