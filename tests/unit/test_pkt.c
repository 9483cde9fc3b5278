/* net/pkt.c: template checksums against a plain RFC 1071 reference, the
 * per-packet patch, parsing of good and malformed frames, reflection. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/pkt.h"
#include "ref_csum.h"
#include "ref_frame6.h"

static const uint8_t dmac[6] = {0x52, 0x54, 0, 0, 0, 2};
static const uint8_t smac[6] = {0x52, 0x54, 0, 0, 0, 1};

/* Reference: RFC 1071 checksum over a byte string, written independently
 * of the code under test (32-bit accumulation, carries folded at the end). */
static uint16_t ref_csum(const uint8_t *p, size_t n)
{
    return (uint16_t)~ref_fold(ref_sum(p, n, 0));
}

static uint16_t ref_udp_csum(const uint8_t *f)
{
    uint16_t ulen = (uint16_t)(f[OFF_UDP_LEN] << 8 | f[OFF_UDP_LEN + 1]);
    uint8_t *buf = calloc(1, 12 + ulen);
    memcpy(buf, f + OFF_IP_SRC, 8);
    buf[9] = IP_PROTO_UDP;
    buf[10] = (uint8_t)(ulen >> 8);
    buf[11] = (uint8_t)ulen;
    memcpy(buf + 12, f + OFF_UDP, ulen);
    buf[12 + 6] = 0;
    buf[12 + 7] = 0;
    uint16_t c = ref_csum(buf, 12 + (size_t)ulen);
    free(buf);
    return c ? c : 0xffff;
}

static const struct pkt_flow flow0 = {0x0a000001, 0x0a000002, 1234, 5678, 3};

static void test_template_checksums(void **st)
{
    (void)st;
    static const uint16_t lens[] = {60, 61, 64, 128, 511, 1514, 9014};
    uint8_t f[PKT_MAX_FRAME];
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        struct pkt_tmpl t;
        assert_int_equal(pkt_tmpl_build(f, lens[i], dmac, smac, &flow0, &t), 0);
        assert_int_equal(t.len, lens[i]);
        assert_int_equal(ref_csum(f + OFF_IP, IP4_HLEN), 0);
        assert_int_equal(rd16(f + OFF_UDP_CSUM), ref_udp_csum(f));
        assert_int_equal(rd16(f + OFF_IP_LEN), lens[i] - ETH_HLEN);
        if (lens[i] >= PKT_HDRS_LEN + PL_LEN) {
            assert_int_equal(rdle32(f + OFF_PAYLOAD + PL_OFF_STREAM), 3);
            assert_int_equal(rdle32(f + OFF_PAYLOAD + PL_OFF_MAGIC), PL_MAGIC);
        } else {
            assert_int_equal(rdle16(f + OFF_PAYLOAD + PL_OFF_STREAM), 3);
        }
    }
    assert_int_equal(pkt_tmpl_build(f, 59, dmac, smac, &flow0, &(struct pkt_tmpl){0}), -EINVAL);
    assert_int_equal(pkt_tmpl_build(f, 9015, dmac, smac, &flow0, &(struct pkt_tmpl){0}), -EINVAL);
}

static void test_patch_matches_reference(void **st)
{
    (void)st;
    uint8_t f[1514];
    struct pkt_tmpl t;
    srand(7);
    for (uint16_t len = 60; len <= 1514; len += len < 70 ? 1 : 97) {
        assert_int_equal(pkt_tmpl_build(f, len, dmac, smac, &flow0, &t), 0);
        for (int i = 0; i < 2000; i++) {
            uint64_t seq = ((uint64_t)rand() << 33) ^ (uint64_t)rand();
            uint64_t tsc = ((uint64_t)rand() << 31) ^ ((uint64_t)rand() << 7);
            if (i == 0)
                seq = tsc = 0;
            if (i == 1)
                seq = tsc = UINT64_MAX;
            pkt_patch(f, &t, seq, tsc);
            assert_int_equal(rdle64(f + OFF_PAYLOAD + PL_OFF_SEQ), seq);
            assert_int_equal(rdle64(f + OFF_PAYLOAD + PL_OFF_TSC), tsc);
            assert_int_equal(rd16(f + OFF_UDP_CSUM), ref_udp_csum(f));
            assert_int_equal(pkt_udp_csum(f), ref_udp_csum(f));
            struct pkt_info pi;
            assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
        }
    }
}

