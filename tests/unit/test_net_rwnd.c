/* net/net_rwnd.c: a stream's window= as receive credit kept back from
 * lwIP, then given back whole before the close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "net/net_rwnd.h"

#define MAX (4u * 1024 * 1024)

/* The first max - window bytes consumed are kept back, the rest given
 * back as they come, so lwIP's window settles at window. */
static void test_keeps_back_down_to_the_window(void **st)
{
    (void)st;
    struct net_rwnd w;
    net_rwnd_init(&w, MAX, 262144);
    uint64_t given = 0, consumed = 0;
    while (consumed < MAX + 10 * 65535u) {
        given += net_rwnd_consume(&w, 65535);
        consumed += 65535;
        uint64_t window = MAX - consumed + given; /* lwIP's rcv_wnd after tcp_recved */
        assert_true(window >= 262144);
        assert_true(window <= MAX);
    }
    assert_int_equal(consumed - given, MAX - 262144);
    assert_int_equal(net_rwnd_consume(&w, 1460), 1460);
}

/* A piece that crosses the end of what is kept back is split. */
static void test_splits_the_piece_that_ends_the_hold(void **st)
{
    (void)st;
    struct net_rwnd w;
    net_rwnd_init(&w, 100000, 65536);
    assert_int_equal(net_rwnd_consume(&w, 30000), 0);
    assert_int_equal(net_rwnd_consume(&w, 5000), 536);
    assert_int_equal(net_rwnd_consume(&w, 5000), 5000);
}

/* The whole window (or more, or a peer without window scaling whose
 * max is 65535) keeps nothing back. */
static void test_no_hold_at_or_above_the_max(void **st)
{
    (void)st;
    struct net_rwnd w;
    net_rwnd_init(&w, MAX, MAX);
    assert_int_equal(net_rwnd_consume(&w, 1460), 1460);
    net_rwnd_init(&w, 65535, 262144);
    assert_int_equal(net_rwnd_consume(&w, 65535), 65535);
    assert_int_equal(net_rwnd_release(&w), 0);
}

/* At the close all that was kept back comes back at once, once: lwIP
 * resets a connection closed with its window not whole. */
static void test_release_gives_back_all_once(void **st)
{
    (void)st;
    struct net_rwnd w;
    net_rwnd_init(&w, MAX, 65536);
    uint64_t given = 0;
    for (int i = 0; i < 100; i++)
        given += net_rwnd_consume(&w, 65535);
    uint32_t back = net_rwnd_release(&w);
    assert_int_equal(given + back, 100u * 65535);
    assert_int_equal(back, MAX - 65536);
    assert_int_equal(net_rwnd_release(&w), 0);
    /* A stream that ended early gives back only what it kept. */
    net_rwnd_init(&w, MAX, 65536);
    assert_int_equal(net_rwnd_consume(&w, 1000), 0);
    assert_int_equal(net_rwnd_release(&w), 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_back_down_to_the_window),
        cmocka_unit_test(test_splits_the_piece_that_ends_the_hold),
        cmocka_unit_test(test_no_hold_at_or_above_the_max),
        cmocka_unit_test(test_release_gives_back_all_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
