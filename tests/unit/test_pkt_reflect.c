/* net/pkt.c's pkt_stamped_reflect: a stream's TCP segment and ICMP echo
 * request (docs/streams.md) turned around as app=reflect sends them: the
 * frames built here byte by byte with ref_csum.h's checksums, every
 * answer's checksums checked against ref_csum.h again, and parsed back
 * as stamped frames of the same stream and sequence number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/pkt.h"
#include "ref_csum.h"

#define SADDR 0x0a000002u
#define DADDR 0x0a000001u
#define SPORT 40000
#define DPORT 5001

static const uint8_t gen_mac[6] = {0x52, 0x54, 0, 0, 0, 1};
static const uint8_t refl_mac[6] = {0x52, 0x54, 0, 0, 0, 2};
static const uint8_t me[6] = {2, 0, 0, 0, 0, 9};

/* An IPv4 frame of len bytes (ntags 802.1Q tags, VLAN 100, 200) of
 * protocol proto: TCP (ACK|PSH, sequence seq) or an ICMP echo request
 * (id 7, sequence seq's low 16 bits), the stamp after the L4 header
 * (sequence seq, stream 3, the magic), every checksum from ref_csum.h.
 * The IP header's offset. */
static unsigned build(uint8_t *f, unsigned len, unsigned ntags, uint8_t proto, uint32_t seq)
{
    memset(f, 0, len);
    memcpy(f, refl_mac, 6);
    memcpy(f + 6, gen_mac, 6);
    unsigned l3 = ETH_HLEN + 4 * ntags;
    for (unsigned i = 0; i < ntags; i++) {
        wr16(f + 12 + 4 * i, ETH_P_8021Q);
        wr16(f + 14 + 4 * i, (uint16_t)(100 * (i + 1)));
    }
    wr16(f + l3 - 2, ETH_P_IP);
    uint8_t *ip = f + l3, *l4 = ip + IP4_HLEN;
    ip[0] = 0x45;
    wr16(ip + 2, (uint16_t)(len - l3));
    ip[8] = 64;
    ip[9] = proto;
    wr32(ip + 12, SADDR);
    wr32(ip + 16, DADDR);
    wr16(ip + 10, (uint16_t)~ref_fold(ref_sum(ip, IP4_HLEN, 0)));
    unsigned hl = proto == IP_PROTO_TCP ? TCP_HLEN : ICMP_HLEN;
    if (proto == IP_PROTO_TCP) {
        wr16(l4, SPORT);
        wr16(l4 + 2, DPORT);
        wr32(l4 + 4, seq);
        l4[12] = 0x50;
        l4[13] = 0x18; /* ACK|PSH */
        wr16(l4 + 14, 65535);
    } else {
        l4[0] = ICMP_ECHO;
        wr16(l4 + 4, 7);
        wr16(l4 + 6, (uint16_t)seq);
    }
    wrle64(l4 + hl + PL_OFF_SEQ, seq);
    wrle64(l4 + hl + PL_OFF_TSC, 0x1234567890ull + seq);
    wrle32(l4 + hl + PL_OFF_STREAM, 3);
    wrle32(l4 + hl + PL_OFF_MAGIC, PL_MAGIC);
    unsigned l4len = len - l3 - IP4_HLEN;
    uint64_t s = proto == IP_PROTO_TCP ? ref_sum(ip + 12, 8, IP_PROTO_TCP + (uint64_t)l4len) : 0;
    wr16(l4 + (proto == IP_PROTO_TCP ? 16 : 2), (uint16_t)~ref_fold(ref_sum(l4, l4len, s)));
    return l3;
}

/* The answer to f: MACs, addresses (and TCP's ports) swapped, both
 * checksums right by ref_csum.h, the stamp as it was, and pkt_parse takes
 * it as the same stream's frame with its checksums checked. */
