/* apps/reneg_rx.c: app=reneg's count of the frames the host peer sends
 * back, each set's on its own stream: small and MTU frames counted on
 * their set, a duplicate as such, a frame whose checksum is wrong (or
 * whose stamp names no set) malformed on the set running, and frames that
 * are not ours left to lwIP, counted nowhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/reneg_rx.h"
#include "kernel/json.h"
#include "net/pkt.h"

static const uint8_t dmac[ETH_ALEN] = {0x52, 0x54, 0, 0, 0, 1};
static const uint8_t smac[ETH_ALEN] = {2, 0, 0, 0, 0, 1};

/* A frame of len bytes on stream id, sequence number seq. */
static void frame(uint8_t *f, uint16_t len, uint32_t id, uint64_t seq)
{
    struct pkt_flow fl = {0x0a000202, 0x0a00020f, 9000, 9000, id};
    struct pkt_tmpl t;
    assert_int_equal(pkt_tmpl_build(f, len, dmac, smac, &fl, &t), 0);
    pkt_patch(f, &t, seq, 1000 + seq);
}

static enum reneg_frame take(struct reneg_rx *r, unsigned cur, uint16_t len, uint32_t id,
                             uint64_t seq)
{
    static uint8_t f[PKT_MAX_FRAME];
    frame(f, len, id, seq);
    return reneg_rx_frame(r, 3, cur, f, len);
}

static void test_each_set_counts_its_own_stream(void **st)
{
    (void)st;
    struct reneg_rx r[3];
    memset(r, 0, sizeof(r));
    for (uint64_t s = 0; s < 10; s++)
        assert_int_equal(take(r, 1, s < 5 ? 64 : 1514, 1, s), RENEG_COUNTED);
    assert_int_equal(take(r, 1, 64, 0, 7), RENEG_COUNTED); /* set 0's, late */
    assert_int_equal(take(r, 1, 1514, 1, 9), RENEG_COUNTED);
    assert_int_equal(r[1].packets, 11);
    assert_int_equal(r[1].bytes, 5 * 64 + 6 * 1514);
    assert_int_equal(r[1].seq.unique, 10);
    assert_int_equal(r[1].seq.dup, 1);
    assert_int_equal(seq_lost(&r[1].seq), 0);
    assert_int_equal(r[0].packets, 1);
    assert_int_equal(r[0].bytes, 64);
    assert_int_equal(r[2].packets, 0);
    assert_int_equal(r[0].malformed + r[1].malformed + r[2].malformed, 0);
}

/* A wrong UDP checksum, a wrong IPv4 header checksum, a stamp of a
 * fourth stream: malformed on the set running (2), none counted. */
static void test_bad_frames_are_the_running_sets(void **st)
{
    (void)st;
    struct reneg_rx r[3];
    memset(r, 0, sizeof(r));
    uint8_t f[1514];
    frame(f, 1514, 0, 0);
    f[OFF_PAYLOAD + 40] ^= 0xff;
    assert_int_equal(reneg_rx_frame(r, 3, 2, f, 1514), RENEG_COUNTED);
    frame(f, 64, 1, 0);
    f[OFF_IP + 8] ^= 1; /* the TTL under an unchanged header checksum */
    assert_int_equal(reneg_rx_frame(r, 3, 2, f, 64), RENEG_COUNTED);
    assert_int_equal(take(r, 2, 1514, 3, 0), RENEG_COUNTED);
    assert_int_equal(r[2].malformed, 3);
    assert_int_equal(r[0].packets + r[1].packets + r[2].packets, 0);
    assert_int_equal(r[0].malformed + r[1].malformed, 0);
}

/* ARP, and UDP without our stamp: lwIP's, counted nowhere. */
static void test_not_ours_goes_to_the_stack(void **st)
{
    (void)st;
    struct reneg_rx r[3];
    memset(r, 0, sizeof(r));
    uint8_t f[128] = {0};
    memcpy(f, dmac, ETH_ALEN);
    memcpy(f + ETH_ALEN, smac, ETH_ALEN);
    f[12] = 0x08;
    f[13] = 0x06;
    assert_int_equal(reneg_rx_frame(r, 3, 0, f, 60), RENEG_STACK);
    frame(f, 128, 0, 0);
    wrle32(f + OFF_PAYLOAD + PL_OFF_MAGIC, 0);
    wr16(f + OFF_UDP_CSUM, 0); /* no UDP checksum: the changed magic passes */
    assert_int_equal(reneg_rx_frame(r, 3, 0, f, 128), RENEG_STACK);
    for (unsigned k = 0; k < 3; k++)
        assert_int_equal(r[k].packets + r[k].malformed, 0);
}

static void test_json(void **st)
{
    (void)st;
    struct reneg_rx r[3];
    memset(r, 0, sizeof(r));
    assert_int_equal(take(r, 0, 64, 0, 0), RENEG_COUNTED);
    assert_int_equal(take(r, 0, 64, 0, 3), RENEG_COUNTED);
    assert_int_equal(take(r, 0, 64, 0, 2), RENEG_COUNTED);
    assert_int_equal(take(r, 0, 64, 5, 0), RENEG_COUNTED);
    char buf[256];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    reneg_rx_json(&j, "rx", &r[0]);
    json_obj_end(&j);
    assert_string_equal(json_finish(&j), "{\"rx\":{\"packets\":3,\"bytes\":192,\"unique\":3,"
                                         "\"lost\":1,\"dup\":0,\"reorder\":1,\"malformed\":1}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_set_counts_its_own_stream),
        cmocka_unit_test(test_bad_frames_are_the_running_sets),
        cmocka_unit_test(test_not_ours_goes_to_the_stack),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
