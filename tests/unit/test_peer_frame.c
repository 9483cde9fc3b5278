/* tools/peer/peer_frame.c and peer_malform.c: classification of good,
 * short, foreign and spoiled frames; reflection. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/peer/peer_frame.h"
#include "tools/peer/peer_malform.h"
#include "ref_frame6.h"

static const uint8_t MAC_A[ETH_ALEN] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t MAC_B[ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

static void build(uint8_t *f, uint16_t len, uint32_t stream, uint64_t seq, struct pkt_tmpl *t)
{
    struct pkt_flow fl = {
        .saddr = 0x0a000202, .daddr = 0x0a00020f, .sport = 1111, .dport = 2222, .stream = stream};

    assert_int_equal(pkt_tmpl_build(f, len, MAC_A, MAC_B, &fl, t), 0);
    pkt_patch(f, t, seq, 0xabcdef);
}

static void test_full_and_short_headers(void **state)
{
    uint16_t lens[] = {60, 64, 65, 66, 67, 1514, PKT_MAX_FRAME};
    static uint8_t f[PKT_MAX_FRAME];
    struct peer_vnpf v;
    struct pkt_tmpl t;

    (void)state;
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        build(f, lens[i], 0x12345, 77 + i, &t);
        memset(&v, 0, sizeof(v));
        assert_int_equal(peer_frame_classify(f, lens[i], true, &v), PKT_UDP);
        assert_int_equal(v.seq, 77 + i);
        assert_int_equal(v.tsc, 0xabcdef);
        /* the short header (60..65 bytes) keeps the low 16 bits */
        assert_int_equal(v.stream, lens[i] >= PKT_HDRS_LEN + PL_LEN ? 0x12345 : 0x2345);
    }
}

static void test_foreign_frames(void **state)
{
    uint8_t f[128];
    struct peer_vnpf v;
    struct pkt_tmpl t;

    (void)state;
    build(f, 100, 1, 1, &t);
    wrle32(f + OFF_PAYLOAD + PL_OFF_MAGIC, 0x11223344);
    assert_int_equal(peer_frame_classify(f, 100, false, &v), PEER_KIND_BAD_MAGIC);
    assert_string_equal(peer_kind_name(PEER_KIND_BAD_MAGIC), "bad_magic");

    /* UDP with 10 payload bytes in a padded 60-byte frame */
    build(f, 60, 1, 1, &t);
    wr16(f + OFF_IP_LEN, IP4_HLEN + UDP_HLEN + 10);
    wr16(f + OFF_IP_CSUM, 0);
    wr16(f + OFF_IP_CSUM, pkt_csum_fold(pkt_sum(f + OFF_IP, IP4_HLEN, 0)));
    wr16(f + OFF_UDP_LEN, UDP_HLEN + 10);
    wr16(f + OFF_UDP_CSUM, 0);
    assert_int_equal(peer_frame_classify(f, 60, true, &v), PEER_KIND_UDP_SHORT);
    assert_string_equal(peer_kind_name(PEER_KIND_UDP_SHORT), "udp_short");

    wr16(f + OFF_ETH_TYPE, ETH_P_ARP);
    assert_int_equal(peer_frame_classify(f, 60, true, &v), PKT_ARP);
    assert_string_equal(peer_kind_name(PKT_ARP), "arp");
    assert_int_equal(peer_frame_classify(f, 5, true, &v), PKT_BAD_LEN);
}

