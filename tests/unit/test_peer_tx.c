/* tools/peer/peer_tx.c: pacing after the sender fell behind. Without
 * --max-lag it sends everything that became due at once; with it, at most
 * the lag's worth, the rest skipped (never sent, not in the sequence). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/peer/peer_run.h"

volatile sig_atomic_t peer_stop;

/* Test double: the progress line is peer_report.c's. */
void peer_progress(struct peer_run *r, uint64_t now_ns)
{
    (void)r;
    (void)now_ns;
}

/* Frames sent before the sender first waited: the burst it caught up with,
 * and what it had skipped by then (later skips depend on how this host
 * schedules the test, not on the code). */
static uint64_t sent, burst, skipped_first;
static int waits;

static int fake_send(struct peer_run *r, struct mmsghdr *msgs, uint32_t n)
{
    (void)r;
    (void)msgs;
    sent += n;
    if (waits == 0)
        burst = sent;
    return (int)n;
}

static void fake_wait(struct peer_run *r, uint64_t at_ns)
{
    if (waits == 0)
        skipped_first = r->st->skipped;
    waits++;
    peer_sleep_until(r, at_ns);
}

/* 10 ms asleep at 100k pps: 1000 frames due when the loop starts. */
static struct peer_stats *run_late(uint64_t max_lag_ns)
{
    static struct peer_opts o;
    static struct peer_io io = {.send = fake_send, .wait = fake_wait, .local = "fake"};
    struct peer_stats *st = peer_stats_new();
    struct peer_run r = {.o = &o, .io = &io, .st = st};

    assert_non_null(st);
    memset(&o, 0, sizeof(o));
    o.mode = PEER_MODE_SEND;
    o.size = 60;
    o.streams = 1;
    o.batch = 64;
    o.rate = 100000;
    o.count = 1500;
    o.max_lag_ns = max_lag_ns;
    o.flow.saddr = 0x0a000202;
    o.flow.daddr = 0x0a00020f;
    o.flow.sport = o.flow.dport = 9000;
    sent = burst = skipped_first = 0;
    waits = 0;
    r.start_ns = peer_now_ns(CLOCK_MONOTONIC) - 10000000ull;
    assert_int_equal(peer_run_tx(&r), 0);
    assert_string_equal(r.stop, "count");
    assert_int_equal(st->packets, 1500);
    assert_int_equal(sent, 1500);
    return st;
}

static void test_catches_up_in_one_burst_without_max_lag(void **state)
{
    struct peer_stats *st = run_late(0);

    (void)state;
    assert_true(burst >= 1000);
    assert_true(st->behind_max >= 1000);
    assert_int_equal(st->skipped, 0);
    peer_stats_free(st);
}

static void test_max_lag_skips_what_is_due_beyond_it(void **state)
{
    /* 0.5 ms at 100k pps is 50 frames: the batch (64) is the least */
    struct peer_stats *st = run_late(500000);

    (void)state;
    assert_true(burst <= 64 + 2);
    assert_true(st->behind_max >= 1000);
    assert_true(skipped_first >= 1000 - 64 && skipped_first <= 1000 + 100);
    assert_true(st->skipped >= skipped_first);
    peer_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catches_up_in_one_burst_without_max_lag),
        cmocka_unit_test(test_max_lag_skips_what_is_due_beyond_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