static void test_set_flow(void **st)
{
    (void)st;
    uint8_t f[200], g[200];
    struct pkt_tmpl t0, t1;
    struct pkt_flow fl1 = {0xc0a80101, 0xc0a80202, 9, 65535, 77};
    static const uint16_t lens[] = {60, 65, 66, 200};
    for (size_t i = 0; i < 4; i++) {
        pkt_tmpl_build(f, lens[i], dmac, smac, &flow0, &t0);
        pkt_tmpl_build(g, lens[i], dmac, smac, &fl1, &t1);
        /* Re-aim a frame of flow 0 at flow 1: same bytes as a fresh build. */
        pkt_set_flow(f, &fl1, &t1);
        pkt_patch(f, &t1, 42, 4242);
        pkt_patch(g, &t1, 42, 4242);
        assert_memory_equal(f, g, lens[i]);
        assert_int_equal(rd16(f + OFF_UDP_CSUM), ref_udp_csum(f));
    }
}

static void test_rfc1624_update(void **st)
{
    (void)st;
    uint8_t hdr[20] = {0x45, 0, 0,  0x54, 0x12, 0x34, 0x40, 0, 64, 1,
                       0,    0, 10, 0,    0,    1,    10,   0, 0,  2};
    uint16_t c = ref_csum(hdr, 20);
    wr16(hdr + 10, c);
    for (uint32_t v = 0; v <= 0xffff; v += 251) {
        uint16_t old = rd16(hdr + 8);
        wr16(hdr + 8, (uint16_t)v);
        c = pkt_csum_update16(c, old, (uint16_t)v);
        wr16(hdr + 10, c);
        assert_int_equal(ref_csum(hdr, 20), 0);
    }
}

static void test_parse_malformed(void **st)
{
    (void)st;
    uint8_t f[128];
    struct pkt_tmpl t;
    struct pkt_info pi;
    pkt_tmpl_build(f, 128, dmac, smac, &flow0, &t);
    assert_int_equal(pkt_parse(f, 128, true, &pi), PKT_UDP);
    assert_int_equal(pi.sport, 1234);
    assert_int_equal(pi.dport, 5678);
    assert_int_equal(pi.payload_len, 128 - PKT_HDRS_LEN);
    assert_int_equal(pi.saddr, 0x0a000001);
    /* Every truncation of a good frame is rejected as a length error. */
    for (uint32_t n = 0; n < 128; n++)
        assert_int_equal(pkt_parse(f, n, true, &pi), PKT_BAD_LEN);

    uint8_t g[128];
    memcpy(g, f, 128);
    g[OFF_PAYLOAD + 5] ^= 0x40; /* payload bit flip */
    assert_int_equal(pkt_parse(g, 128, true, &pi), PKT_BAD_CSUM);
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_UDP);
    memcpy(g, f, 128);
    g[OFF_IP + 8] ^= 1; /* TTL flip breaks the IP header checksum */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_BAD_CSUM);
    memcpy(g, f, 128);
    wr16(g + OFF_UDP_LEN, 4); /* UDP length below its header */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_BAD_LEN);
    wr16(g + OFF_UDP_LEN, 200); /* beyond the datagram */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_BAD_LEN);
    memcpy(g, f, 128);
    g[OFF_IP] = 0x44; /* IHL 16 bytes */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_BAD_HDR);
    g[OFF_IP] = 0x65; /* version 6 */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_BAD_HDR);
    memcpy(g, f, 128);
    wr16(g + OFF_ETH_TYPE, ETH_P_IPV6); /* an IPv4 header is no IPv6 one */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_BAD_HDR);
    wr16(g + OFF_ETH_TYPE, 0x88cc); /* LLDP */
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_OTHER);
    wr16(g + OFF_ETH_TYPE, ETH_P_ARP);
    assert_int_equal(pkt_parse(g, 128, false, &pi), PKT_ARP);
    /* A zero UDP checksum means "none" and is accepted. */
    memcpy(g, f, 128);
    wr16(g + OFF_UDP_CSUM, 0);
    g[OFF_PAYLOAD + 5] ^= 0x40;
    assert_int_equal(pkt_parse(g, 128, true, &pi), PKT_UDP);
}

