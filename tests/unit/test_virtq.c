/* drivers/virtio/virtq.c: the split ring driver side against a minimal
 * device written here (index wrap, kick decisions, batches, in-order
 * batches, used-ring validation). */
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

/* The device side, kept apart from the driver's shadow state. */
struct dev {
    struct virtq vq;
    uint16_t last_avail;
    uint16_t used_idx;
    unsigned notifies;
};

static void dev_notify(struct virtq *vq)
{
    struct dev *d = vq->notify_ctx;
    d->notifies++;
}

static struct dev *dev_new(uint16_t num, bool event_idx, bool in_order)
{
    struct dev *d = mem_alloc_dma(sizeof(*d), 64);
    void *mem = mem_alloc_dma(virtq_ring_bytes(num), VIRTQ_ALIGN);
    assert_int_equal(virtq_init(&d->vq, 1, num, mem, event_idx, in_order), 0);
    d->vq.notify = dev_notify;
    d->vq.notify_ctx = d;
    return d;
}

/* Takes one avail entry: returns the descriptor id. */
static uint16_t dev_take(struct dev *d)
{
    assert_int_not_equal(d->vq.avail->idx, d->last_avail);
    return d->vq.avail->ring[d->last_avail++ & d->vq.mask];
}

static void dev_use(struct dev *d, uint32_t id, uint32_t len)
{
    d->vq.used->ring[d->used_idx & d->vq.mask] = (struct vring_used_elem){id, len};
    d->used_idx++;
    __atomic_store_n(&d->vq.used->idx, d->used_idx, __ATOMIC_RELEASE);
}

static void add_n(struct dev *d, unsigned n, uintptr_t token0, bool writes)
{
    for (unsigned i = 0; i < n; i++)
        virtq_add(&d->vq, 0x1000 + i, 100, writes, token0 + i);
}

static int teardown(void **state)
{
    (void)state;
    sim_free_all();
    return 0;
}

static void test_init_layout(void **state)
{
    (void)state;
    struct virtq vq;
    void *mem = mem_alloc_dma(virtq_ring_bytes(256), VIRTQ_ALIGN);
    assert_int_equal(virtq_init(&vq, 0, 100, mem, false, false), -EINVAL);
    assert_int_equal(virtq_init(&vq, 0, 0, mem, false, false), -EINVAL);
    assert_int_equal(virtq_init(&vq, 0, 256, mem, false, false), 0);
    assert_int_equal(virtq_avail_addr(&vq) - virtq_desc_addr(&vq), 16 * 256);
    assert_int_equal(virtq_used_addr(&vq) % VIRTQ_ALIGN, 0);
    assert_true(virtq_used_addr(&vq) >= virtq_avail_addr(&vq) + 6 + 2 * 256);
    assert_int_equal(vq.nfree, 256);
    /* polled: no interrupts wanted (virtio 1.2 s2.7.7) */
    assert_int_equal(vq.avail->flags, VRING_AVAIL_F_NO_INTERRUPT);
}

/* 70000 buffers through an 8-entry ring: every 16-bit index wraps. */
static void test_index_wrap(void **state)
{
    (void)state;
    struct dev *d = dev_new(8, false, false);
    struct virtq_used_buf out[8];
    uintptr_t next_token = 0, expect = 0;
    for (unsigned round = 0; round < 70000 / 5; round++) {
        add_n(d, 5, next_token, false);
        next_token += 5;
        virtq_kick(&d->vq);
        for (int i = 0; i < 5; i++)
            dev_use(d, dev_take(d), 0);
        assert_int_equal(virtq_get_used(&d->vq, out, 8), 5);
        for (int i = 0; i < 5; i++)
            assert_int_equal(out[i].token, expect++);
        assert_int_equal(d->vq.nfree, 8);
    }
    assert_true(d->vq.avail_idx < 70000 - 65536 + 1);
    assert_int_equal(d->vq.avail_idx, (uint16_t)70000);
    assert_int_equal(d->vq.used_idx, (uint16_t)70000);
    assert_false(d->vq.broken);
}

