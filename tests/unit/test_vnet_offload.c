/* The offloads through the driver, against the simulated device:
 * negotiation (and features= switching them off), TX frames asking for
 * NEEDS_CSUM and GSO over IPv4 and IPv6 (headers as the device reads
 * them, descriptor chains of header + fragments), a request that cannot
 * be met, RX of a 64 KiB GSO frame over mergeable buffers (also split
 * across calls), and every malformed RX header counted and dropped with
 * its buffers back in the ring. */
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

/* test_vnet_offload_packed.c builds this file with TEST_PACKED: every
 * test then runs on packed rings. */
#ifdef TEST_PACKED
#define RING_FEATURE VIRTIO_BIT(VIRTIO_F_RING_PACKED)
#else
#define RING_FEATURE 0
#endif
#define B(x) VIRTIO_BIT(x)
#define BASE                                                                                       \
    (B(VIRTIO_F_VERSION_1) | B(VIRTIO_NET_F_MAC) | B(VIRTIO_NET_F_STATUS) |                        \
     B(VIRTIO_NET_F_MRG_RXBUF) | B(VIRTIO_F_EVENT_IDX) | RING_FEATURE)
#define OFFLOADS                                                                                   \
    (B(VIRTIO_NET_F_CSUM) | B(VIRTIO_NET_F_GUEST_CSUM) | B(VIRTIO_NET_F_HOST_TSO4) |               \
     B(VIRTIO_NET_F_HOST_TSO6) | B(VIRTIO_NET_F_GUEST_TSO4) | B(VIRTIO_NET_F_GUEST_TSO6))
#define FRAME_MAX (14 + 65535)

static unsigned done_count;
static void on_done(void *ctx, void *cookie)
{
    (void)ctx;
    (void)cookie;
    done_count++;
}

