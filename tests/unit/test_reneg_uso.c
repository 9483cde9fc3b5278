/* apps/reneg_uso.c: app=reneg's USO datagrams: the payload fitted so that
 * every segment the device cuts holds a whole payload header, and each
 * segment stamped at its own start (stream, sequence numbers one after
 * another, magic), so the host's stack delivers stamped datagrams. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/reneg_uso.h"
#include "net/pkt.h"

/* 8192 bytes at 1400: 5 x 1400 + 1192 (vnperf conform's uso kind); a
 * last piece shorter than a header is left out; below a header, or one
 * segment only: none. */
static void test_payload(void **st)
{
    (void)st;
    assert_int_equal(reneg_uso_payload(1400), 8192);
    assert_int_equal(reneg_uso_payload(1472), 8192);
    assert_int_equal(reneg_uso_payload(1024), 8192);
    assert_int_equal(reneg_uso_payload(4090), 8180); /* 2 x 4090 + 12: the 12 left out */
    assert_int_equal(reneg_uso_payload(24), 8184);   /* 341 x 24 + 8 */
    assert_int_equal(reneg_uso_payload(8168), 8192); /* 8168 + 24 */
    assert_int_equal(reneg_uso_payload(8169), 0);    /* 8169 + 23: one segment */
    assert_int_equal(reneg_uso_payload(8192), 0);
    assert_int_equal(reneg_uso_payload(23), 0);
    assert_int_equal(reneg_uso_payload(0), 0);
}

/* Each segment's header at 0, uso, 2 uso, ...: its own sequence number,
 * the one timestamp, the stream and the magic; the bytes between stay. */
static void test_every_segment_stamped(void **st)
{
    (void)st;
    static uint8_t p[RENEG_USO_PAYLOAD];
    memset(p, 0xa5, sizeof(p));
    uint32_t len = reneg_uso_payload(1400);
    assert_int_equal(reneg_uso_stamp(p, len, 1400, RENEG_USO_STREAM + 3, 60, 777), 6);
    for (uint32_t i = 0; i < 6; i++) {
        const uint8_t *h = p + i * 1400u;
        assert_int_equal(rdle64(h + PL_OFF_SEQ), 60 + i);
        assert_int_equal(rdle64(h + PL_OFF_TSC), 777);
        assert_int_equal(rdle32(h + PL_OFF_STREAM), 0x103);
        assert_int_equal(rdle32(h + PL_OFF_MAGIC), PL_MAGIC);
        assert_int_equal(h[PL_LEN], 0xa5);
    }
    assert_int_equal(p[1400 - 1], 0xa5);
}

/* The device's cut (virtio 1.2 s5.1.6.2): each segment a datagram of its
 * own; every one parses as a vnperf frame of the set's USO stream, the
 * sequence numbers going on from datagram to datagram. */
static void test_segments_parse_as_vnperf_frames(void **st)
{
    (void)st;
    static uint8_t dgram[RENEG_USO_PAYLOAD], f[PKT_HDRS_LEN + 1400];
    const uint8_t mac[ETH_ALEN] = {2, 0, 0, 0, 0, 1};
    uint16_t uso = 1000;
    uint32_t len = reneg_uso_payload(uso), seq = 0;
    for (int d = 0; d < 2; d++) {
        seq += reneg_uso_stamp(dgram, len, uso, RENEG_USO_STREAM, seq, 5);
        for (uint32_t off = 0; off < len; off += uso) {
            uint32_t n = len - off < uso ? len - off : uso;
            struct pkt_flow fl = {0x0a000202, 0x0a00020f, 9000, 9000, 0};
            struct pkt_tmpl t;
            assert_int_equal(pkt_tmpl_build(f, (uint16_t)(PKT_HDRS_LEN + n), mac, mac, &fl, &t), 0);
            memcpy(f + OFF_PAYLOAD, dgram + off, n);
            wr16(f + OFF_UDP_CSUM, 0); /* none: RFC 768 */
            struct pkt_info pi;
            uint32_t stream;
            uint64_t s;
            assert_int_equal(pkt_parse(f, PKT_HDRS_LEN + n, true, &pi), PKT_UDP);
            assert_true(pkt_payload_hdr(f, &pi, &stream, &s));
            assert_int_equal(stream, RENEG_USO_STREAM);
            assert_int_equal(s, (uint64_t)d * 9 + off / uso);
        }
    }
    assert_int_equal(seq, 18); /* 8 x 1000 + 192: 9 a datagram */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_payload),
        cmocka_unit_test(test_every_segment_stamped),
        cmocka_unit_test(test_segments_parse_as_vnperf_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
