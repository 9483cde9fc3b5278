/* VIRTIO_NET_F_HASH_REPORT against the simulated device: negotiated
 * when offered (features=-hash_report switches it off), the 20-byte
 * header both ways (virtio 1.2 s5.1.6), HASH_CONFIG with one pair and
 * RSS_CONFIG's types with two, and every reported hash checked against
 * the frame: an honest device, one reporting a wrong hash, one reporting
 * a type the frame does not have or the spec does not know. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"
#include "drivers/virtio/vnet_rss.h"
#include "kernel/json.h"
#include "kernel/mem.h"
#include "sim_virtio.h"

#define F(b) VIRTIO_BIT(VIRTIO_NET_F_##b)
#define BASE                                                                                       \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | F(MAC) | F(MRG_RXBUF) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |     \
     F(CTRL_VQ) | F(HASH_REPORT))

/* Microsoft's first IPv4 TCP vector: 66.9.149.187:2794 -> 161.142.100.80:1766 */
#define VEC_TCP 0x51ccc178u
static const uint8_t tcp_frame[54] = {
    [12] = 0x08,        [14] = 0x45,      [23] = 6, /* IPv4, TCP */
    [26] = 66,          [27] = 9,         [28] = 149,
    [29] = 187,         [30] = 161,       [31] = 142, /* addresses */
    [32] = 100,         [33] = 80,        [34] = 2794 >> 8,
    [35] = 2794 & 0xff, [36] = 1766 >> 8, /* ports */
    [37] = 1766 & 0xff};

static struct vnet_dev *dev_init(struct sim_dev *s, uint16_t queues, uint64_t off)
{
    struct vnet_params p = {.rx_refill = 8, .queues = queues, .features_off = off};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    return d;
}

static struct sim_dev *hash_sim(uint64_t extra, uint16_t pairs, uint8_t key)
{
    struct sim_dev *s = sim_new(BASE | extra, 64, false);
    sim_set_mq(s, pairs, key, 128, 0x3f);
    return s;
}

/* The device reports (value, type) for the vector's frame on pair q. */
static void deliver(struct sim_dev *s, struct vnet_dev *d, unsigned q, uint32_t value,
                    uint16_t type)
{
    uint8_t h[8] = {0};
    memcpy(h, &value, 4);
    memcpy(h + 4, &type, 2);
    s->rx_hash = h;
    assert_int_equal(sim_rx_frame_q(s, q, tcp_frame, sizeof(tcp_frame)), 1);
    struct vnet_rx rx[8];
    assert_int_equal(vnet_rx_burst(d, rx, 8), 1);
    /* kept whatever the report: the frame itself is fine */
    assert_int_equal(rx[0].len, sizeof(tcp_frame));
    assert_memory_equal(rx[0].frame, tcp_frame, sizeof(tcp_frame));
    vnet_rx_release(d, rx[0].buf);
    s->rx_hash = NULL;
}

static void test_hash_config_one_pair(void **state)
{
    (void)state;
    struct sim_dev *s = hash_sim(0, 1, 40);
    struct vnet_dev *d = dev_init(s, 1, 0);
    assert_true(s->driver_features & F(HASH_REPORT));
    assert_int_equal(d->hdr_len, VNET_HDR_HASH);
    assert_int_equal(d->hash_types, VNET_RSS_HASH_OURS);
    /* class MQ, HASH_CONFIG, le32 types, le16 reserved[4], key length, key */
    static const uint8_t want[] = {VIRTIO_NET_CTRL_MQ,
                                   VIRTIO_NET_CTRL_MQ_HASH_CONFIG,
                                   0x3f,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   40};
    assert_int_equal(s->ctrl_last_len, sizeof(want) + 40);
    assert_memory_equal(s->ctrl_last, want, sizeof(want));
    assert_memory_equal(s->ctrl_last + sizeof(want), vnet_rss_key_ms, 40);

    const struct vnet_rxq_stats *st = &vnet_rxq(d, 0)->st;
    deliver(s, d, 0, VEC_TCP, VIRTIO_NET_HASH_REPORT_TCPv4);
    assert_int_equal(st->hash[VNET_HASH_OK], 1);
    deliver(s, d, 0, VEC_TCP ^ 0x100, VIRTIO_NET_HASH_REPORT_TCPv4); /* a wrong hash */
    assert_int_equal(st->hash[VNET_HASH_BAD_VALUE], 1);
    deliver(s, d, 0, VEC_TCP, VIRTIO_NET_HASH_REPORT_UDPv4); /* not the frame's type */
    deliver(s, d, 0, VEC_TCP, 77);                           /* no type at all */
    assert_int_equal(st->hash[VNET_HASH_BAD_TYPE], 2);
    deliver(s, d, 0, 0, VIRTIO_NET_HASH_REPORT_NONE);
    assert_int_equal(st->hash[VNET_HASH_NONE], 1);
    assert_int_equal(st->packets, 5);

    char buf[8192];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    vnet_stats_json(d, &j);
    json_obj_end(&j);
    const char *out = json_finish(&j);
    assert_non_null(strstr(out, "\"hash_report\":{\"types\":63,\"ok\":1,\"none\":1,\"skipped\":0,"
                                "\"bad_type\":2,\"bad_value\":1}"));
    assert_non_null(strstr(out, "\"hash_bad_type\":2,\"hash_bad_value\":1}"));
}

