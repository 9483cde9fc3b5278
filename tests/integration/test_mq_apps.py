"""Issue 25, the apps one instance per vCPU: -smp 2, vcpus=2, queues=2 over
a multiqueue tap with QEMU's RSS (rss=on), on q35 (virtio-net-pci) and
microvm (virtio-mmio). The host sends 16 UDP flows with vnperf's payload
header (stream id, sequence number); each lands on the pair the test's own
Toeplitz hash names, and CPU i, owning pair i, counts it there. sink: each
pair's count, streams and loss (one frame left out of one flow) exactly
the prediction. reflect: each frame goes back on the pair it came on; per
pair, the guest's count, the driver's TX and the frames the host got back
from that pair's flows are equal, and the total is exact."""

import ipaddress
import socket
import struct
import subprocess
import time

import pytest

import vnharness
from test_mq import mqtap, needs_root, rss_pair  # noqa: F401 (mqtap: a fixture)
from vnharness import guest, qemucmd
from vnperflib.run import peer as vnpeer

ADDR = ["ip=" + vnpeer.GUEST_IP, "dst_ip=" + vnpeer.PEER_IP, "dst_mac=" + vnpeer.PEER_MAC]
SPORT, DPORTS, PER = 7000, range(6000, 6016), 12
GAP = (3, 5)  # flow 3's frame 5 is never sent: one frame lost on that flow's pair
PL_MAGIC = 0x564E5046
PACKET_OUTGOING = 4  # Linux's sll_pkttype of a frame this host sent


def frame(stream, seq, dport, sport=SPORT, payload=None, dst=vnpeer.GUEST_IP):
    """A UDP frame from the peer to dst (the guest) with vnperf's 24-byte
    payload header (seq, a TSC of 0, the stream id and the magic) or
    payload."""
    if payload is None:
        payload = struct.pack("<QQII", seq, 0, stream, PL_MAGIC)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(payload), 0, 0, 64, 17, 0,
                     ipaddress.IPv4Address(vnpeer.PEER_IP).packed,
                     ipaddress.IPv4Address(dst).packed)
    csum = sum(struct.unpack("!10H", ip))
    csum = (csum & 0xffff) + (csum >> 16)
    csum = (csum & 0xffff) + (csum >> 16)
    ip = ip[:10] + struct.pack("!H", ~csum & 0xffff) + ip[12:]
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    return (bytes.fromhex("525400000001") + bytes.fromhex(vnpeer.PEER_MAC.replace(":", "")) +
            b"\x08\x00" + ip + udp)


def traffic():
    """The frames in send order, and per pair: frames, flows, the pair
    that misses a frame."""
    frames, want, flows = [], [0, 0], [0, 0]
    for seq in range(PER):
        for s, dp in enumerate(DPORTS):
            if (s, seq) != GAP:
                frames.append(frame(s, seq, dp))
                want[rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, SPORT, dp)] += 1
    for dp in DPORTS:
        flows[rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, SPORT, dp)] += 1
    gap_pair = rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, SPORT, DPORTS[GAP[0]])
    assert min(want) > 0, want  # both pairs carry flows
    return frames, want, flows, gap_pair


def packet_socket(tap):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    s.bind((tap, 0))
    return s


def run(tap, machine, app, frames, ready, words=(), delay=0.0, out_tap=None):
    """Boots app on two CPUs and two pairs (a second NIC on out_tap when
    given: fwd's b); sends frames into the tap once the console says both
    CPUs run (delay seconds later); returns the boot and the guest's UDP
    frames the host got back (on out_tap when given) by (source,
    destination) port, the others (lwIP's ARP) under None."""
    props = dict(qemucmd.mq_props(2, machine), rss="on")
    # RSS is a feature above bit 31: modern virtio-mmio (version 2) only
    extra = ["-smp", "2"] + (["-global", "virtio-mmio.force-legacy=false"]
                             if machine == "microvm" else [])
    nics = [qemucmd.Nic("tap,ifname=%s,script=no,downscript=no,queues=2,vhost=off" % t,
                        "52:54:00:00:00:0%d" % (i + 1), props)
            for i, t in enumerate([tap] + ([out_tap] if out_tap else []))]
    spec = qemucmd.GuestSpec(vnharness.IMAGE, machine=machine, memory_mb=128, accel="tcg",
                             config=["app=" + app, "count=%d" % len(frames), "duration=40",
                                     "queues=2", "vcpus=2"] + ADDR + list(words),
                             nics=nics, name="vnperf-test", extra=extra)
    into = packet_socket(tap)
    out = packet_socket(out_tap) if out_tap else into
    sent = []

    def on_line(g, line):
        if not sent and ready in line.text:
            time.sleep(delay)
            for f in frames:
                into.send(f)
            sent.append(len(frames))

    g = guest.Guest(spec)
    try:
        with vnharness.Session() as s:
            g.start(s)
            guest.pump([g], 120, on_line=on_line)
        back = {}
        out.setblocking(False)
        while True:
            try:
                f, addr = out.recvfrom(2048)
            except BlockingIOError:
                break
            if addr[2] == PACKET_OUTGOING:
                continue
            udp = len(f) >= 42 and f[12:14] == b"\x08\x00" and f[23] == 17
            key = struct.unpack("!HH", f[34:38]) if udp else None  # None: lwIP's (ARP)
            back[key] = back.get(key, 0) + 1
            if udp:
                back.setdefault("payloads", []).append((key, f[42:]))
    finally:
        out.close()
        into.close()
    b = vnharness.Boot(g)
    assert b.code == 0 and sent, b.console
    assert b.one("smp")["up"] == 2, b.console
    return b, back


