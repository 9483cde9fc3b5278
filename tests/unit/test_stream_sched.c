/* apps/stream_sched.c on a simulated TSC: several streams' rates within
 * 1% over 10^6 frames, a paced stream beside unpaced ones, burst and
 * multi-burst patterns exact, Poisson arrivals at their mean rate with
 * exponential gaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/stream_sched.h"

#define HZ 2500000000ull

static struct sched sc;

static struct stream_spec spec(enum rate_unit u, uint64_t per_s, enum stream_mode m)
{
    struct stream_spec s;
    memset(&s, 0, sizeof(s));
    s.rate.unit = u;
    s.rate.per_s = per_s;
    s.mode = (uint8_t)m;
    return s;
}

static double within(double got, double want)
{
    double e = (got - want) / want;
    return e < 0 ? -e : e;
}

static void test_rates(void **st)
{
    (void)st;
    struct stream_spec s[4] = {spec(RATE_PPS, 50000, SMODE_CONTINUOUS),
                               spec(RATE_PPS, 150000, SMODE_CONTINUOUS),
                               spec(RATE_PPS, 700000, SMODE_CONTINUOUS),
                               spec(RATE_BPS, 80000000, SMODE_CONTINUOUS)}; /* 100 kpps at 100 B */
    assert_int_equal(sched_init(&sc, s, 4, HZ, 1000, 1), 0);
    uint64_t count[4] = {0}, now = 1000, total = 0;
    while (total < 1000000) {
        int i;
        while ((i = sched_pick(&sc, now)) >= 0) {
            sched_sent(&sc, (unsigned)i, 100, now);
            count[i]++;
            total++;
        }
        now += 997; /* the loop's own cost, not a divisor of any gap */
    }
    double secs = (double)(now - 1000) / HZ;
    static const double want[4] = {50000, 150000, 700000, 100000};
    for (unsigned i = 0; i < 4; i++)
        assert_true(within((double)count[i] / secs, want[i]) < 0.01);
    assert_false(sched_done(&sc));
}

/* A paced stream beside two unpaced ones that take 400 cycles a frame:
 * it keeps its rate, they share the rest in turn. */
static void test_paced_beside_flood(void **st)
{
    (void)st;
    struct stream_spec s[3] = {spec(RATE_UNLIMITED, 0, SMODE_CONTINUOUS),
                               spec(RATE_PPS, 10000, SMODE_CONTINUOUS),
                               spec(RATE_UNLIMITED, 0, SMODE_CONTINUOUS)};
    assert_int_equal(sched_init(&sc, s, 3, HZ, 0, 1), 0);
    uint64_t count[3] = {0}, now = 0;
    for (unsigned k = 0; k < 1000000; k++) {
        int i = sched_pick(&sc, now);
        assert_true(i >= 0);
        sched_sent(&sc, (unsigned)i, 64, now);
        count[i]++;
        now += 400;
    }
    double secs = (double)now / HZ;
    assert_true(within((double)count[1] / secs, 10000) < 0.01);
    assert_true(count[0] == count[2] || count[0] == count[2] + 1);
}

/* Unpaced continuous streams only: strictly in turn, whatever the clock. */
static void test_free_run_in_turn(void **st)
{
    (void)st;
    struct stream_spec s[3] = {spec(RATE_UNLIMITED, 0, SMODE_CONTINUOUS),
                               spec(RATE_UNLIMITED, 0, SMODE_CONTINUOUS),
                               spec(RATE_UNLIMITED, 0, SMODE_CONTINUOUS)};
    assert_int_equal(sched_init(&sc, s, 3, HZ, 100, 1), 0);
    assert_true(sc.free_run);
    for (unsigned k = 0; k < 3000; k++) {
        assert_int_equal(sched_pick(&sc, 100 + k / 7), (int)(k % 3));
        sched_sent(&sc, k % 3, 64, 100);
    }
    assert_int_equal(sched_next(&sc), 100);
    s[1].mode = SMODE_POISSON;
    s[1].rate = (struct rate){RATE_PPS, 10};
    assert_int_equal(sched_init(&sc, s, 3, HZ, 100, 1), 0);
    assert_false(sc.free_run);
}