static void test_parse_garbage(void **st)
{
    (void)st;
    uint8_t f[256];
    struct pkt_info pi;
    srand(99);
    int kinds[PKT_KINDS] = {0};
    for (int i = 0; i < 200000; i++) {
        uint32_t n = (uint32_t)rand() % sizeof(f);
        for (uint32_t k = 0; k < n; k++)
            f[k] = (uint8_t)rand();
        if (i & 1) { /* make it look like IPv4 to get deeper */
            if (n > 14) {
                wr16(f + OFF_ETH_TYPE, ETH_P_IP);
                f[OFF_IP] = 0x45;
            }
        }
        enum pkt_kind k = pkt_parse(f, n, true, &pi);
        assert_in_range(k, 0, PKT_KINDS - 1);
        kinds[k]++;
        if (k == PKT_UDP)
            assert_true(pi.payload_off + pi.payload_len <= n);
    }
    assert_true(kinds[PKT_BAD_CSUM] > 0 && kinds[PKT_BAD_LEN] > 0 && kinds[PKT_OTHER] > 0);
}

static void test_reflect(void **st)
{
    (void)st;
    uint8_t f[100];
    struct pkt_tmpl t;
    struct pkt_info pi;
    const uint8_t me[6] = {2, 0, 0, 0, 0, 9};
    pkt_tmpl_build(f, 100, dmac, smac, &flow0, &t);
    pkt_patch(f, &t, 5, 6);
    assert_int_equal(pkt_parse(f, 100, true, &pi), PKT_UDP);
    pkt_udp_reflect(f, &pi, me);
    assert_memory_equal(f + OFF_ETH_DST, smac, 6);
    assert_memory_equal(f + OFF_ETH_SRC, me, 6);
    assert_int_equal(pkt_parse(f, 100, true, &pi), PKT_UDP);
    assert_int_equal(pi.saddr, flow0.daddr);
    assert_int_equal(pi.daddr, flow0.saddr);
    assert_int_equal(pi.sport, flow0.dport);
    assert_int_equal(pi.dport, flow0.sport);
    assert_int_equal(rd16(f + OFF_UDP_CSUM), ref_udp_csum(f));
}

/* f (len bytes, untagged) with n tags inserted after the MACs: the
 * outer one 802.1ad when there are two, ids 100, 200 (priority bits set:
 * only the low 12 are the id). The tagged frame's length. */
static uint32_t tag_frame(uint8_t *f, uint32_t len, unsigned n)
{
    memmove(f + 12 + 4 * n, f + 12, len - 12);
    for (unsigned i = 0; i < n; i++) {
        wr16(f + 12 + 4 * i, n == 2 && i == 0 ? ETH_P_8021AD : ETH_P_8021Q);
        wr16(f + 14 + 4 * i, (uint16_t)(0xe000 | (100 * (i + 1))));
    }
    return len + 4 * n;
}

/* 802.1Q and QinQ frames parse as UDP behind their tags, with the ids and
 * the offsets moved by 4 per tag; a cut tag is a length error; a third
 * tag and a tagged ARP or ICMP frame are not ours; a reflected tagged
 * frame keeps its tags and swaps behind them. */
