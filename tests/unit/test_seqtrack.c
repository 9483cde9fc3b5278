/* apps/seqtrack.c: loss, duplicates and reordering against known streams. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/seqtrack.h"

static void test_in_order(void **st)
{
    (void)st;
    struct seq_stream s = {0};
    for (uint64_t i = 0; i < 5000; i++)
        assert_int_equal(seq_record(&s, i), 1);
    assert_int_equal(s.unique, 5000);
    assert_int_equal(seq_lost(&s), 0);
    assert_int_equal(s.dup, 0);
    assert_int_equal(s.reorder, 0);
}

static void test_loss_dup_reorder(void **st)
{
    (void)st;
    struct seq_stream s = {0};
    /* 0..99 with 10..19 lost, 50 duplicated twice, 60/61 swapped */
    for (uint64_t i = 0; i < 100; i++) {
        if (i >= 10 && i < 20)
            continue;
        if (i == 60)
            continue;
        seq_record(&s, i);
        if (i == 61)
            seq_record(&s, 60);
        if (i == 50) {
            assert_int_equal(seq_record(&s, 50), 0);
            assert_int_equal(seq_record(&s, 50), 0);
        }
    }
    assert_int_equal(s.unique, 90);
    assert_int_equal(seq_lost(&s), 10);
    assert_int_equal(s.dup, 2);
    assert_int_equal(s.reorder, 1);
    /* A lost one turning up late is no longer lost. */
    seq_record(&s, 15);
    assert_int_equal(seq_lost(&s), 9);
    assert_int_equal(s.reorder, 2);
    assert_int_equal(seq_record(&s, 15), 0);
}

static void test_window_wrap_and_jump(void **st)
{
    (void)st;
    struct seq_stream s = {0};
    seq_record(&s, 1000);
    seq_record(&s, 1000 + 10 * SEQ_WIN); /* big jump: window reset */
    assert_int_equal(seq_lost(&s), 10 * SEQ_WIN - 1);
    /* A duplicate of the new head is caught, the slot of 1000 was cleared. */
    assert_int_equal(seq_record(&s, 1000 + 10 * SEQ_WIN), 0);
    assert_int_equal(seq_record(&s, 1000 + 10 * SEQ_WIN - 5), 1);
    /* A frame from before the window cannot be told from a duplicate:
     * stale, and its number stays lost. */
    assert_int_equal(seq_record(&s, 1001), 0);
    assert_int_equal(s.stale, 1);
    assert_int_equal(s.dup, 1);
    assert_int_equal(s.reorder, 1);
    assert_int_equal(seq_lost(&s), 10 * SEQ_WIN - 2);
    /* Start in the middle and then see earlier ones: first moves back. */
    struct seq_stream t = {0};
    seq_record(&t, 10);
    seq_record(&t, 11);
    seq_record(&t, 5);
    assert_int_equal(t.first, 5);
    assert_int_equal(seq_lost(&t), 4);
}

/* Issue 13 F3: two senders of 0..1999 into one stream, the second 1500
 * frames behind. Old duplicates outside the window were counted as new:
 * unique 2976 of 2000 numbers, lost 2^64 - 976. */
static void test_old_duplicates_not_counted_as_new(void **st)
{
    (void)st;
    struct seq_stream s = {0};
    for (uint64_t t = 0; t < 3500; t++) {
        if (t < 2000)
            seq_record(&s, t);
        if (t >= 1500)
            seq_record(&s, t - 1500);
    }
    assert_true(s.unique <= 2000);
    assert_int_equal(s.unique + seq_lost(&s), 2000);
    assert_int_equal(s.unique + s.dup + s.stale, 4000);
    assert_int_equal(seq_lost(&s), 0 + (2000 - s.unique));
    assert_true(seq_lost(&s) <= 2000);
}

/* Issue 13 F3: 2^64 - 1 wrapped next to 0; every later number read as new
 * and lost wrapped. */
static void test_top_of_the_sequence_space(void **st)
{
    (void)st;
    struct seq_stream s = {0};
    for (uint64_t q = UINT64_MAX - 9; q != 0; q++)
        assert_int_equal(seq_record(&s, q), 1);
    assert_int_equal(seq_record(&s, UINT64_MAX), 0);
    assert_int_equal(seq_record(&s, UINT64_MAX - 3), 0);
    assert_int_equal(s.unique, 10);
    assert_int_equal(s.dup, 2);
    assert_int_equal(seq_lost(&s), 0);
    assert_int_equal(s.high, UINT64_MAX);
    /* The whole space: first 0, high 2^64 - 1, 2 numbers seen. */
    struct seq_stream w = {0};
    seq_record(&w, UINT64_MAX);
    seq_record(&w, 0);
    assert_int_equal(w.first, 0);
    assert_int_equal(w.unique, 2);
    assert_int_equal(seq_lost(&w), UINT64_MAX - 1);
}

static void test_random_against_model(void **st)
{
    (void)st;
    enum { N = 20000 };
    static uint8_t seen[N];
    struct seq_stream s = {0};
    memset(seen, 0, sizeof(seen));
    uint64_t dups = 0;
    srand(3);
    /* Mostly increasing with local shuffles (within 100) and some repeats. */
    for (int i = 0; i < N; i++) {
        int q = i + (rand() % 100) - 50;
        if (q < 0 || q >= N || rand() % 7 == 0)
            continue;
        if (seen[q])
            dups++;
        seen[q] = 1;
        seq_record(&s, (uint64_t)q);
    }
    uint64_t uniq = 0, lo = N, hi = 0;
    for (int q = 0; q < N; q++)
        if (seen[q]) {
            uniq++;
            if ((uint64_t)q < lo)
                lo = (uint64_t)q;
            hi = (uint64_t)q;
        }
    assert_int_equal(s.unique, uniq);
    assert_int_equal(s.dup, dups);
    assert_int_equal(seq_lost(&s), hi - lo + 1 - uniq);
    struct seq_totals t;
    seq_sum(&s, 1, &t);
    assert_int_equal(t.streams, 1);
    assert_int_equal(t.unique, uniq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_loss_dup_reorder),
        cmocka_unit_test(test_window_wrap_and_jump),
        cmocka_unit_test(test_old_duplicates_not_counted_as_new),
        cmocka_unit_test(test_top_of_the_sequence_space),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
