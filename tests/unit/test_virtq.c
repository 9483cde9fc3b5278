/* drivers/virtio/virtq*.c through its interface only, against the device
 * side of tests/unit/sim_queue.c, for every ring format: index wrap, kick
 * decisions, batches in and out of order, IN_ORDER batches, chains, bound
 * slots, used buffer notifications and their enable/disable races, and
 * every used-ring violation. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtq.h"
#include "kernel/mem.h"
#include "sim_virtio.h"

/* Ring formats every test runs on. */
static const unsigned formats[] = {0, VIRTQ_F_PACKED};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

struct dev {
    struct virtq *vq;
    struct sim_queue q;
    unsigned notifies;
    uint32_t val; /* the last notification's value */
    bool data;    /* ... and whether it was 32 bits */
};

static void dev_ring(const struct virtq_doorbell *db, uint32_t val)
{
    struct dev *d = db->ctx;
    d->notifies++;
    d->val = val;
    d->data = db->data;
}

static struct dev *dev_new(uint16_t num, unsigned flags)
{
    struct dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(virtq_create(&d->vq, 1, num, flags), 0);
    d->q.max = num;
    simq_attach(&d->q, num, virtq_desc_addr(d->vq), virtq_driver_addr(d->vq),
                virtq_device_addr(d->vq), flags);
    struct virtq_doorbell db = {dev_ring, 0, d, 1, false};
    virtq_set_doorbell(d->vq, &db);
    assert_int_equal(virtq_packed(d->vq), !!(flags & VIRTQ_F_PACKED));
    return d;
}

/* Takes one available buffer: its id. */
static uint16_t dev_take(struct dev *d)
{
    d->q.nheld = 0;
    assert_int_equal(simq_take(&d->q, 1), 1);
    return d->q.held[0].id;
}

static void dev_use(struct dev *d, uint32_t id, uint32_t len)
{
    simq_put_used(&d->q, id, len, 1);
}

static void add_n(struct dev *d, unsigned n, uintptr_t token0, bool writes)
{
    struct virtq_buf b[256];
    assert_true(n <= 256);
    for (unsigned i = 0; i < n; i++)
        b[i] = (struct virtq_buf){0x1000 + i, 100, token0 + i};
    assert_int_equal(virtq_add_bufs(d->vq, b, (int)n, writes), (int)n);
}

static void test_create(void **state)
{
    (void)state;
    struct virtq *vq;
    assert_int_equal(virtq_create(&vq, 0, 100, 0), -EINVAL);
    assert_int_equal(virtq_create(&vq, 0, 0, 0), -EINVAL);
    for (size_t f = 0; f < NFORMATS; f++) {
        assert_int_equal(virtq_create(&vq, 0, 256, formats[f]), 0);
        assert_int_equal(virtq_size(vq), 256);
        assert_int_equal(virtq_nfree(vq), 256);
        assert_int_equal(virtq_in_flight(vq), 0);
        assert_false(virtq_broken(vq));
        assert_null(virtq_violation(vq));
        assert_false(virtq_cb_enabled(vq));
        assert_int_equal(virtq_desc_addr(vq) % 16, 0);
        assert_int_equal(virtq_driver_addr(vq) % 2, 0);
        assert_int_equal(virtq_device_addr(vq) % 4, 0);
    }
    /* Split: the legacy layout (s2.7.2), the used ring on a page. */
    assert_int_equal(virtq_create(&vq, 0, 256, 0), 0);
    assert_int_equal(virtq_driver_addr(vq) - virtq_desc_addr(vq), 16 * 256);
    assert_int_equal(virtq_device_addr(vq) % VIRTQ_ALIGN, 0);
    assert_true(virtq_device_addr(vq) >= virtq_driver_addr(vq) + 6 + 2 * 256);
}

/* 70000 buffers through an 8-entry ring: every 16-bit index wraps. */
static void test_index_wrap(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(8, formats[f]);
        struct virtq_used_buf out[8];
        uintptr_t next_token = 0, expect = 0;
        for (unsigned round = 0; round < 70000 / 5; round++) {
            add_n(d, 5, next_token, false);
            next_token += 5;
            virtq_kick(d->vq);
            for (int i = 0; i < 5; i++)
                dev_use(d, dev_take(d), 0);
            assert_int_equal(virtq_get_used(d->vq, out, 8), 5);
            for (int i = 0; i < 5; i++)
                assert_int_equal(out[i].token, expect++);
            assert_int_equal(virtq_nfree(d->vq), 8);
        }
        assert_int_equal(d->q.last_avail, (uint16_t)70000);
        assert_false(virtq_broken(d->vq));
    }
}

/* Reference for EVENT_IDX: notify iff the device's event index is one of
 * the indices written since the last decision, [old, new) modulo 2^16. */
static bool ref_need_kick(uint16_t event, uint16_t old_idx, uint16_t new_idx)
{
    for (uint16_t i = old_idx; i != new_idx; i++)
        if (i == event)
            return true;
    return false;
}