/* Reference for EVENT_IDX: notify iff avail_event is one of the indices
 * written since the last decision, i.e. in [old, new) modulo 2^16. */
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
    struct dev *d = dev_new(64, true, false);
    struct virtq_used_buf out[64];
    unsigned decisions = 0, kicks = 0, total = 0, parks = 0;
    /* Walk the indices across the 16-bit wrap with batches of 1..37 and
     * avail_event at every position around the batch. */
    for (unsigned step = 0; step < 4000; step++) {
        uint16_t batch = (uint16_t)(step % 37 + 1);
        uint16_t old_idx = d->vq.avail_idx;
        int delta = (int)(step % 41) - 2;
        uint16_t event = (uint16_t)(old_idx + delta);
        *d->vq.avail_event = event;
        add_n(d, batch, 0, false);
        unsigned before = d->notifies;
        bool kicked = virtq_kick(&d->vq);
        bool want = ref_need_kick(event, old_idx, d->vq.avail_idx);
        assert_int_equal(kicked, want);
        assert_int_equal(d->notifies - before, want ? 1 : 0);
        decisions++;
        kicks += want;
        for (unsigned i = 0; i < batch; i++)
            dev_use(d, dev_take(d), 0);
        uint16_t parked = *d->vq.used_event;
        assert_int_equal(virtq_get_used(&d->vq, out, 64), batch);
        total += batch;
        /* used_event stays far enough ahead that the device, at most a
         * ring ahead of us, can never pass it: no interrupts. */
        assert_true((uint16_t)(*d->vq.used_event - d->vq.used_idx) > d->vq.num);
        if (*d->vq.used_event != parked)
            parks++;
    }
    /* Renewed now and then, not on every poll. */
    assert_true(parks > 0 && parks < decisions / 100);
    assert_true(kicks > 0 && kicks < decisions);
    assert_true(total > 65536); /* the index wrapped */
    assert_int_equal(d->vq.kicks, kicks);
    assert_int_equal(d->vq.kicks_suppressed, decisions - kicks);
}

static void test_no_notify_flag(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    add_n(d, 2, 0, false);
    assert_true(virtq_kick(&d->vq));
    d->vq.used->flags = VRING_USED_F_NO_NOTIFY;
    add_n(d, 2, 2, false);
    assert_false(virtq_kick(&d->vq));
    assert_int_equal(d->vq.kicks_suppressed, 1);
    d->vq.used->flags = 0;
    /* Nothing new: no kick and nothing counted as suppressed. */
    assert_false(virtq_kick(&d->vq));
    assert_int_equal(d->vq.kicks_suppressed, 1);
    add_n(d, 1, 4, false);
    assert_true(virtq_kick(&d->vq));
    assert_int_equal(d->notifies, 2);
}

/* Every batch size from 1 to the queue size, completed out of order. */
static void test_batches_out_of_order(void **state)
{
    (void)state;
    const uint16_t num = 128;
    struct dev *d = dev_new(num, false, false);
    struct virtq_used_buf out[128];
    uint16_t ids[128];
    for (unsigned b = 1; b <= num; b++) {
        add_n(d, b, 1000 * b, true);
        assert_int_equal(d->vq.nfree, num - b);
        virtq_kick(&d->vq);
        for (unsigned i = 0; i < b; i++)
            ids[i] = dev_take(d);
        for (unsigned i = 0; i < b; i++)
            dev_use(d, ids[b - 1 - i], i % 100);
        assert_int_equal(virtq_get_used(&d->vq, out, num), b);
        bool seen[128] = {false};
        for (unsigned i = 0; i < b; i++) {
            uintptr_t k = out[i].token - 1000 * b;
            assert_true(k < b);
            assert_false(seen[k]);
            seen[k] = true;
            assert_int_equal(out[i].len, i % 100);
        }
        assert_int_equal(d->vq.nfree, num);
    }
    assert_false(d->vq.broken);
}

/* get_used honours max and leaves the rest for the next call. */
static void test_get_used_max(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    struct virtq_used_buf out[16];
    add_n(d, 10, 0, false);
    virtq_kick(&d->vq);
    for (int i = 0; i < 10; i++)
        dev_use(d, dev_take(d), 0);
    assert_int_equal(virtq_get_used(&d->vq, out, 4), 4);
    assert_int_equal(out[3].token, 3);
    assert_int_equal(virtq_get_used(&d->vq, out, 16), 6);
    assert_int_equal(out[0].token, 4);
    assert_int_equal(virtq_get_used(&d->vq, out, 16), 0);
}

/* IN_ORDER: descriptors go out in ring order and one used element can
 * complete a whole batch (virtio 1.2 s2.7.9). */