static void check_answer(const uint8_t *f, unsigned len, unsigned l3, uint8_t proto, uint32_t seq)
{
    const uint8_t *ip = f + l3, *l4 = ip + IP4_HLEN;
    assert_memory_equal(f, gen_mac, 6);
    assert_memory_equal(f + 6, me, 6);
    assert_int_equal(ref_fold(ref_sum(ip, IP4_HLEN, 0)), 0xffff);
    assert_true(ref_l4_ok(f, l3, 0, len));
    assert_int_equal(rd32(ip + 12), DADDR);
    assert_int_equal(rd32(ip + 16), SADDR);
    struct pkt_info pi;
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_STAMPED);
    assert_int_equal(pi.l4_off, l3 + IP4_HLEN);
    if (proto == IP_PROTO_TCP) {
        assert_int_equal((pi.sport << 16) | pi.dport, (DPORT << 16) | SPORT);
        assert_int_equal(rd32(l4 + 4), seq);
        assert_int_equal(l4[13], 0x18);
    } else {
        assert_int_equal(l4[0], ICMP_ECHO_REPLY);
        assert_int_equal(l4[1], 0);
        assert_int_equal(rd16(l4 + 4), 7);
        assert_int_equal(rd16(l4 + 6), (uint16_t)seq);
    }
    uint32_t id;
    uint64_t got;
    assert_true(pkt_payload_hdr(f, &pi, &id, &got));
    assert_int_equal(id, 3);
    assert_int_equal(got, seq);
}

static void reflect_one(unsigned len, unsigned ntags, uint8_t proto, uint32_t seq)
{
    uint8_t f[256];
    struct pkt_info pi;
    unsigned l3 = build(f, len, ntags, proto, seq);
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_STAMPED);
    assert_true(pkt_stamped_reflect(f, &pi, me));
    check_answer(f, len, l3, proto, seq);
}

/* TCP segments: untagged and under one or two tags, at the smallest
 * frames that hold the stamp and beyond, sequence numbers across 2^32. */
static void test_tcp_answer(void **st)
{
    (void)st;
    static const uint32_t seqs[] = {0, 1, 0xfffe, 0xffff, 0x10000, 0x7fffffff, 0xffffffffu};
    for (unsigned t = 0; t <= 2; t++)
        for (unsigned len = 78 + 4 * t; len <= 200; len += 61)
            for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
                reflect_one(len, t, IP_PROTO_TCP, seqs[i]);
}

/* ICMP echo requests become replies with every echo sequence number:
 * the incremental update (RFC 1624) meets every checksum the requests
 * have, 0x0000 and 0xffff's neighbours included. */
static void test_icmp_answer(void **st)
{
    (void)st;
    for (uint32_t seq = 0; seq <= 0xffff; seq++)
        reflect_one(66 + 4 * (seq % 3), seq % 3, IP_PROTO_ICMP, seq);
    reflect_one(200, 0, IP_PROTO_ICMP, 0x12345678);
}

/* A stamped echo reply is a reflector's answer: parsed as the stream's
 * (a receiver counts it), never answered (two reflectors would bounce it
 * for ever): false, the frame as it was. */
static void test_reply_not_answered(void **st)
{
    (void)st;
    uint8_t f[66], before[66];
    struct pkt_info pi;
    unsigned l3 = build(f, 66, 0, IP_PROTO_ICMP, 9);
    assert_int_equal(pkt_parse(f, 66, true, &pi), PKT_STAMPED);
    assert_true(pkt_stamped_reflect(f, &pi, me));
    memcpy(before, f, sizeof(f));
    assert_int_equal(pkt_parse(f, 66, true, &pi), PKT_STAMPED);
    assert_false(pkt_stamped_reflect(f, &pi, me));
    assert_memory_equal(f, before, sizeof(f));
    /* Other ICMP types and a non-zero code stay the stack's. */
    f[l3 + IP4_HLEN] = 3;
    assert_int_equal(pkt_parse(f, 66, false, &pi), PKT_IP_OTHER);
    f[l3 + IP4_HLEN] = ICMP_ECHO_REPLY;
    f[l3 + IP4_HLEN + 1] = 1;
    assert_int_equal(pkt_parse(f, 66, false, &pi), PKT_IP_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_answer),
        cmocka_unit_test(test_icmp_answer),
        cmocka_unit_test(test_reply_not_answered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
