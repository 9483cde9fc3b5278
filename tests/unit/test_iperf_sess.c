/* apps/iperf_sess.c: a server's streams end once, by the client's FIN, an
 * abort (a reset) or the end of the run, and only a FIN counts as
 * finished. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "apps/iperf_sess.h"

static void test_fin_finishes_abort_is_counted_apart(void **st)
{
    (void)st;
    struct iperf_tally t = {0};
    struct iperf_sess s[3] = {0};
    assert_true(iperf_sess_end(&t, &s[0], IPERF_END_FIN, 100));
    assert_true(iperf_sess_end(&t, &s[1], IPERF_END_ABORTED, 200));
    assert_true(iperf_sess_end(&t, &s[2], IPERF_END_CUT, 300));
    assert_int_equal(t.finished, 1);
    assert_int_equal(t.aborted, 1);
    assert_false(s[0].failed);
    assert_true(s[1].failed);
    assert_true(s[2].failed);
    assert_int_equal(s[1].t_end, 200);
    assert_string_equal(iperf_end_name(s[0].end), "fin");
    assert_string_equal(iperf_end_name(s[1].end), "aborted");
    assert_string_equal(iperf_end_name(s[2].end), "cut");
    assert_string_equal(iperf_end_name(IPERF_END_OPEN), "open");
}

/* lwIP's error callback after the FIN, or the run's end after a reset,
 * must not count the stream twice or change how it ended. */
static void test_a_stream_ends_once(void **st)
{
    (void)st;
    struct iperf_tally t = {0};
    struct iperf_sess a = {0}, b = {0};
    assert_true(iperf_sess_end(&t, &a, IPERF_END_FIN, 10));
    assert_false(iperf_sess_end(&t, &a, IPERF_END_ABORTED, 20));
    assert_true(iperf_sess_end(&t, &b, IPERF_END_ABORTED, 30));
    assert_false(iperf_sess_end(&t, &b, IPERF_END_CUT, 40));
    assert_false(iperf_sess_end(&t, &b, IPERF_END_FIN, 50));
    assert_int_equal(t.finished, 1);
    assert_int_equal(t.aborted, 1);
    assert_int_equal(a.end, IPERF_END_FIN);
    assert_int_equal(a.t_end, 10);
    assert_int_equal(b.end, IPERF_END_ABORTED);
    assert_int_equal(b.t_end, 30);
    struct iperf_sess c = {0};
    assert_false(iperf_sess_end(&t, &c, IPERF_END_OPEN, 60));
    assert_false(c.done);
}

/* The server stops waiting once every stream ended either way (an
 * aborted stream sends no FIN), not before. */
static void test_all_ended_counts_fins_and_aborts(void **st)
{
    (void)st;
    struct iperf_tally t = {0};
    struct iperf_sess s[4] = {0};
    for (int i = 0; i < 3; i++)
        iperf_sess_end(&t, &s[i], IPERF_END_FIN, 1);
    assert_false(iperf_tally_all_ended(&t, 4));
    iperf_sess_end(&t, &s[3], IPERF_END_CUT, 1);
    assert_false(iperf_tally_all_ended(&t, 4));
    struct iperf_tally u = {0};
    struct iperf_sess r[4] = {0};
    for (int i = 0; i < 3; i++)
        iperf_sess_end(&u, &r[i], IPERF_END_FIN, 1);
    iperf_sess_end(&u, &r[3], IPERF_END_ABORTED, 1);
    assert_true(iperf_tally_all_ended(&u, 4));
    assert_int_equal(u.finished, 3);
}

/* A client's stream whose last ACKs never came (the drain gave up)
 * reports what lwIP still held; a drained one reports nothing. */
static void test_unacked_is_written_less_acknowledged(void **st)
{
    (void)st;
    struct iperf_sess s = {.written = 5000000, .bytes = 2116744};
    assert_int_equal(iperf_sess_unacked(&s), 2883256);
    s.bytes = s.written;
    assert_int_equal(iperf_sess_unacked(&s), 0);
    struct iperf_sess none = {0};
    assert_int_equal(iperf_sess_unacked(&none), 0);
}

/* Behind slirp's unscaled 64 KiB window a stream queues twice that, not
 * its whole share; a closed window still lets one write in; a window
 * larger than the share leaves the share. */
static void test_limit_follows_the_peer_window(void **st)
{
    (void)st;
    const uint64_t share = 4u << 20;
    assert_int_equal(iperf_sess_limit(share, 65535, 16384), 131070);
    assert_int_equal(iperf_sess_limit(share, 0, 16384), 16384);
    assert_int_equal(iperf_sess_limit(share, 3u << 20, 1024), share);
    assert_int_equal(iperf_sess_limit(share, UINT32_MAX, 1024), share);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fin_finishes_abort_is_counted_apart),
        cmocka_unit_test(test_a_stream_ends_once),
        cmocka_unit_test(test_all_ended_counts_fins_and_aborts),
        cmocka_unit_test(test_unacked_is_written_less_acknowledged),
        cmocka_unit_test(test_limit_follows_the_peer_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