static void test_event_idx_kicks(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(64, formats[f] | VIRTQ_F_EVENT_IDX);
        struct virtq_used_buf out[64];
        unsigned decisions = 0, kicks = 0, total = 0;
        uint16_t idx = 0; /* the device's count of what was made available */
        /* Walk the indices across the 16-bit wrap with batches of 1..37
         * and the event index at every position around the batch. */
        for (unsigned step = 0; step < 4000; step++) {
            uint16_t batch = (uint16_t)(step % 37 + 1);
            int delta = (int)(step % 41) - 2;
            uint16_t event = (uint16_t)(idx + delta);
            simq_set_avail_event(&d->q, event);
            add_n(d, batch, 0, false);
            unsigned before = d->notifies;
            bool kicked = virtq_kick(d->vq);
            bool want = ref_need_kick(event, idx, (uint16_t)(idx + batch));
            assert_int_equal(kicked, want);
            assert_int_equal(d->notifies - before, want ? 1 : 0);
            decisions++;
            kicks += want;
            for (unsigned i = 0; i < batch; i++)
                dev_use(d, dev_take(d), 0);
            idx += batch;
            assert_int_equal(virtq_get_used(d->vq, out, 64), batch);
            total += batch;
        }
        assert_true(kicks > 0 && kicks < decisions);
        assert_true(total > 65536); /* the index wrapped */
        /* Polling: the device never had a reason to notify us. */
        assert_int_equal(d->q.interrupts, 0);
        const struct virtq_stats *st = virtq_stats(d->vq);
        assert_int_equal(st->kicks, kicks);
        assert_int_equal(st->kicks_suppressed, decisions - kicks);
    }
}

/* Without EVENT_IDX: the device's flag, and no decision without news. */
static void test_no_notify_flag(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        add_n(d, 2, 0, false);
        assert_true(virtq_kick(d->vq));
        simq_set_no_notify(&d->q, true);
        add_n(d, 2, 2, false);
        assert_false(virtq_kick(d->vq));
        assert_int_equal(virtq_stats(d->vq)->kicks_suppressed, 1);
        simq_set_no_notify(&d->q, false);
        /* Nothing new: no kick and nothing counted as suppressed. */
        assert_false(virtq_kick(d->vq));
        assert_int_equal(virtq_stats(d->vq)->kicks_suppressed, 1);
        add_n(d, 1, 4, false);
        assert_true(virtq_kick(d->vq));
        assert_int_equal(d->notifies, 2);
        /* The watchdog's notification is counted as forced. */
        virtq_notify_forced(d->vq);
        assert_int_equal(d->notifies, 3);
        assert_int_equal(virtq_stats(d->vq)->forced_kicks, 1);
        assert_int_equal(virtq_stats(d->vq)->kicks, 3);
    }
}

/* Every batch size from 1 to the queue size, completed out of order. */
static void test_batches_out_of_order(void **state)
{
    (void)state;
    const uint16_t num = 128;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(num, formats[f]);
        struct virtq_used_buf out[128];
        for (unsigned b = 1; b <= num; b++) {
            add_n(d, b, 1000 * b, true);
            assert_int_equal(virtq_nfree(d->vq), num - b);
            virtq_kick(d->vq);
            d->q.nheld = 0;
            assert_int_equal(simq_take(&d->q, b), b);
            for (unsigned i = 0; i < b; i++)
                dev_use(d, d->q.held[b - 1 - i].id, i % 100);
            assert_int_equal(virtq_get_used(d->vq, out, num), b);
            bool seen[128] = {false};
            for (unsigned i = 0; i < b; i++) {
                uintptr_t k = out[i].token - 1000 * b;
                assert_true(k < b);
                assert_false(seen[k]);
                seen[k] = true;
                assert_int_equal(out[i].len, i % 100);
            }
            assert_int_equal(virtq_nfree(d->vq), num);
        }
        assert_false(virtq_broken(d->vq));
    }
}

/* get_used honours max and leaves the rest for the next call. */
static void test_get_used_max(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        struct virtq_used_buf out[16];
        add_n(d, 10, 0, false);
        virtq_kick(d->vq);
        for (int i = 0; i < 10; i++)
            dev_use(d, dev_take(d), 0);
        assert_true(virtq_has_used(d->vq));
        assert_int_equal(virtq_get_used(d->vq, out, 4), 4);
        assert_int_equal(out[3].token, 3);
        assert_int_equal(virtq_get_used(d->vq, out, 16), 6);
        assert_int_equal(out[0].token, 4);
        assert_false(virtq_has_used(d->vq));
        assert_int_equal(virtq_get_used(d->vq, out, 16), 0);
    }
}

/* On a queue with a free list, virtq_free_run is the free descriptor
 * count up to max, wherever they are in the ring: TX asks it the same way
 * for bound slots and for buffers. */
static void test_free_run_unbound(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(8, formats[f]);
        struct virtq_used_buf out[8];
        assert_int_equal(virtq_free_run(d->vq, 5), 5);
        assert_int_equal(virtq_free_run(d->vq, 0), 0);
        assert_int_equal(virtq_free_run(d->vq, -3), 0);
        add_n(d, 8, 0, false);
        virtq_kick(d->vq);
        uint16_t id[8];
        for (int i = 0; i < 8; i++)
            id[i] = dev_take(d);
        assert_int_equal(virtq_free_run(d->vq, 8), 0);
        /* The fourth back, not the oldest: free all the same. */
        dev_use(d, id[3], 0);
        assert_int_equal(virtq_get_used(d->vq, out, 8), 1);
        assert_int_equal(out[0].token, 3);
        assert_int_equal(virtq_free_run(d->vq, 8), 1);
        dev_use(d, id[6], 0);
        assert_int_equal(virtq_get_used(d->vq, out, 8), 1);
        assert_int_equal(virtq_free_run(d->vq, 8), 2);
        assert_int_equal(virtq_free_run(d->vq, 1), 1);
    }
}

/* Adding to a full ring adds nothing and writes nothing: on the packed
 * ring an empty batch stored its (zero) head flags over the oldest
 * buffer's descriptor, whether still available (the device never saw
 * it) or already used (the queue broke on its own flags). Found by
 * fuzz_virtq. */