static void test_burst_exact(void **st)
{
    (void)st;
    struct stream_spec s[2] = {spec(RATE_PPS, 1000, SMODE_BURST),
                               spec(RATE_UNLIMITED, 0, SMODE_BURST)};
    s[0].frames = 100;
    s[1].frames = 7;
    assert_int_equal(sched_init(&sc, s, 2, HZ, 0, 1), 0);
    uint64_t count[2] = {0}, last = 0;
    for (uint64_t now = 0; now < 2 * HZ; now += 1000) {
        int i;
        while ((i = sched_pick(&sc, now)) >= 0) {
            sched_sent(&sc, (unsigned)i, 64, now);
            count[i]++;
            if (i == 0)
                last = now;
        }
    }
    assert_int_equal(count[0], 100);
    assert_int_equal(count[1], 7);
    assert_true(sched_done(&sc));
    assert_int_equal(sched_next(&sc), UINT64_MAX);
    /* 100 frames at 1 kpps: the last one 99 ms after the first. */
    assert_true(within((double)last, 0.099 * HZ) < 0.001);
}

static void test_multi_burst_exact(void **st)
{
    (void)st;
    struct stream_spec s[1] = {spec(RATE_PPS, 100000, SMODE_MULTI_BURST)};
    s[0].frames = 10;
    s[0].gap_ns = 1000000;
    s[0].bursts = 5;
    assert_int_equal(sched_init(&sc, s, 1, HZ, 0, 1), 0);
    uint64_t at[64], n = 0;
    for (uint64_t now = 0; now < HZ / 10 && n < 64; now += 250) {
        if (sched_pick(&sc, now) == 0) {
            sched_sent(&sc, 0, 64, now);
            at[n++] = now;
        }
    }
    assert_int_equal(n, 50);
    assert_true(sched_done(&sc));
    for (unsigned k = 1; k < n; k++) {
        uint64_t gap = at[k] - at[k - 1];
        if (k % 10)
            assert_true(within((double)gap, HZ / 100000.0) < 0.01); /* 10 us apart */
        else
            assert_true(within((double)gap, HZ / 100000.0 + HZ / 1000.0) < 0.01);
    }
    /* Unpaced: the gap counts from the burst's last frame. */
    s[0] = spec(RATE_UNLIMITED, 0, SMODE_MULTI_BURST);
    s[0].frames = 3;
    s[0].gap_ns = 1000;
    s[0].bursts = 2;
    assert_int_equal(sched_init(&sc, s, 1, HZ, 0, 1), 0);
    for (unsigned k = 0; k < 3; k++) {
        assert_int_equal(sched_pick(&sc, 10), 0);
        sched_sent(&sc, 0, 64, 10);
    }
    assert_int_equal(sched_pick(&sc, 10 + 2499), -1);
    assert_int_equal(sched_next(&sc), 10 + 2500);
    assert_int_equal(sched_pick(&sc, 10 + 2500), 0);
}

static void test_poisson(void **st)
{
    (void)st;
    struct stream_spec s[1] = {spec(RATE_PPS, 1000000, SMODE_POISSON)};
    assert_int_equal(sched_init(&sc, s, 1, HZ, 0, 3), 0);
    uint64_t n = 0, prev = 0;
    double sum = 0, sq = 0;
    for (uint64_t now = 0; n < 1000000; now += 50) {
        while (sched_pick(&sc, now) == 0) {
            uint64_t due = sched_next(&sc);
            sched_sent(&sc, 0, 64, now);
            if (n++) {
                double g = (double)(due - prev);
                sum += g;
                sq += g * g;
            }
            prev = due;
        }
    }
    double mean = sum / (double)(n - 1), var = sq / (double)(n - 1) - mean * mean;
    assert_true(within(mean, HZ / 1e6) < 0.01);
    /* Exponential gaps: the variance is the mean squared. */
    assert_true(within(var, mean * mean) < 0.03);
}

static void test_refused(void **st)
{
    (void)st;
    struct stream_spec s[1] = {spec(RATE_PPS, 1000000000, SMODE_CONTINUOUS)};
    assert_int_equal(sched_init(&sc, s, 1, 0, 0, 1), -22);
    assert_int_equal(sched_init(&sc, s, 0, HZ, 0, 1), -22);
    assert_int_equal(sched_init(&sc, s, 1, HZ, 0, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_paced_beside_flood),
        cmocka_unit_test(test_free_run_in_turn),
        cmocka_unit_test(test_burst_exact),
        cmocka_unit_test(test_multi_burst_exact),
        cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