static void test_in_order_batch(void **state)
{
    (void)state;
    const uint16_t num = 8;
    struct dev *d = dev_new(num, false, true);
    struct virtq_used_buf out[8];
    uintptr_t expect = 0;
    for (unsigned round = 0; round < 20000; round++) {
        unsigned b = round % num + 1;
        add_n(d, b, expect, true);
        virtq_kick(&d->vq);
        uint16_t last = 0;
        for (unsigned i = 0; i < b; i++) {
            uint16_t id = dev_take(d);
            assert_int_equal(id, (uint16_t)(expect + i) & (num - 1));
            last = id;
        }
        dev_use(d, last, 77);
        /* Deliver in two calls to cover a batch split across calls. */
        int first = virtq_get_used(&d->vq, out, (int)(b + 1) / 2);
        assert_int_equal(first, (int)(b + 1) / 2);
        int second = virtq_get_used(&d->vq, out + first, num);
        assert_int_equal(first + second, (int)b);
        for (unsigned i = 0; i < b; i++) {
            assert_int_equal(out[i].token, expect + i);
            assert_int_equal(out[i].len, i == b - 1 ? 77 : 0);
        }
        expect += b;
        assert_int_equal(d->vq.nfree, num);
    }
    assert_false(d->vq.broken);
}

static void expect_broken(struct dev *d, const char *what)
{
    struct virtq_used_buf out[16];
    assert_int_equal(virtq_get_used(&d->vq, out, 16), -EIO);
    assert_true(d->vq.broken);
    assert_non_null(d->vq.bad.what);
    assert_string_equal(d->vq.bad.what, what);
    /* Stays dead. */
    assert_int_equal(virtq_get_used(&d->vq, out, 16), -EIO);
}

static void test_bad_id_range(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    add_n(d, 2, 0, false);
    virtq_kick(&d->vq);
    dev_take(d);
    dev_use(d, 16, 0);
    expect_broken(d, "used id out of range");
    assert_int_equal(d->vq.bad.id, 16);
    assert_int_equal(d->vq.bad.limit, 15);
}

static void test_bad_id_not_in_flight(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    add_n(d, 2, 0, false);
    virtq_kick(&d->vq);
    uint16_t a = dev_take(d);
    /* ids handed out come from the free stack top: 0 then 1; 5 never was */
    assert_int_equal(a, 0);
    dev_use(d, 5, 0);
    expect_broken(d, "used id not in flight");
    assert_int_equal(d->vq.bad.id, 5);
}

static void test_duplicate_id(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    struct virtq_used_buf out[16];
    add_n(d, 3, 0, false);
    virtq_kick(&d->vq);
    uint16_t a = dev_take(d);
    dev_take(d);
    dev_use(d, a, 0);
    dev_use(d, a, 0);
    /* The good one first, then the queue is dead. */
    assert_int_equal(virtq_get_used(&d->vq, out, 16), 1);
    assert_int_equal(out[0].token, 0);
    expect_broken(d, "used id not in flight");
}

static void test_len_too_large(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    add_n(d, 1, 0, true); /* 100 bytes offered to be written */
    virtq_kick(&d->vq);
    dev_use(d, dev_take(d), 101);
    expect_broken(d, "used len larger than the buffer");
    assert_int_equal(d->vq.bad.len, 101);
    assert_int_equal(d->vq.bad.limit, 100);
}

static void test_tx_len_counted(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    struct virtq_used_buf out[16];
    add_n(d, 1, 0, false);
    virtq_kick(&d->vq);
    dev_use(d, dev_take(d), 5000);
    assert_int_equal(virtq_get_used(&d->vq, out, 16), 1);
    assert_int_equal(d->vq.len_mismatch, 1);
    assert_false(d->vq.broken);
}

static void test_used_idx_jump(void **state)
{
    (void)state;
    struct dev *d = dev_new(16, false, false);
    add_n(d, 4, 0, false);
    virtq_kick(&d->vq);
    __atomic_store_n(&d->vq.used->idx, (uint16_t)17, __ATOMIC_RELEASE);
    expect_broken(d, "used idx ahead of the buffers in flight");
    assert_int_equal(d->vq.bad.dev_used_idx, 17);
    assert_int_equal(d->vq.bad.limit, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_init_layout, teardown),
        cmocka_unit_test_teardown(test_index_wrap, teardown),
        cmocka_unit_test_teardown(test_event_idx_kicks, teardown),
        cmocka_unit_test_teardown(test_no_notify_flag, teardown),
        cmocka_unit_test_teardown(test_batches_out_of_order, teardown),
        cmocka_unit_test_teardown(test_get_used_max, teardown),
        cmocka_unit_test_teardown(test_in_order_batch, teardown),
        cmocka_unit_test_teardown(test_bad_id_range, teardown),
        cmocka_unit_test_teardown(test_bad_id_not_in_flight, teardown),
        cmocka_unit_test_teardown(test_duplicate_id, teardown),
        cmocka_unit_test_teardown(test_len_too_large, teardown),
        cmocka_unit_test_teardown(test_tx_len_counted, teardown),
        cmocka_unit_test_teardown(test_used_idx_jump, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