static void test_add_to_full_ring(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(4, formats[f]);
        struct virtq_used_buf out[4];
        add_n(d, 4, 0, true);
        struct virtq_buf more = {0x9000, 100, 99};
        assert_int_equal(virtq_add_bufs(d->vq, &more, 1, true), 0);
        assert_int_equal(simq_pending(&d->q), 4); /* the oldest still available */
        dev_use(d, dev_take(d), 10);
        assert_int_equal(virtq_add_bufs(d->vq, &more, 1, true), 0);
        assert_int_equal(virtq_get_used(d->vq, out, 4), 1);
        assert_int_equal(out[0].token, 0);
        assert_int_equal(out[0].len, 10);
        assert_false(virtq_broken(d->vq));
    }
}

/* IN_ORDER (s2.7.9, s2.8.8): buffers go out in ring order, and one used
 * entry naming the last buffer completes a whole batch. */
static void test_in_order_batch(void **state)
{
    (void)state;
    const uint16_t num = 8;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(num, formats[f] | VIRTQ_F_IN_ORDER);
        struct virtq_used_buf out[8];
        uintptr_t expect = 0;
        for (unsigned round = 0; round < 20000; round++) {
            unsigned b = round % num + 1;
            add_n(d, b, expect, true);
            virtq_kick(d->vq);
            d->q.nheld = 0;
            assert_int_equal(simq_take(&d->q, b), b);
            for (unsigned i = 0; i < b; i++)
                assert_int_equal(d->q.held[i].id, (uint16_t)(expect + i) & (num - 1));
            simq_put_used(&d->q, d->q.held[b - 1].id, 77, (uint16_t)b);
            /* Two calls: a batch split across calls. */
            int first = virtq_get_used(d->vq, out, (int)(b + 1) / 2);
            assert_int_equal(first, (int)(b + 1) / 2);
            int second = virtq_get_used(d->vq, out + first, num);
            assert_int_equal(first + second, (int)b);
            for (unsigned i = 0; i < b; i++) {
                assert_int_equal(out[i].token, expect + i);
                assert_int_equal(out[i].len, i == b - 1 ? 77 : 0);
            }
            expect += b;
            assert_int_equal(virtq_nfree(d->vq), num);
        }
        assert_false(virtq_broken(d->vq));
    }
}

/* A chain: readable elements then writable ones, one token, one used
 * buffer whose length may reach the writable total and no further. */
static void test_chain(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        struct virtq_seg seg[5] = {
            {0x1000, 10}, {0x2000, 20}, {0x3000, 300}, {0x4000, 400}, {0x5000, 500}};
        assert_int_equal(virtq_add_chain(d->vq, seg, 2, 3, 42), 0);
        assert_int_equal(virtq_nfree(d->vq), 11);
        assert_true(virtq_kick(d->vq));
        uint16_t id = dev_take(d);
        struct sim_chain c;
        assert_int_equal(simq_chain(&d->q, &d->q.held[0], &c), 0);
        assert_int_equal(c.n, 5);
        assert_int_equal(c.nr, 2);
        for (unsigned i = 0; i < 5; i++) {
            assert_int_equal(c.addr[i], seg[i].addr);
            assert_int_equal(c.len[i], seg[i].len);
        }
        dev_use(d, id, 1200);
        struct virtq_used_buf out[4];
        assert_int_equal(virtq_get_used(d->vq, out, 4), 1);
        assert_int_equal(out[0].token, 42);
        assert_int_equal(out[0].len, 1200);
        assert_int_equal(virtq_nfree(d->vq), 16);
        /* One byte past the writable total breaks the queue. */
        assert_int_equal(virtq_add_chain(d->vq, seg, 2, 3, 43), 0);
        dev_use(d, dev_take(d), 1201);
        assert_int_equal(virtq_get_used(d->vq, out, 4), -EIO);
        assert_string_equal(virtq_violation(d->vq)->what, "used len larger than the buffer");
        assert_int_equal(virtq_violation(d->vq)->limit, 1200);
        assert_int_equal(virtq_add_chain(d->vq, seg, 2, 3, 44), -EIO);
    }
}

/* What virtq_add_chain refuses, leaving the queue as it was. */
static void test_chain_refused(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(8, formats[f]);
        struct virtq_seg seg[9];
        for (unsigned i = 0; i < 9; i++)
            seg[i] = (struct virtq_seg){0x1000 * (i + 1), 0x80000000u};
        assert_int_equal(virtq_add_chain(d->vq, seg, 0, 0, 1), -EINVAL);
        assert_int_equal(virtq_add_chain(d->vq, seg, 4, 5, 1), -EINVAL); /* longer than the ring */
        assert_int_equal(virtq_add_chain(d->vq, seg, 1, 2, 1), -EINVAL); /* 4 GiB writable */
        assert_int_equal(virtq_add_chain(d->vq, seg, 2, 1, 1), 0);
        add_n(d, 4, 10, false);
        assert_int_equal(virtq_add_chain(d->vq, seg, 2, 0, 1), -ENOSPC);
        assert_int_equal(virtq_nfree(d->vq), 1);
        assert_false(virtq_broken(d->vq));
    }
}

/* Chains of 1..5 descriptors, completed out of order, round after round:
 * the free list stays whole (every descriptor comes back, none twice),
 * and a used id naming a chain's second descriptor is not in flight. */