static struct vnet_dev *up(struct sim_dev *s, uint8_t offloads, uint64_t off)
{
    struct vnet_params p = {.ring_size = 64,
                            .rx_refill = 8,
                            .txfull = VNET_TXFULL_WAIT,
                            .offloads = offloads,
                            .features_off = off};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    vnet_set_tx_done(d, on_done, NULL);
    done_count = 0;
    return d;
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Headers of a TCP segment with pay payload bytes; returns their length. */
static uint32_t tcp_hdrs(uint8_t *f, bool v6, uint32_t pay)
{
    memset(f, 0, 74);
    memset(f, 0x52, 12);
    if (v6) {
        put16(f + 12, 0x86dd);
        f[14] = 0x60;
        put16(f + 18, 20 + pay);
        f[20] = 6;
        f[54 + 12] = 5 << 4;
        return 74;
    }
    put16(f + 12, 0x0800);
    f[14] = 0x45;
    put16(f + 16, 40 + pay);
    f[23] = 6;
    memcpy(f + 26, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    f[34 + 12] = 5 << 4;
    return 54;
}

static void test_negotiation(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | OFFLOADS, 64, false);
    struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
    assert_int_equal(s->driver_features, BASE | OFFLOADS);
    assert_int_equal(vnet_offloads(d), VNET_OFF_ALL | VNET_OFF_TX_TSO6);
    assert_true(d->rx_chains);
    /* Without asking, nothing (raw apps read and write frames themselves). */
    s = sim_new(BASE | OFFLOADS, 64, false);
    d = up(s, 0, 0);
    assert_int_equal(s->driver_features, BASE);
    assert_int_equal(vnet_offloads(d), 0);
    assert_false(d->rx_chains);
    /* features=-csum takes HOST_TSO with it (s5.1.3.1), -guest_csum GUEST_TSO. */
    uint64_t off;
    assert_int_equal(vnet_features_parse("-csum,-guest_csum", &off), 0);
    s = sim_new(BASE | OFFLOADS, 64, false);
    d = up(s, VNET_OFF_ALL, off);
    assert_int_equal(s->driver_features, BASE);
    /* -mrg_rxbuf: no large frames without mergeable buffers (our choice). */
    assert_int_equal(vnet_features_parse("-mrg_rxbuf", &off), 0);
    s = sim_new(BASE | OFFLOADS, 64, false);
    d = up(s, VNET_OFF_ALL, off);
    assert_int_equal(vnet_offloads(d),
                     VNET_OFF_TX_CSUM | VNET_OFF_TX_TSO | VNET_OFF_TX_TSO6 | VNET_OFF_RX_CSUM);
    assert_false(d->rx_chains);
    /* -host_tso4: checksum offload stays, and TSO6 with it. */
    assert_int_equal(vnet_features_parse("-host_tso4,-guest_tso4", &off), 0);
    s = sim_new(BASE | OFFLOADS, 64, false);
    d = up(s, VNET_OFF_ALL, off);
    assert_int_equal(vnet_offloads(d),
                     VNET_OFF_TX_CSUM | VNET_OFF_TX_TSO6 | VNET_OFF_RX_CSUM | VNET_OFF_RX_TSO);
    /* -host_tso6: IPv6 TCP goes out in MTU-sized segments (checksum offload only). */
    assert_int_equal(vnet_features_parse("-host_tso6", &off), 0);
    s = sim_new(BASE | OFFLOADS, 64, false);
    d = up(s, VNET_OFF_ALL, off);
    assert_int_equal(vnet_offloads(d), VNET_OFF_ALL);
}

/* A frame asking for NEEDS_CSUM: header, the seeded field, one descriptor. */
static void check_tx_csum(bool v6)
{
    struct sim_dev *s = sim_new(BASE | OFFLOADS, 64, false);
    struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
    static uint8_t buf[VNET_HDR_ROOM + 200];
    uint8_t *f = buf + VNET_HDR_ROOM;
    uint32_t hl = tcp_hdrs(f, v6, 100);
    struct vnet_tx t = {.frame = f, .len = hl + 100, .cookie = (void *)1};
    t.off.flags = VNET_TX_CSUM;
    assert_int_equal(vnet_tx_burst(d, &t, 1), 1);
    assert_int_equal(sim_tx_step(s, 0), 1);
    const struct sim_frame *lf = &s->tx_log[0];
    struct virtio_net_hdr h;
    memcpy(&h, lf->hdr, sizeof(h));
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
    assert_int_equal(h.csum_start, v6 ? 54 : 34);
    assert_int_equal(h.csum_offset, 16);
    assert_int_equal(lf->len, hl + 100);
    assert_int_equal(lf->segs, 1);
    assert_true(lf->data[h.csum_start + 16] | lf->data[h.csum_start + 17]); /* seeded */
    assert_int_equal(d->txq[0].st.csum, 1);
    assert_int_equal(d->txq[0].st.gso_frames, 0);
}

static void test_tx_csum4(void **state)
{
    (void)state;
    check_tx_csum(false);
}
static void test_tx_csum6(void **state)
{
    (void)state;
    check_tx_csum(true);
}

/* A 64 KiB segment as lwIP hands it over: a header pbuf and payload by
 * reference, sent as one descriptor chain with a GSO header. */
static void check_tx_gso(bool v6)
{
    struct sim_dev *s = sim_new(BASE | OFFLOADS, 64, false);
    struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
    static uint8_t head[VNET_HDR_ROOM + 80], pay[44 * 1460];
    uint8_t *f = head + VNET_HDR_ROOM;
    uint32_t hl = tcp_hdrs(f, v6, sizeof(pay));
    for (size_t i = 0; i < sizeof(pay); i++)
        pay[i] = (uint8_t)i;
    struct vnet_frag fr[3] = {{pay, 20000}, {pay + 20000, 30000}, {pay + 50000, 14240}};
    struct vnet_tx t = {.frame = f, .len = hl, .cookie = (void *)1, .frags = fr, .nfrags = 3};
    t.off = (struct vnet_tx_off){VNET_TX_CSUM | VNET_TX_GSO, 1460};
    assert_int_equal(vnet_tx_burst(d, &t, 1), 1);
    assert_int_equal(vnet_tx_in_flight(d), 4); /* header + 3 fragments */
    assert_int_equal(sim_tx_step(s, 0), 1);
    const struct sim_frame *lf = &s->tx_log[0];
    struct virtio_net_hdr h;
    memcpy(&h, lf->hdr, sizeof(h));
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.gso_type, v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(h.gso_size, 1460);
    assert_int_equal(h.hdr_len, hl);
    assert_int_equal(h.csum_start, hl - 20);
    assert_int_equal(lf->segs, 4);
    assert_int_equal(lf->len, hl + sizeof(pay));
    assert_memory_equal(lf->data + hl, pay, SIM_FRAME_MAX - hl);
    assert_int_equal(d->txq[0].st.gso_frames, 1);
    assert_int_equal(d->txq[0].st.gso_bytes, hl + sizeof(pay));
    assert_int_equal(d->txq[0].st.chains, 1);
    assert_int_equal(d->txq[0].st.bytes, hl + sizeof(pay));
    assert_int_equal(vnet_tx_reclaim(d), 1);
    assert_int_equal(done_count, 1);
    assert_int_equal(vnet_tx_space(d), 64);
}

static void test_tx_gso4(void **state)
{
    (void)state;
    check_tx_gso(false);
}
static void test_tx_gso6(void **state)
{
    (void)state;
    check_tx_gso(true);
}

/* An offload the device did not agree to: the frame is dropped, counted
 * and given back, the frames around it go out. */
static void test_tx_refused(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE, 64, false);
    struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
    static uint8_t buf[3][VNET_HDR_ROOM + 200];
    struct vnet_tx t[3];
    for (int i = 0; i < 3; i++) {
        uint8_t *f = buf[i] + VNET_HDR_ROOM;
        t[i] = (struct vnet_tx){
            .frame = f, .len = tcp_hdrs(f, false, 100) + 100, .cookie = (void *)(uintptr_t)(i + 1)};
    }
    t[1].off.flags = VNET_TX_CSUM;
    assert_int_equal(vnet_tx_burst(d, t, 3), 3);
    assert_int_equal(d->txq[0].st.offload_refused, 1);
    assert_int_equal(done_count, 1);
    assert_int_equal(d->txq[0].st.packets, 2);
    assert_int_equal(sim_tx_step(s, 0), 2);
    /* more fragments than a frame may have: refused too */
    struct vnet_frag fr[VNET_TX_MAX_FRAGS + 1];
    for (int i = 0; i <= VNET_TX_MAX_FRAGS; i++)
        fr[i] = (struct vnet_frag){buf[2], 8};
    t[0].frags = fr;
    t[0].nfrags = VNET_TX_MAX_FRAGS + 1;
    assert_int_equal(vnet_tx_burst(d, t, 1), 1);
    assert_int_equal(d->txq[0].st.offload_refused, 2);
}

