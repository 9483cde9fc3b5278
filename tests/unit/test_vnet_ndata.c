/* VIRTIO_F_NOTIFICATION_DATA (virtio 1.2 s2.9) through the driver against
 * the simulated device, which checks every notification against its own
 * view of the ring (sim_notify_ok): TX bursts past several ring laps and
 * RX refills, split and packed; features=-notification_data back to the
 * 16-bit index; and the device's check itself catching a stale index, a
 * wrong wrap counter and a 16-bit write where 32 are due. */
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
     VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF))
#define NDATA VIRTIO_BIT(VIRTIO_F_NOTIFICATION_DATA)

static const uint64_t rings[2] = {0, VIRTIO_BIT(VIRTIO_F_RING_PACKED)};

static struct vnet_dev *up(struct sim_dev *s, uint64_t off)
{
    struct vnet_params p = {.ring_size = 16, .rx_refill = 3, .features_off = off};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    return d;
}

/* n frames through bound slots, the device completing every kick. */
static void send(struct vnet_dev *d, int n)
{
    struct vnet_txslots sl;
    assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
    uint16_t len[16];
    for (int i = 0; i < 16; i++)
        len[i] = 60;
    for (int sent = 0; sent < n;) {
        uint16_t first;
        int want = (n - sent) % 7 + 1; /* bursts of 1..7 */
        int k = vnet_txslots_reserve(d, want < n - sent ? want : n - sent, &first);
        assert_true(k > 0);
        assert_int_equal(vnet_txslots_send(d, k, len, 0), k);
        sent += k;
    }
}

/* RX: frames in, each released, refills every 3. */
static void receive(struct sim_dev *s, struct vnet_dev *d, int n)
{
    uint8_t frame[60] = {0};
    struct vnet_rx rx[4];
    for (int i = 0; i < n; i++) {
        assert_int_equal(sim_rx_frame(s, frame, sizeof(frame)), 1);
        assert_int_equal(vnet_rx_burst(d, rx, 4), 1);
        vnet_rx_release(d, rx[0].buf);
    }
}

static void test_every_notification_carries_next(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        struct sim_dev *s = sim_new(BASE | NDATA | rings[r], 16, false);
        s->auto_tx = true;
        struct vnet_dev *d = up(s, 0);
        assert_true(d->features & NDATA);
        send(d, 200);
        receive(s, d, 100);
        /* no EVENT_IDX: every refill and every burst notifies */
        assert_true(s->q[0].notifies > 20 && s->q[1].notifies > 20);
        assert_int_equal(s->q[0].notify_bad, 0);
        assert_int_equal(s->q[1].notify_bad, 0);
        assert_int_equal(s->tx_seen, 200);
        assert_false(vnet_broken(d));
        sim_free_all();
    }
}

static void test_switched_off(void **state)
{
    (void)state;
    uint64_t off;
    assert_int_equal(vnet_features_parse("-notification_data", &off), 0);
    assert_int_equal(off, NDATA);
    for (int r = 0; r < 2; r++) {
        struct sim_dev *s = sim_new(BASE | NDATA | rings[r], 16, false);
        s->auto_tx = true;
        struct vnet_dev *d = up(s, off);
        assert_false(d->features & NDATA);
        send(d, 50);
        assert_true(s->q[1].notifies > 0);
        assert_int_equal(s->q[1].notify_bad, 0);
        assert_int_equal(s->q[1].notify_data, 1); /* the index alone */
        sim_free_all();
    }
}

/* The simulated device's rule: a wrong value is counted, so a driver
 * that encoded it wrong would fail the tests above. */
static void test_device_check_catches(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        struct sim_dev *s = sim_new(BASE | NDATA | rings[r], 16, false);
        s->auto_tx = true;
        struct vnet_dev *d = up(s, 0);
        send(d, 5);
        struct virtq_doorbell db = {NULL, 1, s, 1, true}; /* queue 1's notify address */
        uint32_t good = s->q[1].notify_data;
        sim_notify_ring(&db, good);
        assert_int_equal(s->q[1].notify_bad, 0);
        sim_notify_ring(&db, good + (1u << 16)); /* one past the next index */
        assert_int_equal(s->q[1].notify_bad, 1);
        sim_notify_ring(&db, good ^ (1u << 31)); /* split: idx bit 15; packed: wrap */
        assert_int_equal(s->q[1].notify_bad, 2);
        db.data = false; /* a 16-bit write */
        sim_notify_ring(&db, good);
        assert_int_equal(s->q[1].notify_bad, 3);
        sim_free_all();
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_every_notification_carries_next),
        T(test_switched_off),
        T(test_device_check_catches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
