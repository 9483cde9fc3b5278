/* drivers/virtio/vnet_*.c against the simulated device: bring-up and
 * feature negotiation, TX bursts and kick batching, both full-ring
 * policies, RX handoff and batched refill, mergeable buffers, and a
 * device that breaks the rules. */
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
#include "kernel/time.h"
#include "sim_virtio.h"

/* test_vnet_packed.c builds this file with TEST_PACKED: every test then
 * runs on packed rings (a legacy device stays split: 32 feature bits). */
#ifdef TEST_PACKED
#define RING_FEATURE VIRTIO_BIT(VIRTIO_F_RING_PACKED)
#define RING_FORMAT  "packed"
#else
#define RING_FEATURE 0
#define RING_FORMAT  "split"
#endif

#define ALL_FEATURES                                                                               \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |                               \
     VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_NET_F_MTU) |                              \
     VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |                         \
     VIRTIO_BIT(VIRTIO_NET_F_CSUM) | VIRTIO_BIT(17) | RING_FEATURE)

static struct vnet_params params(uint16_t ring, uint16_t kb, uint16_t refill, uint8_t txfull)
{
    struct vnet_params p = {
        .ring_size = ring, .kick_batch = kb, .rx_refill = refill, .txfull = txfull};
    return p;
}

static struct vnet_dev *up(struct sim_dev *s, const struct vnet_params *p)
{
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, p), 0);
    return d;
}

/* TX frames with headroom, each filled with its number. */
struct txbuf {
    uint8_t room[VNET_HDR_ROOM];
    uint8_t frame[128];
};
static struct txbuf *txbufs;
static unsigned done_count;
static uintptr_t done_last;

static void on_done(void *ctx, void *cookie)
{
    (void)ctx;
    done_count++;
    done_last = (uintptr_t)cookie;
}

static void make_tx(struct vnet_tx *tx, unsigned n, unsigned first, uint32_t len)
{
    for (unsigned i = 0; i < n; i++) {
        struct txbuf *b = &txbufs[(first + i) % 4096];
        memset(b->frame, 0, sizeof(b->frame));
        memcpy(b->frame, &(uint32_t){first + i}, 4);
        tx[i] = (struct vnet_tx){
            .frame = b->frame, .len = len, .cookie = (void *)(uintptr_t)(first + i + 1)};
    }
}

static int setup(void **state)
{
    (void)state;
    txbufs = mem_alloc_dma(sizeof(*txbufs) * 4096, 64);
    done_count = 0;
    done_last = 0;
    return 0;
}

static void test_bringup(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 256, false);
    struct vnet_params p = params(0, 0, 64, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    assert_true(s->status & VIRTIO_STATUS_DRIVER_OK);
    assert_true(s->status & VIRTIO_STATUS_FEATURES_OK);
    /* Only what we use is negotiated: not CSUM; CTRL_VQ where offered. */
    assert_int_equal(s->driver_features, ALL_FEATURES & ~VIRTIO_BIT(VIRTIO_NET_F_CSUM));
    assert_non_null(d->ctrl);
    assert_int_equal(d->npairs, 1);
    assert_int_equal(d->hdr_len, 12);
    assert_int_equal(d->rxq[0].size, 256);
    assert_int_equal(d->txq[0].size, 256);
    assert_int_equal(vnet_mtu(d), 1500);
    assert_string_equal(vnet_ring_format(d), RING_FORMAT);
    assert_memory_equal(vnet_mac(d), s->config, 6);
    /* The whole RX ring posted, with one notification. */
    assert_int_equal(sim_avail_pending(s, 0), 256);
    assert_int_equal(s->q[0].notifies, 1);
    assert_int_equal(vnet_tx_space(d), 256);
}

static void test_ring_size_choice(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 1024, false);
    struct vnet_params p = params(128, 0, 64, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    assert_int_equal(d->rxq[0].size, 128);
    p.ring_size = 0;
    d = up(s, &p);
    assert_int_equal(d->rxq[0].size, 1024);
    p.ring_size = 4096; /* more than the device: capped */
    d = up(s, &p);
    assert_int_equal(d->txq[0].size, 1024);
    p.ring_size = 300;
    struct vnet_dev bad;
    assert_int_equal(vnet_dev_init(&bad, &s->vdev, &p), -EINVAL);
    /* A legacy device's size is fixed. */
    struct sim_dev *l = sim_new(ALL_FEATURES, 256, true);
    p.ring_size = 1024;
    d = up(l, &p);
    assert_int_equal(d->rxq[0].size, 256);
}

static void test_bringup_refuses_bad_device(void **state)
{
    (void)state;
    struct vnet_params p = params(256, 0, 64, VNET_TXFULL_WAIT);
    struct vnet_dev bad;
    struct sim_dev *s = sim_new(ALL_FEATURES, 256, false);
    s->reset_stuck = true;
    assert_int_equal(vnet_dev_init(&bad, &s->vdev, &p), -EIO);
    assert_true(s->status & VIRTIO_STATUS_FAILED);
    s = sim_new(ALL_FEATURES, 256, false);
    s->config_unstable = true;
    assert_int_equal(vnet_dev_init(&bad, &s->vdev, &p), -EIO);
    assert_true(s->status & VIRTIO_STATUS_FAILED);
}

