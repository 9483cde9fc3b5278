/* apps/rate.c: rate= parsing and the pacer's long-run accuracy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/rate.h"

static void expect_rate(const char *s, enum rate_unit u, uint64_t v)
{
    struct rate r;
    char why[160];
    assert_int_equal(rate_parse(s, &r, why, sizeof(why)), 0);
    assert_int_equal(r.unit, u);
    assert_int_equal(r.per_s, v);
}

static void expect_bad(const char *s)
{
    struct rate r;
    char why[160] = "";
    assert_int_equal(rate_parse(s, &r, why, sizeof(why)), -EINVAL);
    assert_true(why[0] != 0);
    assert_int_equal(rate_check(s, why, sizeof(why)), -EINVAL);
}

static void test_parse(void **st)
{
    (void)st;
    expect_rate("", RATE_UNLIMITED, 0);
    expect_rate("0", RATE_UNLIMITED, 0);
    expect_rate("max", RATE_UNLIMITED, 0);
    expect_rate("1000", RATE_PPS, 1000);
    expect_rate("1000pps", RATE_PPS, 1000);
    expect_rate("1.5mpps", RATE_PPS, 1500000);
    expect_rate("250k", RATE_PPS, 250000);
    expect_rate("10gbps", RATE_BPS, 10000000000ull);
    expect_rate("100Mbit", RATE_BPS, 100000000);
    expect_rate("2.25Gbit/s", RATE_BPS, 2250000000ull);
    expect_rate("1bps", RATE_BPS, 1);
    expect_bad("fast");
    expect_bad("10 pps");
    expect_bad("-5");
    expect_bad("1.");
    expect_bad("0.0001");
    expect_bad("5xps");
    expect_bad("2gpps");
    expect_bad("99999999999999999999");
    /* Issue 13 F2: whole * mult wrapped (18446744074gbps paced at
     * 290448384 bit/s); 1.5 was cut to 1 pps. */
    expect_bad("18446744074gbps");
    expect_bad("18446744074g");
    expect_bad("1000000000001k");
    expect_bad("1.5");
    expect_bad("2.0000000001gbps");
    expect_bad("1.0001kpps");
    expect_rate("1gpps", RATE_PPS, 1000000000);
    expect_bad("1.000000001gpps");
    expect_rate("1000gbps", RATE_BPS, 1000000000000ull);
    expect_bad("1000.000000001gbps");
    expect_rate("2.000000000000gbps", RATE_BPS, 2000000000);
    expect_rate("1.0", RATE_PPS, 1);
    expect_rate("0.5k", RATE_PPS, 500);
}

/* Issue 31 F14: rate=1tbps was a syntax error while the message for a
 * rate above the limit named 1tbps: t (1e12) is a multiplier, and the
 * limits the message names parse. */
static void test_tera(void **st)
{
    (void)st;
    struct rate r;
    char why[160] = "";
    expect_rate("1tbps", RATE_BPS, 1000000000000ull);
    expect_rate("1Tbit/s", RATE_BPS, 1000000000000ull);
    expect_rate("0.25tbps", RATE_BPS, 250000000000ull);
    expect_rate("0.000000001tbps", RATE_BPS, 1000);
    expect_rate("0.000000000001tbps", RATE_BPS, 1);
    expect_bad("0.0000000000001tbps");
    expect_bad("1.000000001tbps");
    expect_bad("1tpps");
    expect_bad("18446744tbps");
    assert_int_equal(rate_parse("1001gbps", &r, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "above 1gpps / 1tbps"));
    assert_int_equal(rate_parse("2tbps", &r, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "above 1gpps / 1tbps"));
    expect_rate("1gpps", RATE_PPS, 1000000000);
    assert_int_equal(rate_parse("1xbps", &r, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "[k|m|g|t]"));
}

/* Simulate a sender polling the pacer with an irregular clock; over a
 * simulated second the count must match the target closely. */
static uint64_t simulate(const struct rate *r, uint64_t hz, uint32_t len, uint64_t cycles)
{
    struct pacer p;
    assert_int_equal(pacer_init(&p, r, hz, 1000), 0);
    uint64_t now = 1000, sent = 0, step = 1;
    while (now < 1000 + cycles) {
        while (pacer_due(&p, now)) {
            pacer_sent(&p, len);
            sent++;
        }
        step = step * 1103515245u % 2147483648u;
        now += 50 + step % 400; /* 50..449 cycles between polls */
    }
    return sent;
}