@needs_root
@pytest.mark.parametrize("machine", ["q35", "microvm"])
def test_sink_counts_each_pair_on_its_cpu(image, mqtap, machine):
    frames, want, flows, gap_pair = traffic()
    b, _ = run(mqtap, machine, "sink", frames, "2 CPUs receiving")
    res = b.one("result")
    assert res["packets"] == len(frames) and res["complete"] is True, res
    assert res["lost"] == 1 and res["dup"] == res["reorder"] == 0, res
    qs = res["queues"]
    assert [(q["queue"], q["cpu"]) for q in qs] == [(0, 0), (1, 1)], qs
    for q in qs:
        p = q["queue"]
        assert q["packets"] == want[p] and q["bytes"] == 66 * want[p], (q, want)
        assert q["streams"] == flows[p], (q, flows)
        assert q["lost"] == (1 if p == gap_pair else 0), (q, gap_pair)
        assert q["dup"] == q["reorder"] == q["not_ours"] == q["no_header"] == 0, q
    drv = [q["rx_packets"] for q in res["vnet"]["queues"]]
    assert drv == want, (drv, want)


@needs_root
@pytest.mark.parametrize("machine", ["q35", "microvm"])
def test_reflect_sends_back_on_the_pair_it_came_on(image, mqtap, machine):
    frames, want, flows, _ = traffic()
    b, back = run(mqtap, machine, "reflect", frames, "every UDP frame, 2 CPUs")
    res = b.one("result")
    assert res["packets"] == len(frames) and res["tx_dropped"] == 0, res
    assert res["lost"] == 1, res
    qs = res["queues"]
    assert [(q["queue"], q["cpu"]) for q in qs] == [(0, 0), (1, 1)], qs
    drv = res["vnet"]["queues"]
    for q in qs:
        p = q["queue"]
        got = sum(n for k, n in back.items()
                  if k and k[0] in DPORTS and k[1] == SPORT
                  and rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, SPORT, k[0]) == p)
        assert q["packets"] == want[p] == got, (q, want, back)
        # lwIP's own frames leave on pair 0, CPU 0's
        lwip = back.get(None, 0) if p == 0 else 0
        assert drv[p]["rx_packets"] == want[p], (drv, want)
        assert drv[p]["tx_packets"] == want[p] + lwip, (drv, want, back)
        assert q["tx_dropped"] == q["halts"] == 0, q
    assert sum(n for k, n in back.items() if k and k != "payloads") == len(frames), back


@needs_root
@pytest.mark.parametrize("machine", ["q35", "microvm"])
def test_udp_rr_server_answers_each_pair_on_its_cpu(image, mqtap, machine):
    """UDP rr server, -smp 2 and two pairs: the host's 16 request flows
    (sport 7000..7015 to port 9000, 8-byte transaction numbers) land on
    the pairs the hash names; each is answered on its pair by that pair's
    CPU with 32 bytes that start with its number."""
    sports = range(7000, 7016)
    frames, want = [], [0, 0]
    for n in range(PER):
        for sp in sports:
            frames.append(frame(0, 0, 9000, sp, struct.pack("<Q", sp * 1000 + n)))
            want[rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, sp, 9000)] += 1
    assert min(want) > 0, want
    b, back = run(mqtap, machine, "rr", frames, "raw path, 2 CPUs",
                  ["role=server", "proto=udp", "req_size=8", "resp_size=32"])
    res = b.one("result")
    assert res["transactions"] == len(frames) and res["tx_dropped"] == 0, res
    qs = res["queues"]
    assert [(q["queue"], q["cpu"]) for q in qs] == [(0, 0), (1, 1)], qs
    drv = res["vnet"]["queues"]
    for q in qs:
        p = q["queue"]
        got = sum(n for k, n in back.items() if k and k != "payloads" and k[0] == 9000
                  and rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, k[1], 9000) == p)
        assert q["packets"] == want[p] == got, (q, want)
        assert q["bytes"] == want[p] * (42 + 32), q
        assert drv[p]["rx_packets"] == want[p], (drv, want)
    answers = sorted((k[1], struct.unpack("<Q", pl[:8])[0]) for k, pl in back["payloads"]
                     if len(pl) == 32 and pl[8:] == bytes(24))
    assert answers == sorted((sp, sp * 1000 + n) for n in range(PER) for sp in sports)