static void test_chains_out_of_order(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(32, formats[f]);
        struct virtq_seg seg[5];
        for (unsigned i = 0; i < 5; i++)
            seg[i] = (struct virtq_seg){0x1000 * (i + 1), 64};
        struct virtq_used_buf out[32];
        for (unsigned round = 0; round < 3000; round++) {
            unsigned nbuf = 0;
            for (unsigned k = 0; virtq_nfree(d->vq) >= 5; k++, nbuf++) {
                unsigned len = (round + k) % 5 + 1, nw = k % 2 ? len / 2 : 0;
                assert_int_equal(virtq_add_chain(d->vq, seg, len - nw, nw, round * 100 + k), 0);
            }
            virtq_kick(d->vq);
            d->q.nheld = 0;
            assert_int_equal(simq_take(&d->q, 0), nbuf);
            for (unsigned i = 0; i < nbuf; i++)
                dev_use(d, d->q.held[round % 2 ? nbuf - 1 - i : (i + round) % nbuf].id, 0);
            assert_int_equal(virtq_get_used(d->vq, out, 32), (int)nbuf);
            assert_int_equal(virtq_nfree(d->vq), 32);
        }
        assert_int_equal(virtq_add_chain(d->vq, seg, 3, 0, 7), 0);
        d->q.nheld = 0;
        simq_take(&d->q, 1);
        struct sim_chain c;
        assert_int_equal(simq_chain(&d->q, &d->q.held[0], &c), 0);
        assert_int_equal(c.n, 3);
        if (!virtq_packed(d->vq)) {
            /* split: the id of the chain's second descriptor */
            uint16_t second = d->q.desc[d->q.held[0].id].next;
            dev_use(d, second, 0);
            assert_int_equal(virtq_get_used(d->vq, out, 32), -EIO);
            assert_string_equal(virtq_violation(d->vq)->what, "used id not in flight");
        }
    }
}

/* IN_ORDER with chains: a batch walks the chains by their lengths. */
static void test_in_order_chains(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f] | VIRTQ_F_IN_ORDER);
        struct virtq_seg seg[3] = {{0x1000, 10}, {0x2000, 20}, {0x3000, 30}};
        struct virtq_used_buf out[16];
        for (unsigned round = 0; round < 5000; round++) {
            unsigned nbuf = 0;
            for (unsigned k = 0; virtq_nfree(d->vq) >= 3 && k < 4; k++, nbuf++)
                assert_int_equal(virtq_add_chain(d->vq, seg, 1, (round + k) % 3, k), 0);
            d->q.nheld = 0;
            assert_int_equal(simq_take(&d->q, 0), nbuf);
            unsigned split = round % nbuf;
            if (split)
                simq_put_used(&d->q, d->q.held[split - 1].id, 5, (uint16_t)split);
            simq_put_used(&d->q, d->q.held[nbuf - 1].id, 6, (uint16_t)(nbuf - split));
            assert_int_equal(virtq_get_used(d->vq, out, 16), (int)nbuf);
            for (unsigned k = 0; k < nbuf; k++) {
                assert_int_equal(out[k].token, k);
                unsigned want = k == nbuf - 1 ? 6 : split && k == split - 1 ? 5 : 0;
                /* no writable element: the length is not passed on */
                assert_int_equal(out[k].len, (round + k) % 3 ? want : 0);
            }
            assert_int_equal(virtq_nfree(d->vq), 16);
        }
        assert_false(virtq_broken(d->vq));
    }
}

/* The queue broke for what, counted once under kind and under no other
 * kind (the counters vnperf conform reports, docs/conform.md). */
static void expect_broken(struct dev *d, enum virtq_bad kind, const char *what)
{
    struct virtq_used_buf out[16];
    assert_int_equal(virtq_get_used(d->vq, out, 16), -EIO);
    assert_true(virtq_broken(d->vq));
    const struct virtq_violation *bad = virtq_violation(d->vq);
    assert_non_null(bad);
    assert_string_equal(bad->what, what);
    for (unsigned k = 0; k < VIRTQ_BAD_N; k++)
        assert_int_equal(virtq_stats(d->vq)->bad[k], k == (unsigned)kind ? 1 : 0);
    /* Stays dead. */
    assert_int_equal(virtq_get_used(d->vq, out, 16), -EIO);
    assert_int_equal(virtq_add_bufs(d->vq, (struct virtq_buf[]){{0, 1, 0}}, 1, false), 0);
}

static void test_bad_id_range(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        add_n(d, 2, 0, false);
        virtq_kick(d->vq);
        dev_take(d);
        dev_use(d, 16, 0);
        expect_broken(d, VIRTQ_BAD_UNAVAIL, "used id out of range");
        assert_int_equal(virtq_violation(d->vq)->id, 16);
        assert_int_equal(virtq_violation(d->vq)->limit, 15);
    }
}

static void test_bad_id_not_in_flight(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        add_n(d, 2, 0, false);
        virtq_kick(d->vq);
        /* ids are handed out from 0: 5 never was */
        assert_int_equal(dev_take(d), 0);
        dev_use(d, 5, 0);
        expect_broken(d, VIRTQ_BAD_UNAVAIL, "used id not in flight");
        assert_int_equal(virtq_violation(d->vq)->id, 5);
    }
}

static void test_duplicate_id(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        struct virtq_used_buf out[16];
        add_n(d, 3, 0, false);
        virtq_kick(d->vq);
        uint16_t a = dev_take(d);
        dev_take(d);
        dev_use(d, a, 0);
        dev_use(d, a, 0);
        /* The good one first, then the queue is dead. */
        assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
        assert_int_equal(out[0].token, 0);
        expect_broken(d, VIRTQ_BAD_UNAVAIL, "used id not in flight");
    }
}

static void test_len_too_large(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        add_n(d, 1, 0, true); /* 100 bytes offered to be written */
        virtq_kick(d->vq);
        dev_use(d, dev_take(d), 101);
        expect_broken(d, VIRTQ_BAD_USED_LEN, "used len larger than the buffer");
        assert_int_equal(virtq_violation(d->vq)->len, 101);
        assert_int_equal(virtq_violation(d->vq)->limit, 100);
    }
}

/* A device-readable buffer the device claims to have written: counted,
 * and handed back with length 0 (virtq_used_buf.len), in and out of
 * order. It came back with the device's 5000 (found by fuzz_virtq). */
