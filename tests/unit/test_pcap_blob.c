/* apps/pcap_blob.c: the capture app=replay loads, built here as the
 * runner writes it (tools/vnperflib/run/pcap.py), then cut short,
 * corrupted field by field and walked. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/pcap_blob.h"

#define NF 3
static const uint16_t LENS[NF] = {60, 14, 1514};
static const uint64_t GAPS[NF] = {0, 1000, (1ull << 40) + 7};

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The three frames above, frame i's bytes all i+1: its size. */
static size_t build(uint8_t *b)
{
    size_t off = PCAP_BLOB_HDR;
    uint64_t bytes = 0;
    memcpy(b, PCAP_BLOB_MAGIC, 8);
    put(b + 8, NF, 4);
    put(b + 12, 1514, 2);
    put(b + 14, 0, 2);
    for (unsigned i = 0; i < NF; i++) {
        put(b + off, LENS[i], 2);
        put(b + off + 2, GAPS[i], 6);
        memset(b + off + PCAP_BLOB_REC, (int)(i + 1), LENS[i]);
        off += PCAP_BLOB_REC + LENS[i];
        bytes += LENS[i];
    }
    put(b + 16, bytes, 8);
    return off;
}

static uint8_t blob[4096];

static int load(size_t size)
{
    struct pcap_blob b;
    char why[160] = "";
    int rc = pcap_blob_load(&b, blob, size, why, sizeof(why));
    if (rc < 0)
        assert_true(why[0] != 0 && strchr(why, '\n') == NULL);
    return rc;
}

static void test_walk(void **st)
{
    (void)st;
    size_t size = build(blob);
    struct pcap_blob b;
    char why[160];
    assert_int_equal(pcap_blob_load(&b, blob, size, why, sizeof(why)), 0);
    assert_int_equal(b.frames, NF);
    assert_int_equal(b.maxlen, 1514);
    assert_int_equal(b.bytes, 60 + 14 + 1514);
    assert_true(b.span_ns == 1000 + (1ull << 40) + 7);
    struct pcap_cursor c;
    struct pcap_rec r;
    pcap_blob_rewind(&c);
    for (unsigned loop = 0; loop < 2; loop++)
        for (unsigned i = 0; i < NF; i++) {
            pcap_blob_next(&b, &c, &r);
            assert_int_equal(r.len, LENS[i]);
            assert_true(r.gap_ns == GAPS[i]);
            assert_int_equal(r.data[0], i + 1);
            assert_int_equal(r.data[r.len - 1], i + 1);
            assert_int_equal(c.idx, (i + 1) % NF);
        }
}

/* Every prefix of a good blob is refused, and so is one byte more. */
static void test_truncated(void **st)
{
    (void)st;
    size_t size = build(blob);
    for (size_t n = 0; n < size; n++)
        assert_int_equal(load(n), -EINVAL);
    assert_int_equal(load(size + 1), -EINVAL);
    assert_int_equal(load(size), 0);
}

struct corrupt {
    size_t off;
    unsigned n;
    uint64_t v;
};

static void test_corrupt(void **st)
{
    (void)st;
    size_t r0 = PCAP_BLOB_HDR, r1 = r0 + PCAP_BLOB_REC + 60, r2 = r1 + PCAP_BLOB_REC + 14;
    const struct corrupt cases[] = {
        {0, 1, 'X'},                       /* magic */
        {7, 1, 2},                         /* format version */
        {8, 4, 0},                         /* no frames */
        {8, 4, 4},                         /* more frames than records */
        {8, 4, 2},                         /* fewer: the size disagrees */
        {8, 4, PCAP_BLOB_MAX_FRAMES + 1u}, /* too many */
        {8, 4, 0xffffffffu},               /* frames x record wraps 32 bits */
        {12, 2, 13},                       /* largest frame under an Ethernet header */
        {12, 2, PCAP_BLOB_MAX_FRAME + 1},  /* over the limit */
        {12, 2, 1000},                     /* a frame above the header's largest */
        {14, 2, 1},                        /* the reserved field */
        {16, 8, 60 + 14 + 1514 - 1},       /* byte total off by one */
        {16, 8, UINT64_MAX},               /* byte total that would wrap the size */
        {r0, 2, 13},                       /* frame shorter than a header */
        {r0, 2, 61},                       /* lengths shifted: the walk runs off */
        {r0, 2, 0xffff},                   /* length past the end */
        {r0 + 2, 6, 1},                    /* the first frame's gap is not 0 */
        {r1, 2, 0},                        /* zero length */
        {r2, 2, 1515},                     /* above maxlen */
        {r2 + 2, 6, (1ull << 48) - 999},   /* gaps one ns past PCAP_BLOB_MAX_SPAN */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t size = build(blob);
        put(blob + cases[i].off, cases[i].v, cases[i].n);
        if (load(size) != -EINVAL)
            fail_msg("case %zu (offset %zu = %llu) was accepted", i, cases[i].off,
                     (unsigned long long)cases[i].v);
    }
}

/* Gaps adding up to exactly the limit pass; one ns more does not. */
static void test_span_limit(void **st)
{
    (void)st;
    size_t size = build(blob);
    size_t r1 = PCAP_BLOB_HDR + PCAP_BLOB_REC + 60, r2 = r1 + PCAP_BLOB_REC + 14;
    uint64_t half = PCAP_BLOB_MAX_SPAN / 2;
    put(blob + r1 + 2, half, 6);
    put(blob + r2 + 2, half, 6);
    assert_int_equal(load(size), 0);
    put(blob + r2 + 2, half + 1, 6);
    assert_int_equal(load(size), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_span_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