/* A 64 KiB GSO frame (NEEDS_CSUM, as QEMU delivers one from a tap) over
 * 16 KiB mergeable buffers: one frame of 5 entries, no copy. */
static const struct virtio_net_hdr gso_hdr = {
    VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4, 54, 1448, 34, 16, 0};

static uint8_t *big_frame(void)
{
    static uint8_t f[FRAME_MAX];
    tcp_hdrs(f, false, FRAME_MAX - 54);
    for (size_t i = 54; i < sizeof(f); i++)
        f[i] = (uint8_t)(i * 31 + 7);
    return f;
}

static void expect_frame(struct vnet_dev *d, const struct vnet_rx *rx, const uint8_t *f)
{
    assert_int_equal(rx[0].nbufs, 5);
    assert_int_equal(rx[0].frame_len, FRAME_MAX);
    assert_int_equal(rx[0].off.csum, VNET_RX_CSUM_PARTIAL);
    assert_int_equal(rx[0].off.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(rx[0].off.gso_size, 1448);
    uint32_t off = 0;
    for (int i = 0; i < 5; i++) {
        if (i)
            assert_int_equal(rx[i].nbufs, 0);
        assert_memory_equal(rx[i].frame, f + off, rx[i].len);
        off += rx[i].len;
    }
    assert_int_equal(off, FRAME_MAX);
    for (int i = 0; i < 5; i++)
        vnet_rx_release(d, rx[i].buf);
}

static void test_rx_gso_64k(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | OFFLOADS, 64, false);
    struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
    const uint8_t *f = big_frame();
    s->rx_hdr = &gso_hdr;
    assert_int_equal(sim_rx_frame(s, f, FRAME_MAX), 5);
    struct vnet_rx rx[VNET_RX_MAX_BUFS];
    assert_int_equal(vnet_rx_burst(d, rx, VNET_RX_MAX_BUFS - 1), -EINVAL);
    assert_int_equal(vnet_rx_burst(d, rx, VNET_RX_MAX_BUFS), 5);
    expect_frame(d, rx, f);
    assert_int_equal(d->rxq[0].st.gso_frames, 1);
    assert_int_equal(d->rxq[0].st.gso_bytes, FRAME_MAX);
    assert_int_equal(d->rxq[0].st.merged, 1);
    assert_int_equal(d->rxq[0].st.bad_release, 0);
    /* Two frames, 8 entries of room: the second is completed by the next
     * call from the buffers held since. */
    assert_int_equal(sim_rx_frame(s, f, FRAME_MAX), 5);
    assert_int_equal(sim_rx_frame(s, f, FRAME_MAX), 5);
    assert_int_equal(vnet_rx_burst(d, rx, 8), 5);
    expect_frame(d, rx, f);
    assert_int_equal(vnet_rx_burst(d, rx, 8), 5);
    expect_frame(d, rx, f);
    assert_int_equal(d->rxq[0].st.gso_frames, 3);
    vnet_rx_refill(d, &d->rxq[0]);
    assert_int_equal(sim_avail_pending(s, 0), 64); /* every buffer back */
}

