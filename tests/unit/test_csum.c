/* kernel/csum.c against a plain RFC 1071 reference: every length and
 * start alignment around the unrolled loop's edges, carried-in sums,
 * all-0xff data (the most carries), and split sums joined with
 * csum_swap (odd split points). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/csum.h"
#include "ref_csum.h"

/* A native sum read back in network order. */
static uint16_t as_net(uint32_t native)
{
    uint16_t v = csum_fold16(native);
    return (uint16_t)(v << 8 | v >> 8);
}

static uint8_t buf[70000];

static void fill(uint8_t v, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = v ? v : (uint8_t)rand();
}

static void test_lengths_alignments(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        fill(pass ? 0xff : 0, 7);
        for (size_t off = 0; off < 8; off++)
            for (size_t n = 0; n <= 300; n++)
                assert_int_equal(as_net(csum_partial(buf + off, n, 0)),
                                 ref_fold(ref_sum(buf + off, n, 0)));
    }
}

static void test_large(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        fill(pass ? 0xff : 0, 11);
        size_t sizes[] = {1460, 1461, 9000, 65535, 65536, sizeof(buf) - 3};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            assert_int_equal(as_net(csum_partial(buf + 3, sizes[i], 0)),
                             ref_fold(ref_sum(buf + 3, sizes[i], 0)));
    }
}

/* A carried-in sum adds like data (even its 0xffffffff extreme). */
static void test_carry_in(void **state)
{
    (void)state;
    fill(0, 3);
    uint32_t ins[] = {1, 0xffff, 0x12345678, 0xffffffffu};
    for (size_t i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
        uint32_t a = csum_partial(buf, 1000, ins[i]);
        uint32_t b = csum_add(csum_partial(buf, 1000, 0), ins[i]);
        assert_int_equal(csum_fold16(a), csum_fold16(b));
    }
}

/* Two pieces, the second starting at an odd offset of the string. */
static void test_split_odd(void **state)
{
    (void)state;
    fill(0, 5);
    for (size_t cut = 0; cut < 200; cut++) {
        uint32_t a = csum_partial(buf, cut, 0), b = csum_partial(buf + cut, 1500 - cut, 0);
        uint32_t s = csum_add(a, (cut & 1) ? csum_swap(b) : b);
        assert_int_equal(as_net(s), ref_fold(ref_sum(buf, 1500, 0)));
    }
}

static void test_host16(void **state)
{
    (void)state;
    uint8_t be[2] = {0x12, 0x34};
    assert_int_equal(csum_fold16(csum_host16(0x1234)), csum_fold16(csum_partial(be, 2, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lengths_alignments),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_carry_in),
        cmocka_unit_test(test_split_odd),
        cmocka_unit_test(test_host16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