static void test_features_off(void **state)
{
    (void)state;
    uint64_t off;
    assert_int_equal(vnet_features_parse("-event_idx,-mrg_rxbuf", &off), 0);
    assert_int_equal(off, VIRTIO_BIT(VIRTIO_F_EVENT_IDX) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF));
    assert_int_equal(vnet_features_parse("", &off), 0);
    assert_int_equal(off, 0);
    char why[256];
    assert_int_equal(vnet_features_check("-event_idx,-bogus", why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "'-bogus'"));
    assert_non_null(strstr(why, "mrg_rxbuf"));
    assert_non_null(strstr(why, "in_order"));
    assert_int_equal(vnet_features_check("event_idx", why, sizeof(why)), -EINVAL);
    assert_int_equal(vnet_features_check("-guest_ecn", why, sizeof(why)), -EINVAL);
    assert_int_equal(vnet_features_check("-", why, sizeof(why)), -EINVAL);

    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    struct vnet_params p = params(0, 0, 8, VNET_TXFULL_WAIT);
    p.features_off = off | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF);
    struct vnet_dev *d = up(s, &p);
    assert_false(s->driver_features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
    assert_false(d->mrg);
    assert_int_equal(d->hdr_len, 12); /* VERSION_1 keeps num_buffers */

    /* -version_1 on a modern-only device: a clear failure. */
    p.features_off = VIRTIO_BIT(VIRTIO_F_VERSION_1);
    struct vnet_dev bad;
    assert_int_equal(vnet_dev_init(&bad, &s->vdev, &p), -ENODEV);
    assert_true(s->status & VIRTIO_STATUS_FAILED);
}

static void test_legacy_header(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, true);
    struct vnet_params p = params(0, 0, 8, VNET_TXFULL_WAIT);
    p.features_off = VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF);
    struct vnet_dev *d = up(s, &p);
    assert_false(s->status & VIRTIO_STATUS_FEATURES_OK);
    assert_int_equal(d->hdr_len, 10);
    struct vnet_tx tx[4];
    make_tx(tx, 4, 0, 60);
    assert_int_equal(vnet_tx_burst(d, tx, 4), 4);
    assert_int_equal(sim_tx_step(s, 0), 4);
    assert_int_equal(s->tx_log[2].len, 60);
    assert_int_equal(*(uint32_t *)s->tx_log[2].data, 2);
    uint8_t frame[60] = {0xaa, 0xbb};
    assert_int_equal(sim_rx_frame(s, frame, sizeof(frame)), 1);
    struct vnet_rx rx[4];
    assert_int_equal(vnet_rx_burst(d, rx, 4), 1);
    assert_int_equal(rx[0].len, 60);
    assert_memory_equal(rx[0].frame, frame, 60);
}

/* n frames with kick_batch k and a device that always wants kicks: one
 * notification per k frames and one for the tail. */
static void test_tx_kick_batch(void **state)
{
    (void)state;
    static const uint16_t kbs[] = {1, 8, 32, 64, 256, 0};
    for (size_t t = 0; t < sizeof(kbs) / sizeof(kbs[0]); t++) {
        struct sim_dev *s = sim_new(ALL_FEATURES & ~VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 256, false);
        struct vnet_params p = params(256, kbs[t], 64, VNET_TXFULL_WAIT);
        struct vnet_dev *d = up(s, &p);
        vnet_set_tx_done(d, on_done, NULL);
        done_count = 0;
        struct vnet_tx tx[200];
        make_tx(tx, 200, 0, 64);
        assert_int_equal(vnet_tx_burst(d, tx, 200), 200);
        unsigned k = kbs[t] ? kbs[t] : 200;
        assert_int_equal(s->q[1].notifies, (200 + k - 1) / k);
        assert_int_equal(virtq_stats(d->txq[0].vq)->kicks, (200 + k - 1) / k);
        assert_true(virtq_stats(d->txq[0].vq)->kick_cycles > 0);
        assert_int_equal(vnet_tx_space(d), 56);
        assert_int_equal(sim_tx_step(s, 0), 200);
        for (unsigned i = 0; i < 200; i++) {
            assert_int_equal(s->tx_log[i].len, 64);
            assert_int_equal(*(uint32_t *)s->tx_log[i].data, i);
        }
        assert_int_equal(vnet_tx_reclaim(d), 200);
        assert_int_equal(done_count, 200);
        assert_int_equal(vnet_tx_space(d), 256);
        assert_int_equal(d->txq[0].st.packets, 200);
        assert_int_equal(d->txq[0].st.bytes, 200 * 64);
    }
}

/* EVENT_IDX: a device that asked for one kick gets exactly one. */
static void test_tx_event_idx_suppression(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 256, false);
    s->event_idx = true;
    struct vnet_params p = params(256, 8, 64, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    struct vnet_tx tx[64];
    make_tx(tx, 64, 0, 64);
    /* avail_event 0: the first batch [0,8) kicks, later ones do not. */
    assert_int_equal(vnet_tx_burst(d, tx, 64), 64);
    assert_int_equal(s->q[1].notifies, 1);
    assert_int_equal(virtq_stats(d->txq[0].vq)->kicks_suppressed, 7);
    /* The device catches up and asks again at its position. */
    assert_int_equal(sim_tx_step(s, 0), 64);
    assert_int_equal(vnet_tx_reclaim(d), 64);
    make_tx(tx, 64, 64, 64);
    assert_int_equal(vnet_tx_burst(d, tx, 64), 64);
    assert_int_equal(s->q[1].notifies, 2);
}

static void test_tx_full_drop(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    struct vnet_params p = params(64, 0, 8, VNET_TXFULL_DROP);
    struct vnet_dev *d = up(s, &p);
    struct vnet_tx tx[100];
    make_tx(tx, 100, 0, 64);
    assert_int_equal(vnet_tx_burst(d, tx, 100), 64);
    assert_int_equal(d->txq[0].st.ring_full, 1);
    assert_int_equal(d->txq[0].st.dropped, 36);
    assert_int_equal(vnet_tx_space(d), 0);
    assert_int_equal(vnet_tx_burst(d, tx, 10), 0);
    assert_int_equal(d->txq[0].st.dropped, 46);
    /* The device drains; the ring takes frames again. */
    assert_int_equal(sim_tx_step(s, 0), 64);
    assert_int_equal(vnet_tx_burst(d, tx + 64, 36), 36);
    assert_int_equal(s->tx_seen, 64);
    assert_false(vnet_broken(d));
}

