/* apps/stall.c: the gaps between busy-poll rounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/stall.h"
#include "kernel/json.h"

#define HZ 1000000000ull /* one cycle per ns */
#define US 1000ull
#define MS 1000000ull

/* Rounds every step cycles from *now up to n rounds. */
static void rounds(struct stall *s, uint64_t *now, uint64_t step, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        *now += step;
        stall_round(s, *now);
    }
}

static void test_short_rounds_are_no_stall(void **st)
{
    (void)st;
    struct stall s;
    uint64_t now = 5000;
    stall_start(&s, now, STALL_THRESHOLD_US * US);
    rounds(&s, &now, 700, 1000);
    now += 900 * US; /* long, but under the threshold */
    stall_round(&s, now);
    rounds(&s, &now, 700, 1000);
    assert_int_equal(s.max, 900 * US);
    assert_int_equal(s.max_at, 1000 * 700 + 900 * US);
    assert_int_equal(s.over, 0);
    assert_int_equal(s.stalled, 0);
}

static void test_gaps_over_threshold_add_up(void **st)
{
    (void)st;
    struct stall s;
    uint64_t now = 0;
    stall_start(&s, now, STALL_THRESHOLD_US * US);
    rounds(&s, &now, 500, 10);
    now += 13 * MS;
    stall_round(&s, now);
    uint64_t at = now;
    rounds(&s, &now, 500, 10);
    now += 2 * MS;
    stall_round(&s, now);
    now += STALL_THRESHOLD_US * US; /* at the threshold: not over it */
    stall_round(&s, now);
    assert_int_equal(s.max, 13 * MS);
    assert_int_equal(s.max_at, at);
    assert_int_equal(s.over, 2);
    assert_int_equal(s.stalled, 15 * MS);
}

static void test_skipped_halt_is_no_stall(void **st)
{
    (void)st;
    struct stall s;
    uint64_t now = 0;
    stall_start(&s, now, STALL_THRESHOLD_US * US);
    rounds(&s, &now, 500, 3);
    /* The round halted 50 ms on purpose, then worked 600 cycles. */
    stall_skip(&s, 50 * MS);
    now += 50 * MS + 600;
    stall_round(&s, now);
    assert_int_equal(s.max, 600);
    assert_int_equal(s.over, 0);
}

static void test_own_pauses_are_kept_apart(void **st)
{
    (void)st;
    struct stall s;
    uint64_t now = 0;
    stall_start(&s, now, STALL_THRESHOLD_US * US);
    rounds(&s, &now, 500, 3);
    /* A sample line: 1.8 ms of the round, then 400 cycles of work. */
    stall_pause(&s, now + 100, now + 100 + 1800 * US);
    now += 100 + 1800 * US + 400;
    stall_round(&s, now);
    stall_pause(&s, now + 10, now + 10 + 700 * US);
    now += 10 + 700 * US;
    stall_round(&s, now);
    assert_int_equal(s.max, 500);
    assert_int_equal(s.over, 0);
    assert_int_equal(s.pause_max, 1800 * US);
    assert_int_equal(s.paused, 2500 * US);
    stall_pause(&s, now, now - 5); /* a TSC that went back: no pause */
    assert_int_equal(s.paused, 2500 * US);
}

static void test_tsc_going_back_is_no_stall(void **st)
{
    (void)st;
    struct stall s;
    uint64_t now = 10 * MS;
    stall_start(&s, now, STALL_THRESHOLD_US * US);
    stall_round(&s, now - 4000);
    rounds(&s, &now, 300, 2);
    assert_int_equal(s.over, 0);
    assert_true(s.max <= 4300);
}

static void test_json_members(void **st)
{
    (void)st;
    struct stall s;
    uint64_t now = 0;
    stall_start(&s, now, STALL_THRESHOLD_US * US);
    rounds(&s, &now, 1000, 2000); /* 2 ms */
    now += 60 * MS;
    stall_round(&s, now);
    stall_pause(&s, now, now + 1500 * US);
    char buf[256];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    stall_json(&j, &s, HZ);
    json_obj_end(&j);
    assert_string_equal(json_finish(&j), "{\"stalls\":{\"threshold_us\":1000,\"max_us\":60000,"
                                         "\"max_at_s\":0.062,\"over_1ms\":1,"
                                         "\"stalled_ms\":60,\"pause_max_us\":1500,"
                                         "\"paused_ms\":1.5}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_rounds_are_no_stall),
        cmocka_unit_test(test_gaps_over_threshold_add_up),
        cmocka_unit_test(test_skipped_halt_is_no_stall),
        cmocka_unit_test(test_own_pauses_are_kept_apart),
        cmocka_unit_test(test_tsc_going_back_is_no_stall),
        cmocka_unit_test(test_json_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