/* TX frames carry the longer header, its hash fields zero. */
static void test_tx_header(void **state)
{
    (void)state;
    struct sim_dev *s = hash_sim(0, 1, 40);
    struct vnet_dev *d = dev_init(s, 1, 0);
    static uint8_t room[VNET_HDR_ROOM + 64];
    memset(room, 0xee, sizeof(room));
    memcpy(room + VNET_HDR_ROOM, tcp_frame, sizeof(tcp_frame));
    struct vnet_tx tx = {.frame = room + VNET_HDR_ROOM, .len = sizeof(tcp_frame)};
    assert_int_equal(vnet_tx_burst(d, &tx, 1), 1);
    assert_int_equal(sim_tx_step(s, 0), 1);
    assert_int_equal(s->ntx, 1);
    static const uint8_t zero[VNET_HDR_HASH];
    assert_memory_equal(s->tx_log[0].hdr, zero, VNET_HDR_HASH);
    assert_int_equal(s->tx_log[0].len, sizeof(tcp_frame));
    assert_memory_equal(s->tx_log[0].data, tcp_frame, sizeof(tcp_frame));
}

/* Two pairs with RSS: RSS_CONFIG's types are the reports'; no
 * HASH_CONFIG; a bad report on pair 1 counts on pair 1. */
static void test_rss_pairs(void **state)
{
    (void)state;
    struct sim_dev *s = hash_sim(F(MQ) | F(RSS), 2, 40);
    struct vnet_dev *d = dev_init(s, 2, 0);
    assert_non_null(d->rss);
    assert_int_equal(d->hash_types, VNET_RSS_HASH_OURS);
    assert_int_equal(s->ctrl_last[1], VIRTIO_NET_CTRL_MQ_RSS_CONFIG);
    assert_int_equal(s->ctrl_cmds, 2); /* VQ_PAIRS_SET, RSS_CONFIG */
    deliver(s, d, 1, VEC_TCP + 1, VIRTIO_NET_HASH_REPORT_TCPv4);
    assert_int_equal(vnet_rxq(d, 1)->st.hash[VNET_HASH_BAD_VALUE], 1);
    assert_int_equal(vnet_rxq(d, 0)->st.hash[VNET_HASH_BAD_VALUE], 0);
}

/* features=-hash_report, or a device whose key limit is below the
 * spec's: the 12-byte header, nothing checked. */
static void test_not_negotiated(void **state)
{
    (void)state;
    uint64_t off;
    assert_int_equal(vnet_features_parse("-hash_report", &off), 0);
    assert_int_equal(off, F(HASH_REPORT));
    struct sim_dev *s = hash_sim(0, 1, 40);
    struct vnet_dev *d = dev_init(s, 1, off);
    assert_false(s->driver_features & F(HASH_REPORT));
    assert_int_equal(d->hdr_len, VNET_HDR_MRG);
    assert_int_equal(d->hash_types, 0);
    assert_int_equal(s->ctrl_cmds, 0);
    deliver(s, d, 0, 0, 0);
    assert_int_equal(vnet_rxq(d, 0)->st.hash[VNET_HASH_NONE], 0);

    s = hash_sim(0, 1, 20);
    d = dev_init(s, 1, 0);
    assert_false(s->driver_features & F(HASH_REPORT));
    assert_int_equal(d->config_bad, 1);
    /* without the control queue it cannot be configured: not taken */
    s = sim_new(BASE & ~F(CTRL_VQ), 64, false);
    sim_set_mq(s, 1, 40, 128, 0x3f);
    d = dev_init(s, 1, 0);
    assert_false(s->driver_features & F(HASH_REPORT));
}

/* A device that answers HASH_CONFIG with ERR: the device fails to come
 * up with the command named, not a run whose reports go unchecked. */
static void test_hash_config_refused(void **state)
{
    (void)state;
    struct sim_dev *s = hash_sim(0, 1, 40);
    s->ctrl_mode = SIM_CTRL_ERR;
    struct vnet_params p = {.rx_refill = 8, .queues = 1};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), -EIO);
    assert_int_equal(d->hash_types, 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_hash_config_one_pair), T(test_tx_header),           T(test_rss_pairs),
        T(test_not_negotiated),       T(test_hash_config_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