/* txfull=wait with a device that makes progress while we spin: every
 * frame goes out, in order, and the waiting is counted. */
static void test_tx_full_wait(void **state)
{
    (void)state;
    for (int ooo = 0; ooo < 2; ooo++) {
        struct sim_dev *s = sim_new(ALL_FEATURES, 32, false);
        s->out_of_order = ooo;
        struct vnet_params p = params(32, 4, 8, VNET_TXFULL_WAIT);
        struct vnet_dev *d = up(s, &p);
        vnet_set_tx_done(d, on_done, NULL);
        done_count = 0;
        s->relax_tx = true; /* the device runs only while the driver spins */
        struct vnet_tx tx[100];
        make_tx(tx, 100, 0, 64);
        assert_int_equal(vnet_tx_burst(d, tx, 100), 100);
        assert_true(d->txq[0].st.ring_full >= 1);
        assert_true(d->txq[0].st.full_wait_cycles > 0);
        assert_int_equal(d->txq[0].st.dropped, 0);
        sim_tx_step(s, 0);
        assert_int_equal(s->tx_seen, 100);
        if (!ooo)
            for (unsigned i = 0; i < 100; i++)
                assert_int_equal(*(uint32_t *)s->tx_log[i].data, i);
        vnet_tx_reclaim(d);
        assert_int_equal(done_count, 100);
    }
}

/* txfull=wait against a device that never uses anything: gives up after
 * the wait limit and returns what it queued, no hang. */
static void test_tx_full_wait_stalled(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 8, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    struct vnet_tx tx[20];
    make_tx(tx, 20, 0, 64);
    assert_int_equal(vnet_tx_burst(d, tx, 20), 16);
    assert_int_equal(d->txq[0].st.wait_timeouts, 1);
    assert_int_equal(d->txq[0].st.ring_full, 1);
    assert_false(vnet_broken(d));
}

/* Sends n frames through one of the three TX paths: 0 bound slots (as
 * gen: reserve, fill, send, until all are out), 1 frames by reference, 2
 * frames copied into bound slots. */
static void send_path(struct vnet_dev *d, int path, int n)
{
    struct vnet_tx tx[64];
    make_tx(tx, (unsigned)n, 0, 60);
    if (path) {
        assert_int_equal(vnet_tx_burst(d, tx, n), n);
        return;
    }
    uint16_t len[64];
    for (int i = 0; i < 64; i++)
        len[i] = 60;
    for (int done = 0; done < n;) {
        uint16_t first;
        int k = vnet_txslots_reserve(d, n - done, &first);
        assert_true(k > 0);
        assert_int_equal(vnet_txslots_send(d, k, len, 0), k);
        done += k;
    }
}

/* The one full-ring rule, the same on every TX path: a burst of n that
 * finds fewer than min(n, a quarter ring) free waits until max(n, a
 * quarter ring), at most half the ring, is free. Ring 64, full, and a
 * device that uses one buffer each time the driver spins: the device's
 * count says how far each wait went. */
static void test_tx_one_wait_rule(void **state)
{
    (void)state;
    /* n, frames the device used by the end, full-ring events */
    static const struct {
        int n, used, full;
    } cases[] = {{1, 16, 1}, {4, 16, 1}, {16, 16, 1}, {40, 48, 2}, {64, 64, 2}};
    /* The wait's limit in wall time 50x longer: a host under load that
     * deschedules the test between two device steps is not a timeout. */
    uint64_t hz = time_tsc_hz;
    time_tsc_hz = hz * 50;
    for (int path = 0; path < 3; path++) {
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
            struct vnet_params p = params(64, 0, 8, VNET_TXFULL_WAIT);
            struct vnet_dev *d = up(s, &p);
            struct vnet_txslots sl;
            if (path != 1)
                assert_int_equal(vnet_txslots_bind(d, 128, &sl), 0);
            send_path(d, path, 64);
            s->relax_tx = true;
            s->relax_step = 1;
            send_path(d, path, cases[c].n);
            assert_int_equal(s->tx_seen, cases[c].used);
            assert_int_equal(d->txq[0].st.ring_full, cases[c].full);
            assert_int_equal(d->txq[0].st.packets, 64 + cases[c].n);
            assert_int_equal(d->txq[0].st.wait_timeouts, 0);
            sim_free_all();
            txbufs = mem_alloc_dma(sizeof(*txbufs) * 4096, 64);
        }
    }
    time_tsc_hz = hz;
}

/* Batch sizes 1..ring size through TX with the device completing each
 * burst, out of order. */