static void test_parse_tagged(void **st)
{
    (void)st;
    const uint8_t me[6] = {2, 0, 0, 0, 0, 9};
    for (unsigned n = 1; n <= 3; n++) {
        uint8_t f[160];
        struct pkt_tmpl t;
        struct pkt_info pi;
        pkt_tmpl_build(f, 100, dmac, smac, &flow0, &t);
        pkt_patch(f, &t, 5, 6);
        uint32_t len = tag_frame(f, 100, n);
        if (n == 3) {
            assert_int_equal(pkt_parse(f, len, true, &pi), PKT_OTHER);
            continue;
        }
        assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
        assert_int_equal(pi.nvlan, n);
        assert_int_equal(pi.vlan[0], 100);
        if (n == 2)
            assert_int_equal(pi.vlan[1], 200);
        assert_int_equal(pi.ip_off, OFF_IP + 4 * n);
        assert_int_equal(pi.payload_off, OFF_PAYLOAD + 4 * n);
        assert_int_equal(pi.payload_len, 100 - PKT_HDRS_LEN);
        assert_int_equal(rdle64(f + pi.payload_off + PL_OFF_SEQ), 5);
        for (uint32_t k = 12; k < 18 + 4 * (n - 1); k++)
            assert_int_equal(pkt_parse(f, k, true, &pi), PKT_BAD_LEN);
        pkt_udp_reflect(f, &pi, me);
        assert_memory_equal(f + OFF_ETH_SRC, me, 6);
        assert_int_equal(rd16(f + 12), n == 2 ? ETH_P_8021AD : ETH_P_8021Q);
        assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
        assert_int_equal(pi.saddr, flow0.daddr);
        assert_int_equal(pi.sport, flow0.dport);
        f[pi.ip_off + 9] = IP_PROTO_ICMP;
        f[pi.ip_off + 10] = f[pi.ip_off + 11] = 0;
        wr16(f + pi.ip_off + 10, ref_csum(f + pi.ip_off, IP4_HLEN));
        assert_int_equal(pkt_parse(f, len, true, &pi), PKT_OTHER);
        wr16(f + 12 + 4 * n, ETH_P_ARP);
        assert_int_equal(pkt_parse(f, len, true, &pi), PKT_OTHER);
    }
}

/* --- IPv6 (RFC 8200) --- */

static const uint8_t v6_protos[] = {IP_PROTO_UDP, IP_PROTO_TCP, IP_PROTO_ICMPV6};

/* IPv6 UDP parses as UDP, a stamped TCP segment or ICMPv6 echo request
 * as PKT_STAMPED, untagged and behind one or two tags, Ethernet padding
 * after the datagram allowed: the offsets, ports and stamp as built. */
static void test_parse_ipv6(void **st)
{
    (void)st;
    for (unsigned i = 0; i < sizeof(v6_protos); i++) {
        uint8_t proto = v6_protos[i];
        for (unsigned n = 0; n <= 2; n++) {
            uint8_t f[200];
            struct pkt_info pi;
            uint32_t id;
            uint64_t seq;
            ref6_frame(f, 120, proto, 7, 9);
            f[120] = f[121] = 0; /* padding */
            uint32_t len = tag_frame(f, 122, n);
            enum pkt_kind want = proto == IP_PROTO_UDP ? PKT_UDP : PKT_STAMPED;
            assert_int_equal(pkt_parse(f, len, true, &pi), want);
            assert_int_equal(pi.ipv, 6);
            assert_int_equal(pi.nvlan, n);
            assert_int_equal(pi.ip_off, ETH_HLEN + 4 * n);
            assert_int_equal(pi.l4_off, ETH_HLEN + IP6_HLEN + 4 * n);
            assert_int_equal(pi.payload_off, pi.l4_off + ref6_l4_hlen(proto));
            assert_int_equal(pi.payload_len, 120 - ETH_HLEN - IP6_HLEN - ref6_l4_hlen(proto));
            assert_int_equal(pi.sport, proto == IP_PROTO_ICMPV6 ? 0 : 1234);
            assert_int_equal(pi.dport, proto == IP_PROTO_ICMPV6 ? 0 : 5678);
            assert_true(pkt_payload_hdr(f, &pi, &id, &seq));
            assert_int_equal(id, 7);
            assert_int_equal(seq, 9);
        }
    }
}

