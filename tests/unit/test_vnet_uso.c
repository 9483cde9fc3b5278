/* USO through the driver against the simulated device (virtio 1.2
 * s5.1.6.2, s5.1.6.4): HOST_USO and GUEST_USO4/6 negotiated when asked
 * (and switched off by features= and their dependencies); bound TX slots
 * carrying the UDP_L4 header gen sends with, as the device reads it,
 * while a frame the driver copies into a slot goes out with a zero
 * header; UDP_L4 frames received over mergeable buffers, and refused
 * (counted, dropped) when USO was not negotiated or the header is bad. */
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

#define B(x) VIRTIO_BIT(x)
#define BASE                                                                                       \
    (B(VIRTIO_F_VERSION_1) | B(VIRTIO_NET_F_MAC) | B(VIRTIO_NET_F_STATUS) |                        \
     B(VIRTIO_NET_F_MRG_RXBUF) | B(VIRTIO_F_EVENT_IDX))
#define USO                                                                                        \
    (B(VIRTIO_NET_F_CSUM) | B(VIRTIO_NET_F_GUEST_CSUM) | B(VIRTIO_NET_F_HOST_USO) |                \
     B(VIRTIO_NET_F_GUEST_USO4) | B(VIRTIO_NET_F_GUEST_USO6))
#define ASK      (VNET_OFF_TX_CSUM | VNET_OFF_RX_CSUM | VNET_OFF_TX_USO | VNET_OFF_RX_USO)
#define DGRAM    8234 /* 42 bytes of headers and 8192 of payload */
#define GSO_SIZE 1400
#define RING     64

static void on_done(void *ctx, void *cookie)
{
    (void)ctx;
    (void)cookie;
}

