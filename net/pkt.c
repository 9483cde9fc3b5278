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

/* What the L3 step found for the L4 one: the datagram's place and its
 * protocol. */
struct pkt_l3 {
    uint32_t off;   /* the IP header's offset */
    uint32_t hlen;  /* its length: IPv4's IHL, IPv6's fixed header */
    uint32_t l4len; /* IPv4's total length less the header, IPv6's payload length */
    uint8_t proto;  /* IPv4's protocol, IPv6's next header */
    uint8_t ipv;    /* 4 or 6 */
    bool frag;      /* an IPv4 fragment */
};

/* The pseudo header's sum for an L4 datagram of l4len bytes: the
 * addresses, the protocol (IPv6: the upper-layer one) and the length
 * (RFC 768, RFC 9293 s3.1, RFC 8200 s8.1). */
static uint32_t pkt_pseudo(const uint8_t *f, const struct pkt_l3 *l, uint32_t l4len)
{
    const uint8_t *ip = f + l->off;
    uint32_t s = l->ipv == 6 ? pkt_sum(ip + 8, 32, 0) : pkt_sum(ip + 12, 8, 0);
    return s + l->proto + l4len;
}

/* pkt_tmpl_build's datagram: IPv4 UDP, no options. */
static const struct pkt_l3 pkt_tmpl_l3 = {
    .off = OFF_IP, .hlen = IP4_HLEN, .proto = IP_PROTO_UDP, .ipv = 4};