static void test_reflect(void **state)
{
    uint8_t f[200], orig[200];
    struct peer_vnpf v;
    struct pkt_tmpl t;

    (void)state;
    build(f, 200, 9, 5, &t);
    memcpy(orig, f, sizeof(f));
    assert_int_equal(peer_frame_reflect(f, 200), 0);
    assert_memory_equal(f + OFF_ETH_DST, orig + OFF_ETH_SRC, ETH_ALEN);
    assert_memory_equal(f + OFF_ETH_SRC, orig + OFF_ETH_DST, ETH_ALEN);
    assert_memory_equal(f + OFF_IP_SRC, orig + OFF_IP_DST, 4);
    assert_memory_equal(f + OFF_IP_DST, orig + OFF_IP_SRC, 4);
    assert_int_equal(rd16(f + OFF_UDP_SPORT), 2222);
    assert_int_equal(rd16(f + OFF_UDP_DPORT), 1111);
    /* both checksums still hold */
    assert_int_equal(peer_frame_classify(f, 200, true, &v), PKT_UDP);
    assert_int_equal(v.seq, 5);

    /* not IP (LLDP): only the MACs turn around */
    memcpy(f, orig, sizeof(f));
    wr16(f + OFF_ETH_TYPE, 0x88cc);
    assert_int_equal(peer_frame_reflect(f, 200), 0);
    assert_memory_equal(f + OFF_ETH_DST, MAC_B, ETH_ALEN);
    assert_memory_equal(f + OFF_ETH_SRC, MAC_A, ETH_ALEN);
    assert_memory_equal(f + ETH_HLEN, orig + ETH_HLEN, sizeof(f) - ETH_HLEN);

    assert_int_equal(peer_frame_reflect(f, ETH_HLEN - 1), -EINVAL);
}

/* reflect sends every frame back on a wire of its own, vnperf's only on
 * an interface the host's stack shares (--rx-if). */
static void test_turns_round(void **state)
{
    (void)state;
    for (int k = 0; k < PEER_KINDS; k++) {
        assert_true(peer_frame_turns_round(k, false));
        assert_int_equal(peer_frame_turns_round(k, true), k == PKT_UDP);
    }
}

/* On an interface (--rx-if) a frame past its MTU's (1500 + 14 + two
 * tags) is a GSO frame the host's stack cuts: reflect leaves it; on a
 * wire of its own (frame_max 0) every length is a frame. */
static void test_gso_frames(void **state)
{
    (void)state;
    assert_true(peer_frame_gso(8234, 1522));
    assert_true(peer_frame_gso(1523, 1522));
    assert_false(peer_frame_gso(1522, 1522));
    assert_false(peer_frame_gso(1514, 1522));
    assert_false(peer_frame_gso(8234, 0));
}

/* f, ref6_frame's 150 bytes of proto, reflected by the peer: a vnperf
 * frame again (its checksum right) in v, its addresses and ports swapped. */
static void turned_round6(uint8_t *f, uint8_t proto, struct peer_vnpf *v)
{
    bool icmp = proto == IP_PROTO_ICMPV6;

    assert_int_equal(peer_frame_reflect(f, 150), 0);
    assert_int_equal(peer_frame_classify(f, 150, true, v), PKT_UDP);
    assert_memory_equal(v->flow.saddr, ref6_dip, 16);
    assert_memory_equal(v->flow.daddr, ref6_sip, 16);
    assert_int_equal(v->flow.sport, icmp ? 0 : 5678);
    assert_int_equal(v->flow.dport, icmp ? 0 : 1234);
}

/* IPv6 UDP, TCP and ICMPv6 stream frames are vnperf's as IPv4 ones are:
 * the stamp read, the flow's IPv6 addresses and ports; one with its
 * checksum off is not; a reflected IPv6 UDP frame has its addresses and
 * ports swapped, its checksum still right. */
static void test_ipv6_frames(void **state)
{
    static const uint8_t protos[] = {IP_PROTO_UDP, IP_PROTO_TCP, IP_PROTO_ICMPV6};
    uint8_t f[150];
    struct peer_vnpf v;

    (void)state;
    for (size_t i = 0; i < sizeof(protos); i++) {
        bool icmp = protos[i] == IP_PROTO_ICMPV6;

        ref6_frame(f, 150, protos[i], 0x10002, 33);
        memset(&v, 0, sizeof(v));
        assert_int_equal(peer_frame_classify(f, 150, true, &v), PKT_UDP);
        assert_int_equal(v.stream, 0x10002);
        assert_int_equal(v.seq, 33);
        assert_memory_equal(v.flow.saddr, ref6_sip, 16);
        assert_memory_equal(v.flow.daddr, ref6_dip, 16);
        assert_int_equal(v.flow.sport, icmp ? 0 : 1234);
        assert_int_equal(v.flow.dport, icmp ? 0 : 5678);
        f[140] ^= 1;
        assert_int_equal(peer_frame_classify(f, 150, true, &v), PKT_BAD_CSUM);
    }
    ref6_frame(f, 150, IP_PROTO_UDP, 1, 2);
    turned_round6(f, IP_PROTO_UDP, &v);
}