/* Every length and checksum of an IPv6 frame is checked: a flipped bit
 * (UDP's zero checksum too: IPv6 has no "none", RFC 8200 s8.1), every
 * truncation, a payload length past the frame's end or short of the UDP
 * length, a version other than 6; a stamped frame's payload length cut
 * changes its pseudo header. */
static void test_parse_ipv6_malformed(void **st)
{
    (void)st;
    const unsigned plen_at = ETH_HLEN + 4;
    for (unsigned i = 0; i < sizeof(v6_protos); i++) {
        uint8_t proto = v6_protos[i];
        enum pkt_kind want = proto == IP_PROTO_UDP ? PKT_UDP : PKT_STAMPED;
        uint8_t f[120], g[120];
        struct pkt_info pi;
        ref6_frame(f, 120, proto, 7, 9);
        for (uint32_t n = 0; n < 120; n++)
            assert_int_equal(pkt_parse(f, n, true, &pi), PKT_BAD_LEN);
        memcpy(g, f, 120);
        g[110] ^= 0x40;
        assert_int_equal(pkt_parse(g, 120, true, &pi), PKT_BAD_CSUM);
        assert_int_equal(pkt_parse(g, 120, false, &pi), want);
        memcpy(g, f, 120);
        g[ETH_HLEN + 8] ^= 1; /* the source address: in the pseudo header */
        assert_int_equal(pkt_parse(g, 120, true, &pi), PKT_BAD_CSUM);
        memcpy(g, f, 120);
        wr16(g + plen_at, 120 - ETH_HLEN - IP6_HLEN + 1); /* past the frame */
        assert_int_equal(pkt_parse(g, 120, true, &pi), PKT_BAD_LEN);
        wr16(g + plen_at, 0xffff);
        assert_int_equal(pkt_parse(g, 120, true, &pi), PKT_BAD_LEN);
        wr16(g + plen_at, 120 - ETH_HLEN - IP6_HLEN - 1); /* short of the datagram */
        assert_int_equal(pkt_parse(g, 120, true, &pi),
                         proto == IP_PROTO_UDP ? PKT_BAD_LEN : PKT_BAD_CSUM);
        memcpy(g, f, 120);
        g[ETH_HLEN] = 0x40 | (g[ETH_HLEN] & 0xf); /* version 4 */
        assert_int_equal(pkt_parse(g, 120, true, &pi), PKT_BAD_HDR);
    }
    uint8_t f[120];
    struct pkt_info pi;
    ref6_frame(f, 120, IP_PROTO_UDP, 7, 9);
    wr16(f + ETH_HLEN + IP6_HLEN + 6, 0);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_BAD_CSUM);
    assert_int_equal(pkt_parse(f, 120, false, &pi), PKT_UDP);
}

/* What is not a stream's stays the stack's (PKT_IP_OTHER; tagged:
 * PKT_OTHER): a hop-by-hop header before UDP (extension headers are not
 * parsed: MLD's reports carry one), a neighbour solicitation, an echo
 * request or a segment without the magic, ICMPv4's echo type under
 * next header 58. */
static void test_parse_ipv6_not_ours(void **st)
{
    (void)st;
    const unsigned l4 = ETH_HLEN + IP6_HLEN;
    uint8_t f[160];
    struct pkt_info pi;
    ref6_frame(f, 120, IP_PROTO_UDP, 7, 9);
    f[ETH_HLEN + 6] = 0; /* hop-by-hop */
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_IP_OTHER);
    assert_int_equal(pkt_parse(f, tag_frame(f, 120, 1), true, &pi), PKT_OTHER);
    ref6_frame(f, 120, IP_PROTO_ICMPV6, 7, 9);
    f[l4] = 135;
    ref6_fix_csum(f, 120);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_IP_OTHER);
    ref6_frame(f, 120, IP_PROTO_ICMPV6, 7, 9);
    f[l4] = ICMP_ECHO;
    ref6_fix_csum(f, 120);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_IP_OTHER);
    for (unsigned i = 1; i < sizeof(v6_protos); i++) {
        ref6_frame(f, 120, v6_protos[i], 7, 9);
        f[l4 + ref6_l4_hlen(v6_protos[i]) + PL_OFF_MAGIC] ^= 1;
        ref6_fix_csum(f, 120);
        assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_IP_OTHER);
    }
}