static void test_tx_len_counted(void **state)
{
    (void)state;
    for (size_t f = 0; f < 2 * NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f % NFORMATS] | (f >= NFORMATS ? VIRTQ_F_IN_ORDER : 0));
        struct virtq_used_buf out[16];
        add_n(d, 1, 0, false);
        virtq_kick(d->vq);
        dev_use(d, dev_take(d), 5000);
        assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
        assert_int_equal(out[0].len, 0);
        assert_int_equal(virtq_stats(d->vq)->len_mismatch, 1);
        assert_false(virtq_broken(d->vq));
    }
}

/* Split: a used index further ahead than the buffers in flight. */
static void test_used_idx_jump(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, 0);
    add_n(d, 4, 0, false);
    virtq_kick(d->vq);
    simq_set_used_idx(&d->q, 5);
    expect_broken(d, VIRTQ_BAD_UNAVAIL, "used idx ahead of the buffers in flight");
    assert_int_equal(virtq_violation(d->vq)->dev_used_idx, 5);
    assert_int_equal(virtq_violation(d->vq)->limit, 4);
}

/* Split IN_ORDER: an entry naming a batch longer than used.idx moved. */
static void test_in_order_batch_past_used_idx(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, VIRTQ_F_IN_ORDER);
    struct virtq_used_buf out[16];
    add_n(d, 6, 0, false);
    d->q.nheld = 0;
    simq_take(&d->q, 6);
    simq_put_used(&d->q, d->q.held[5].id, 0, 2); /* says 6 buffers, moves by 2 */
    assert_int_equal(virtq_get_used(d->vq, out, 16), 2);
    expect_broken(d, VIRTQ_BAD_IN_ORDER, "in-order batch longer than used idx");
}

/* Packed: the descriptor at the driver's used position (index u) with
 * flags that neither an available nor a used descriptor of u's lap
 * carries, on the first lap and after wrapping. */
static void test_packed_wrap_lies(void **state)
{
    (void)state;
    const uint16_t A = VRING_PACKED_DESC_F_AVAIL, U = VRING_PACKED_DESC_F_USED;
    for (unsigned lap = 0; lap < 2; lap++) {
        /* wrap counter 1 on lap 0 (used: A|U), 0 on lap 1 (used: none) */
        const uint16_t lies[2][2] = {{0, U}, {A | U, A}};
        for (unsigned k = 0; k < 2; k++) {
            struct dev *d = dev_new(8, VIRTQ_F_PACKED);
            struct virtq_used_buf out[8];
            for (unsigned r = 0; r < lap; r++) { /* one lap of honest work */
                add_n(d, 8, 0, false);
                for (int i = 0; i < 8; i++)
                    dev_use(d, dev_take(d), 0);
                assert_int_equal(virtq_get_used(d->vq, out, 8), 8);
            }
            add_n(d, 4, 0, false);
            uint16_t id = dev_take(d);
            simq_put_raw(&d->q, (uint16_t)(8 * lap), id, 0, lies[lap][k]);
            assert_true(virtq_has_used(d->vq));
            expect_broken(d, VIRTQ_BAD_UNAVAIL, "descriptor flags do not match the wrap counter");
            assert_int_equal(virtq_violation(d->vq)->dev_used_idx, lies[lap][k]);
        }
    }
}

/* Packed: a used descriptor where nothing is in flight, with the wrap
 * counter of the lap the driver is on. */
static void test_packed_used_ahead(void **state)
{
    (void)state;
    struct dev *d = dev_new(8, VIRTQ_F_PACKED);
    struct virtq_used_buf out[8];
    add_n(d, 3, 0, false);
    for (int i = 0; i < 3; i++)
        dev_use(d, dev_take(d), 0);
    assert_int_equal(virtq_get_used(d->vq, out, 8), 3);
    assert_false(virtq_has_used(d->vq));
    simq_put_raw(&d->q, 3, 1, 0, VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED);
    assert_true(virtq_has_used(d->vq));
    expect_broken(d, VIRTQ_BAD_UNAVAIL, "used descriptor ahead of the buffers in flight");
}

/* Packed: a used length means something only with WRITE (s2.8.4), but
 * QEMU 7.2 never sets WRITE: a device-writable buffer takes its length
 * (checked) without it, a device-readable one counts it only with it. */
static void test_packed_used_len_and_write(void **state)
{
    (void)state;
    const uint16_t BOTH = VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED;
    struct dev *d = dev_new(8, VIRTQ_F_PACKED);
    struct virtq_used_buf out[8];
    add_n(d, 1, 0, true);
    simq_put_raw(&d->q, 0, dev_take(d), 100, BOTH);
    assert_int_equal(virtq_get_used(d->vq, out, 8), 1);
    assert_int_equal(out[0].len, 100);
    add_n(d, 2, 0, false);
    simq_put_raw(&d->q, 1, dev_take(d), 100, BOTH);
    simq_put_raw(&d->q, 2, dev_take(d), 100, BOTH | VRING_DESC_F_WRITE);
    assert_int_equal(virtq_get_used(d->vq, out, 8), 2);
    assert_int_equal(out[0].len, 0);
    assert_int_equal(out[1].len, 0); /* counted, not passed on */
    assert_int_equal(virtq_stats(d->vq)->len_mismatch, 1);
    add_n(d, 1, 0, true);
    simq_put_raw(&d->q, 3, dev_take(d), 101, BOTH);
    expect_broken(d, VIRTQ_BAD_USED_LEN, "used len larger than the buffer");
}

/* Bound slots: buffer i is slot i at a fixed address, in ring order; a
 * slot the device still holds (out of order) is not handed out again. */
static uint64_t slot_addr(void *ctx, uint16_t i)
{
    (void)ctx;
    return 0x100000u + 0x800u * i;
}

