"""Where QEMU's RSS puts a received flow (virtio 1.2 s5.1.6.4.3): the
Toeplitz hash of its IPv4 or IPv6 addresses and ports with the key the
guest's RSS_CONFIG sends (Microsoft's verification key), through the
guest's default table (128 entries, entry i naming pair i mod N;
drivers/virtio/vnet_rss.c), so the host side can count per queue pair."""

import ipaddress

# drivers/virtio/vnet_toeplitz.c's vnet_rss_key_ms
MS_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
                       "6a42b73bbeac01fa")
TABLE_LEN = 128  # VNET_RSS_TABLE_MAX


def toeplitz(key, data):
    """s5.1.6.4.3.1: for each set bit i of the input, XOR in the 32 key
    bits starting at key bit i."""
    k, kbits, h = int.from_bytes(key, "big"), len(key) * 8, 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (kbits - 32 - i)) & 0xffffffff
    return h


def flow_input(src, dst, sport, dport):
    """A TCP/UDP flow's hash input: source and destination address, then
    the ports, in network order (s5.1.6.4.3.1 for IPv4; s5.1.6.4.3.2 for
    IPv6 without extension headers: the guest enables no _EX type)."""
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if s.version != d.version:
        raise ValueError("flow %s -> %s: IPv4 and IPv6 addresses in one flow" % (src, dst))
    return s.packed + d.packed + sport.to_bytes(2, "big") + dport.to_bytes(2, "big")


def flow_queue(src, dst, sport, dport, pairs):
    """The pair a TCP/UDP frame from src:sport to dst:dport (IPv4 or
    IPv6) lands on with `pairs` queue pairs (0 with one)."""
    if pairs < 2:
        return 0
    return toeplitz(MS_KEY, flow_input(src, dst, sport, dport)) % TABLE_LEN % pairs


def sent_pair(src, dst, sport, dport, pairs):
    """The pair gen sends its flow from src:sport to dst:dport on: the one
    the replies (dst:dport to src:sport) land on (apps/app_gen.c:
    vnet_flow_pair of the swapped flow)."""
    return flow_queue(dst, src, dport, sport, pairs)


def flows_by_pair(flows, pairs):
    """The frames a host peer counted of gen's flows (its result's flows,
    docs/peer.md: src, sport, dst, dport, packets), added up on the pair
    gen sent each flow on."""
    out = [0] * pairs
    for f in flows:
        out[sent_pair(f["src"], f["dst"], f["sport"], f["dport"], pairs)] += f["packets"]
    return out
