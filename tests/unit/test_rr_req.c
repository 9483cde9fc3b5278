/* apps/rr_req.c: the per-vCPU UDP rr client's requests (well-formed
 * IPv4/UDP frames, padded to the Ethernet minimum), its transaction
 * number, count= shared out over the sessions, and answers told apart
 * from everything else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/rr_req.h"

static const struct rr_req_flow flow = {
    .dst_mac = {2, 0, 0, 0, 0, 1},
    .src_mac = {2, 0, 0, 0, 0, 2},
    .saddr = 0x0a000002, /* 10.0.0.2 */
    .daddr = 0x0a000001,
    .sport = 49153,
    .dport = 9000,
};

static void test_build_small(void **st)
{
    (void)st;
    uint8_t f[128];
    memset(f, 0xaa, sizeof(f));
    /* 1 payload byte: 43 bytes of headers and payload, padded to 60 */
    assert_int_equal(rr_req_build(f, sizeof(f), &flow, 1), PKT_MIN_FRAME);
    struct pkt_info pi;
    assert_int_equal(pkt_parse(f, PKT_MIN_FRAME, true, &pi), PKT_UDP);
    assert_int_equal(pi.payload_len, 1);
    assert_int_equal(pi.saddr, flow.saddr);
    assert_int_equal(pi.daddr, flow.daddr);
    assert_int_equal(pi.sport, flow.sport);
    assert_int_equal(pi.dport, flow.dport);
    assert_int_equal(rd16(f + OFF_UDP_CSUM), 0);
    assert_int_equal(rd16(f + OFF_IP_LEN), 29);
    assert_memory_equal(f + OFF_ETH_DST, flow.dst_mac, ETH_ALEN);
    for (int i = PKT_HDRS_LEN; i < PKT_MIN_FRAME; i++)
        assert_int_equal(f[i], 0);
    /* too small a buffer */
    assert_int_equal(rr_req_build(f, PKT_MIN_FRAME - 1, &flow, 1), 0);
}

static void test_build_large_and_id(void **st)
{
    (void)st;
    uint8_t f[1514];
    assert_int_equal(rr_req_build(f, sizeof(f), &flow, 1472), 1514);
    assert_int_equal(rr_req_build(f, sizeof(f), &flow, 1473), 0);
    assert_int_equal(rr_req_build(f, sizeof(f), &flow, 100), 142);
    rr_req_set_id(f, 0x0102030405060708ull, rr_req_id_len(100, 100));
    struct pkt_info pi;
    assert_int_equal(pkt_parse(f, 142, true, &pi), PKT_UDP);
    const uint8_t le[] = {8, 7, 6, 5, 4, 3, 2, 1};
    assert_memory_equal(f + OFF_PAYLOAD, le, sizeof(le));
    assert_int_equal(f[OFF_PAYLOAD + 8], 0);
}

static void test_id_len(void **st)
{
    (void)st;
    assert_int_equal(rr_req_id_len(1, 1), 1);
    assert_int_equal(rr_req_id_len(100, 3), 3);
    assert_int_equal(rr_req_id_len(4, 100), 4);
    assert_int_equal(rr_req_id_len(100, 200), RR_REQ_ID_MAX);
}

static void test_budget(void **st)
{
    (void)st;
    uint64_t sum = 0;
    for (unsigned i = 0; i < 16; i++) {
        uint64_t b = rr_req_budget(1000, 16, i);
        assert_true(b == 62 || b == 63);
        assert_int_equal(b, i < 8 ? 63 : 62);
        sum += b;
    }
    assert_int_equal(sum, 1000);
    /* fewer transactions than sessions: the first ones get one each */
    assert_int_equal(rr_req_budget(3, 8, 2), 1);
    assert_int_equal(rr_req_budget(3, 8, 3), 0);
    assert_int_equal(rr_req_budget(3, 0, 0), 0);
    assert_int_equal(rr_req_budget(3, 8, 8), 0);
}

/* An answer as the server sends it: the request reflected with a resp
 * byte payload carrying the request's number. */
static uint32_t answer(uint8_t *f, uint16_t sport_of_req, uint32_t resp, uint64_t id)
{
    struct rr_req_flow fl = flow;
    fl.saddr = flow.daddr;
    fl.daddr = flow.saddr;
    fl.sport = flow.dport;
    fl.dport = sport_of_req;
    uint32_t len = rr_req_build(f, 1514, &fl, resp);
    rr_req_set_id(f, id, rr_req_id_len(resp, resp));
    return len;
}

static void test_classify(void **st)
{
    (void)st;
    uint8_t f[1514];
    struct pkt_info pi;
    struct rr_req_answer a;
    uint16_t base = 49152;
    /* session 5's answer, whole, number 77 */
    uint32_t len = answer(f, base + 5, 16, 77);
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
    rr_req_classify(f, &pi, flow.daddr, flow.dport, base, 8, 16, 8, &a);
    assert_int_equal(a.session, 5);
    assert_true(a.whole);
    assert_int_equal(a.id, 77);
    /* the wrong length: not whole */
    rr_req_classify(f, &pi, flow.daddr, flow.dport, base, 8, 17, 8, &a);
    assert_int_equal(a.session, 5);
    assert_false(a.whole);
    /* a port past the sessions, below the base, another server or port */
    len = answer(f, base + 8, 16, 1);
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
    rr_req_classify(f, &pi, flow.daddr, flow.dport, base, 8, 16, 8, &a);
    assert_int_equal(a.session, -1);
    len = answer(f, base - 1, 16, 1);
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
    rr_req_classify(f, &pi, flow.daddr, flow.dport, base, 8, 16, 8, &a);
    assert_int_equal(a.session, -1);
    len = answer(f, base, 16, 1);
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
    rr_req_classify(f, &pi, flow.daddr + 1, flow.dport, base, 8, 16, 8, &a);
    assert_int_equal(a.session, -1);
    rr_req_classify(f, &pi, flow.daddr, flow.dport + 1, base, 8, 16, 8, &a);
    assert_int_equal(a.session, -1);
    /* a 1-byte answer carries one byte of the number */
    len = answer(f, base + 1, 1, 0x1234);
    assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
    rr_req_classify(f, &pi, flow.daddr, flow.dport, base, 8, 1, 1, &a);
    assert_int_equal(a.session, 1);
    assert_int_equal(a.id, 0x34);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_small), cmocka_unit_test(test_build_large_and_id),
        cmocka_unit_test(test_id_len),      cmocka_unit_test(test_budget),
        cmocka_unit_test(test_classify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