/* A stream's TCP segment and ICMPv6 echo request come back as the guest's
 * reflector sends them (pkt_stamped_reflect): addresses (and ports)
 * swapped, the request made a reply, each checksum still right; an echo
 * reply has only its MACs turned round. Before, every stamped frame had
 * only its MACs turned round. */
static void test_reflect_stamped(void **state)
{
    uint8_t f[150], orig[150];
    struct peer_vnpf v;

    (void)state;
    ref6_frame(f, 150, IP_PROTO_TCP, 3, 4);
    turned_round6(f, IP_PROTO_TCP, &v);
    ref6_frame(f, 150, IP_PROTO_ICMPV6, 3, 4);
    turned_round6(f, IP_PROTO_ICMPV6, &v);
    assert_int_equal(f[ETH_HLEN + IP6_HLEN], ICMPV6_REPLY);
    assert_int_equal(v.seq, 4);
    memcpy(orig, f, sizeof(f));
    assert_int_equal(peer_frame_reflect(f, 150), 0);
    assert_memory_equal(f + OFF_ETH_DST, orig + OFF_ETH_SRC, ETH_ALEN);
    assert_memory_equal(f + ETH_HLEN, orig + ETH_HLEN, sizeof(f) - ETH_HLEN);
}

/* Every malformed mode must be caught by the strict parser, as the kind
 * it is meant to exercise. */
static void test_malformed_kinds(void **state)
{
    static const struct {
        enum peer_malformed m;
        int kind;
    } cases[] = {
        {PEER_MAL_TRUNCATED, PKT_BAD_LEN},   {PEER_MAL_BAD_IP_LEN, PKT_BAD_LEN},
        {PEER_MAL_BAD_UDP_LEN, PKT_BAD_LEN}, {PEER_MAL_BAD_CSUM, PKT_BAD_CSUM},
        {PEER_MAL_RUNT, PKT_BAD_LEN},
    };
    uint16_t lens[] = {60, 66, 1514};
    uint8_t f[1514];
    struct peer_vnpf v;
    struct pkt_tmpl t;
    uint64_t rng = 1;

    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
            for (uint64_t i = 0; i < 30; i++) {
                size_t n;

                build(f, lens[l], 0, i, &t);
                n = peer_malform(f, lens[l], cases[c].m, i, &rng);
                assert_true(n <= lens[l]);
                if (cases[c].m == PEER_MAL_RUNT)
                    assert_true(n >= 1 && n < ETH_HLEN);
                assert_int_equal(peer_frame_classify(f, n, true, &v), cases[c].kind);
            }
        }
    }
}

static void test_malformed_garbage_and_names(void **state)
{
    uint8_t a[300], b[300];
    struct peer_vnpf v;
    struct pkt_tmpl t;
    uint64_t r1 = 42, r2 = 42;

    (void)state;
    build(a, 300, 0, 0, &t);
    memcpy(b, a, sizeof(a));
    assert_int_equal(peer_malform(a, 300, PEER_MAL_GARBAGE, 0, &r1), 300);
    assert_int_equal(peer_malform(b, 300, PEER_MAL_GARBAGE, 0, &r2), 300);
    assert_memory_equal(a, b, sizeof(a)); /* same seed, same bytes */
    assert_int_equal(rd16(a + OFF_ETH_TYPE), ETH_P_IP);
    assert_int_not_equal(peer_frame_classify(a, 300, true, &v), PKT_UDP);

    assert_int_equal(peer_malform(a, 300, PEER_MAL_NONE, 0, &r1), 300);
    for (int m = 0; m < PEER_MAL_COUNT; m++)
        assert_int_equal(peer_malformed_parse(peer_malformed_name((enum peer_malformed)m)), m);
    assert_int_equal(peer_malformed_parse("bad"), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_and_short_headers),
        cmocka_unit_test(test_foreign_frames),
        cmocka_unit_test(test_reflect),
        cmocka_unit_test(test_turns_round),
        cmocka_unit_test(test_gso_frames),
        cmocka_unit_test(test_ipv6_frames),
        cmocka_unit_test(test_reflect_stamped),
        cmocka_unit_test(test_malformed_kinds),
        cmocka_unit_test(test_malformed_garbage_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
