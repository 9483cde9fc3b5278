/* Ethernet / IPv4 / UDP frames for the raw fast path: parsing (IPv4 and
 * IPv6) with every length and checksum checked, the generator's frame
 * template and its per-packet patch. Pure functions on byte buffers (host unit tested). */
#ifndef VN_PKT_H
#define VN_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETH_HLEN      14
#define ETH_ALEN      6
#define ETH_P_IP      0x0800
#define ETH_P_ARP     0x0806
#define ETH_P_IPV6    0x86dd
#define ETH_P_8021Q   0x8100 /* IEEE 802.1Q tag */
#define ETH_P_8021AD  0x88a8 /* IEEE 802.1ad service tag (QinQ's outer) */
#define PKT_VLANS_MAX 2      /* 802.1Q, or QinQ: 802.1ad outer, 802.1Q inner */
#define IP4_HLEN      20
#define IP6_HLEN      40 /* the fixed header (RFC 8200 s3) */
#define IP_PROTO_ICMP 1
#define IP_PROTO_TCP  6
#define IP_PROTO_UDP  17
#define UDP_HLEN      8
#define PKT_HDRS_LEN  (ETH_HLEN + IP4_HLEN + UDP_HLEN) /* 42 */
#define PKT_MIN_FRAME 60                               /* Ethernet minimum without FCS */
#define PKT_MAX_FRAME 9014                             /* jumbo MTU 9000 + Ethernet header */

/* The L4 headers of a stream's other frames (docs/streams.md). */
#define IP_PROTO_ICMPV6 58
#define TCP_HLEN        20  /* without options (RFC 9293 s3.1) */
#define ICMP_HLEN       8   /* an echo request's: type, code, checksum, id, sequence */
#define ICMP_ECHO       8   /* RFC 792 */
#define ICMP_ECHO_REPLY 0   /* RFC 792 */
#define ICMPV6_ECHO     128 /* RFC 4443 s4.1 */
#define ICMPV6_REPLY    129 /* RFC 4443 s4.2 */

/* Byte offsets inside a frame built by pkt_tmpl_build (no IP options). */
#define OFF_ETH_DST   0
#define OFF_ETH_SRC   6
#define OFF_ETH_TYPE  12
#define OFF_IP        ETH_HLEN
#define OFF_IP_LEN    (OFF_IP + 2)
#define OFF_IP_CSUM   (OFF_IP + 10)
#define OFF_IP_SRC    (OFF_IP + 12)
#define OFF_IP_DST    (OFF_IP + 16)
#define OFF_UDP       (OFF_IP + IP4_HLEN)
#define OFF_UDP_SPORT (OFF_UDP + 0)
#define OFF_UDP_DPORT (OFF_UDP + 2)
#define OFF_UDP_LEN   (OFF_UDP + 4)
#define OFF_UDP_CSUM  (OFF_UDP + 6)
#define OFF_PAYLOAD   PKT_HDRS_LEN

/* The payload header, shared with the host peer (tools/peer, docs/peer.md):
 * little endian, at the start of the UDP payload. A 60..65-byte frame has
 * only 18 payload bytes: sequence number, timestamp and the low 16 bits of
 * the stream id; from 66 bytes on the full header with the magic. */
#define PL_OFF_SEQ    0  /* u64 sequence number, per stream, from 0 */
#define PL_OFF_TSC    8  /* u64 sender TSC at send time */
#define PL_OFF_STREAM 16 /* u32 stream (flow) id */
#define PL_OFF_MAGIC  20 /* u32 PL_MAGIC */
#define PL_LEN        24
#define PL_MIN        18          /* what a 60-byte frame holds */
#define PL_MAGIC      0x564e5046u /* "VNPF" */

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void wr32(uint8_t *p, uint32_t v)
{
    wr16(p, (uint16_t)(v >> 16));
    wr16(p + 2, (uint16_t)v);
}
/* Little-endian payload fields (x86 order: plain stores). */
static inline uint64_t rdle64(const uint8_t *p)
{
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return v;
}
static inline uint32_t rdle32(const uint8_t *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}
static inline uint16_t rdle16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline void wrle64(uint8_t *p, uint64_t v)
{
    __builtin_memcpy(p, &v, 8);
}
static inline void wrle32(uint8_t *p, uint32_t v)
{
    __builtin_memcpy(p, &v, 4);
}
static inline void wrle16(uint8_t *p, uint16_t v)
{
    __builtin_memcpy(p, &v, 2);
}

/* One's complement sum helpers (RFC 1071). A "partial" sum is an
 * unfolded 32-bit accumulator; pkt_csum_fold turns it into the 16-bit
 * checksum field value. */