/* Found by fuzz_vnet_rx: a frame over more buffers than VNET_RX_MAX_BUFS
 * (a device that writes 32 bytes of each) stalled RX for good when the
 * caller asks for VNET_RX_MAX_BUFS entries: its first 8 were held as
 * pieces, leaving no room to take the 9th. Now it is dropped as it comes
 * (s5.1.6.4: num_buffers says so at the first) and the next frame gets
 * through. */
static void test_rx_too_many_bufs(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | OFFLOADS, 64, false);
    struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
    const uint8_t *f = big_frame();
    s->mrg_split = 32;
    assert_int_equal(sim_rx_frame(s, f, 256), 9); /* 12 + 256 over 32-byte buffers */
    s->mrg_split = 0;
    assert_int_equal(sim_rx_frame(s, f, 60), 1);
    struct vnet_rx rx[VNET_RX_MAX_BUFS];
    int n = 0;
    for (int i = 0; i < 4 && !n; i++)
        n = vnet_rx_burst(d, rx, VNET_RX_MAX_BUFS);
    assert_int_equal(n, 1);
    assert_int_equal(rx[0].frame_len, 60);
    assert_int_equal(d->rxq[0].st.len_errors, 1);
    vnet_rx_release(d, rx[0].buf);
    vnet_rx_refill(d, &d->rxq[0]);
    assert_int_equal(sim_avail_pending(s, 0), 64); /* every buffer back */
    assert_false(vnet_broken(d));
}

