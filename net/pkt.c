/* Frame parsing and the generator's template (see pkt.h). */
#include "net/pkt.h"

#include <errno.h>
#include <string.h>

#include "kernel/csum.h"

uint32_t pkt_sum(const uint8_t *data, size_t len, uint32_t partial)
{
    /* The native sum byte-swapped is the network-order one (csum.h). */
    return csum_add(partial, csum_swap(csum_partial(data, len, 0)));
}

/* RFC 768 pseudo header: addresses, protocol, UDP length. */
static uint32_t udp_pseudo_sum(const uint8_t *ip, uint16_t udp_len)
{
    uint32_t s = pkt_sum(ip + 12, 8, 0);
    return s + IP_PROTO_UDP + udp_len;
}

uint16_t pkt_udp_csum(const uint8_t *frame)
{
    const uint8_t *ip = frame + OFF_IP;
    uint16_t ulen = rd16(frame + OFF_UDP_LEN);
    uint32_t s = udp_pseudo_sum(ip, ulen);
    s = pkt_sum(frame + OFF_UDP, 6, s); /* header without the checksum field */
    s = pkt_sum(frame + OFF_PAYLOAD, (size_t)ulen - UDP_HLEN, s);
    uint16_t c = pkt_csum_fold(s);
    return c ? c : 0xffff;
}

/* Skips up to PKT_VLANS_MAX tags, 802.1Q or 802.1ad (IEEE 802.1Q-2018
 * s9.5: a tag is its TPID and a TCI whose low 12 bits are the VLAN id):
 * their ids into pi, the ethertype after them into *type. The IP header's
 * offset, or 0 when a tag is cut off. */
static uint32_t pkt_tags(const uint8_t *f, uint32_t len, struct pkt_info *pi, uint16_t *type)
{
    uint32_t off = OFF_ETH_TYPE;
    pi->nvlan = 0;
    *type = rd16(f + off);
    while ((*type == ETH_P_8021Q || *type == ETH_P_8021AD) && pi->nvlan < PKT_VLANS_MAX) {
        if (len < off + 6)
            return 0;
        pi->vlan[pi->nvlan++] = rd16(f + off + 2) & 0xfff;
        off += 4;
        *type = rd16(f + off);
    }
    return off + 2;
}

static void pkt_info_l4(struct pkt_info *pi, const uint8_t *ip, uint32_t l3, uint32_t ihl,
                        uint32_t hl, uint32_t l4len)
{
    pi->ip_off = l3;
    pi->l4_off = l3 + ihl;
    pi->payload_off = pi->l4_off + hl;
    pi->payload_len = l4len - hl;
    pi->saddr = rd32(ip + 12);
    pi->daddr = rd32(ip + 16);
}

/* An IPv4 datagram other than UDP (at l3 in f, its lengths checked): a
 * TCP segment (RFC 9293 s3.1) or an ICMP echo request or reply (RFC 792:
 * a reflector's answer to a stream's request) whose
 * payload opens with vnperf's stamp and its magic is a stream's
 * (PKT_STAMPED); anything else is the stack's (raw apps' lwIP is
 * untagged: a tagged one is PKT_OTHER). */
static enum pkt_kind pkt_stamped(const uint8_t *f, uint32_t l3, uint32_t ihl, uint32_t tot,
                                 bool check, struct pkt_info *pi)
{
    enum pkt_kind other = pi->nvlan ? PKT_OTHER : PKT_IP_OTHER;
    const uint8_t *ip = f + l3, *l4 = ip + ihl;
    uint32_t l4len = tot - ihl, hl;
    bool tcp = ip[9] == IP_PROTO_TCP;
    if (rd16(ip + 6) & 0x3fff)
        return other; /* a fragment */
    if (tcp && l4len >= TCP_HLEN && (l4[12] >> 4) * 4u >= TCP_HLEN)
        hl = (l4[12] >> 4) * 4u;
    else if (ip[9] == IP_PROTO_ICMP && l4len >= ICMP_HLEN &&
             (l4[0] == ICMP_ECHO || l4[0] == ICMP_ECHO_REPLY) && l4[1] == 0)
        hl = ICMP_HLEN;
    else
        return other;
    if (l4len < hl + PL_LEN || rdle32(l4 + hl + PL_OFF_MAGIC) != PL_MAGIC)
        return other;
    /* TCP's pseudo header (RFC 9293 s3.1); ICMP's sum is its message's. */
    uint32_t s = tcp ? pkt_sum(ip + 12, 8, 0) + IP_PROTO_TCP + l4len : 0;
    if (check && pkt_sum_fold(pkt_sum(l4, l4len, s)) != 0xffff)
        return PKT_BAD_CSUM;
    pkt_info_l4(pi, ip, l3, ihl, hl, l4len);
    pi->sport = tcp ? rd16(l4) : 0;
    pi->dport = tcp ? rd16(l4 + 2) : 0;
    return PKT_STAMPED;
}