static void test_pacer_accuracy(void **st)
{
    (void)st;
    const uint64_t hz = 2999999999ull;
    struct rate r = {RATE_PPS, 1000000};
    uint64_t n = simulate(&r, hz, 60, hz);
    assert_in_range(n, 999990, 1000010);
    r.per_s = 7;
    assert_in_range(simulate(&r, hz, 60, hz), 7, 8);
    r = (struct rate){RATE_BPS, 1000000000}; /* 1 Gbit/s of 1000-byte frames: 125000 pps */
    assert_in_range(simulate(&r, hz, 1000, hz), 124990, 125010);
    r = (struct rate){RATE_UNLIMITED, 0};
    struct pacer p;
    assert_int_equal(pacer_init(&p, &r, hz, 0), 0);
    assert_true(pacer_due(&p, 0));
}

/* Found by fuzz_rate: the 64-bit fixed-point deadline wrapped once the
 * TSC passed 2^48 (a UEFI machine counts from power-on) or a slow bit
 * rate's cost times a jumbo frame passed 2^64. */
static void test_pacer_no_wrap(void **st)
{
    (void)st;
    const uint64_t hz = 3000000000ull;
    struct rate r = {RATE_PPS, 1000000};
    uint64_t start = (1ull << 50) + 12345; /* ~4.3 days at 3 GHz */
    struct pacer p;
    assert_int_equal(pacer_init(&p, &r, hz, start), 0);
    assert_true(pacer_due(&p, start));
    pacer_sent(&p, 60);
    assert_false(pacer_due(&p, start + 2999));
    assert_true(pacer_due(&p, start + 3000));
    assert_int_equal(pacer_next(&p), start + 3000);
    r = (struct rate){RATE_BPS, 1};
    assert_int_equal(pacer_init(&p, &r, 10000000000ull, 0), 0);
    pacer_sent(&p, 9014); /* 72112 s of a 10 GHz TSC */
    assert_int_equal(pacer_next(&p), 9014ull * 8 * 10000000000ull);
}

static void test_pacer_stall_bounded(void **st)
{
    (void)st;
    const uint64_t hz = 1000000000ull;
    struct rate r = {RATE_PPS, 1000000}; /* one per 1000 cycles */
    struct pacer p;
    pacer_init(&p, &r, hz, 0);
    /* A 1 s stall: at most 250 ms worth (250000 packets) is caught up. */
    uint64_t burst = 0;
    while (pacer_due(&p, 1000000000ull)) {
        pacer_sent(&p, 60);
        burst++;
    }
    assert_in_range(burst, 250000, 250001);
}

/* gen's CPUs each pace a share: the shares add up to the rate exactly,
 * differ by at most one, and a rate below one per CPU is refused. */
static void test_share(void **st)
{
    (void)st;
    const uint64_t rates[] = {1, 7, 1000, 1000001, 999999999999ull};
    for (unsigned n = 1; n <= 8; n++)
        for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
            struct rate r = {RATE_BPS, rates[i]}, s;
            uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
            bool refused = false;
            for (unsigned k = 0; k < n; k++) {
                if (rate_share(&r, n, k, &s) < 0) {
                    refused = true;
                    continue;
                }
                assert_int_equal(s.unit, RATE_BPS);
                sum += s.per_s;
                lo = s.per_s < lo ? s.per_s : lo;
                hi = s.per_s > hi ? s.per_s : hi;
            }
            assert_int_equal(refused, rates[i] < n);
            if (!refused) {
                assert_int_equal(sum, rates[i]);
                assert_true(hi - lo <= 1);
            }
        }
    struct rate r = {RATE_PPS, 10}, s;
    assert_int_equal(rate_share(&r, 3, 0, &s), 0);
    assert_int_equal(s.per_s, 4);
    assert_int_equal(rate_share(&r, 3, 2, &s), 0);
    assert_int_equal(s.per_s, 3);
    assert_int_equal(rate_share(&r, 3, 3, &s), -EINVAL);
    assert_int_equal(rate_share(&r, 0, 0, &s), -EINVAL);
    r = (struct rate){RATE_UNLIMITED, 0};
    assert_int_equal(rate_share(&r, 4, 1, &s), 0);
    assert_int_equal(s.unit, RATE_UNLIMITED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_tera),
        cmocka_unit_test(test_pacer_accuracy),
        cmocka_unit_test(test_pacer_no_wrap),
        cmocka_unit_test(test_pacer_stall_bounded),
        cmocka_unit_test(test_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
