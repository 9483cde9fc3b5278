/* drivers/virtio/vnet_txslots.c against the simulated device: the bound
 * layout, bursts through slots with index wrap, kick batching, both
 * full-ring policies, a device completing out of order, the copying
 * vnet_tx_burst of a bound queue, binding with frames in flight, the
 * argument checks and a device that breaks the rules. */
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
#include "kernel/json.h"
#include "kernel/mem.h"
#include "sim_virtio.h"

/* test_vnet_txslots_packed.c builds this file with TEST_PACKED: every
 * test then runs on packed rings. */
#ifdef TEST_PACKED
#define RING_FEATURE VIRTIO_BIT(VIRTIO_F_RING_PACKED)
#else
#define RING_FEATURE 0
#endif

#define FEATURES                                                                                   \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |                               \
     VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) |                        \
     VIRTIO_BIT(VIRTIO_F_EVENT_IDX) | RING_FEATURE)

static unsigned done_count;

static void on_done(void *ctx, void *cookie)
{
    (void)ctx;
    (void)cookie;
    done_count++;
}

static struct vnet_dev *up(struct sim_dev *s, uint16_t ring, uint16_t kb, uint8_t txfull)
{
    struct vnet_params p = {.ring_size = ring, .kick_batch = kb, .rx_refill = 4, .txfull = txfull};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    vnet_set_tx_done(d, on_done, NULL);
    return d;
}

static struct vnet_dev *bound(struct sim_dev *s, uint16_t ring, uint16_t kb, uint8_t txfull,
                              struct vnet_txslots *sl)
{
    struct vnet_dev *d = up(s, ring, kb, txfull);
    assert_int_equal(vnet_txslots_bind(d, 128, sl), 0);
    return d;
}

static uint8_t *slot(const struct vnet_txslots *sl, uint16_t first, int i)
{
    return sl->frame0 + (size_t)((first + i) & (sl->num - 1)) * sl->stride;
}

/* Reserves n and sends them, each frame carrying its number. */
static int send_numbered(struct vnet_dev *d, const struct vnet_txslots *sl, int n, uint32_t from)
{
    uint16_t first, len[256];
    int k = vnet_txslots_reserve(d, n, &first);
    if (k <= 0)
        return k;
    for (int i = 0; i < k; i++) {
        memcpy(slot(sl, first, i), &(uint32_t){from + (uint32_t)i}, 4);
        len[i] = 60;
    }
    return vnet_txslots_send(d, k, len, 0);
}

static void expect_log(const struct sim_dev *s, uint32_t n, uint32_t from)
{
    assert_int_equal(s->ntx, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(s->tx_log[i].len, 60);
        assert_int_equal(*(const uint32_t *)s->tx_log[i].data, from + i);
    }
}

static int setup(void **state)
{
    (void)state;
    done_count = 0;
    return 0;
}

/* Descriptor i points at slot i's header, avail entry i names it, the
 * header is zero, and the room is clamped to the device's frame. */
static void test_bind_layout(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 64, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 64, 0, VNET_TXFULL_WAIT, &sl);
    assert_int_equal(sl.num, 64);
    assert_int_equal(sl.room, 128);
    assert_int_equal(sl.stride, 192); /* 12 + 128 rounded up to 64 */
    assert_int_equal(send_numbered(d, &sl, 64, 0), 64);
    assert_int_equal(sim_take(s, 1, 0), 64);
    for (uint16_t i = 0; i < 64; i++) {
        struct sim_chain c;
        assert_int_equal(simq_chain(&s->q[1], &s->q[1].held[i], &c), 0);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.nr, 1);
        assert_int_equal(c.addr[0], (uintptr_t)(sl.frame0 + i * sl.stride - 12));
        assert_int_equal(c.len[0], 12 + 60);
        assert_int_equal(sl.tag[i], 0);
        const uint8_t *hdr = sl.frame0 + (size_t)i * sl.stride - 12;
        for (int b = 0; b < 12; b++)
            assert_int_equal(hdr[b], 0);
    }
    /* A second bind returns the first binding. */
    struct vnet_txslots again;
    assert_int_equal(vnet_txslots_bind(d, 1000, &again), 0);
    assert_ptr_equal(again.frame0, sl.frame0);

    struct sim_dev *s2 = sim_new(FEATURES, 16, false);
    struct vnet_dev *d2 = up(s2, 16, 0, VNET_TXFULL_WAIT);
    assert_int_equal(vnet_txslots_bind(d2, 0, &sl), 0);
    assert_int_equal(sl.room, 1518);
    assert_int_equal(vnet_txslots_bind(d2, 60000, &sl), 0);
    assert_int_equal(sl.room, 1518);
}

