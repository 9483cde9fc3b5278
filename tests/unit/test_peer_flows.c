/* tools/peer/peer_flows.c: vnperf frames counted by flow (addresses and
 * ports) through peer_stats_rx, the bounded table's overflow, and the
 * result line's members. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ref_frame6.h"
#include "tools/peer/peer_stats.h"

static const uint8_t MAC_A[ETH_ALEN] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t MAC_B[ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const struct peer_flow *sorted[PEER_MAX_FLOWS];

/* The key of an IPv4 flow (addresses in host byte order): mapped,
 * ::ffff:a.b.c.d (RFC 4291 s2.5.5.2). */
static struct peer_flow_key peer_flow_key4(uint32_t saddr, uint32_t daddr, uint16_t sport,
                                           uint16_t dport)
{
    struct peer_flow_key k = {.sport = sport, .dport = dport};

    k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
    for (unsigned i = 0; i < 4; i++) {
        k.saddr[12 + i] = (uint8_t)(saddr >> (24 - 8 * i));
        k.daddr[12 + i] = (uint8_t)(daddr >> (24 - 8 * i));
    }
    return k;
}

static void build(uint8_t *f, uint16_t len, uint16_t sport, uint16_t dport, uint64_t seq)
{
    struct pkt_flow fl = {.saddr = 0x0a000002, .daddr = 0x0a000001, .sport = sport, .dport = dport};
    struct pkt_tmpl t;

    assert_int_equal(pkt_tmpl_build(f, len, MAC_A, MAC_B, &fl, &t), 0);
    pkt_patch(f, &t, seq, 0);
}

/* gen's flows= spread: 4 source by 4 destination ports, each its own
 * count; an ARP frame (lwIP's) counts by no flow. */
static void test_frames_counted_by_flow(void **state)
{
    struct peer_stats *st = peer_stats_new();
    uint8_t f[128];

    (void)state;
    assert_non_null(st);
    for (uint64_t seq = 0; seq < 10; seq++) {
        for (uint16_t s = 0; s < 4; s++) {
            for (uint16_t d = 0; d <= s; d++) {
                build(f, 60 + s, 5000 + s, 9000 + d, seq);
                peer_stats_rx(st, f, 60 + s, false);
            }
        }
    }
    memset(f, 0, 60);
    wr16(f + OFF_ETH_TYPE, ETH_P_ARP);
    peer_stats_rx(st, f, 60, false);
    assert_int_equal(st->flows.n, 10);
    assert_int_equal(peer_flows_sorted(&st->flows, sorted), 10);
    for (uint32_t i = 0, s = 0; s < 4; s++) {
        for (uint32_t d = 0; d <= s; d++, i++) {
            struct peer_flow_key k = peer_flow_key4(0x0a000002, 0x0a000001, 5000 + s, 9000 + d);
            assert_memory_equal(&sorted[i]->key, &k, sizeof(k));
            assert_int_equal(sorted[i]->packets, 10);
            assert_int_equal(sorted[i]->bytes, 10 * (60 + s));
        }
    }
    assert_int_equal(st->packets, 101);
    assert_int_equal(st->flows.overflow, 0);
    peer_stats_free(st);
}

static struct peer_flow_key key(uint32_t i)
{
    return peer_flow_key4(0x0a000002, 0x0a000001, (uint16_t)(1000 + i % 60000),
                          (uint16_t)(9000 + i / 60000));
}

/* More flows than the table holds: the frames of the ones beyond it are
 * counted in overflow; the flows it holds go on counting. */