static void test_tx_all_batch_sizes(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    s->out_of_order = true;
    struct vnet_params p = params(64, 0, 8, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    vnet_set_tx_done(d, on_done, NULL);
    struct vnet_tx tx[64];
    unsigned sent = 0;
    for (unsigned b = 1; b <= 64; b++) {
        make_tx(tx, b, sent, 60);
        assert_int_equal(vnet_tx_burst(d, tx, (int)b), (int)b);
        assert_int_equal(sim_tx_step(s, 0), b);
        assert_int_equal(vnet_tx_reclaim(d), (int)b);
        sent += b;
    }
    assert_int_equal(done_count, sent);
    assert_int_equal(d->txq[0].st.packets, sent);
}

/* Many frames through a small ring: indices wrap past 65535. */
static void test_tx_rx_wrap(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 4, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    struct vnet_tx tx[10];
    uint8_t frame[64];
    struct vnet_rx rx[16];
    for (unsigned i = 0; i < 70000 / 10; i++) {
        make_tx(tx, 10, i * 10, 64);
        assert_int_equal(vnet_tx_burst(d, tx, 10), 10);
        s->ntx = 0;
        assert_int_equal(sim_tx_step(s, 0), 10);
        assert_int_equal(*(uint32_t *)s->tx_log[9].data, i * 10 + 9);
        for (unsigned k = 0; k < 10; k++) {
            memcpy(frame, &(uint32_t){i * 10 + k}, 4);
            assert_int_equal(sim_rx_frame(s, frame, sizeof(frame)), 1);
        }
        assert_int_equal(vnet_rx_burst(d, rx, 16), 10);
        for (unsigned k = 0; k < 10; k++) {
            assert_int_equal(*(uint32_t *)rx[k].frame, i * 10 + k);
            vnet_rx_release(d, rx[k].buf);
        }
    }
    assert_int_equal(d->txq[0].st.packets, 70000);
    assert_int_equal(d->rxq[0].st.packets, 70000);
    assert_int_equal(s->q[1].last_avail, (uint16_t)70000);
    assert_false(vnet_broken(d));
}

/* IN_ORDER offered: negotiated, descriptors go out in ring order on both
 * queues while RX slots come back in whatever order the app releases them. */
static void test_in_order(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES | VIRTIO_BIT(VIRTIO_F_IN_ORDER), 16, false);
    struct vnet_params p = params(16, 0, 4, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    assert_true(s->driver_features & VIRTIO_BIT(VIRTIO_F_IN_ORDER));
    struct vnet_tx tx[10];
    uint8_t frame[64];
    struct vnet_rx rx[16];
    for (unsigned round = 0; round < 500; round++) {
        make_tx(tx, 10, round * 10, 64);
        assert_int_equal(vnet_tx_burst(d, tx, 10), 10);
        s->ntx = 0;
        assert_int_equal(sim_take(s, 1, 0), 10);
        for (unsigned i = 0; i < 10; i++)
            assert_int_equal(s->q[1].held[i].id, (round * 10 + i) & 15);
        assert_int_equal(sim_tx_step(s, 0), 10);
        assert_int_equal(vnet_tx_reclaim(d), 10);
        for (unsigned k = 0; k < 6; k++) {
            memcpy(frame, &(uint32_t){round * 6 + k}, 4);
            assert_int_equal(sim_rx_frame(s, frame, sizeof(frame)), 1);
        }
        assert_int_equal(vnet_rx_burst(d, rx, 16), 6);
        for (unsigned k = 0; k < 6; k++)
            assert_int_equal(*(uint32_t *)rx[k].frame, round * 6 + k);
        /* Released backwards: the slots change places in the ring. */
        for (int k = 5; k >= 0; k--)
            vnet_rx_release(d, rx[k].buf);
    }
    assert_false(vnet_broken(d));
    assert_int_equal(d->rxq[0].st.packets, 3000);
}

/* RX: zero-copy frames with headroom, refill in batches of rx_refill
 * with one notification each. */
static void test_rx_refill_batches(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES & ~VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 64, false);
    struct vnet_params p = params(64, 0, 16, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    uint8_t frame[100];
    for (unsigned i = 0; i < 40; i++) {
        memset(frame, (int)i, sizeof(frame));
        assert_int_equal(sim_rx_frame(s, frame, 60 + i), 1);
    }
    struct vnet_rx rx[64];
    assert_int_equal(vnet_rx_burst(d, rx, 64), 40);
    for (unsigned i = 0; i < 40; i++) {
        assert_int_equal(rx[i].len, 60 + i);
        assert_int_equal(((uint8_t *)rx[i].frame)[0], i);
        uint8_t *slot = vnet_rx_slot(&d->rxq[0], rx[i].buf);
        assert_ptr_equal(rx[i].frame, slot + VNET_HDR_ROOM);
    }
    uint64_t n0 = s->q[0].notifies;
    for (unsigned i = 0; i < 15; i++)
        vnet_rx_release(d, rx[i].buf);
    assert_int_equal(s->q[0].notifies, n0); /* not yet a batch */
    vnet_rx_release(d, rx[15].buf);
    assert_int_equal(s->q[0].notifies, n0 + 1);
    assert_int_equal(sim_avail_pending(s, 0), 24 + 16);
    /* Double release and foreign handles are ignored. */
    vnet_rx_release(d, rx[0].buf);
    vnet_rx_release(d, 9999);
    assert_int_equal(d->rxq[0].npending, 0);
    assert_int_equal(d->rxq[0].st.bad_release, 2);
    for (unsigned i = 16; i < 40; i++)
        vnet_rx_release(d, rx[i].buf);
    /* 24 released: one batch of 16 posted, 8 waiting. */
    assert_int_equal(d->rxq[0].npending, 8);
    assert_int_equal(d->rxq[0].st.refills, 3); /* start + 2 */
    assert_int_equal(vnet_rx_burst(d, rx, 64), 0);
}

/* The ring running dry: pending buffers go back before a full batch. */
static void test_rx_low_water(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 8, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    uint8_t frame[64] = {0};
    struct vnet_rx rx[16];
    for (unsigned i = 0; i < 12; i++)
        sim_rx_frame(s, frame, 64);
    assert_int_equal(vnet_rx_burst(d, rx, 16), 12);
    for (unsigned i = 0; i < 3; i++)
        vnet_rx_release(d, rx[i].buf);
    assert_int_equal(sim_avail_pending(s, 0), 4);
    assert_int_equal(vnet_rx_burst(d, rx, 16), 0);
    assert_int_equal(sim_avail_pending(s, 0), 7);
}

static void test_rx_short_frame(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 1, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    uint8_t frame[64] = {0};
    sim_rx_frame(s, frame, 13);
    sim_rx_frame(s, frame, 14);
    struct vnet_rx rx[4];
    assert_int_equal(vnet_rx_burst(d, rx, 4), 1);
    assert_int_equal(rx[0].len, 14);
    assert_int_equal(d->rxq[0].st.len_errors, 1);
    assert_false(vnet_broken(d));
    /* The dropped buffer went back to the device. */
    assert_int_equal(sim_avail_pending(s, 0), 15);
}

/* Mergeable buffers: a device that spreads frames over several buffers
 * (here at most 100 bytes each) still hands over whole frames. */
static void test_rx_mergeable(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    s->mrg_split = 100;
    struct vnet_params p = params(64, 0, 4, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    assert_true(d->mrg);
    uint8_t frame[1514];
    for (unsigned i = 0; i < sizeof(frame); i++)
        frame[i] = (uint8_t)(i * 7);
    struct vnet_rx rx[8];
    assert_int_equal(sim_rx_frame(s, frame, 300), 4); /* 12 + 300 over 100-byte buffers */
    assert_int_equal(sim_rx_frame(s, frame, 50), 1);
    assert_int_equal(vnet_rx_burst(d, rx, 8), 2);
    assert_int_equal(rx[0].len, 300);
    assert_memory_equal(rx[0].frame, frame, 300);
    assert_int_equal(rx[1].len, 50);
    assert_int_equal(d->rxq[0].st.merged, 1);
    vnet_rx_release(d, rx[0].buf);
    vnet_rx_release(d, rx[1].buf);
    /* A full-size frame over 16 buffers, taken one buffer per call. */
    assert_int_equal(sim_rx_frame(s, frame, 1514), 16);
    int got = 0;
    for (int i = 0; i < 16 && !got; i++)
        got = vnet_rx_burst(d, rx, 1);
    assert_int_equal(got, 1);
    assert_int_equal(rx[0].len, 1514);
    assert_memory_equal(rx[0].frame, frame, 1514);
    assert_false(vnet_broken(d));
}

/* qinq (netif_svlan=): the peer's MTU-sized packet in two tags, 1522
 * bytes, taken whole in one buffer without MRG_RXBUF (12 + 1522 posted;
 * a device drops what a buffer cannot hold) and over mergeable buffers;
 * one byte more is counted and dropped. Without qinq 1518 is the most. */
static void test_rx_qinq_frame(void **state)
{
    (void)state;
    static uint8_t frame[1523];
    for (unsigned i = 0; i < sizeof(frame); i++)
        frame[i] = (uint8_t)(i * 5);
    struct vnet_rx rx[4];
    for (int mrg = 0; mrg < 2; mrg++) {
        struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
        s->mrg_split = 100;
        struct vnet_params p = params(16, 0, 1, VNET_TXFULL_WAIT);
        p.qinq = true;
        p.features_off = mrg ? 0 : VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF);
        struct vnet_dev *d = up(s, &p);
        assert_int_equal(d->max_frame, 1522);
        if (!mrg)
            assert_int_equal(d->rx_post_len, 12 + 1522);
        assert_int_equal(sim_rx_frame(s, frame, 1522), mrg ? 16 : 1);
        int got = 0;
        for (int i = 0; i < 16 && !got; i++)
            got = vnet_rx_burst(d, rx, 4);
        assert_int_equal(got, 1);
        assert_int_equal(rx[0].len, 1522);
        assert_memory_equal(rx[0].frame, frame, 1522);
        vnet_rx_release(d, rx[0].buf);
        assert_int_equal(d->rxq[0].st.len_errors, 0);
        if (mrg) {
            assert_int_equal(sim_rx_frame(s, frame, 1523), 16);
            for (int i = 0; i < 16; i++)
                assert_int_equal(vnet_rx_burst(d, rx, 4), 0);
            assert_int_equal(d->rxq[0].st.len_errors, 1);
        } else {
            assert_int_equal(sim_rx_frame(s, frame, 1523), 0);
        }
        assert_false(vnet_broken(d));
    }
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 1, VNET_TXFULL_WAIT);
    p.features_off = VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF);
    struct vnet_dev *d = up(s, &p);
    assert_int_equal(d->rx_post_len, 12 + 1518);
    assert_int_equal(sim_rx_frame(s, frame, 1522), 0);
}