/* 70000 frames through a 16-slot ring in bursts of 10: indices wrap past
 * 65535, every frame arrives in order with its length, none is handed to
 * tx_done (slots are not tokens). */
static void test_send_wrap(void **state)
{
    (void)state;
    for (int ooo = 0; ooo < 2; ooo++) {
        struct sim_dev *s = sim_new(FEATURES, 16, false);
        s->out_of_order = ooo;
        struct vnet_txslots sl;
        struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_WAIT, &sl);
        for (uint32_t i = 0; i < 7000; i++) {
            assert_int_equal(send_numbered(d, &sl, 10, i * 10), 10);
            s->ntx = 0;
            assert_int_equal(sim_tx_step(s, 0), 10);
            if (!ooo)
                expect_log(s, 10, i * 10);
            else
                assert_int_equal(*(const uint32_t *)s->tx_log[0].data, i * 10 + 9);
            assert_int_equal(vnet_tx_reclaim(d), 10);
        }
        assert_int_equal(d->txq[0].st.packets, 70000);
        assert_int_equal(d->txq[0].st.bytes, 70000 * 60);
        assert_int_equal(s->q[1].last_avail, (uint16_t)70000);
        assert_int_equal(done_count, 0);
        assert_int_equal(vnet_tx_in_flight(d), 0);
        assert_false(vnet_broken(d));
    }
}

/* One notification per kick_batch frames and one for the tail. */
static void test_kick_batch(void **state)
{
    (void)state;
    static const uint16_t kbs[] = {1, 8, 32, 0};
    for (size_t t = 0; t < sizeof(kbs) / sizeof(kbs[0]); t++) {
        struct sim_dev *s = sim_new(FEATURES & ~VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 256, false);
        struct vnet_txslots sl;
        struct vnet_dev *d = bound(s, 256, kbs[t], VNET_TXFULL_WAIT, &sl);
        assert_int_equal(send_numbered(d, &sl, 200, 0), 200);
        unsigned k = kbs[t] ? kbs[t] : 200;
        assert_int_equal(s->q[1].notifies, (200 + k - 1) / k);
        assert_int_equal(sim_tx_step(s, 0), 200);
        expect_log(s, 200, 0);
    }
}

/* The device completes every slot but the oldest: ring order waits for
 * it, so no slot still out is handed out again. */
static void test_out_of_order_head(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_DROP, &sl);
    assert_int_equal(send_numbered(d, &sl, 16, 0), 16);
    assert_int_equal(sim_take(s, 1, 16), 16);
    for (int i = 1; i < 16; i++)
        sim_put_used(s, 1, s->q[1].held[i].id, 0);
    assert_int_equal(vnet_tx_reclaim(d), 15);
    assert_int_equal(vnet_tx_space(d), 15);
    uint16_t first;
    assert_int_equal(vnet_txslots_reserve(d, 4, &first), 0);
    sim_put_used(s, 1, s->q[1].held[0].id, 0);
    assert_int_equal(vnet_txslots_reserve(d, 4, &first), 4);
    assert_int_equal(first, 0);
    assert_false(vnet_broken(d));
}

/* txfull=drop: nothing free gives 0 at once; the frames the caller could
 * not place are counted with one ring-full event. */
static void test_full_drop(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_DROP, &sl);
    assert_int_equal(send_numbered(d, &sl, 16, 0), 16);
    uint16_t first;
    assert_int_equal(vnet_txslots_reserve(d, 5, &first), 0);
    assert_int_equal(vnet_txslots_send(d, 0, NULL, 5), 0);
    assert_int_equal(d->txq[0].st.ring_full, 1);
    assert_int_equal(d->txq[0].st.dropped, 5);
    assert_int_equal(d->txq[0].st.full_wait_cycles, 0);
    assert_int_equal(sim_tx_step(s, 0), 16);
    assert_int_equal(send_numbered(d, &sl, 5, 16), 5);
    s->ntx = 0;
    assert_int_equal(sim_tx_step(s, 0), 5);
    expect_log(s, 5, 16);
}

/* txfull=wait with a device that works only while the driver spins:
 * every frame goes out in order, the waits are counted, and a reserve
 * never hands out fewer than a quarter ring (8 of 32) when the burst is
 * larger than that. */