uint32_t pkt_sum(const uint8_t *data, size_t len, uint32_t partial);
/* Adds the sum of a u64 stored little endian: the one's complement sum is
 * byte-order independent (RFC 1071 s2(B)), so sum the four 16-bit halves
 * as numbers, fold, and swap the result into network order. */
static inline uint32_t pkt_sum_add_le64(uint32_t partial, uint64_t v)
{
    uint32_t s =
        (uint32_t)(uint16_t)(v >> 48) + (uint16_t)(v >> 32) + (uint16_t)(v >> 16) + (uint16_t)v;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return partial + __builtin_bswap16((uint16_t)s);
}
static inline uint16_t pkt_sum_fold(uint32_t partial)
{
    partial = (partial & 0xffff) + (partial >> 16);
    partial = (partial & 0xffff) + (partial >> 16);
    return (uint16_t)partial;
}
static inline uint16_t pkt_csum_fold(uint32_t partial)
{
    return (uint16_t)~pkt_sum_fold(partial);
}

/* RFC 1624 eqn. 3: the new checksum after one 16-bit word changes from
 * old to new: HC' = ~(~HC + ~m + m'). */
static inline uint16_t pkt_csum_update16(uint16_t csum, uint16_t old, uint16_t new_)
{
    uint32_t s = (uint32_t)(uint16_t)~csum + (uint16_t)~old + new_;
    return (uint16_t)~pkt_sum_fold(s);
}

/* UDP checksum field value for a frame with the layout above; 0 becomes
 * 0xffff (RFC 768: 0 means "no checksum"). */
uint16_t pkt_udp_csum(const uint8_t *frame);

/* --- parsing --- */
enum pkt_kind {
    PKT_UDP,      /* valid IPv4 or IPv6 UDP, untagged or under one or two tags: info filled */
    PKT_ARP,      /* ARP (for lwIP), untagged */
    PKT_IP_OTHER, /* valid IPv4 or IPv6, not UDP (ICMP, TCP, extension headers: lwIP's), untagged */
    PKT_OTHER,    /* another ethertype (LLDP ...), a tagged frame but UDP: not ours */
    PKT_BAD_LEN,  /* truncated frame or inconsistent length fields */
    PKT_BAD_HDR,  /* bad IP version/IHL, fragment, ... */
    PKT_BAD_CSUM, /* IPv4 header or UDP checksum wrong (a stamped TCP or ICMP one's too) */
    PKT_STAMPED,  /* valid IPv4 or IPv6 TCP or ICMP echo request or reply carrying vnperf's
                   * stamp with its magic (a stream's frame, docs/streams.md): info filled */
    PKT_KINDS
};

struct pkt_info {
    uint8_t nvlan;                /* tags before the IP header: 0, 1 or 2 */
    uint8_t ipv;                  /* 4 or 6 */
    uint16_t vlan[PKT_VLANS_MAX]; /* their VLAN ids, outer first */
    uint32_t ip_off;              /* IP header offset (after Ethernet and its tags) */
    uint32_t l4_off;              /* UDP (TCP, ICMP) header offset */
    uint32_t payload_off;         /* UDP (TCP, ICMP) payload offset */
    uint32_t payload_len;         /* UDP payload length from the UDP header (TCP, ICMP: IP's) */
    uint16_t sport, dport;        /* TCP's too; ICMP: 0 */
    uint32_t saddr, daddr;        /* IPv4's, host byte order; IPv6: 0 (pkt_ip_addrs) */
};

/* Classifies a received frame; every length is checked against len before
 * it is used, so any byte string is safe. check_udp_csum: verify a
 * non-zero UDP checksum too (IPv6's, 0 included), and a stamped TCP or
 * ICMP frame's (the IPv4 header checksum is always verified). TCP and
 * ICMP frames without the stamp's magic stay PKT_IP_OTHER: the stack's. */
enum pkt_kind pkt_parse(const uint8_t *f, uint32_t len, bool check_udp_csum, struct pkt_info *pi);

const char *pkt_kind_name(enum pkt_kind k);

/* fwd: an ARP frame for ip (host byte order) or an IPv4 frame to it, which
 * the forwarder's own stack takes instead of passing it on. */
bool pkt_for_local(const uint8_t *f, uint32_t len, uint32_t ip);

/* The vnperf payload header of a UDP (or PKT_STAMPED) frame pkt_parse() accepted: true and
 * the stream and sequence number when the payload holds one (PL_MIN bytes;
 * from PL_LEN on also the magic), else false. */
bool pkt_payload_hdr(const uint8_t *f, const struct pkt_info *pi, uint32_t *stream, uint64_t *seq);