enum pkt_kind pkt_parse(const uint8_t *f, uint32_t len, bool check_udp_csum, struct pkt_info *pi)
{
    if (len < ETH_HLEN)
        return PKT_BAD_LEN;
    uint16_t type;
    uint32_t l3 = pkt_tags(f, len, pi, &type);
    if (!l3)
        return PKT_BAD_LEN;
    if (type == ETH_P_ARP && !pi->nvlan)
        return PKT_ARP;
    if (type != ETH_P_IP)
        return PKT_OTHER;
    if (len < l3 + IP4_HLEN)
        return PKT_BAD_LEN;
    const uint8_t *ip = f + l3;
    uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;
    if ((ip[0] >> 4) != 4 || ihl < IP4_HLEN)
        return PKT_BAD_HDR;
    uint32_t tot = rd16(ip + 2);
    /* Ethernet padding may follow the datagram, nothing may be missing. */
    if (tot < ihl || len < l3 + ihl || l3 + tot > len)
        return PKT_BAD_LEN;
    if (pkt_sum_fold(pkt_sum(ip, ihl, 0)) != 0xffff)
        return PKT_BAD_CSUM;
    if (ip[9] != IP_PROTO_UDP)
        return pkt_stamped(f, l3, ihl, tot, check_udp_csum, pi);
    /* Fragments: the first one has a UDP header but not the whole datagram. */
    if (rd16(ip + 6) & 0x3fff)
        return PKT_BAD_HDR;
    if (tot < ihl + UDP_HLEN)
        return PKT_BAD_LEN;
    const uint8_t *udp = ip + ihl;
    uint32_t ulen = rd16(udp + 4);
    if (ulen < UDP_HLEN || ulen > tot - ihl)
        return PKT_BAD_LEN;
    if (check_udp_csum && rd16(udp + 6) != 0) {
        uint32_t s = pkt_sum(ip + 12, 8, 0) + IP_PROTO_UDP + ulen;
        if (pkt_sum_fold(pkt_sum(udp, ulen, s)) != 0xffff)
            return PKT_BAD_CSUM;
    }
    pkt_info_l4(pi, ip, l3, ihl, UDP_HLEN, ulen);
    pi->sport = rd16(udp);
    pi->dport = rd16(udp + 2);
    return PKT_UDP;
}

const char *pkt_kind_name(enum pkt_kind k)
{
    static const char *const names[PKT_KINDS] = {
        [PKT_UDP] = "udp",           [PKT_ARP] = "arp",         [PKT_IP_OTHER] = "ip_other",
        [PKT_OTHER] = "other",       [PKT_BAD_LEN] = "bad_len", [PKT_BAD_HDR] = "bad_hdr",
        [PKT_BAD_CSUM] = "bad_csum", [PKT_STAMPED] = "stamped",
    };
    return (unsigned)k < PKT_KINDS ? names[k] : "?";
}