static struct vnet_dev *rx_dev(struct sim_dev **sp)
{
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 4, VNET_TXFULL_WAIT);
    *sp = s;
    return up(s, &p);
}

/* The rule_breaks counter (docs/conform.md) a violation counts under. */
static const char *break_kind(const char *what)
{
    if (!strncmp(what, "used len", 8) || !strncmp(what, "num_buffers", 11))
        return "used_len";
    if (!strncmp(what, "device", 6))
        return "device";
    return "unavailable";
}

static void expect_dead(struct vnet_dev *d, const char *queue, const char *what)
{
    struct vnet_rx rx[4];
    struct vnet_tx tx[1];
    make_tx(tx, 1, 0, 64);
    assert_true(vnet_broken(d));
    /* The broken queue refuses work (a device error breaks both). */
    if (strcmp(queue, "tx"))
        assert_int_equal(vnet_rx_burst(d, rx, 4), -EIO);
    if (strcmp(queue, "rx"))
        assert_int_equal(vnet_tx_burst(d, tx, 1), -EIO);
    char buf[4096];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    vnet_stats_json(d, &j);
    json_obj_end(&j);
    const char *out = json_finish(&j);
    char want[128];
    snprintf(want, sizeof(want), "\"queue\":\"%s\"", queue);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof(want), "\"what\":\"%s\"", what);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\"broken\":true"));
    snprintf(want, sizeof(want), "\"%s\":1", break_kind(what));
    assert_non_null(strstr(out, want));
}

/* virtio 1.2 s5.1.4.1: an MTU below 68 is the device's fault: not
 * negotiated, and counted in config_out_of_range; one above what we
 * buffer is ours, not counted. */