@needs_root
def test_sink_hybrid_each_cpu_halts_on_its_own_pairs_interrupts(image, mqtap):
    """notify=hybrid on q35, -smp 2, two pairs: each pair's MSI-X entries
    name the APIC of the CPU that owns the pair, so CPU i halts on pair
    i's empty ring and pair i's RX interrupts wake it there, and no other
    CPU takes them; the counts stay exact per pair. The frames come 0.3 s
    after the start, so both CPUs have found their rings empty first."""
    frames, want, flows, gap_pair = traffic()
    b, _ = run(mqtap, "q35", "sink", frames, "2 CPUs receiving", ["notify=hybrid"], delay=0.3)
    res = b.one("result")
    assert res["packets"] == len(frames) and res["complete"] is True, res
    assert res["lost"] == 1 and res["dup"] == res["reorder"] == 0, res
    assert [(q["queue"], q["cpu"], q["packets"]) for q in res["queues"]] == \
        [(0, 0, want[0]), (1, 1, want[1])], res["queues"]
    drv = res["vnet"]["queues"]
    assert [q["rx_packets"] for q in drv] == want, (drv, want)
    for p, q in enumerate(drv):
        assert q["cpu"] == p, q
        assert q["rx_halts"] > 0 and q["rx_interrupts"] > 0, q
        assert q["rx_irq_cpu"] == p, q  # every one of them on the owner
    cpus = res["idle"]["cpus"]
    assert [c["cpu"] for c in cpus] == [0, 1] and all(c["halts"] > 0 for c in cpus), cpus
    assert res["vnet"]["rx"]["notify"] == "hybrid", res["vnet"]["rx"]


@needs_root
def test_microvm_hybrid_on_two_cpus_is_one_config_line(image, mqtap):
    """virtio-mmio's one I/O APIC line reaches CPU 0 only: a pair on CPU
    1 with notify=hybrid is refused in one line, status 2."""
    nd = "tap,ifname=%s,script=no,downscript=no,queues=2,vhost=off" % mqtap
    b = vnharness.boot(["app=sink", "count=10", "queues=2", "vcpus=2", "notify=hybrid"] + ADDR,
                       machine="microvm", netdevs=[nd], timeout=60,
                       nic_props=qemucmd.mq_props(2, "microvm"),
                       extra=["-smp", "2", "-global", "virtio-mmio.force-legacy=false"])
    assert b.code == 2, b.console
    assert ("sink: vcpus=2: pair 1 runs on CPU 1, which the device's one interrupt line "
            "(virtio-mmio) does not reach: notify=poll") in b.console, b.console