/* Turns a received UDP frame into its answer in place: Ethernet
 * destination <- source, source <- mine, IP addresses (IPv4 or IPv6) and
 * UDP ports swapped. Swapping 16-bit words leaves both checksums valid. */
void pkt_udp_reflect(uint8_t *f, const struct pkt_info *pi, const uint8_t my_mac[ETH_ALEN]);

/* Turns a PKT_STAMPED frame into its answer in place as pkt_udp_reflect
 * does: a TCP segment's addresses and ports swapped (its checksum stays
 * valid: the pseudo header's sum does not depend on the order), an ICMP
 * echo request made a reply (RFC 792 type 0, RFC 4443 s4.2 type 129), its
 * checksum updated for the type alone (RFC 1624 eqn. 3). False, and the
 * frame untouched, for an echo reply: answering it would bounce it back
 * and forth. */
bool pkt_stamped_reflect(uint8_t *f, const struct pkt_info *pi, const uint8_t my_mac[ETH_ALEN]);

/* A parsed frame's (PKT_UDP, PKT_STAMPED) source and destination
 * addresses as on the wire, 16 bytes each: IPv6's (RFC 8200 s3), an IPv4
 * one mapped (::ffff:a.b.c.d, RFC 4291 s2.5.5.2), so both families key
 * one table. */
void pkt_ip_addrs(const uint8_t *f, const struct pkt_info *pi, uint8_t src[16], uint8_t dst[16]);

/* --- the generator's template --- */
struct pkt_flow {
    uint32_t saddr, daddr; /* host byte order */
    uint16_t sport, dport;
    uint32_t stream;
};

/* What does not change from packet to packet of one (flow, size). */
struct pkt_tmpl {
    uint32_t udp_partial; /* UDP sum of everything but seq and tsc */
    uint16_t ip_csum;
    uint16_t len; /* frame length */
};

/* Writes a complete frame (Ethernet, IPv4 with DF and TTL 64, UDP, the
 * payload header with seq and tsc 0, the rest zero) of len bytes
 * (PKT_MIN_FRAME..PKT_MAX_FRAME) into f and fills t. Returns 0 or -EINVAL. */
int pkt_tmpl_build(uint8_t *f, uint16_t len, const uint8_t dst_mac[ETH_ALEN],
                   const uint8_t src_mac[ETH_ALEN], const struct pkt_flow *fl, struct pkt_tmpl *t);

/* Sets the flow fields of a frame built for another flow of the same
 * length (addresses, ports, stream id, IP checksum). */
static inline void pkt_set_flow(uint8_t *f, const struct pkt_flow *fl, const struct pkt_tmpl *t)
{
    wr32(f + OFF_IP_SRC, fl->saddr);
    wr32(f + OFF_IP_DST, fl->daddr);
    wr16(f + OFF_IP_CSUM, t->ip_csum);
    wr16(f + OFF_UDP_SPORT, fl->sport);
    wr16(f + OFF_UDP_DPORT, fl->dport);
    if (t->len >= PKT_HDRS_LEN + PL_LEN)
        wrle32(f + OFF_PAYLOAD + PL_OFF_STREAM, fl->stream);
    else
        wrle16(f + OFF_PAYLOAD + PL_OFF_STREAM, fl->stream);
}

/* The per-packet patch with the timestamp already in the partial sum
 * (the same for a whole burst). */
static inline void pkt_patch_sum(uint8_t *f, uint32_t partial_with_tsc, uint64_t seq, uint64_t tsc)
{
    uint16_t c = pkt_csum_fold(pkt_sum_add_le64(partial_with_tsc, seq));
    wrle64(f + OFF_PAYLOAD + PL_OFF_SEQ, seq);
    wrle64(f + OFF_PAYLOAD + PL_OFF_TSC, tsc);
    wr16(f + OFF_UDP_CSUM, c ? c : 0xffff); /* 0 means no checksum, RFC 768 */
}

/* The per-packet patch of a frame whose checksum the device finishes
 * (its field holds the pseudo-header sum): sequence number, timestamp. */
static inline void pkt_patch_stamp(uint8_t *f, uint64_t seq, uint64_t tsc)
{
    wrle64(f + OFF_PAYLOAD + PL_OFF_SEQ, seq);
    wrle64(f + OFF_PAYLOAD + PL_OFF_TSC, tsc);
}

/* The per-packet patch: sequence number, timestamp, UDP checksum. */
static inline void pkt_patch(uint8_t *f, const struct pkt_tmpl *t, uint64_t seq, uint64_t tsc)
{
    pkt_patch_sum(f, pkt_sum_add_le64(t->udp_partial, tsc), seq, tsc);
}

#endif