uint16_t pkt_udp_csum(const uint8_t *frame)
{
    uint16_t ulen = rd16(frame + OFF_UDP_LEN);
    uint32_t s = pkt_pseudo(frame, &pkt_tmpl_l3, ulen);
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

/* The L3 step's answer when the L4 step goes on. */
#define PKT_L3_ON PKT_KINDS

/* An IPv4 header at l->off: version, IHL, total length against the frame
 * (Ethernet padding may follow the datagram, nothing may be missing),
 * header checksum (RFC 791 s3.1). */
static enum pkt_kind pkt_ip4(const uint8_t *f, uint32_t len, struct pkt_l3 *l)
{
    if (len < l->off + IP4_HLEN)
        return PKT_BAD_LEN;
    const uint8_t *ip = f + l->off;
    l->hlen = (uint32_t)(ip[0] & 0xf) * 4;
    if ((ip[0] >> 4) != 4 || l->hlen < IP4_HLEN)
        return PKT_BAD_HDR;
    uint32_t tot = rd16(ip + 2);
    if (tot < l->hlen || len < l->off + l->hlen || l->off + tot > len)
        return PKT_BAD_LEN;
    if (pkt_sum_fold(pkt_sum(ip, l->hlen, 0)) != 0xffff)
        return PKT_BAD_CSUM;
    l->l4len = tot - l->hlen;
    l->proto = ip[9];
    l->ipv = 4;
    l->frag = rd16(ip + 6) & 0x3fff;
    return PKT_L3_ON;
}

/* An IPv6 header at l->off (RFC 8200 s3): version, payload length against
 * the frame (padding may follow); no header checksum. Extension headers
 * are not parsed: a next header other than UDP, TCP or ICMPv6 (hop-by-hop
 * for MLD, a fragment, routing ...) is not a stream's frame, and the L4
 * step leaves it to the stack. A payload length of 0 (a jumbogram's,
 * RFC 2675, behind hop-by-hop) leaves no room for an L4 header. */
static enum pkt_kind pkt_ip6(const uint8_t *f, uint32_t len, struct pkt_l3 *l)
{
    if (len < l->off + IP6_HLEN)
        return PKT_BAD_LEN;
    const uint8_t *ip = f + l->off;
    if ((ip[0] >> 4) != 6)
        return PKT_BAD_HDR;
    l->hlen = IP6_HLEN;
    l->l4len = rd16(ip + 4);
    if (l->off + IP6_HLEN + l->l4len > len)
        return PKT_BAD_LEN;
    l->proto = ip[6];
    l->ipv = 6;
    l->frag = false;
    return PKT_L3_ON;
}

static void pkt_info_l4(struct pkt_info *pi, const uint8_t *f, const struct pkt_l3 *l, uint32_t hl,
                        uint32_t l4len)
{
    pi->ipv = l->ipv;
    pi->ip_off = l->off;
    pi->l4_off = l->off + l->hlen;
    pi->payload_off = pi->l4_off + hl;
    pi->payload_len = l4len - hl;
    pi->saddr = l->ipv == 4 ? rd32(f + l->off + 12) : 0;
    pi->daddr = l->ipv == 4 ? rd32(f + l->off + 16) : 0;
}

/* An IP datagram other than UDP (its lengths checked): a TCP segment
 * (RFC 9293 s3.1) or an ICMP echo request or reply (RFC 792, RFC 4443
 * s4.1, s4.2: a reflector's answer to a stream's request) whose
 * payload opens with vnperf's stamp and its magic is a stream's
 * (PKT_STAMPED); anything else is the stack's (raw apps' lwIP is
 * untagged: a tagged one is PKT_OTHER). */
static enum pkt_kind pkt_stamped(const uint8_t *f, const struct pkt_l3 *l, bool check,
                                 struct pkt_info *pi)
{
    enum pkt_kind other = pi->nvlan ? PKT_OTHER : PKT_IP_OTHER;
    const uint8_t *l4 = f + l->off + l->hlen;
    uint32_t hl;
    bool tcp = l->proto == IP_PROTO_TCP, v6 = l->ipv == 6;
    bool icmp = l->proto == (v6 ? IP_PROTO_ICMPV6 : IP_PROTO_ICMP);
    if (l->frag)
        return other;
    if (tcp && l->l4len >= TCP_HLEN && (l4[12] >> 4) * 4u >= TCP_HLEN)
        hl = (l4[12] >> 4) * 4u;
    else if (icmp && l->l4len >= ICMP_HLEN && l4[1] == 0 &&
             (v6 ? l4[0] == ICMPV6_ECHO || l4[0] == ICMPV6_REPLY
                 : l4[0] == ICMP_ECHO || l4[0] == ICMP_ECHO_REPLY))
        hl = ICMP_HLEN;
    else
        return other;
    if (l->l4len < hl + PL_LEN || rdle32(l4 + hl + PL_OFF_MAGIC) != PL_MAGIC)
        return other;
    /* TCP's pseudo header (RFC 9293 s3.1), ICMPv6's (RFC 4443 s2.3);
     * ICMPv4's sum is its message's. */
    uint32_t s = tcp || v6 ? pkt_pseudo(f, l, l->l4len) : 0;
    if (check && pkt_sum_fold(pkt_sum(l4, l->l4len, s)) != 0xffff)
        return PKT_BAD_CSUM;
    pkt_info_l4(pi, f, l, hl, l->l4len);
    pi->sport = tcp ? rd16(l4) : 0;
    pi->dport = tcp ? rd16(l4 + 2) : 0;
    return PKT_STAMPED;
}

/* A UDP datagram (RFC 768): its length inside the IP one's, its checksum
 * over the pseudo header when asked; IPv6 has no "no checksum" (RFC 8200
 * s8.1: 0 is refused as a wrong one). */
static enum pkt_kind pkt_udp(const uint8_t *f, const struct pkt_l3 *l, bool check,
                             struct pkt_info *pi)
{
    /* Fragments: the first one has a UDP header but not the whole datagram. */
    if (l->frag)
        return PKT_BAD_HDR;
    if (l->l4len < UDP_HLEN)
        return PKT_BAD_LEN;
    const uint8_t *udp = f + l->off + l->hlen;
    uint32_t ulen = rd16(udp + 4);
    if (ulen < UDP_HLEN || ulen > l->l4len)
        return PKT_BAD_LEN;
    if (check && (rd16(udp + 6) != 0 || l->ipv == 6)) {
        if (rd16(udp + 6) == 0 ||
            pkt_sum_fold(pkt_sum(udp, ulen, pkt_pseudo(f, l, ulen))) != 0xffff)
            return PKT_BAD_CSUM;
    }
    pkt_info_l4(pi, f, l, UDP_HLEN, ulen);
    pi->sport = rd16(udp);
    pi->dport = rd16(udp + 2);
    return PKT_UDP;
}

enum pkt_kind pkt_parse(const uint8_t *f, uint32_t len, bool check_udp_csum, struct pkt_info *pi)
{
    if (len < ETH_HLEN)
        return PKT_BAD_LEN;
    uint16_t type;
    struct pkt_l3 l = {.off = pkt_tags(f, len, pi, &type)};
    if (!l.off)
        return PKT_BAD_LEN;
    if (type == ETH_P_ARP && !pi->nvlan)
        return PKT_ARP;
    enum pkt_kind k = type == ETH_P_IP     ? pkt_ip4(f, len, &l)
                      : type == ETH_P_IPV6 ? pkt_ip6(f, len, &l)
                                           : PKT_OTHER;
    if (k != PKT_L3_ON)
        return k;
    if (l.proto == IP_PROTO_UDP)
        return pkt_udp(f, &l, check_udp_csum, pi);
    return pkt_stamped(f, &l, check_udp_csum, pi);
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

/* The IP addresses swapped: IPv4's (RFC 791 s3.1) or IPv6's (RFC 8200 s3). */
static void swap_addrs(uint8_t *f, const struct pkt_info *pi)
{
    uint8_t *ip = f + pi->ip_off;
    if (pi->ipv == 6)
        swap_bytes(ip + 8, ip + 24, 16);
    else
        swap_bytes(ip + 12, ip + 16, 4);
}

void pkt_udp_reflect(uint8_t *f, const struct pkt_info *pi, const uint8_t my_mac[ETH_ALEN])
{
    memcpy(f + OFF_ETH_DST, f + OFF_ETH_SRC, ETH_ALEN);
    memcpy(f + OFF_ETH_SRC, my_mac, ETH_ALEN);
    swap_addrs(f, pi);
    swap_bytes(f + pi->l4_off, f + pi->l4_off + 2, 2);
}

bool pkt_stamped_reflect(uint8_t *f, const struct pkt_info *pi, const uint8_t my_mac[ETH_ALEN])
{
    uint8_t *ip = f + pi->ip_off, *l4 = f + pi->l4_off;
    bool v6 = pi->ipv == 6;
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
    swap_addrs(f, pi);
    return true;
}

/* An IPv4 address as an IPv6 one: ::ffff:a.b.c.d (RFC 4291 s2.5.5.2). */
static void pkt_addr_mapped(const uint8_t *ip4, uint8_t out[16])
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memcpy(out, prefix, sizeof(prefix));
    memcpy(out + sizeof(prefix), ip4, 4);
}

void pkt_ip_addrs(const uint8_t *f, const struct pkt_info *pi, uint8_t src[16], uint8_t dst[16])
{
    const uint8_t *ip = f + pi->ip_off;
    if (pi->ipv == 6) {
        memcpy(src, ip + 8, 16);
        memcpy(dst, ip + 24, 16);
    } else {
        pkt_addr_mapped(ip + 12, src);
        pkt_addr_mapped(ip + 16, dst);
    }
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
    uint32_t s = pkt_pseudo(f, &pkt_tmpl_l3, ulen);
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