static struct vnet_dev *up(struct sim_dev *s, uint8_t offloads, const char *features)
{
    struct vnet_params p = {
        .ring_size = RING, .rx_refill = 8, .txfull = VNET_TXFULL_WAIT, .offloads = offloads};
    assert_int_equal(vnet_features_parse(features, &p.features_off), 0);
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    vnet_set_tx_done(d, on_done, NULL);
    return d;
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* An IPv4/UDP frame of len bytes (gen's layout). */
static void udp_frame(uint8_t *f, uint32_t len)
{
    memset(f, 0, len);
    memset(f, 0x52, 12);
    put16(f + 12, 0x0800);
    f[14] = 0x45;
    put16(f + 16, len - 14);
    f[22] = 64;
    f[23] = 17;
    memcpy(f + 26, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    put16(f + 34, 9000);
    put16(f + 36, 9000);
    put16(f + 38, len - 34);
}

static void test_negotiation(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | USO, RING, false);
    struct vnet_dev *d = up(s, ASK, "");
    assert_int_equal(s->driver_features, BASE | USO);
    assert_int_equal(vnet_offloads(d), ASK);
    assert_true(d->rx_chains); /* 64 KiB datagrams over mergeable buffers */
    /* not asked (gen without uso=): none of it */
    s = sim_new(BASE | USO, RING, false);
    d = up(s, 0, "");
    assert_int_equal(s->driver_features, BASE);
    /* switched off one by one */
    s = sim_new(BASE | USO, RING, false);
    d = up(s, ASK, "-host_uso,-guest_uso6");
    assert_int_equal(s->driver_features,
                     (BASE | USO) & ~(B(VIRTIO_NET_F_HOST_USO) | B(VIRTIO_NET_F_GUEST_USO6)));
    assert_int_equal(vnet_offloads(d), ASK & ~VNET_OFF_TX_USO);
    /* s5.1.3.1: no USO without the checksum offload of its direction */
    s = sim_new(BASE | USO, RING, false);
    d = up(s, ASK, "-csum,-guest_csum");
    assert_int_equal(s->driver_features, BASE);
    /* our rule: large frames in need mergeable buffers */
    s = sim_new(BASE | USO, RING, false);
    d = up(s, ASK, "-mrg_rxbuf");
    assert_int_equal(vnet_offloads(d), VNET_OFF_TX_CSUM | VNET_OFF_RX_CSUM | VNET_OFF_TX_USO);
    assert_false(d->rx_chains);
}

static void expect_uso_hdr(const struct sim_frame *lf)
{
    struct virtio_net_hdr h;
    memcpy(&h, lf->hdr, sizeof(h));
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_UDP_L4);
    assert_int_equal(h.gso_size, GSO_SIZE);
    assert_int_equal(h.hdr_len, 42);
    assert_int_equal(h.csum_start, 34);
    assert_int_equal(h.csum_offset, 6);
    assert_int_equal(lf->len, DGRAM);
}

/* n template frames through the bound slots; the device takes them. */
static void send_dgrams(struct sim_dev *s, struct vnet_dev *d, const struct vnet_txslots *sl,
                        const uint8_t *tmpl, int n)
{
    uint16_t first, len[RING];
    assert_int_equal(vnet_txslots_reserve(d, n, &first), n);
    for (int i = 0; i < n; i++) {
        memcpy(sl->frame0 + (size_t)((first + i) & (sl->num - 1)) * sl->stride, tmpl, DGRAM);
        len[i] = DGRAM;
    }
    assert_int_equal(vnet_txslots_send(d, n, len, 0), n);
    assert_int_equal(sim_tx_step(s, 0), (uint32_t)n);
    assert_int_equal(vnet_tx_reclaim(d), n);
}

static void test_slots_uso(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | USO, RING, false);
    struct vnet_dev *d = up(s, ASK, "");
    struct vnet_txslots sl;
    static uint8_t tmpl[DGRAM];
    udp_frame(tmpl, DGRAM);
    struct vnet_tx_off off = {VNET_TX_CSUM | VNET_TX_GSO, GSO_SIZE};
    assert_int_equal(vnet_txslots_offload_q(d, 0, tmpl, DGRAM, &off), -EINVAL); /* not bound */
    assert_int_equal(vnet_txslots_bind(d, DGRAM, &sl), 0);
    assert_int_equal(sl.room, DGRAM); /* past the MTU with HOST_USO */
    assert_int_equal(vnet_txslots_offload_q(d, 0, tmpl, DGRAM, &off), 0);
    assert_true(tmpl[40] | tmpl[41]); /* the pseudo-header sum, seeded */
    send_dgrams(s, d, &sl, tmpl, 3);
    for (int i = 0; i < 3; i++)
        expect_uso_hdr(&s->tx_log[i]);
    assert_int_equal(d->txq[0].st.gso_frames, 3);
    assert_int_equal(d->txq[0].st.gso_bytes, 3 * DGRAM);
    /* an ARP answer copied into a slot: a zero header, not the USO one */
    static uint8_t arp[VNET_HDR_ROOM + 60];
    memset(arp, 0x11, sizeof(arp));
    struct vnet_tx t = {.frame = arp + VNET_HDR_ROOM, .len = 60};
    assert_int_equal(vnet_tx_burst(d, &t, 1), 1);
    assert_int_equal(sim_tx_step(s, 0), 1);
    static const uint8_t zero[12];
    assert_memory_equal(s->tx_log[3].hdr, zero, d->hdr_len);
    assert_int_equal(vnet_tx_reclaim(d), 1);
    /* every slot again, the ARP's too: each datagram has its header */
    send_dgrams(s, d, &sl, tmpl, RING / 2);
    send_dgrams(s, d, &sl, tmpl, RING / 2);
    for (uint32_t i = 4; i < s->ntx; i++)
        expect_uso_hdr(&s->tx_log[i]);
    assert_int_equal(s->ntx, 4 + RING);
}