static void test_overflow(void **state)
{
    struct peer_flows fl;
    struct peer_flow_key k;

    (void)state;
    assert_int_equal(peer_flows_init(&fl), 0);
    for (uint32_t i = 0; i < PEER_MAX_FLOWS + 10; i++) {
        k = key(i);
        peer_flows_add(&fl, &k, 64);
    }
    k = key(PEER_MAX_FLOWS + 3);
    peer_flows_add(&fl, &k, 64);
    k = key(7);
    peer_flows_add(&fl, &k, 100);
    assert_int_equal(fl.n, PEER_MAX_FLOWS);
    assert_int_equal(fl.overflow, 11);
    assert_int_equal(peer_flows_sorted(&fl, sorted), PEER_MAX_FLOWS);
    assert_int_equal(sorted[7]->key.sport, 1007);
    assert_int_equal(sorted[7]->packets, 2);
    assert_int_equal(sorted[7]->bytes, 164);
    assert_int_equal(sorted[PEER_MAX_FLOWS - 1]->key.sport, 1000 + PEER_MAX_FLOWS - 1);
    peer_flows_free(&fl);
}

static void test_json(void **state)
{
    struct peer_flows fl;
    struct peer_flow_key a = peer_flow_key4(0x0a000002, 0x0a000001, 5001, 9000);
    struct peer_flow_key b = peer_flow_key4(0x0a000002, 0x0a000001, 5000, 9003);
    char *buf = NULL;
    size_t len = 0;
    FILE *out;

    (void)state;
    assert_int_equal(peer_flows_init(&fl), 0);
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    peer_flows_json(out, &fl);
    fflush(out);
    assert_string_equal(buf, ",\"flows\":[],\"flows_overflow\":0");
    rewind(out);
    peer_flows_add(&fl, &a, 60);
    peer_flows_add(&fl, &b, 60);
    peer_flows_add(&fl, &b, 70);
    fl.overflow = 5;
    peer_flows_json(out, &fl);
    fclose(out);
    assert_string_equal(buf, ",\"flows\":["
                             "{\"src\":\"10.0.0.2\",\"sport\":5000,\"dst\":\"10.0.0.1\","
                             "\"dport\":9003,\"packets\":2,\"bytes\":130},"
                             "{\"src\":\"10.0.0.2\",\"sport\":5001,\"dst\":\"10.0.0.1\","
                             "\"dport\":9000,\"packets\":1,\"bytes\":60}],\"flows_overflow\":5");
    free(buf);
    peer_flows_free(&fl);
}

/* IPv6 stream frames (UDP, TCP, ICMPv6) count by their IPv6 flow beside
 * an IPv4 one, each stream's frames as IPv4 ones are; the result line
 * gives IPv6 addresses in their text form, IPv4 ones dotted. */
static void test_ipv6_flows(void **state)
{
    static const uint8_t protos[] = {IP_PROTO_UDP, IP_PROTO_TCP, IP_PROTO_ICMPV6};
    struct peer_stats *st = peer_stats_new();
    uint8_t f[128];
    char *buf = NULL;
    size_t len = 0;
    FILE *out;

    (void)state;
    assert_non_null(st);
    for (uint64_t seq = 0; seq < 5; seq++) {
        for (uint32_t i = 0; i < sizeof(protos); i++) {
            ref6_frame(f, 100, protos[i], i, seq);
            peer_stats_rx(st, f, 100, true);
        }
        build(f, 64, 5000, 9000, seq);
        peer_stats_rx(st, f, 64, true);
    }
    assert_int_equal(st->kinds[PKT_UDP], 20);
    assert_int_equal(st->flows.n, 3); /* UDP's and TCP's 1234 -> 5678, ICMPv6's 0 -> 0 */
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    peer_flows_json(out, &st->flows);
    fclose(out);
    assert_string_equal(buf, ",\"flows\":["
                             "{\"src\":\"10.0.0.2\",\"sport\":5000,\"dst\":\"10.0.0.1\","
                             "\"dport\":9000,\"packets\":5,\"bytes\":320},"
                             "{\"src\":\"fd00::2\",\"sport\":0,\"dst\":\"fd00::1\","
                             "\"dport\":0,\"packets\":5,\"bytes\":500},"
                             "{\"src\":\"fd00::2\",\"sport\":1234,\"dst\":\"fd00::1\","
                             "\"dport\":5678,\"packets\":10,\"bytes\":1000}],"
                             "\"flows_overflow\":0");
    free(buf);
    peer_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames_counted_by_flow),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_ipv6_flows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