static void test_mtu_out_of_range_counted(void **state)
{
    (void)state;
    static const struct {
        uint16_t mtu;
        int bad;
    } cases[] = {{60, 1}, {67, 1}, {68, 0}, {9001, 0}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
        s->config[10] = (uint8_t)(cases[c].mtu & 0xff);
        s->config[11] = (uint8_t)(cases[c].mtu >> 8);
        struct vnet_params p = params(64, 0, 8, VNET_TXFULL_WAIT);
        struct vnet_dev *d = up(s, &p);
        char buf[4096], want[64];
        struct json j;
        json_init(&j, buf, sizeof(buf));
        json_obj_begin(&j, NULL);
        vnet_stats_json(d, &j);
        json_obj_end(&j);
        snprintf(want, sizeof(want), "\"config_out_of_range\":%d", cases[c].bad);
        assert_non_null(strstr(json_finish(&j), want));
        sim_free_all();
        txbufs = mem_alloc_dma(sizeof(*txbufs) * 4096, 64);
    }
}

/* virtio 1.2 s5.1.4: with SPEED_DUPLEX the config's speed (Mbit/s,
 * 0..0x7fffffff or 0xffffffff unknown) and duplex (0 half, 1 full, 0xff
 * unknown) are read and shown; other values are the device's fault:
 * counted in config_out_of_range and taken as unknown (s5.1.4.2).
 * Without the feature the fields are not read. */
static void test_speed_duplex(void **state)
{
    (void)state;
    static const struct {
        bool offer;
        uint32_t speed;
        uint8_t duplex;
        const char *want;
    } cases[] = {
        {true, 10000, 1, "\"speed_mbps\":10000,\"duplex\":\"full\""},
        {true, 0, 0, "\"speed_mbps\":0,\"duplex\":\"half\""},
        {true, 0x7fffffff, 0xff, "\"speed_mbps\":2147483647,\"duplex\":null"},
        {true, 0xffffffff, 1, "\"speed_mbps\":null,\"duplex\":\"full\""},
        {true, 0x80000000, 1, "\"speed_mbps\":null,\"duplex\":\"full\""},
        {true, 100, 2, "\"speed_mbps\":100,\"duplex\":null"},
        {true, 0xfffffffe, 0x80, "\"speed_mbps\":null,\"duplex\":null"},
        {false, 0x80000000, 2, "\"speed_mbps\":null,\"duplex\":null"},
    };
    static const int bad[] = {0, 0, 0, 0, 1, 1, 2, 0};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint64_t f = ALL_FEATURES | (cases[c].offer ? VIRTIO_BIT(VIRTIO_NET_F_SPEED_DUPLEX) : 0);
        struct sim_dev *s = sim_new(f, 64, false);
        memcpy(s->config + 12, &cases[c].speed, 4);
        s->config[16] = cases[c].duplex;
        struct vnet_params p = params(64, 0, 8, VNET_TXFULL_WAIT);
        struct vnet_dev *d = up(s, &p);
        assert_int_equal(!!(s->driver_features & VIRTIO_BIT(VIRTIO_NET_F_SPEED_DUPLEX)),
                         cases[c].offer);
        char buf[4096], want[64];
        struct json j;
        json_init(&j, buf, sizeof(buf));
        json_obj_begin(&j, NULL);
        vnet_stats_json(d, &j);
        json_obj_end(&j);
        const char *out = json_finish(&j);
        assert_non_null(strstr(out, cases[c].want));
        snprintf(want, sizeof(want), "\"config_out_of_range\":%d", bad[c]);
        assert_non_null(strstr(out, want));
        sim_free_all();
        txbufs = mem_alloc_dma(sizeof(*txbufs) * 4096, 64);
    }
}

static void test_bad_num_buffers(void **state)
{
    (void)state;
    struct sim_dev *s;
    struct vnet_dev *d = rx_dev(&s);
    uint8_t frame[64] = {0};
    sim_rx_frame(s, frame, 64);
    /* Rewrite num_buffers in the header the device wrote. */
    struct virtio_net_hdr *h = (void *)s->rx_last_hdr;
    h->num_buffers = 17;
    struct vnet_rx rx[4];
    assert_int_equal(vnet_rx_burst(d, rx, 4), -EIO);
    assert_int_equal(virtq_violation(d->rxq[0].vq)->len, 17);
    assert_int_equal(virtq_violation(d->rxq[0].vq)->limit, 16);
    expect_dead(d, "rx", "num_buffers larger than the buffers posted");
}

static void test_bad_rx_len(void **state)
{
    (void)state;
    struct sim_dev *s;
    struct vnet_dev *d = rx_dev(&s);
    sim_take(s, 0, 1);
    sim_put_used(s, 0, s->q[0].held[0].id, d->rx_post_len + 1);
    struct vnet_rx rx[4];
    assert_int_equal(vnet_rx_burst(d, rx, 4), -EIO);
    expect_dead(d, "rx", "used len larger than the buffer");
}