static void test_slots_uso_refused(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | B(VIRTIO_NET_F_CSUM), RING, false);
    struct vnet_dev *d = up(s, ASK, "");
    struct vnet_txslots sl;
    static uint8_t tmpl[DGRAM];
    udp_frame(tmpl, DGRAM);
    assert_int_equal(vnet_txslots_bind(d, DGRAM, &sl), 0);
    assert_int_equal(sl.room, d->max_frame); /* no HOST_USO: the MTU's frame */
    struct vnet_tx_off off = {VNET_TX_CSUM | VNET_TX_GSO, GSO_SIZE};
    assert_int_equal(vnet_txslots_offload_q(d, 0, tmpl, DGRAM, &off), -EOPNOTSUPP);
    assert_int_equal(vnet_txslots_offload_q(d, 0, tmpl, DGRAM, NULL), -EINVAL);
    assert_int_equal(vnet_txslots_offload_q(d, 1, tmpl, DGRAM, &off), -EINVAL);
}

/* A received 8 KiB datagram as QEMU hands one from a USO tap. */
static const struct virtio_net_hdr uso_hdr = {
    VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_UDP_L4, 42, GSO_SIZE, 34, 6, 0};

static void test_rx_uso(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | USO, RING, false);
    struct vnet_dev *d = up(s, ASK, "");
    static uint8_t f[DGRAM];
    udp_frame(f, DGRAM);
    s->rx_hdr = &uso_hdr;
    assert_true(sim_rx_frame(s, f, DGRAM) >= 1);
    struct vnet_rx rx[VNET_RX_MAX_BUFS];
    int n = vnet_rx_burst(d, rx, VNET_RX_MAX_BUFS);
    assert_true(n >= 1);
    assert_int_equal(rx[0].frame_len, DGRAM);
    assert_int_equal(rx[0].off.gso_type, VIRTIO_NET_HDR_GSO_UDP_L4);
    assert_int_equal(rx[0].off.gso_size, GSO_SIZE);
    assert_int_equal(rx[0].off.csum, VNET_RX_CSUM_PARTIAL);
    assert_int_equal(d->rxq[0].st.gso_frames, 1);
    for (int i = 0; i < n; i++)
        vnet_rx_release(d, rx[i].buf);
}

/* A device sending UDP_L4 frames the driver did not agree to, or with a
 * header that breaks s5.1.6.4.1: counted by reason, dropped. */
static void test_rx_uso_bad(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE | USO, RING, false);
    struct vnet_dev *d = up(s, ASK, "-guest_uso4,-guest_uso6");
    static uint8_t f[DGRAM];
    udp_frame(f, 1514);
    s->rx_hdr = &uso_hdr;
    assert_int_equal(sim_rx_frame(s, f, 1514), 1);
    struct virtio_net_hdr no_size = uso_hdr, no_csum = uso_hdr;
    no_size.gso_size = 0;
    no_csum.flags = VIRTIO_NET_HDR_F_DATA_VALID;
    struct sim_dev *s2 = sim_new(BASE | USO, RING, false);
    struct vnet_dev *d2 = up(s2, ASK, "");
    s2->rx_hdr = &no_size;
    assert_int_equal(sim_rx_frame(s2, f, 1514), 1);
    s2->rx_hdr = &no_csum;
    assert_int_equal(sim_rx_frame(s2, f, 1514), 1);
    struct vnet_rx rx[VNET_RX_MAX_BUFS];
    assert_int_equal(vnet_rx_burst(d, rx, VNET_RX_MAX_BUFS), 0);
    assert_int_equal(d->rxq[0].st.bad_hdr[VNET_HDR_BAD_GSO_TYPE], 1);
    assert_int_equal(vnet_rx_burst(d2, rx, VNET_RX_MAX_BUFS), 0);
    assert_int_equal(d2->rxq[0].st.bad_hdr[VNET_HDR_BAD_GSO_SIZE], 1);
    assert_int_equal(d2->rxq[0].st.bad_hdr[VNET_HDR_BAD_GSO_TYPE], 1);
    assert_int_equal(d2->rxq[0].st.packets, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_negotiation, sim_teardown),
        cmocka_unit_test_teardown(test_slots_uso, sim_teardown),
        cmocka_unit_test_teardown(test_slots_uso_refused, sim_teardown),
        cmocka_unit_test_teardown(test_rx_uso, sim_teardown),
        cmocka_unit_test_teardown(test_rx_uso_bad, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