static void swap_bytes(uint8_t *a, uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

void pkt_udp_reflect(uint8_t *f, const struct pkt_info *pi, const uint8_t my_mac[ETH_ALEN])
{
    memcpy(f + OFF_ETH_DST, f + OFF_ETH_SRC, ETH_ALEN);
    memcpy(f + OFF_ETH_SRC, my_mac, ETH_ALEN);
    swap_bytes(f + pi->ip_off + 12, f + pi->ip_off + 16, 4);
    swap_bytes(f + pi->l4_off, f + pi->l4_off + 2, 2);
}

/* The IP addresses swapped: IPv4's (RFC 791 s3.1) or IPv6's (RFC 8200 s3). */
static void swap_addrs(uint8_t *ip)
{
    if (ip[0] >> 4 == 6)
        swap_bytes(ip + 8, ip + 24, 16);
    else
        swap_bytes(ip + 12, ip + 16, 4);
}

bool pkt_stamped_reflect(uint8_t *f, const struct pkt_info *pi, const uint8_t my_mac[ETH_ALEN])
{
    uint8_t *ip = f + pi->ip_off, *l4 = f + pi->l4_off;
    bool v6 = ip[0] >> 4 == 6;
    if ((v6 ? ip[6] : ip[9]) == IP_PROTO_TCP) {
        swap_bytes(l4, l4 + 2, 2);
    } else {
        uint8_t req = v6 ? ICMPV6_ECHO : ICMP_ECHO, rep = v6 ? ICMPV6_REPLY : ICMP_ECHO_REPLY;
        if (l4[0] != req)
            return false;
        l4[0] = rep; /* the code stays 0: the word goes from req << 8 to rep << 8 */
        wr16(l4 + 2, pkt_csum_update16(rd16(l4 + 2), (uint16_t)(req << 8), (uint16_t)(rep << 8)));
    }
    memcpy(f + OFF_ETH_DST, f + OFF_ETH_SRC, ETH_ALEN);
    memcpy(f + OFF_ETH_SRC, my_mac, ETH_ALEN);
    swap_addrs(ip);
    return true;
}

int pkt_tmpl_build(uint8_t *f, uint16_t len, const uint8_t dst_mac[ETH_ALEN],
                   const uint8_t src_mac[ETH_ALEN], const struct pkt_flow *fl, struct pkt_tmpl *t)
{
    if (len < PKT_MIN_FRAME || len > PKT_MAX_FRAME)
        return -EINVAL;
    memset(f, 0, len);
    memcpy(f + OFF_ETH_DST, dst_mac, ETH_ALEN);
    memcpy(f + OFF_ETH_SRC, src_mac, ETH_ALEN);
    wr16(f + OFF_ETH_TYPE, ETH_P_IP);
    uint8_t *ip = f + OFF_IP;
    ip[0] = 0x45;
    wr16(ip + 2, (uint16_t)(len - ETH_HLEN));
    wr16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = IP_PROTO_UDP;
    wr32(ip + 12, fl->saddr);
    wr32(ip + 16, fl->daddr);
    t->ip_csum = pkt_csum_fold(pkt_sum(ip, IP4_HLEN, 0));
    wr16(ip + 10, t->ip_csum);
    wr16(f + OFF_UDP_SPORT, fl->sport);
    wr16(f + OFF_UDP_DPORT, fl->dport);
    uint16_t ulen = (uint16_t)(len - ETH_HLEN - IP4_HLEN);
    wr16(f + OFF_UDP_LEN, ulen);
    if (len >= PKT_HDRS_LEN + PL_LEN) {
        wrle32(f + OFF_PAYLOAD + PL_OFF_STREAM, fl->stream);
        wrle32(f + OFF_PAYLOAD + PL_OFF_MAGIC, PL_MAGIC);
    } else {
        wrle16(f + OFF_PAYLOAD + PL_OFF_STREAM, (uint16_t)fl->stream);
    }
    /* seq, tsc and the checksum field are 0 here, so the sum of the
     * whole datagram is the part that stays. */
    uint32_t s = udp_pseudo_sum(ip, ulen);
    s = pkt_sum(f + OFF_UDP, ulen, s);
    t->udp_partial = pkt_sum_fold(s);
    t->len = len;
    pkt_patch(f, t, 0, 0);
    return 0;
}

bool pkt_for_local(const uint8_t *f, uint32_t len, uint32_t ip)
{
    if (len < ETH_HLEN + 28)
        return false;
    uint16_t type = rd16(f + OFF_ETH_TYPE);
    if (type == ETH_P_ARP)
        return rd32(f + ETH_HLEN + 24) == ip; /* ARP target protocol address */
    return type == ETH_P_IP && rd32(f + OFF_IP_DST) == ip;
}

bool pkt_payload_hdr(const uint8_t *f, const struct pkt_info *pi, uint32_t *stream, uint64_t *seq)
{
    const uint8_t *pl = f + pi->payload_off;
    if (pi->payload_len < PL_MIN)
        return false;
    if (pi->payload_len >= PL_LEN && rdle32(pl + PL_OFF_MAGIC) != PL_MAGIC)
        return false;
    *stream = pi->payload_len >= PL_LEN ? rdle32(pl + PL_OFF_STREAM) : rdle16(pl + PL_OFF_STREAM);
    *seq = rdle64(pl + PL_OFF_SEQ);
    return true;
}