static void test_full_wait(void **state)
{
    (void)state;
    for (int ooo = 0; ooo < 2; ooo++) {
        struct sim_dev *s = sim_new(FEATURES, 32, false);
        s->out_of_order = ooo;
        struct vnet_txslots sl;
        struct vnet_dev *d = bound(s, 32, 4, VNET_TXFULL_WAIT, &sl);
        s->relax_tx = true;
        uint32_t sent = 0;
        while (sent < 1000) {
            int n = send_numbered(d, &sl, 12, sent);
            assert_in_range(n, 8, 12);
            sent += (uint32_t)n;
        }
        assert_true(d->txq[0].st.ring_full >= 1);
        assert_true(d->txq[0].st.full_wait_cycles > 0);
        assert_int_equal(d->txq[0].st.dropped, 0);
        sim_tx_step(s, 0);
        assert_int_equal(s->tx_seen, sent);
        if (!ooo)
            expect_log(s, sent, 0);
    }
}

/* txfull=wait against a device that never uses anything: the reserve
 * gives up after the wait limit with 0, no hang, nothing broken. */
static void test_wait_stalled(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_WAIT, &sl);
    assert_int_equal(send_numbered(d, &sl, 16, 0), 16);
    uint16_t first;
    assert_int_equal(vnet_txslots_reserve(d, 8, &first), 0);
    assert_int_equal(d->txq[0].st.wait_timeouts, 1);
    assert_false(vnet_broken(d));
}

/* Sends the API refuses, each leaving the queue usable. */
static void test_send_checks(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_dev *d = up(s, 16, 0, VNET_TXFULL_WAIT);
    uint16_t first, len[8] = {60, 60, 60, 60, 60, 60, 60, 60};
    assert_int_equal(vnet_txslots_reserve(d, 4, &first), -EINVAL); /* not bound */
    struct vnet_txslots sl;
    assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
    assert_int_equal(vnet_txslots_send(d, 1, len, 0), -EINVAL); /* nothing reserved */
    assert_int_equal(vnet_txslots_reserve(d, 4, &first), 4);
    assert_int_equal(vnet_txslots_send(d, 5, len, 0), -EINVAL); /* more than reserved */
    len[2] = 129;
    assert_int_equal(vnet_txslots_send(d, 4, len, 0), -EINVAL); /* larger than room */
    len[2] = 13;
    assert_int_equal(vnet_txslots_send(d, 4, len, 0), -EINVAL); /* no Ethernet header */
    len[2] = 60;
    assert_int_equal(vnet_txslots_send(d, 4, len, -1), -EINVAL);
    assert_int_equal(vnet_txslots_send(d, 4, len, 0), 4);
    assert_int_equal(vnet_txslots_send(d, 1, len, 0), -EINVAL); /* reservation used */
    assert_int_equal(sim_tx_step(s, 0), 4);
    assert_int_equal(d->txq[0].st.packets, 4);
    assert_false(vnet_broken(d));
}

/* vnet_tx_burst on a bound queue copies into slots, marks them (tag 0),
 * gives the frames back at once, stops at a frame larger than a slot,
 * and invalidates a reservation it overlaps. */
static void test_copy_path(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_WAIT, &sl);
    for (uint16_t i = 0; i < 16; i++)
        sl.tag[i] = 7;
    uint16_t first, len[1] = {60};
    assert_int_equal(vnet_txslots_reserve(d, 1, &first), 1);
    static uint8_t room[3][VNET_HDR_ROOM + 200];
    struct vnet_tx tx[3];
    for (int i = 0; i < 3; i++) {
        memset(room[i], 0xa0 + i, sizeof(room[i]));
        tx[i] = (struct vnet_tx){.frame = room[i] + VNET_HDR_ROOM,
                                 .len = i == 2 ? 129 : 60 + (uint32_t)i,
                                 .cookie = (void *)(uintptr_t)(i + 1)};
    }
    assert_int_equal(vnet_tx_burst(d, tx, 3), 2);
    assert_int_equal(done_count, 2);
    assert_int_equal(vnet_txslots_send(d, 1, len, 0), -EINVAL);
    assert_int_equal(sl.tag[0], 0);
    assert_int_equal(sl.tag[1], 0);
    assert_int_equal(sl.tag[2], 7);
    assert_int_equal(sim_tx_step(s, 0), 2);
    assert_int_equal(s->tx_log[0].len, 60);
    assert_int_equal(s->tx_log[1].len, 61);
    assert_int_equal(s->tx_log[1].data[60], 0xa1);
    assert_int_equal(vnet_tx_reclaim(d), 2);
    assert_int_equal(done_count, 2); /* not again */
}