/* Each malformed header: counted by reason, dropped, its buffers back. */
static void test_rx_malformed(void **state)
{
    (void)state;
    static const struct {
        struct virtio_net_hdr h;
        uint64_t features;
        uint32_t len;
        size_t counter;
    } c[] = {
        {{1, 0, 0, 0, 34, 16, 0}, BASE, 1000, offsetof(struct vnet_rxq_stats, bad_hdr[1])},
        {{4, 0, 0, 0, 0, 0, 0}, BASE | OFFLOADS, 1000, offsetof(struct vnet_rxq_stats, bad_hdr[1])},
        {{1, 3, 42, 1448, 34, 6, 0},
         BASE | OFFLOADS,
         9000,
         offsetof(struct vnet_rxq_stats, bad_hdr[2])},
        {{1, 0x81, 54, 1448, 34, 16, 0},
         BASE | OFFLOADS,
         9000,
         offsetof(struct vnet_rxq_stats, bad_hdr[2])},
        {{2, 1, 54, 1448, 0, 0, 0},
         BASE | OFFLOADS,
         9000,
         offsetof(struct vnet_rxq_stats, bad_hdr[2])},
        {{1, 1, 54, 0, 34, 16, 0},
         BASE | OFFLOADS,
         9000,
         offsetof(struct vnet_rxq_stats, bad_hdr[3])},
        {{1, 1, 9001, 1448, 34, 16, 0},
         BASE | OFFLOADS,
         9000,
         offsetof(struct vnet_rxq_stats, bad_hdr[4])},
        {{1, 0, 0, 0, 999, 0, 0},
         BASE | OFFLOADS,
         1000,
         offsetof(struct vnet_rxq_stats, bad_hdr[5])},
        {{1, 0, 0, 0, 10, 16, 0},
         BASE | OFFLOADS,
         1000,
         offsetof(struct vnet_rxq_stats, bad_hdr[5])},
        {{0, 0, 0, 0, 0, 0, 0}, BASE | OFFLOADS, 9000, offsetof(struct vnet_rxq_stats, len_errors)},
    };
    _Static_assert(VNET_HDR_BAD_FLAGS == 1 && VNET_HDR_BAD_GSO_TYPE == 2 &&
                       VNET_HDR_BAD_GSO_SIZE == 3 && VNET_HDR_BAD_HDR_LEN == 4 &&
                       VNET_HDR_BAD_CSUM == 5,
                   "the table's counter indices");
    const uint8_t *f = big_frame();
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct sim_dev *s = sim_new(c[i].features, 64, false);
        struct vnet_dev *d = up(s, VNET_OFF_ALL, 0);
        s->rx_hdr = &c[i].h;
        assert_true(sim_rx_frame(s, f, c[i].len) > 0);
        s->rx_hdr = NULL;
        assert_true(sim_rx_frame(s, f, 60) > 0); /* a good one after it */
        struct vnet_rx rx[VNET_RX_MAX_BUFS];
        int n = vnet_rx_burst(d, rx, VNET_RX_MAX_BUFS);
        if (n != 1 || rx[0].frame_len != 60)
            fail_msg("case %zu: %d entries", i, n);
        const uint64_t *counter = (const uint64_t *)((const uint8_t *)&d->rxq[0].st + c[i].counter);
        if (*counter != 1)
            fail_msg("case %zu: counter %llu", i, (unsigned long long)*counter);
        assert_int_equal(d->rxq[0].st.packets, 1);
        vnet_rx_release(d, rx[0].buf);
        vnet_rx_refill(d, &d->rxq[0]);
        assert_int_equal(sim_avail_pending(s, 0), 64);
        assert_false(vnet_broken(d));
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_negotiation), T(test_tx_csum4),         T(test_tx_csum6),
        T(test_tx_gso4),     T(test_tx_gso6),          T(test_tx_refused),
        T(test_rx_gso_64k),  T(test_rx_too_many_bufs), T(test_rx_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