/* A reflected IPv6 UDP frame has its addresses and ports swapped, its
 * checksum still right; so has a stamped one. */
static void test_reflect_ipv6(void **st)
{
    (void)st;
    const uint8_t me[6] = {2, 0, 0, 0, 0, 9};
    uint8_t f[120];
    struct pkt_info pi;
    ref6_frame(f, 120, IP_PROTO_UDP, 7, 9);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_UDP);
    pkt_udp_reflect(f, &pi, me);
    assert_memory_equal(f + ETH_HLEN + 8, ref6_dip, 16);
    assert_memory_equal(f + ETH_HLEN + 24, ref6_sip, 16);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_UDP);
    assert_int_equal(pi.sport, 5678);
    assert_int_equal(pi.dport, 1234);
    assert_true(ref_l4_ok(f, ETH_HLEN, 1, 120));
    /* The reflector's answer to a stamped IPv6 TCP segment (addresses and
     * ports swapped) and ICMPv6 echo request (an echo reply, RFC 4443
     * s4.2) parses as stamped, its checksum right; the reply is never
     * answered. */
    ref6_frame(f, 120, IP_PROTO_TCP, 7, 9);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_STAMPED);
    assert_true(pkt_stamped_reflect(f, &pi, me));
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_STAMPED);
    assert_int_equal(pi.sport, 5678);
    assert_memory_equal(f + ETH_HLEN + 8, ref6_dip, 16);
    ref6_frame(f, 120, IP_PROTO_ICMPV6, 7, 9);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_STAMPED);
    assert_true(pkt_stamped_reflect(f, &pi, me));
    assert_int_equal(f[ETH_HLEN + IP6_HLEN], ICMPV6_REPLY);
    assert_true(ref_l4_ok(f, ETH_HLEN, 1, 120));
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_STAMPED);
    assert_false(pkt_stamped_reflect(f, &pi, me));
}

/* pkt_ip_addrs: IPv4's addresses mapped (::ffff:10.0.0.1, RFC 4291
 * s2.5.5.2) after a tag, IPv6's as on the wire. */
static void test_ip_addrs(void **st)
{
    (void)st;
    static const uint8_t s4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    static const uint8_t d4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
    uint8_t f[200], src[16], dst[16];
    struct pkt_tmpl t;
    struct pkt_info pi;
    pkt_tmpl_build(f, 100, dmac, smac, &flow0, &t);
    assert_int_equal(pkt_parse(f, tag_frame(f, 100, 1), true, &pi), PKT_UDP);
    pkt_ip_addrs(f, &pi, src, dst);
    assert_memory_equal(src, s4, 16);
    assert_memory_equal(dst, d4, 16);
    ref6_frame(f, 120, IP_PROTO_TCP, 7, 9);
    assert_int_equal(pkt_parse(f, 120, true, &pi), PKT_STAMPED);
    pkt_ip_addrs(f, &pi, src, dst);
    assert_memory_equal(src, ref6_sip, 16);
    assert_memory_equal(dst, ref6_dip, 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_checksums),
        cmocka_unit_test(test_patch_matches_reference),
        cmocka_unit_test(test_set_flow),
        cmocka_unit_test(test_rfc1624_update),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_parse_garbage),
        cmocka_unit_test(test_reflect),
        cmocka_unit_test(test_parse_tagged),
        cmocka_unit_test(test_parse_ipv6),
        cmocka_unit_test(test_parse_ipv6_malformed),
        cmocka_unit_test(test_parse_ipv6_not_ours),
        cmocka_unit_test(test_reflect_ipv6),
        cmocka_unit_test(test_ip_addrs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
