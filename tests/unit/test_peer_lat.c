/* tools/peer/peer_lat.c: the TSC rate over the run, stamps from the future
 * kept apart, and the latency object in microseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/peer/peer_lat.h"

static void test_tsc_rate(void **st)
{
    struct peer_lat l;

    (void)st;
    peer_lat_start(&l, 1000, 5000000000ull);
    /* 3e9 ticks in 1.5 s: 2 GHz. */
    assert_true(peer_lat_tsc_hz(&l, 1000 + 3000000000ull, 6500000000ull) == 2e9);
    assert_true(peer_lat_tsc_hz(&l, 1000, 6500000000ull) == 0);
    assert_true(peer_lat_tsc_hz(&l, 5000, 5000000000ull) == 0);
    assert_true(peer_lat_tsc_hz(&l, 999, 6500000000ull) == 0);
}

static void test_future_stamps_are_not_latency(void **st)
{
    struct peer_lat l;

    (void)st;
    peer_lat_start(&l, 0, 0);
    peer_lat_add(&l, 100, 300);
    peer_lat_add(&l, 301, 300);
    peer_lat_add(&l, 300, 300);
    assert_int_equal(l.h.count, 2);
    assert_int_equal(l.future, 1);
    assert_int_equal(l.h.min, 0);
    assert_int_equal(l.h.max, 200);
}

static void test_json_in_microseconds(void **st)
{
    struct peer_lat l;
    char buf[512] = {0};
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

    (void)st;
    assert_non_null(f);
    peer_lat_start(&l, 0, 0);
    /* 1 GHz: 1000 cycles are 1 us. 99 frames at 1 us, one at 31 us (below
     * 32 cycles a bucket is exact; 31000 lands in a 1/32-wide bucket). */
    for (int i = 0; i < 99; i++)
        peer_lat_add(&l, 0, 1000);
    peer_lat_add(&l, 0, 31000);
    peer_lat_json(f, &l, 1000000000ull, 1000000000ull);
    fclose(f);
    if (!strstr(buf, "\"count\":100,\"future\":0,\"tsc_hz\":1000000000,\"min_us\":1.000"))
        fail_msg("%s", buf);
    if (!strstr(buf, "\"p99_us\":1.") || !strstr(buf, "\"max_us\":31.000}"))
        fail_msg("%s", buf);
    assert_int_equal(buf[0], ',');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tsc_rate),
        cmocka_unit_test(test_future_stamps_are_not_latency),
        cmocka_unit_test(test_json_in_microseconds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