static void test_bound_slots(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(16, formats[f]);
        struct virtq_used_buf out[16];
        add_n(d, 1, 0, false);
        assert_int_equal(virtq_bind_slots(d->vq, slot_addr, NULL, 12), -EBUSY);
        dev_use(d, dev_take(d), 0);
        assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
        assert_int_equal(virtq_bind_slots(d->vq, slot_addr, NULL, 12), 0);
        assert_true(virtq_bound(d->vq));
        assert_int_equal(virtq_add_bufs(d->vq, (struct virtq_buf[]){{0, 1, 0}}, 1, false), 0);
        uint16_t len[16];
        for (unsigned i = 0; i < 16; i++)
            len[i] = (uint16_t)(60 + i);
        for (unsigned round = 0; round < 5000; round++) {
            uint16_t first = virtq_next_slot(d->vq);
            assert_int_equal(virtq_free_run(d->vq, 16), 16);
            assert_int_equal(virtq_add_slots(d->vq, 16, len, 12), 16);
            virtq_kick(d->vq);
            d->q.nheld = 0;
            assert_int_equal(simq_take(&d->q, 0), 16);
            for (unsigned i = 0; i < 16; i++) {
                struct sim_chain c;
                assert_int_equal(simq_chain(&d->q, &d->q.held[i], &c), 0);
                uint16_t s = (uint16_t)(first + i) & 15;
                assert_int_equal(c.addr[0], slot_addr(NULL, s));
                assert_int_equal(c.len[0], 72 + i);
            }
            /* All but the oldest come back: ring order waits for it. */
            for (unsigned i = 1; i < 16; i++)
                dev_use(d, d->q.held[i].id, 0);
            assert_int_equal(virtq_get_used(d->vq, NULL, 16), 15);
            assert_int_equal(virtq_nfree(d->vq), 15);
            assert_int_equal(virtq_free_run(d->vq, 16), 0);
            assert_int_equal(virtq_add_slots(d->vq, 4, len, 12), 0);
            dev_use(d, d->q.held[0].id, 0);
            assert_int_equal(virtq_get_used(d->vq, NULL, 16), 1);
        }
        assert_false(virtq_broken(d->vq));
    }
}

/* Used buffer notifications: off from creation (polling); enabled, the
 * device notifies on the next used buffer; disabled again, it does not. */
static void test_cb_enable_disable(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        for (unsigned ev = 0; ev < 2; ev++) {
            struct dev *d = dev_new(16, formats[f] | (ev ? VIRTQ_F_EVENT_IDX : 0));
            struct virtq_used_buf out[16];
            add_n(d, 8, 0, true);
            dev_use(d, dev_take(d), 1);
            assert_int_equal(d->q.interrupts, 0);
            assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
            assert_false(virtq_enable_cb(d->vq));
            assert_true(virtq_cb_enabled(d->vq));
            dev_use(d, dev_take(d), 1);
            assert_int_equal(d->q.interrupts, 1);
            /* Consuming keeps them coming while enabled. */
            assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
            dev_use(d, dev_take(d), 1);
            assert_int_equal(d->q.interrupts, 2);
            assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
            virtq_disable_cb(d->vq);
            assert_false(virtq_cb_enabled(d->vq));
            dev_use(d, dev_take(d), 1);
            dev_use(d, dev_take(d), 1);
            assert_int_equal(d->q.interrupts, 2);
        }
    }
}

/* Delayed notifications (Linux's virtqueue_enable_cb_delayed): with
 * EVENT_IDX 8 out ask for one after 3/4 of them, the 7th use, and each
 * poll moves the point on from what is still out; without EVENT_IDX
 * every use notifies. Past the point already, enabling says so (split:
 * by count; packed: anything used at the driver's position). */
static void test_cb_enable_delayed(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        for (unsigned ev = 0; ev < 2; ev++) {
            struct dev *d = dev_new(16, formats[f] | (ev ? VIRTQ_F_EVENT_IDX : 0));
            struct virtq_used_buf out[16];
            add_n(d, 8, 0, true);
            assert_false(virtq_enable_cb_delayed(d->vq));
            for (unsigned i = 1; i <= 8; i++) {
                dev_use(d, dev_take(d), 1);
                assert_int_equal(d->q.interrupts, ev ? (i >= 7) : i);
            }
            /* 8 used and taken, 8 more out: the point moves 6 on. */
            assert_int_equal(virtq_get_used(d->vq, out, 16), 8);
            add_n(d, 8, 0, true);
            unsigned irq0 = (unsigned)d->q.interrupts;
            dev_use(d, dev_take(d), 1);
            assert_int_equal(virtq_get_used(d->vq, out, 16), 1);
            for (unsigned i = 2; i <= 8; i++)
                dev_use(d, dev_take(d), 1);
            /* 7 out after the poll: 5 on, at the 6th of the rest. */
            assert_int_equal(d->q.interrupts - irq0, ev ? 2 : 8);
            assert_int_equal(virtq_get_used(d->vq, out, 16), 7);
            /* Used before the request: up to the point the notification
             * is still to come (split), past it enabling says so. */
            add_n(d, 8, 0, true);
            for (unsigned i = 0; i < 3; i++)
                dev_use(d, dev_take(d), 1);
            assert_int_equal(virtq_enable_cb_delayed(d->vq), !ev || formats[f]);
            for (unsigned i = 0; i < 4; i++)
                dev_use(d, dev_take(d), 1);
            assert_true(virtq_enable_cb_delayed(d->vq));
            assert_false(virtq_broken(d->vq));
        }
    }
}

/* The race of s2.7.14 / s2.8.22: the device uses a buffer at every point
 * around virtq_enable_cb. Either enable says something is pending, or
 * the device notifies: a wakeup is never lost. */
