/* vnet_dev_renegotiate (drivers/virtio/vnet_dev.c) against the simulated
 * device: the device reset (virtio 1.2 s2.4) and brought up again with
 * another feature set, each set's traffic exact both ways; a device whose
 * status never reads 0 after the reset (one line, FAILED, no hang, the old
 * queues' memory left alone); and many resets in a row taking no new
 * memory once every set has been up (dma_pool.h); each bring-up's own
 * frames taken (vnet_counts). */
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

#define B(f) VIRTIO_BIT(f)
#define OFFER                                                                                      \
    (B(VIRTIO_F_VERSION_1) | B(VIRTIO_NET_F_MAC) | B(VIRTIO_NET_F_STATUS) |                        \
     B(VIRTIO_NET_F_MRG_RXBUF) | B(VIRTIO_F_EVENT_IDX) | B(VIRTIO_F_RING_PACKED) |                 \
     B(VIRTIO_F_INDIRECT_DESC) | B(VIRTIO_NET_F_CTRL_VQ))

/* Three feature sets as features= gives them: all on; the packed ring
 * and EVENT_IDX off; MRG_RXBUF, indirect tables and the control queue
 * off. */
static const uint64_t sets[3] = {
    0,
    B(VIRTIO_F_RING_PACKED) | B(VIRTIO_F_EVENT_IDX),
    B(VIRTIO_NET_F_MRG_RXBUF) | B(VIRTIO_F_INDIRECT_DESC) | B(VIRTIO_NET_F_CTRL_VQ),
};

static struct vnet_params params(uint64_t off)
{
    return (struct vnet_params){.ring_size = 32, .rx_refill = 1, .features_off = off};
}

static struct vnet_dev *up(struct sim_dev *s, uint64_t off)
{
    struct vnet_params p = params(off);
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    return d;
}

static int reneg(struct vnet_dev *d, uint64_t off)
{
    struct vnet_params p = params(off);
    return vnet_dev_renegotiate(d, &p);
}

/* n frames each way, numbered from 0: the device logs every TX frame once
 * in order, the driver takes every RX frame once in order. */
static void traffic(struct sim_dev *s, struct vnet_dev *d, uint32_t n)
{
    struct vnet_txslots sl;
    assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
    s->ntx = 0;
    s->auto_tx = true;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t first, len = 60;
        assert_int_equal(vnet_txslots_reserve(d, 1, &first), 1);
        memcpy(sl.frame0 + (size_t)(first & (sl.num - 1)) * sl.stride, &i, 4);
        assert_int_equal(vnet_txslots_send(d, 1, &len, 0), 1);
    }
    sim_tx_step(s, 0);
    assert_int_equal(s->ntx, n);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(*(const uint32_t *)s->tx_log[i].data, i);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t frame[60] = {0};
        memcpy(frame + 20, &i, 4);
        assert_int_equal(sim_rx_frame(s, frame, sizeof(frame)), 1);
        struct vnet_rx rx[4];
        assert_int_equal(vnet_rx_burst(d, rx, 4), 1);
        assert_int_equal(rx[0].len, 60);
        assert_memory_equal((const uint8_t *)rx[0].frame + 20, &i, 4);
        vnet_rx_release(d, rx[0].buf);
    }
    assert_false(vnet_broken(d));
}

/* Each set in turn on one device, each after a reset: the features the
 * device saw are the set's, the rings its format, 100 frames (past the
 * 32-entry rings) each way exact; the first set again at the end. */
static void test_reset_renegotiate_rerun(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(OFFER, 32, false);
    struct vnet_dev *d = up(s, sets[0]);
    traffic(s, d, 100);
    for (unsigned k = 1; k <= 3; k++) {
        uint64_t off = sets[k % 3];
        assert_int_equal(reneg(d, off), 0);
        assert_int_equal(d->generation, k);
        assert_int_equal(d->features, OFFER & ~off);
        assert_int_equal(s->driver_features, OFFER & ~off);
        assert_int_equal(s->status & VIRTIO_STATUS_DRIVER_OK, VIRTIO_STATUS_DRIVER_OK);
        assert_int_equal(virtq_packed(d->txq[0].vq), !(off & B(VIRTIO_F_RING_PACKED)));
        assert_int_equal(d->ctrl != NULL, !(off & B(VIRTIO_NET_F_CTRL_VQ)));
        assert_int_equal(d->hdr_len, VNET_HDR_MRG);
        traffic(s, d, 100);
    }
}

/* A device whose status never reads 0 after the driver wrote 0: the
 * renegotiation says so and gives up at once (the transport's wait is
 * bounded), FAILED set, the old queues' memory not handed out again. */
static void test_reset_never_completes(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(OFFER, 32, false);
    struct vnet_dev *d = up(s, 0);
    s->reset_stuck = true;
    assert_int_equal(reneg(d, sets[1]), -ETIMEDOUT);
    assert_true(s->status & VIRTIO_STATUS_FAILED);
    assert_int_equal(d->generation, 0);
    for (unsigned i = 0; i < d->pool.n; i++)
        assert_true(d->pool.b[i].taken);
    s->reset_stuck = false;
    assert_int_equal(reneg(d, sets[1]), 0);
    traffic(s, d, 40);
}

/* 300 resets cycling the three sets, bound TX slots each time: once each
 * set has been up, no bring-up takes new memory. */
static void test_reset_cycles_reuse_memory(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(OFFER, 32, false);
    struct vnet_dev *d = up(s, sets[0]);
    uint64_t settled = 0;
    for (unsigned k = 1; k <= 300; k++) {
        assert_int_equal(reneg(d, sets[k % 3]), 0);
        traffic(s, d, 4);
        if (k == 6)
            settled = sim_dma_bytes;
    }
    assert_int_equal(sim_dma_bytes, settled);
}

/* vnet_counts: the frames each bring-up took, a renegotiation starts
 * them anew (what app=reneg adds over its sets). */
static void test_counts_per_bring_up(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(OFFER, 32, false);
    struct vnet_dev *d = up(s, sets[0]);
    traffic(s, d, 100);
    struct vnet_counts c;
    vnet_counts(d, &c);
    assert_int_equal(c.rx_packets, 100);
    assert_int_equal(c.rx_bytes, 6000);
    assert_int_equal(reneg(d, sets[1]), 0);
    vnet_counts(d, &c);
    assert_int_equal(c.rx_packets + c.rx_bytes, 0);
    traffic(s, d, 40);
    vnet_counts(d, &c);
    assert_int_equal(c.rx_packets, 40);
    assert_int_equal(c.rx_bytes, 2400);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_reset_renegotiate_rerun),
        T(test_counts_per_bring_up),
        T(test_reset_never_completes),
        T(test_reset_cycles_reuse_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
