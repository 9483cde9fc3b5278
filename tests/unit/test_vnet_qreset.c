/* drivers/virtio/vnet_qreset.c against the simulated device, split and
 * packed: a TX queue reset mid-run (frames in flight first come back, the
 * device then sees every frame exactly once, bound slots from slot 0), an
 * RX queue reset (the device's buffers posted again, the app's handles
 * still good, frames after it arrive whole), and every refusal: not
 * negotiated, features=-ring_reset, a pair not in use, TX that never
 * drains, a device that never completes the reset or leaves the queue
 * enabled. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "sim_virtio.h"

#define BASE                                                                                       \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |                               \
     VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) |                        \
     VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
#define RESET VIRTIO_BIT(VIRTIO_F_RING_RESET)

static const uint64_t rings[2] = {0, VIRTIO_BIT(VIRTIO_F_RING_PACKED)};

static struct vnet_dev *up(struct sim_dev *s, uint64_t off)
{
    struct vnet_params p = {.ring_size = 32, .rx_refill = 1, .features_off = off};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    return d;
}

static int send_numbered(struct vnet_dev *d, const struct vnet_txslots *sl, int n, uint32_t from)
{
    uint16_t first, len[64];
    int k = vnet_txslots_reserve(d, n, &first);
    if (k <= 0)
        return k;
    for (int i = 0; i < k; i++) {
        uint8_t *f = sl->frame0 + (size_t)((first + i) & (sl->num - 1)) * sl->stride;
        memcpy(f, &(uint32_t){from + (uint32_t)i}, 4);
        len[i] = 60;
    }
    return vnet_txslots_send(d, k, len, 0);
}

/* 20 frames, 12 of them still in flight at the reset, then 50 more (past
 * the ring's 32): the device logs all 70 once each, in order. */
static void test_tx_reset_exact(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        struct sim_dev *s = sim_new(BASE | RESET | rings[r], 32, false);
        struct vnet_dev *d = up(s, 0);
        struct vnet_txslots sl;
        assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
        assert_int_equal(send_numbered(d, &sl, 20, 0), 20);
        assert_int_equal(sim_tx_step(s, 8), 8);
        s->relax_tx = true; /* the drain's spin lets the device finish */
        assert_int_equal(vnet_queue_reset(d, 0, true), 0);
        assert_int_equal(s->ntx, 20);
        assert_int_equal(s->qresets, 1);
        assert_int_equal(virtq_stats(d->txq[0].vq)->resets, 1);
        assert_int_equal(virtq_next_slot(d->txq[0].vq), 0);
        assert_int_equal(vnet_tx_in_flight(d), 0);
        s->relax_tx = false;
        s->auto_tx = true;
        uint32_t sent = 20;
        while (sent < 70)
            sent +=
                (uint32_t)send_numbered(d, &sl, 70 - (int)sent > 16 ? 16 : 70 - (int)sent, sent);
        sim_tx_step(s, 0); /* what the last kick decision left (no avail_event) */
        assert_int_equal(s->ntx, 70);
        for (uint32_t i = 0; i < 70; i++)
            assert_int_equal(*(const uint32_t *)s->tx_log[i].data, i);
        assert_false(vnet_broken(d));
        sim_free_all();
    }
}

static void rx_one(struct sim_dev *s, uint8_t tag)
{
    uint8_t frame[60] = {0};
    frame[20] = tag;
    assert_int_equal(sim_rx_frame(s, frame, sizeof(frame)), 1);
}

/* One handle held by the app across the reset, the rest of the ring the
 * device's: after it every buffer but the held one is posted again, the
 * held one still releases, and frames arrive whole. */
static void test_rx_reset(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        struct sim_dev *s = sim_new(BASE | RESET | rings[r], 32, false);
        struct vnet_dev *d = up(s, 0);
        struct vnet_rx rx[8];
        rx_one(s, 1);
        rx_one(s, 2);
        assert_int_equal(vnet_rx_burst(d, rx, 8), 2);
        vnet_rx_release(d, rx[1].buf);
        uint32_t held = rx[0].buf;
        rx_one(s, 3); /* used, never taken: the reset forgets it */
        assert_int_equal(vnet_queue_reset(d, 0, false), 0);
        assert_int_equal(s->qresets, 1);
        assert_int_equal(sim_avail_pending(s, 0), 31);
        assert_int_equal(vnet_rx_burst(d, rx, 8), 0);
        vnet_rx_release(d, held);
        assert_int_equal(d->rxq[0].st.bad_release, 0);
        assert_int_equal(sim_avail_pending(s, 0), 32);
        for (uint8_t t = 10; t < 50; t++) {
            rx_one(s, t);
            assert_int_equal(vnet_rx_burst(d, rx, 8), 1);
            assert_int_equal(((const uint8_t *)rx[0].frame)[20], t);
            vnet_rx_release(d, rx[0].buf);
        }
        assert_int_equal(virtq_stats(d->rxq[0].vq)->resets, 1);
        assert_int_equal(d->rxq[0].st.reset_dropped, 1); /* frame 3 */
        assert_false(vnet_broken(d));
        sim_free_all();
    }
}

static void test_refused(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE, 32, false);
    struct vnet_dev *d = up(s, 0);
    assert_int_equal(vnet_queue_reset(d, 0, true), -EOPNOTSUPP);
    sim_free_all();

    uint64_t off;
    assert_int_equal(vnet_features_parse("-ring_reset", &off), 0);
    assert_int_equal(off, RESET);
    s = sim_new(BASE | RESET, 32, false);
    d = up(s, off);
    assert_false(d->features & RESET);
    assert_int_equal(vnet_queue_reset(d, 0, false), -EOPNOTSUPP);
    assert_int_equal(s->qresets, 0);
    sim_free_all();

    s = sim_new(BASE | RESET, 32, false);
    d = up(s, 0);
    assert_true(d->features & RESET);
    assert_int_equal(vnet_queue_reset(d, 1, true), -EINVAL);
    /* frames that never come back: no reset, the queue still good */
    struct vnet_txslots sl;
    assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
    assert_int_equal(send_numbered(d, &sl, 4, 0), 4);
    assert_int_equal(vnet_queue_reset(d, 0, true), -EBUSY);
    assert_int_equal(s->qresets, 0);
    assert_false(vnet_broken(d));
}

/* A device that never completes the reset, or completes it with the
 * queue still enabled, breaks the queue: one fault naming it. */
static void test_device_fails_reset(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        struct sim_dev *s = sim_new(BASE | RESET, 32, false);
        struct vnet_dev *d = up(s, 0);
        s->qreset_stuck = k == 0;
        s->qreset_ready = k == 1;
        assert_int_equal(vnet_queue_reset(d, 0, false), -EIO);
        assert_true(vnet_broken(d));
        struct vnet_fault f;
        assert_int_equal(vnet_fault(d, &f), 0);
        assert_string_equal(f.queue, "rx");
        assert_non_null(strstr(f.what, k == 0 ? "never completed" : "still enabled"));
        assert_int_equal(vnet_queue_reset(d, 0, false), -EIO);
        sim_free_all();
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_tx_reset_exact),
        T(test_rx_reset),
        T(test_refused),
        T(test_device_fails_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