static void test_cb_enable_race(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        for (unsigned ev = 0; ev < 2; ev++) {
            for (unsigned when = 0; when < 3; when++) {
                struct dev *d = dev_new(16, formats[f] | (ev ? VIRTQ_F_EVENT_IDX : 0));
                struct virtq_used_buf out[16];
                add_n(d, 8, 0, true);
                for (unsigned round = 0; round < 40; round++) {
                    uint64_t irq0 = d->q.interrupts;
                    if (when == 0) /* before the last poll: polled, then enable is quiet */
                        dev_use(d, dev_take(d), 1);
                    while (virtq_get_used(d->vq, out, 16) > 0)
                        ;
                    if (when == 1) /* after the last poll, before enable */
                        dev_use(d, dev_take(d), 1);
                    bool pending = virtq_enable_cb(d->vq);
                    if (when == 2) /* after enable: the device must notify */
                        dev_use(d, dev_take(d), 1);
                    bool irq = d->q.interrupts != irq0;
                    if (when == 1)
                        assert_true(pending);
                    if (when == 2)
                        assert_true(irq);
                    if (when == 0)
                        assert_false(pending || irq);
                    virtq_disable_cb(d->vq);
                    while (virtq_get_used(d->vq, out, 16) > 0)
                        ;
                    add_n(d, virtq_nfree(d->vq) < 8 ? virtq_nfree(d->vq) : 8, 0, true);
                }
                assert_false(virtq_broken(d->vq));
            }
        }
    }
}

/* VIRTQ_F_INDIRECT: a chain takes one ring descriptor pointing at its
 * table, which the device walks (sim_queue checks the spec's rules); the
 * ring fills with more chains than direct descriptors would hold, they
 * complete out of order, and each used id frees its whole table. */
static void test_indirect_chains(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        for (unsigned io = 0; io < 2; io++) {
            unsigned flags = formats[f] | VIRTQ_F_INDIRECT | (io ? VIRTQ_F_IN_ORDER : 0);
            struct dev *d = dev_new(16, flags);
            assert_true(virtq_indirect(d->vq));
            struct virtq_used_buf out[16];
            for (unsigned round = 0; round < 200; round++) {
                for (unsigned k = 0; k < 16; k++) {
                    unsigned n = (round + k) % 15 + 2,
                             nw = k % 3 ? 1 : 0; /* 2..16, the ring size */
                    struct virtq_seg seg[VIRTQ_INDIRECT_MAX];
                    for (unsigned i = 0; i < n; i++)
                        seg[i] = (struct virtq_seg){0x100000u * (k + 1) + i, 10 + i + k};
                    assert_int_equal(virtq_add_chain(d->vq, seg, n - nw, nw, k), 0);
                    assert_int_equal(virtq_nfree(d->vq), 15 - k);
                }
                struct virtq_seg one = {1, 1};
                assert_int_equal(virtq_add_chain(d->vq, &one, 1, 0, 99), -ENOSPC);
                virtq_kick(d->vq);
                d->q.nheld = 0;
                uint64_t before = d->q.indirect_bufs;
                assert_int_equal(simq_take(&d->q, 0), 16);
                assert_int_equal(d->q.indirect_bufs - before, 16);
                for (unsigned k = 0; k < 16; k++) {
                    const struct sim_held *h = &d->q.held[k];
                    unsigned n = (round + k) % 15 + 2,
                             nw = k % 3 ? 1 : 0; /* 2..16, the ring size */
                    assert_false(h->bad);
                    assert_int_equal(h->ndesc, 1);
                    assert_int_equal(h->chain.n, n);
                    assert_int_equal(h->chain.nr, n - nw);
                    for (unsigned i = 0; i < h->chain.n; i++) {
                        assert_int_equal(h->chain.addr[i], 0x100000u * (k + 1) + i);
                        assert_int_equal(h->chain.len[i], 10 + i + k);
                    }
                }
                if (io) {
                    simq_put_used(&d->q, d->q.held[15].id, 0, 16);
                } else {
                    for (unsigned k = 0; k < 16; k++) {
                        const struct sim_held *h = &d->q.held[(k * 7 + round) % 16];
                        uint32_t wl = h->chain.n > h->chain.nr ? h->chain.len[h->chain.n - 1] : 0;
                        dev_use(d, h->id, wl);
                    }
                }
                assert_int_equal(virtq_get_used(d->vq, out, 16), 16);
                assert_int_equal(virtq_nfree(d->vq), 16);
            }
            assert_false(virtq_broken(d->vq));
            assert_int_equal(virtq_stats(d->vq)->indirect, 200 * 16);
            /* a written length past the table's writable total breaks it */
            struct virtq_seg seg[3] = {{0x1000, 10}, {0x2000, 20}, {0x3000, 30}};
            assert_int_equal(virtq_add_chain(d->vq, seg, 1, 2, 5), 0);
            dev_use(d, dev_take(d), 51);
            expect_broken(d, VIRTQ_BAD_USED_LEN, "used len larger than the buffer");
        }
    }
}

/* One element, or more than a table holds, goes out direct. */
static void test_indirect_direct_fallback(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(32, formats[f] | VIRTQ_F_INDIRECT);
        struct virtq_seg seg[VIRTQ_INDIRECT_MAX + 1];
        for (unsigned i = 0; i <= VIRTQ_INDIRECT_MAX; i++)
            seg[i] = (struct virtq_seg){0x1000 * (i + 1), 8};
        assert_int_equal(virtq_add_chain(d->vq, seg, 1, 0, 1), 0);
        assert_int_equal(virtq_nfree(d->vq), 31);
        assert_int_equal(virtq_add_chain(d->vq, seg, VIRTQ_INDIRECT_MAX + 1, 0, 2), 0);
        assert_int_equal(virtq_nfree(d->vq), 31 - (VIRTQ_INDIRECT_MAX + 1));
        d->q.nheld = 0;
        assert_int_equal(simq_take(&d->q, 0), 2);
        assert_int_equal(d->q.indirect_bufs, 0);
        assert_int_equal(virtq_stats(d->vq)->indirect, 0);
        assert_int_equal(d->q.held[1].ndesc, VIRTQ_INDIRECT_MAX + 1);
    }
}