@pytest.fixture
def mqtap2(mqtap):
    """A second multiqueue tap beside mqtap (fwd's b): mqtap's name and
    one letter more (replacing its last, a random hex digit, gave mqtap's
    own name once in 16: CI's `ip tuntap add` failed on it)."""
    name = mqtap + "b"
    assert len(name) < 16   # IFNAMSIZ
    subprocess.run(["ip", "tuntap", "add", "dev", name, "mode", "tap", "multi_queue",
                    "vnet_hdr"], check=True)
    try:
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % name], check=True)
        subprocess.run(["ip", "link", "set", name, "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "link", "del", name])


def assert_halts_per_cpu(res, drv, woken=True):
    """Each CPU halted; pair p's RX (armed by CPU p's halts) was woken only
    on CPU p, when woken."""
    for p, q in enumerate(drv):
        assert q["cpu"] == p and q["rx_notify"] == "hybrid", q
        assert q["rx_halts"] > 0, q
        if woken:
            assert q["rx_interrupts"] > 0 and q["rx_irq_cpu"] == p, q
    cpus = res["idle"]["cpus"]
    assert [c["cpu"] for c in cpus] == [0, 1] and all(c["halts"] > 0 for c in cpus), cpus


@needs_root
def test_reflect_hybrid_each_cpu_halts_on_its_own_pairs_interrupts(image, mqtap):
    """reflect with notify=hybrid on q35, -smp 2, two pairs: CPU i halts on
    pair i's empty RX ring and is woken there by that pair's interrupts
    alone; every frame still goes back on the pair it came on, exactly."""
    frames, want, flows, _ = traffic()
    b, back = run(mqtap, "q35", "reflect", frames, "every UDP frame, 2 CPUs",
                  ["notify=hybrid"], delay=0.3)
    res = b.one("result")
    assert res["packets"] == len(frames) and res["tx_dropped"] == 0 and res["lost"] == 1, res
    assert [(q["queue"], q["cpu"], q["packets"]) for q in res["queues"]] == \
        [(0, 0, want[0]), (1, 1, want[1])], res["queues"]
    drv = res["vnet"]["queues"]
    for p in (0, 1):
        got = sum(n for k, n in back.items()
                  if k and k != "payloads" and k[0] in DPORTS and k[1] == SPORT
                  and rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, SPORT, k[0]) == p)
        assert got == want[p] == drv[p]["rx_packets"], (p, back, drv)
        assert drv[p]["tx_packets"] == want[p] + (back.get(None, 0) if p == 0 else 0), drv
    assert_halts_per_cpu(res, drv)


@needs_root
def test_fwd_hybrid_each_cpu_halts_on_its_own_pairs_interrupts(image, mqtap, mqtap2):
    """fwd with notify=hybrid on q35, -smp 2, two two-pair NICs: the host's
    16 flows (to an address not the guest's, so none is lwIP's) land on a's
    pair the hash names and leave on b's same pair; CPU i halts on pair i of
    both NICs and a's pair i wakes it there. Per pair and in total the
    frames in on a, forwarded and out on b (the host's count) are equal."""
    far = "10.99.0.9"
    frames, want = [], [0, 0]
    for seq in range(PER):
        for st, dp in enumerate(DPORTS):
            frames.append(frame(st, seq, dp, dst=far))
            want[rss_pair(vnpeer.PEER_IP, far, SPORT, dp)] += 1
    assert min(want) > 0, want
    b, back = run(mqtap, "q35", "fwd", frames, "2 CPUs on 2 pairs", ["notify=hybrid"],
                  delay=0.3, out_tap=mqtap2)
    res = b.one("result")
    assert res["packets"] == len(frames) and res["tx_dropped"] == 0, res
    assert res["a_to_b"]["packets"] == len(frames) and res["a_to_b"]["to_lwip"] == 0, res
    assert sum(n for k, n in back.items() if k and k != "payloads") == len(frames), back
    a, bq = res["vnet"]["queues"], res["vnet1"]["queues"]
    for q in res["queues"]:
        p = q["queue"]
        assert q["cpu"] == p and q["a_to_b"]["packets"] == want[p], (q, want)
        assert a[p]["rx_packets"] == bq[p]["tx_packets"] == want[p], (a, bq, want)
    assert_halts_per_cpu(res, a)
    assert_halts_per_cpu(res, bq, woken=False)  # nothing comes in on b


@needs_root
def test_udp_rr_server_hybrid_each_cpu_halts_on_its_own_pairs_interrupts(image, mqtap):
    """The UDP rr server with notify=hybrid on q35, -smp 2: CPU i halts on
    pair i and its requests wake it there; every request is answered on
    its pair."""
    sports = range(7000, 7016)
    frames, want = [], [0, 0]
    for n in range(PER):
        for sp in sports:
            frames.append(frame(0, 0, 9000, sp, struct.pack("<Q", sp * 1000 + n)))
            want[rss_pair(vnpeer.PEER_IP, vnpeer.GUEST_IP, sp, 9000)] += 1
    b, back = run(mqtap, "q35", "rr", frames, "raw path, 2 CPUs",
                  ["role=server", "proto=udp", "req_size=8", "resp_size=32", "notify=hybrid"],
                  delay=0.3)
    res = b.one("result")
    assert res["transactions"] == len(frames) and res["tx_dropped"] == 0, res
    assert [(q["queue"], q["cpu"], q["packets"]) for q in res["queues"]] == \
        [(0, 0, want[0]), (1, 1, want[1])], res["queues"]
    got = sum(n for k, n in back.items() if k and k != "payloads" and k[0] == 9000)
    assert got == len(frames), back
    assert_halts_per_cpu(res, res["vnet"]["queues"])
