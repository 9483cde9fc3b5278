/* apps/qstats.c: the pairs of an app that runs one instance per vCPU
 * shared out over the CPUs, each pair's counts and streams kept apart from
 * the others', and added up once at the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/qstats.h"
#include "kernel/json.h"

static void test_plan(void **st)
{
    (void)st;
    struct qstats_plan p;
    qstats_plan(&p, 2, 2);
    assert_int_equal(p.ncpu, 2);
    assert_int_equal(p.cpu_of[0], 0);
    assert_int_equal(p.cpu_of[1], 1);
    /* more pairs than CPUs: in turn */
    qstats_plan(&p, 4, 2);
    assert_int_equal(p.ncpu, 2);
    const uint8_t want4[] = {0, 1, 0, 1};
    assert_memory_equal(p.cpu_of, want4, 4);
    /* more CPUs than pairs: only as many run */
    qstats_plan(&p, 2, 8);
    assert_int_equal(p.ncpu, 2);
    qstats_plan(&p, 1, 4);
    assert_int_equal(p.ncpu, 1);
    assert_int_equal(p.cpu_of[0], 0);
    /* one CPU owns every pair; the pairs are capped */
    qstats_plan(&p, VNET_MAX_PAIRS + 5, 1);
    assert_int_equal(p.npairs, VNET_MAX_PAIRS);
    for (unsigned q = 0; q < VNET_MAX_PAIRS; q++)
        assert_int_equal(p.cpu_of[q], 0);
    qstats_plan(&p, 3, 0);
    assert_int_equal(p.ncpu, 1);
}

/* Each pair's entry sits on its own cache lines: two CPUs never write one. */
static void test_entries_share_no_line(void **st)
{
    (void)st;
    struct qstats q[2];
    assert_int_equal(sizeof(q[0]) % 64, 0);
    assert_int_equal((uintptr_t)&q[1] % 64, 0);
}

/* Stream 3 on both pairs: pair 0 gets 0..9 in order, pair 1 gets 5, 7, 6
 * and a duplicate 7. Each pair's loss and reordering is its own; the
 * totals add them. */
static void test_isolation_and_sum(void **st)
{
    (void)st;
    struct qstats q[2];
    assert_int_equal(qstats_init(&q[0], 0, 0, 16), 0);
    assert_int_equal(qstats_init(&q[1], 1, 1, 16), 0);
    for (uint64_t s = 0; s < 10; s++)
        qstats_frame(&q[0], 64, 1, 3, s);
    const uint64_t late[] = {5, 7, 6, 7};
    for (unsigned i = 0; i < 4; i++)
        qstats_frame(&q[1], 100, 1, 3, late[i]);
    qstats_frame(&q[1], 60, 0, 0, 0);  /* no header */
    qstats_frame(&q[1], 70, 1, 16, 1); /* stream past the table */
    struct qstats_total t0, t1, t;
    qstats_sum(&q[0], 1, &t0);
    qstats_sum(&q[1], 1, &t1);
    assert_int_equal(t0.packets, 10);
    assert_int_equal(t0.bytes, 640);
    assert_int_equal(t0.seq.lost, 0);
    assert_int_equal(t0.seq.reorder, 0);
    assert_int_equal(t0.seq.dup, 0);
    assert_int_equal(t0.no_header + t0.bad_stream, 0);
    assert_int_equal(t1.packets, 6);
    assert_int_equal(t1.bytes, 400 + 60 + 70);
    assert_int_equal(t1.seq.unique, 3);
    assert_int_equal(t1.seq.lost, 0); /* 5..7 all came */
    assert_int_equal(t1.seq.reorder, 1);
    assert_int_equal(t1.seq.dup, 1);
    assert_int_equal(t1.no_header, 1);
    assert_int_equal(t1.bad_stream, 1);
    q[1].not_ours = 2;
    q[0].tx_dropped = 4;
    qstats_sum(q, 2, &t);
    assert_int_equal(t.packets, 16);
    assert_int_equal(t.bytes, 640 + 530);
    assert_int_equal(t.seq.streams, 2);
    assert_int_equal(t.seq.unique, 13);
    assert_int_equal(t.seq.reorder, 1);
    assert_int_equal(t.seq.dup, 1);
    assert_int_equal(t.not_ours, 2);
    assert_int_equal(t.tx_dropped, 4);
    uint64_t bytes = 0;
    assert_int_equal(qstats_packets_now(q, 2, &bytes), 16);
    assert_int_equal(bytes, 640 + 530);
    assert_int_equal(qstats_packets_now(&q[1], 1, &bytes), 6);
    assert_int_equal(bytes, 530);
    /* a gap on one pair is that pair's loss only */
    qstats_frame(&q[0], 64, 1, 3, 12);
    qstats_sum(q, 2, &t);
    assert_int_equal(t.seq.lost, 2);
    qstats_sum(&q[1], 1, &t1);
    assert_int_equal(t1.seq.lost, 0);
    free(q[0].streams);
    free(q[1].streams);
}

static void test_rx_add(void **st)
{
    (void)st;
    struct qstats_rx t = {0}, a = {.wire_rx = 3, .wire_rx_bytes = 300, .first = 50, .last = 90};
    struct qstats_rx idle = {0}, b = {.wire_rx = 1, .wire_rx_bytes = 64, .first = 20, .last = 70};
    a.kinds[PKT_BAD_LEN] = 1;
    b.kinds[PKT_BAD_CSUM] = 2;
    qstats_rx_add(&t, &a);
    qstats_rx_add(&t, &idle); /* a CPU that counted nothing moves no end */
    qstats_rx_add(&t, &b);
    assert_int_equal(t.wire_rx, 4);
    assert_int_equal(t.wire_rx_bytes, 364);
    assert_int_equal(t.first, 20);
    assert_int_equal(t.last, 90);
    assert_int_equal(qstats_rx_malformed(&t), 3);
}

static void more(struct json *j, const struct qstats *q, void *ctx)
{
    json_u64(j, "extra", q->queue + *(unsigned *)ctx);
}

static void test_json(void **st)
{
    (void)st;
    struct qstats q[2];
    assert_int_equal(qstats_init(&q[0], 0, 0, 4), 0);
    assert_int_equal(qstats_init(&q[1], 1, 1, 4), 0);
    qstats_frame(&q[0], 64, 1, 0, 0);
    qstats_frame(&q[0], 64, 1, 0, 2);
    qstats_frame(&q[1], 80, 1, 1, 9);
    char buf[2048];
    struct json j;
    unsigned add = 40;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    qstats_json(&j, q, 2, more, &add);
    json_obj_end(&j);
    const char *out = json_finish(&j);
    assert_string_equal(
        out, "{\"queues\":[{\"queue\":0,\"cpu\":0,\"packets\":2,\"bytes\":128,\"streams\":1,"
             "\"unique\":2,\"lost\":1,\"dup\":0,\"reorder\":0,\"stale\":0,\"no_header\":0,"
             "\"bad_stream\":0,\"not_ours\":0,\"extra\":40},{\"queue\":1,\"cpu\":1,\"packets\":1,"
             "\"bytes\":80,\"streams\":1,\"unique\":1,\"lost\":0,\"dup\":0,\"reorder\":0,"
             "\"stale\":0,\"no_header\":0,\"bad_stream\":0,\"not_ours\":0,\"extra\":41}]}");
    free(q[0].streams);
    free(q[1].streams);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_entries_share_no_line),
        cmocka_unit_test(test_isolation_and_sum),
        cmocka_unit_test(test_rx_add),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
