/* tools/peer/peer_streams.c: the stream table around apps/seqtrack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/peer/peer_streams.h"

static const struct peer_stream *sorted[PEER_MAX_STREAMS];

static void test_interleaved_streams(void **state)
{
    struct peer_streams s;
    uint32_t ids[] = {0, 4096, 8192, 0xffffffffu, 7}; /* some collide in the table */
    uint32_t nids = sizeof(ids) / sizeof(ids[0]);

    (void)state;
    assert_int_equal(peer_streams_init(&s), 0);
    for (uint64_t seq = 0; seq < 100; seq++) {
        for (uint32_t i = 0; i < nids; i++) {
            /* stream i loses every (i+2)th frame */
            if (seq % (i + 2) != 1)
                peer_streams_add(&s, ids[i], seq, 60 + i);
        }
    }
    assert_int_equal(s.n, nids);
    assert_int_equal(peer_streams_sorted(&s, sorted), nids);
    assert_int_equal(sorted[0]->id, 0);
    assert_int_equal(sorted[1]->id, 7);
    assert_int_equal(sorted[2]->id, 4096);
    assert_int_equal(sorted[3]->id, 8192);
    assert_int_equal(sorted[4]->id, 0xffffffffu);
    for (uint32_t i = 0; i < nids; i++) {
        const struct peer_stream *p = NULL;
        uint64_t lost = 0;

        for (uint32_t k = 0; k < nids; k++) {
            if (sorted[k]->id == ids[i])
                p = sorted[k];
        }
        assert_non_null(p);
        for (uint64_t seq = 0; seq < 100; seq++)
            lost += seq % (i + 2) == 1 && seq < 99;
        assert_int_equal(seq_lost(&p->seq), lost);
        assert_int_equal(p->seq.dup, 0);
        /* its own frames' bytes: 60 + i each */
        assert_int_equal(p->bytes, (p->seq.unique + p->seq.dup + p->seq.stale) * (60 + i));
    }
    peer_streams_free(&s);
}

static void test_overflow(void **state)
{
    struct peer_streams s;

    (void)state;
    assert_int_equal(peer_streams_init(&s), 0);
    for (uint32_t id = 0; id < PEER_MAX_STREAMS + 10; id++)
        peer_streams_add(&s, id * 3, 0, 64);
    /* frames of known streams are still counted once the table is full */
    peer_streams_add(&s, 3, 1, 64);
    peer_streams_add(&s, 3, 1, 64);
    assert_int_equal(s.n, PEER_MAX_STREAMS);
    assert_int_equal(s.overflow, 10);
    assert_int_equal(peer_streams_sorted(&s, sorted), PEER_MAX_STREAMS);
    assert_int_equal(sorted[1]->id, 3);
    assert_int_equal(sorted[1]->seq.unique, 2);
    assert_int_equal(sorted[1]->seq.dup, 1);
    assert_int_equal(sorted[1]->bytes, 3 * 64);
    assert_int_equal(sorted[PEER_MAX_STREAMS - 1]->id, (PEER_MAX_STREAMS - 1) * 3);
    peer_streams_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_streams),
        cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