/* VIRTIO_F_NOTIFICATION_DATA (s2.9): every notification is 32 bits, the
 * queue's index then the next avail index (split, all 16 bits across its
 * wrap) or the next ring offset and wrap counter (packed, across 2700
 * laps of 8); without the flag, the index alone in 16 bits. */
static void test_notif_data(void **state)
{
    (void)state;
    for (size_t f = 0; f < NFORMATS; f++) {
        struct dev *d = dev_new(8, formats[f] | VIRTQ_F_NOTIF_DATA);
        assert_true(virtq_notif_data(d->vq));
        uint32_t added = 0;
        for (int r = 0; r < 22000; r++) {
            add_n(d, 3, 1, false);
            added += 3;
            virtq_notify(d->vq);
            assert_true(d->data);
            assert_int_equal(d->val & 0xffffu, 1);
            uint32_t next = added & 0xffffu;
            if (formats[f] & VIRTQ_F_PACKED)
                next = (added % 8u) | (uint32_t)((added / 8u) % 2u == 0) << 15;
            assert_int_equal(d->val >> 16, next);
            for (int k = 0; k < 3; k++)
                dev_use(d, dev_take(d), 0);
            assert_int_equal(virtq_get_used(d->vq, NULL, 8), 3);
        }
        struct dev *plain = dev_new(8, formats[f]);
        add_n(plain, 3, 1, false);
        virtq_notify(plain->vq);
        assert_false(plain->data);
        assert_int_equal(plain->val, 1);
    }
}

/* Spoils the indirect descriptor or table of the one buffer available. */
static void *ind_desc(struct dev *d, uint16_t **flags, uint32_t **len)
{
    if (virtq_packed(d->vq)) {
        *flags = &d->q.pdesc[0].flags;
        *len = &d->q.pdesc[0].len;
        return (void *)(uintptr_t)d->q.pdesc[0].addr;
    }
    uint16_t head = d->q.avail->ring[0];
    *flags = &d->q.desc[head].flags;
    *len = &d->q.desc[head].len;
    return (void *)(uintptr_t)d->q.desc[head].addr;
}

/* The simulated device refuses what the spec forbids the driver (so a
 * wrong table fails the tests above): INDIRECT not negotiated, NEXT on
 * the indirect descriptor, len not a multiple of 16, INDIRECT inside the
 * table, and a split table's link out of it. */
static void test_indirect_device_rules(void **state)
{
    (void)state;
    struct virtq_seg seg[3] = {{0x1000, 10}, {0x2000, 20}, {0x3000, 30}};
    struct sim_chain c;
    for (size_t f = 0; f < NFORMATS; f++) {
        for (int rule = 0; rule < 6; rule++) {
            struct dev *d = dev_new(8, formats[f] | VIRTQ_F_INDIRECT);
            assert_int_equal(virtq_add_chain(d->vq, seg, 2, 1, 1), 0);
            assert_int_equal(simq_peek(&d->q, 0, &c), 0);
            assert_int_equal(c.n, 3);
            uint16_t *fl;
            uint32_t *len;
            uint8_t *t = ind_desc(d, &fl, &len);
            assert_int_equal(*len, 48);
            assert_true(*fl & VRING_DESC_F_INDIRECT);
            assert_false(*fl & VRING_DESC_F_NEXT);
            /* the table's second element's flags: at 12 (split), 14 (packed) */
            uint16_t *tf = (uint16_t *)(t + 16 + (virtq_packed(d->vq) ? 14 : 12));
            switch (rule) {
            case 0:
                d->q.indirect = false;
                break;
            case 1:
                *fl |= VRING_DESC_F_NEXT;
                break;
            case 2:
                *len = 40;
                break;
            case 3:
                *tf |= VRING_DESC_F_INDIRECT;
                break;
            case 4:
                *len = 0;
                break;
            case 5:
                if (virtq_packed(d->vq))
                    *tf |= VRING_DESC_F_NEXT; /* packed tables have no links */
                else
                    ((struct vring_desc *)t)[1].next = 3; /* past the table's 3 */
                break;
            }
            assert_int_equal(simq_peek(&d->q, 0, &c), -EINVAL);
        }
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_create),
        T(test_index_wrap),
        T(test_event_idx_kicks),
        T(test_no_notify_flag),
        T(test_batches_out_of_order),
        T(test_get_used_max),
        T(test_free_run_unbound),
        T(test_add_to_full_ring),
        T(test_in_order_batch),
        T(test_chain),
        T(test_chain_refused),
        T(test_chains_out_of_order),
        T(test_in_order_chains),
        T(test_bad_id_range),
        T(test_bad_id_not_in_flight),
        T(test_duplicate_id),
        T(test_len_too_large),
        T(test_tx_len_counted),
        T(test_used_idx_jump),
        T(test_in_order_batch_past_used_idx),
        T(test_packed_wrap_lies),
        T(test_packed_used_ahead),
        T(test_packed_used_len_and_write),
        T(test_bound_slots),
        T(test_cb_enable_disable),
        T(test_cb_enable_delayed),
        T(test_cb_enable_race),
        T(test_indirect_chains),
        T(test_indirect_direct_fallback),
        T(test_indirect_device_rules),
        T(test_notif_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
