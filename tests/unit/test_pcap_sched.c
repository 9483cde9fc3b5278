/* apps/pcap_sched.c: speed= parsing and the replay schedule on a
 * simulated clock: recorded gaps at a multiplier without drift over a
 * million frames, loops back to back, rate= through the pacer, max. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/pcap_sched.h"

#define HZ 2999999999ull /* not a whole number of cycles per ns */

static void expect_speed(const char *s, uint64_t micro)
{
    uint64_t v = 7;
    char why[160];
    assert_int_equal(pcap_speed_parse(s, &v, why, sizeof(why)), 0);
    assert_true(v == micro);
}

static void expect_bad_speed(const char *s)
{
    uint64_t v;
    char why[160] = "";
    assert_int_equal(pcap_speed_parse(s, &v, why, sizeof(why)), -EINVAL);
    assert_true(why[0] != 0);
    assert_int_equal(pcap_speed_check(s, why, sizeof(why)), -EINVAL);
}

static void test_speed(void **st)
{
    (void)st;
    expect_speed("max", 0);
    expect_speed("MAX", 0);
    expect_speed("1", 1000000);
    expect_speed("2.0", 2000000);
    expect_speed("0.5", 500000);
    expect_speed("0.000001", 1);
    expect_speed("10000", 10000000000ull);
    expect_speed("10000.000000", 10000000000ull);
    expect_bad_speed("");
    expect_bad_speed("0");
    expect_bad_speed("0.0000001");
    expect_bad_speed("10000.000001");
    expect_bad_speed("99999999999999999999999");
    expect_bad_speed("1.");
    expect_bad_speed(".5");
    expect_bad_speed("-1");
    expect_bad_speed("2x");
    expect_bad_speed("1e3");
}

/* The cycle each frame is due at: gaps g, the loop repeated, against
 * the exact value start + cum * HZ / (1e9 * speed), within k_fp's
 * rounding. */
static void check_timed(uint64_t micro, const uint64_t *gaps, unsigned n, unsigned loops)
{
    struct pcap_sched s;
    struct rate r = {RATE_UNLIMITED, 0};
    uint64_t span = 0, start = 1ull << 40;
    for (unsigned i = 0; i < n; i++)
        span += gaps[i];
    assert_int_equal(pcap_sched_init(&s, &r, micro, span, HZ, start), 0);
    assert_int_equal(s.mode, PCAP_TIMED);
    unsigned __int128 cum = 0;
    for (unsigned l = 0; l < loops; l++)
        for (unsigned i = 0; i < n; i++) {
            uint64_t want = start + (uint64_t)(cum * HZ / ((unsigned __int128)micro * 1000));
            uint64_t got = pcap_sched_when(&s);
            /* k_fp's truncation: under a cycle per 2^31 ns, a cycle per loop */
            uint64_t tol = 2 + l + (uint64_t)(cum >> 31);
            if (got > want + 1 || got + tol < want)
                fail_msg("loop %u frame %u: due %llu, exact %llu", l, i, (unsigned long long)got,
                         (unsigned long long)want);
            assert_false(pcap_sched_ready(&s, got - 1));
            assert_true(pcap_sched_ready(&s, got));
            unsigned nx = (i + 1) % n;
            pcap_sched_sent(&s, 64, gaps[nx], nx == 0);
            cum += gaps[nx];
        }
}

static void test_timed(void **st)
{
    (void)st;
    static uint64_t gaps[1000];
    for (unsigned i = 1; i < 1000; i++)
        gaps[i] = 1000 + (i * 7919u) % 50000; /* 1..51 us */
    check_timed(1000000, gaps, 1000, 1000);   /* 10^6 frames, recorded timing */
    check_timed(2000000, gaps, 1000, 3);
    check_timed(333333, gaps, 1000, 3);
    const uint64_t one[1] = {0};
    check_timed(1000000, one, 1, 5); /* one frame: every loop at once */
    const uint64_t far[2] = {0, 1ull << 47};
    check_timed(1000000, far, 2, 2); /* a 39 h gap */
    const uint64_t near[3] = {0, 1, 1000};
    check_timed(1, near, 3, 2); /* the slowest speed */
}

/* A 10^6-frame capture of 1 us gaps: the last frame is due 1 s after
 * the first at speed 1, half that at 2, within a cycle. */
static void test_no_drift(void **st)
{
    (void)st;
    const uint64_t micro[] = {1000000, 2000000, 100000};
    for (unsigned k = 0; k < 3; k++) {
        struct pcap_sched s;
        struct rate r = {RATE_UNLIMITED, 0};
        assert_int_equal(pcap_sched_init(&s, &r, micro[k], 999999000ull, HZ, 0), 0);
        for (unsigned i = 1; i < 1000000; i++)
            pcap_sched_sent(&s, 64, 1000, false);
        uint64_t want = (uint64_t)((unsigned __int128)999999000ull * HZ / (micro[k] * 1000));
        assert_true(pcap_sched_when(&s) <= want && pcap_sched_when(&s) + 1 >= want);
    }
}

static void test_rate_and_top(void **st)
{
    (void)st;
    struct pcap_sched s;
    struct rate r = {RATE_PPS, 1000};
    assert_int_equal(pcap_sched_init(&s, &r, 1000000, 1ull << 47, HZ, 100), 0);
    assert_int_equal(s.mode, PCAP_RATE);
    /* recorded gaps do not matter: 1000 pps is HZ / 1000 cycles apart */
    for (unsigned i = 0; i < 1000; i++) {
        uint64_t due = pcap_sched_when(&s); /* the deadline's whole cycles */
        assert_false(pcap_sched_ready(&s, due - 1));
        assert_true(pcap_sched_ready(&s, due + 1));
        pcap_sched_sent(&s, 64, 1ull << 40, false);
    }
    uint64_t want = 100 + HZ;
    assert_true(pcap_sched_when(&s) + 1 >= want && pcap_sched_when(&s) <= want + 1);
    struct rate none = {RATE_UNLIMITED, 0};
    assert_int_equal(pcap_sched_init(&s, &none, 0, 1ull << 47, HZ, 100), 0);
    assert_int_equal(s.mode, PCAP_TOP);
    assert_true(pcap_sched_ready(&s, 0));
    pcap_sched_sent(&s, 64, 1ull << 40, true);
    assert_true(pcap_sched_ready(&s, 0));
    assert_int_equal(pcap_sched_when(&s), 0);
}

/* A loop that cannot be scheduled in 2^62 cycles, and no TSC. */
static void test_refused(void **st)
{
    (void)st;
    struct pcap_sched s;
    struct rate none = {RATE_UNLIMITED, 0}, pps = {RATE_PPS, 1000};
    assert_int_equal(pcap_sched_init(&s, &none, 1, 1ull << 48, HZ, 0), -ERANGE);
    assert_int_equal(pcap_sched_init(&s, &none, 1000000, 1ull << 48, 0, 0), -EINVAL);
    assert_int_equal(pcap_sched_init(&s, &pps, 1000000, 0, 0, 0), -EINVAL);
    assert_int_equal(pcap_sched_init(&s, &none, PCAP_SPEED_MAX + 1, 0, HZ, 0), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speed),    cmocka_unit_test(test_timed),
        cmocka_unit_test(test_no_drift), cmocka_unit_test(test_rate_and_top),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