static void test_bad_tx_ids(void **state)
{
    (void)state;
    static const struct {
        uint32_t id;
        const char *what;
    } cases[] = {
        {16, "used id out of range"},
        {0xffffffffu, "used id out of range"},
        {7, "used id not in flight"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct sim_dev *s;
        struct vnet_dev *d = rx_dev(&s);
        struct vnet_tx tx[2];
        make_tx(tx, 2, 0, 64);
        assert_int_equal(vnet_tx_burst(d, tx, 2), 2);
        sim_put_used(s, 1, cases[c].id, 0);
        assert_int_equal(vnet_tx_reclaim(d), -EIO);
        expect_dead(d, "tx", cases[c].what);
        /* the packed ring's ids are 16 bits wide */
        uint32_t id = RING_FEATURE ? (uint16_t)cases[c].id : cases[c].id;
        assert_int_equal(virtq_violation(d->txq[0].vq)->id, id);
    }
}

static void test_duplicate_tx_id(void **state)
{
    (void)state;
    struct sim_dev *s;
    struct vnet_dev *d = rx_dev(&s);
    vnet_set_tx_done(d, on_done, NULL);
    struct vnet_tx tx[3];
    make_tx(tx, 3, 0, 64);
    assert_int_equal(vnet_tx_burst(d, tx, 3), 3);
    sim_take(s, 1, 3);
    sim_put_used(s, 1, s->q[1].held[0].id, 0);
    sim_put_used(s, 1, s->q[1].held[0].id, 0);
    /* The genuine completion is delivered, then the queue is dead. */
    assert_int_equal(vnet_tx_reclaim(d), 1);
    assert_int_equal(done_count, 1);
    assert_int_equal(vnet_tx_reclaim(d), -EIO);
    expect_dead(d, "tx", "used id not in flight");
}

/* Split: 16 buffers posted, the device claims 17 used. Packed: a used
 * descriptor with the previous lap's wrap counter. */
static void test_used_idx_jump(void **state)
{
    (void)state;
    struct sim_dev *s;
    struct vnet_dev *d = rx_dev(&s);
    struct vnet_rx rx[4];
    if (RING_FEATURE) {
        simq_put_raw(&s->q[0], 0, 0, 64, VRING_DESC_F_WRITE);
        assert_int_equal(vnet_rx_burst(d, rx, 4), -EIO);
        expect_dead(d, "rx", "descriptor flags do not match the wrap counter");
        return;
    }
    sim_set_used_idx(s, 0, 17);
    assert_int_equal(vnet_rx_burst(d, rx, 4), -EIO);
    expect_dead(d, "rx", "used idx ahead of the buffers in flight");
    assert_int_equal(virtq_violation(d->rxq[0].vq)->dev_used_idx, 17);
}

static void test_needs_reset(void **state)
{
    (void)state;
    struct sim_dev *s;
    struct vnet_dev *d = rx_dev(&s);
    s->status |= VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    assert_int_equal(vnet_check_status(d), -EIO);
    expect_dead(d, "device", "device needs reset");
}

/* A device that ignores a needed kick (avail_event never crossed, as if
 * the notification was lost) gets one from the TX stall watchdog. */
static void test_tx_lost_kick_watchdog(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    struct vnet_params p = params(64, 0, 8, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    s->auto_tx = true;             /* the device works when notified, only then */
    sim_set_avail_event(s, 1, 30); /* an index the burst does not reach */
    struct vnet_tx tx[10];
    make_tx(tx, 10, 0, 64);
    assert_int_equal(vnet_tx_burst(d, tx, 10), 10);
    assert_int_equal(s->q[1].notifies, 0);
    assert_int_equal(vnet_tx_reclaim(d), 0);
    assert_int_equal(virtq_stats(d->txq[0].vq)->forced_kicks, 0); /* not yet: no stall so far */
    int got = 0;
    for (int i = 0; i < 100000000 && !got; i++)
        got = vnet_tx_reclaim(d);
    assert_int_equal(got, 10);
    assert_int_equal(virtq_stats(d->txq[0].vq)->forced_kicks, 1);
    assert_int_equal(s->q[1].notifies, 1);
}

/* RX buffers posted without a kick (suppressed) and nothing arriving:
 * after VNET_RX_STALL_POLLS empty polls the device gets one anyway. */
static void test_rx_lost_kick_watchdog(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 16, false);
    struct vnet_params p = params(16, 0, 4, VNET_TXFULL_WAIT);
    struct vnet_dev *d = up(s, &p);
    uint8_t frame[64] = {0};
    struct vnet_rx rx[16];
    for (int i = 0; i < 4; i++)
        sim_rx_frame(s, frame, 64);
    assert_int_equal(vnet_rx_burst(d, rx, 16), 4);
    sim_set_avail_event(s, 0, 25); /* beyond the refill: its kick is suppressed */
    for (int i = 0; i < 4; i++)
        vnet_rx_release(d, rx[i].buf);
    assert_int_equal(virtq_stats(d->rxq[0].vq)->kicks_suppressed, 1);
    uint64_t n0 = s->q[0].notifies;
    for (unsigned i = 0; i < VNET_RX_STALL_POLLS - 1; i++)
        assert_int_equal(vnet_rx_burst(d, rx, 16), 0);
    assert_int_equal(s->q[0].notifies, n0);
    assert_int_equal(vnet_rx_burst(d, rx, 16), 0);
    assert_int_equal(s->q[0].notifies, n0 + 1);
    assert_int_equal(virtq_stats(d->rxq[0].vq)->forced_kicks, 1);
    /* Once per idle period. */
    for (unsigned i = 0; i < VNET_RX_STALL_POLLS; i++)
        vnet_rx_burst(d, rx, 16);
    assert_int_equal(virtq_stats(d->rxq[0].vq)->forced_kicks, 1);
}

/* An RX-only app makes no TX wait: idle polling notices. */
static void test_needs_reset_while_idle(void **state)
{
    (void)state;
    struct sim_dev *s;
    struct vnet_dev *d = rx_dev(&s);
    struct vnet_rx rx[4];
    assert_int_equal(vnet_rx_burst(d, rx, 4), 0);
    s->status |= VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    int r = 0;
    unsigned polls = 0;
    while (r == 0 && polls <= VNET_RX_IDLE_CHECK) {
        r = vnet_rx_burst(d, rx, 4);
        polls++;
    }
    assert_int_equal(r, -EIO);
    expect_dead(d, "device", "device needs reset");
}

static void test_stats_json(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    struct vnet_params p = params(64, 8, 16, VNET_TXFULL_DROP);
    struct vnet_dev *d = up(s, &p);
    struct vnet_tx tx[10];
    make_tx(tx, 10, 0, 64);
    vnet_tx_burst(d, tx, 10);
    char buf[4096];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    vnet_stats_json(d, &j);
    json_obj_end(&j);
    const char *out = json_finish(&j);
    assert_non_null(strstr(out, "\"kick_batch\":8"));
    assert_non_null(strstr(out, "\"rx_refill\":16"));
    assert_non_null(strstr(out, "\"txfull\":\"drop\""));
    assert_non_null(strstr(out, RING_FEATURE ? "\"features\":[\"mtu\",\"mac\",\"mrg_rxbuf\","
                                               "\"status\",\"ctrl_vq\",\"event_idx\","
                                               "\"version_1\",\"ring_packed\"]"
                                             : "\"features\":[\"mtu\",\"mac\",\"mrg_rxbuf\","
                                               "\"status\",\"ctrl_vq\",\"event_idx\","
                                               "\"version_1\"]"));
    assert_non_null(strstr(out, "\"ring_format\":\"" RING_FORMAT "\""));
    assert_non_null(strstr(out, "\"tx\":{\"size\":64,\"packets\":10,\"bytes\":640"));
    assert_non_null(strstr(out, "\"broken\":false"));
    assert_null(strstr(out, "violation"));
    assert_non_null(strstr(
        out, "\"rule_breaks\":{\"unavailable\":0,\"used_len\":0,\"in_order\":0,\"device\":0}"));
    assert_non_null(strstr(out, "\"config_out_of_range\":0"));
}

/* indirect=: auto and on negotiate VIRTIO_F_INDIRECT_DESC where offered,
 * off never; on without the offer is refused (-EOPNOTSUPP, FAILED). A
 * frame of several pieces then takes one descriptor: the device walks
 * its table (sim_queue checks the spec's rules) and sees the exact bytes. */
static void test_indirect(void **state)
{
    (void)state;
    const uint64_t ind = VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC);
    static const uint8_t modes[] = {VNET_INDIRECT_AUTO, VNET_INDIRECT_ON, VNET_INDIRECT_OFF};
    for (unsigned m = 0; m < 3; m++) {
        struct sim_dev *s = sim_new(ALL_FEATURES | ind, 64, false);
        struct vnet_params p = params(0, 0, 8, VNET_TXFULL_WAIT);
        p.indirect = modes[m];
        struct vnet_dev *d = up(s, &p);
        bool on = modes[m] != VNET_INDIRECT_OFF;
        assert_int_equal(!!(s->driver_features & ind), on);
        assert_int_equal(virtq_indirect(d->txq[0].vq), on);
        vnet_set_tx_done(d, on_done, NULL);
        static uint8_t pay[3][300];
        struct vnet_frag fr[3];
        for (unsigned k = 0; k < 3; k++) {
            for (unsigned i = 0; i < sizeof(pay[k]); i++)
                pay[k][i] = (uint8_t)(i * 7 + k * 13 + m);
            fr[k] = (struct vnet_frag){pay[k], 100 + 100 * k};
        }
        struct vnet_tx t[8];
        make_tx(t, 8, 0, 60);
        for (unsigned i = 0; i < 8; i++) {
            t[i].frags = fr;
            t[i].nfrags = 3;
        }
        assert_int_equal(vnet_tx_burst(d, t, 8), 8);
        assert_int_equal(vnet_tx_in_flight(d), on ? 8 : 32); /* a table, or 4 each */
        assert_int_equal(sim_tx_step(s, 0), 8);
        assert_int_equal(s->q[1].indirect_bufs, on ? 8 : 0);
        assert_int_equal(virtq_stats(d->txq[0].vq)->indirect, on ? 8 : 0);
        for (unsigned i = 0; i < 8; i++) {
            const struct sim_frame *f = &s->tx_log[i];
            assert_int_equal(f->len, 60 + 600);
            assert_int_equal(f->segs, 4);
            assert_memory_equal(f->data, txbufs[i].frame, 60);
            assert_memory_equal(f->data + 60, pay[0], 100);
            assert_memory_equal(f->data + 160, pay[1], 200);
            assert_memory_equal(f->data + 360, pay[2], 300);
        }
        assert_int_equal(vnet_tx_reclaim(d), 8);
        assert_int_equal(done_count, 8 * (m + 1));
        assert_int_equal(vnet_tx_space(d), 64);
    }
    /* on, not offered: refused before FEATURES_OK */
    struct sim_dev *s = sim_new(ALL_FEATURES, 64, false);
    struct vnet_params p = params(0, 0, 8, VNET_TXFULL_WAIT);
    p.indirect = VNET_INDIRECT_ON;
    struct vnet_dev bad;
    assert_int_equal(vnet_dev_init(&bad, &s->vdev, &p), -EOPNOTSUPP);
    assert_true(s->status & VIRTIO_STATUS_FAILED);
    assert_false(s->status & VIRTIO_STATUS_FEATURES_OK);
    /* auto, not offered: direct */
    p.indirect = VNET_INDIRECT_AUTO;
    s = sim_new(ALL_FEATURES, 64, false);
    struct vnet_dev *d = up(s, &p);
    assert_false(s->driver_features & ind);
    assert_false(virtq_indirect(d->txq[0].vq));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_bringup),
        T(test_ring_size_choice),
        T(test_bringup_refuses_bad_device),
        T(test_features_off),
        T(test_legacy_header),
        T(test_tx_kick_batch),
        T(test_tx_event_idx_suppression),
        T(test_tx_full_drop),
        T(test_tx_full_wait),
        T(test_tx_full_wait_stalled),
        T(test_tx_one_wait_rule),
        T(test_tx_all_batch_sizes),
        T(test_tx_rx_wrap),
        T(test_rx_refill_batches),
        T(test_rx_low_water),
        T(test_rx_short_frame),
        T(test_rx_mergeable),
        T(test_rx_qinq_frame),
        T(test_bad_num_buffers),
        T(test_bad_rx_len),
        T(test_bad_tx_ids),
        T(test_duplicate_tx_id),
        T(test_used_idx_jump),
        T(test_needs_reset),
        T(test_needs_reset_while_idle),
        T(test_tx_lost_kick_watchdog),
        T(test_in_order),
        T(test_rx_lost_kick_watchdog),
        T(test_stats_json),
        T(test_mtu_out_of_range_counted),
        T(test_speed_duplex),
        T(test_indirect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