/* Binding waits for the free-list frames in flight (their tx_done runs);
 * a device that keeps them gets -EBUSY and the queue stays as it was. */
static void test_bind_in_flight(void **state)
{
    (void)state;
    static uint8_t room[VNET_HDR_ROOM + 64];
    struct vnet_tx tx = {.frame = room + VNET_HDR_ROOM, .len = 60, .cookie = (void *)1};
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_dev *d = up(s, 16, 0, VNET_TXFULL_WAIT);
    assert_int_equal(vnet_tx_burst(d, &tx, 1), 1);
    struct vnet_txslots sl;
    assert_int_equal(vnet_txslots_bind(d, 128, &sl), -EBUSY);
    assert_int_equal(sim_tx_step(s, 0), 1);
    assert_int_equal(vnet_tx_reclaim(d), 1);
    assert_int_equal(done_count, 1);

    assert_int_equal(vnet_tx_burst(d, &tx, 1), 1);
    s->relax_tx = true;
    assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
    assert_int_equal(done_count, 2);
    assert_int_equal(send_numbered(d, &sl, 3, 0), 3);
    s->ntx = 0;
    sim_tx_step(s, 0);
    expect_log(s, 3, 0);
}

/* A used id out of range or not in flight breaks a bound queue too. */
static void test_bad_ids(void **state)
{
    (void)state;
    static const uint32_t ids[] = {16, 9};
    for (size_t c = 0; c < 2; c++) {
        struct sim_dev *s = sim_new(FEATURES, 16, false);
        struct vnet_txslots sl;
        struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_WAIT, &sl);
        assert_int_equal(send_numbered(d, &sl, 4, 0), 4);
        sim_put_used(s, 1, ids[c], 0);
        assert_int_equal(vnet_tx_reclaim(d), -EIO);
        assert_true(vnet_broken(d));
        uint16_t first;
        assert_int_equal(vnet_txslots_reserve(d, 4, &first), -EIO);
        assert_int_equal(virtq_violation(d->txq[0].vq)->id, ids[c]);
    }
}

/* A queue broken after the reservation: the send adds and kicks nothing,
 * counts nothing and says -EIO. */
static void test_send_after_break(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES, 16, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_WAIT, &sl);
    assert_int_equal(send_numbered(d, &sl, 4, 0), 4);
    uint16_t first, len[4] = {60, 60, 60, 60};
    assert_int_equal(vnet_txslots_reserve(d, 4, &first), 4);
    sim_put_used(s, 1, 16, 0);
    assert_int_equal(vnet_tx_reclaim(d), -EIO);
    uint64_t kicks = virtq_stats(d->txq[0].vq)->kicks;
    assert_int_equal(vnet_txslots_send(d, 4, len, 0), -EIO);
    assert_int_equal(d->txq[0].st.packets, 4);
    assert_int_equal(virtq_stats(d->txq[0].vq)->kicks, kicks);
    assert_int_equal(virtq_in_flight(d->txq[0].vq), 4);
}

/* IN_ORDER: one used element for several buffers frees them all. */
static void test_in_order(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(FEATURES | VIRTIO_BIT(VIRTIO_F_IN_ORDER), 16, false);
    struct vnet_txslots sl;
    struct vnet_dev *d = bound(s, 16, 0, VNET_TXFULL_DROP, &sl);
    assert_true(s->driver_features & VIRTIO_BIT(VIRTIO_F_IN_ORDER));
    for (uint32_t round = 0; round < 500; round++) {
        assert_int_equal(send_numbered(d, &sl, 10, round * 10), 10);
        assert_int_equal(sim_take(s, 1, 10), 10);
        simq_put_used(&s->q[1], s->q[1].held[9].id, 0, 10); /* one entry, a batch of 10 */
        s->q[1].nheld = 0;
        assert_int_equal(vnet_tx_reclaim(d), 10);
        assert_int_equal(vnet_tx_in_flight(d), 0);
    }
    assert_false(vnet_broken(d));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_bind_layout),       T(test_send_wrap),   T(test_kick_batch),
        T(test_out_of_order_head), T(test_full_drop),   T(test_full_wait),
        T(test_wait_stalled),      T(test_send_checks), T(test_copy_path),
        T(test_bind_in_flight),    T(test_bad_ids),     T(test_send_after_break),
        T(test_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
