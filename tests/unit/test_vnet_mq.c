/* The control queue and multiqueue (drivers/virtio/vnet_ctrl.c,
 * vnet_mq.c) against the simulated device: each command's encoding and
 * its OK and ERR replies, a device that never answers, replies of the
 * wrong length, MQ pair counts refused before sending, RSS_CONFIG byte for
 * byte, and queue pairs that keep their state apart. */
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
#include "sim_assert.h"

#define F(b) VIRTIO_BIT(VIRTIO_NET_F_##b)
#define BASE                                                                                       \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | F(MAC) | F(MRG_RXBUF) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |     \
     F(CTRL_VQ))

static struct vnet_dev *dev_init(struct sim_dev *s, uint16_t queues, int want)
{
    struct vnet_params p = {.rx_refill = 8, .queues = queues};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), want);
    return d;
}

static struct sim_dev *mq_sim(uint64_t extra, uint16_t max_pairs)
{
    struct sim_dev *s = sim_new(BASE | F(MQ) | extra, 64, false);
    sim_set_mq(s, max_pairs, 40, 128, 0x3f);
    return s;
}

static void test_ctrl_ok_and_err(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE, 64, false);
    struct vnet_dev *d = dev_init(s, 1, 0);
    assert_non_null(d->ctrl);
    assert_int_equal(s->ctrl_cmds, 0); /* one pair: nothing to say */
    /* the controlq without MQ is queue 2 (s5.1.2) */
    const uint8_t data[3] = {9, 8, 7};
    assert_int_equal(vnet_ctrl_cmd(d, 0x22, 0x33, data, sizeof(data)), 0);
    assert_int_equal(s->q[2].notifies, 1);
    static const uint8_t want[] = {0x22, 0x33, 9, 8, 7};
    sim_expect_ctrl(s, want, sizeof(want));
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_ctrl_cmd(d, 0x22, 0x33, data, sizeof(data)), -EIO);
    /* the queue is reused: ERR is an answer */
    s->ctrl_mode = SIM_CTRL_OK;
    assert_int_equal(vnet_ctrl_cmd(d, 0x22, 0x34, NULL, 0), 0);
    assert_int_equal(d->ctrl->ok, 2);
    assert_int_equal(d->ctrl->err, 1);
    assert_int_equal(vnet_ctrl_cmd(d, 1, 1, data, VNET_CTRL_DATA_MAX + 1), -EINVAL);
}

static void test_ctrl_never_answers(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE, 64, false);
    struct vnet_dev *d = dev_init(s, 1, 0);
    s->ctrl_mode = SIM_CTRL_SILENT;
    assert_int_equal(vnet_ctrl_cmd(d, 4, 0, "\1\0", 2), -ETIMEDOUT);
    assert_int_equal(d->ctrl->timeouts, 1);
    /* the device still holds the buffer: not reused */
    s->ctrl_mode = SIM_CTRL_OK;
    assert_int_equal(vnet_ctrl_cmd(d, 4, 0, "\1\0", 2), -EIO);
    assert_int_equal(s->ctrl_cmds, 1);
}

static void test_ctrl_bad_replies(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE, 64, false);
    struct vnet_dev *d = dev_init(s, 1, 0);
    s->ctrl_mode = SIM_CTRL_SHORT; /* used length 0: no ack */
    assert_int_equal(vnet_ctrl_cmd(d, 4, 0, "\1\0", 2), -EPROTO);
    s->ctrl_mode = SIM_CTRL_BADACK;
    assert_int_equal(vnet_ctrl_cmd(d, 4, 0, "\1\0", 2), -EPROTO);
    assert_int_equal(d->ctrl->bad_reply, 2);
    /* more than the one writable byte: the virtqueue's own check breaks
     * the queue (s2.7.8) */
    s->ctrl_mode = SIM_CTRL_LONG;
    assert_int_equal(vnet_ctrl_cmd(d, 4, 0, "\1\0", 2), -EIO);
    s->ctrl_mode = SIM_CTRL_OK;
    assert_int_equal(vnet_ctrl_cmd(d, 4, 0, "\1\0", 2), -EIO);
    assert_false(vnet_broken(d)); /* the data queues go on */
}

static void test_mq_pairs_set(void **state)
{
    (void)state;
    struct sim_dev *s = mq_sim(0, 4);
    struct vnet_dev *d = dev_init(s, 2, 0);
    assert_true(s->driver_features & F(MQ));
    assert_int_equal(d->max_pairs, 4);
    assert_int_equal(d->npairs, 2);
    assert_int_equal(s->pairs, 2);
    static const uint8_t want[] = {VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 2, 0};
    sim_expect_ctrl(s, want, sizeof(want));
    /* the controlq is 2 * max_virtqueue_pairs (s5.1.2) */
    assert_int_equal(s->q[8].notifies, 1);
    /* both pairs live, their RX rings full */
    assert_int_equal(sim_avail_pending(s, 0), 64);
    assert_int_equal(sim_avail_pending(s, 2), 64);
    assert_int_equal(s->q[3].num, 64);
    /* 0 and more than max (or than set up) refused before sending */
    uint64_t sent = s->ctrl_cmds;
    assert_int_equal(vnet_mq_set_pairs(d, 0), -EINVAL);
    assert_int_equal(vnet_mq_set_pairs(d, 5), -EINVAL);
    assert_int_equal(vnet_mq_set_pairs(d, 3), -EINVAL);
    assert_int_equal(s->ctrl_cmds, sent);
    assert_int_equal(vnet_mq_set_pairs(d, 1), 0);
    assert_int_equal(s->pairs, 1);
}

static void test_mq_refusals(void **state)
{
    (void)state;
    /* more pairs than the device has: -ERANGE, the device FAILED */
    struct sim_dev *s = mq_sim(0, 2);
    dev_init(s, 3, -ERANGE);
    assert_true(s->status & VIRTIO_STATUS_FAILED);
    /* max_virtqueue_pairs 0 or above 0x8000 (s5.1.4.1): MQ not taken */
    s = mq_sim(0, 0);
    struct vnet_dev *d = dev_init(s, 1, 0);
    assert_false(s->driver_features & F(MQ));
    assert_int_equal(d->max_pairs, 1);
    assert_int_equal(d->config_bad, 1); /* the device's fault, counted */
    s = mq_sim(0, 0x8001);
    dev_init(s, 2, -ERANGE);
    assert_false(s->driver_features & F(MQ));
    /* MQ without the control queue (s5.1.3.1): not taken */
    s = mq_sim(0, 4);
    s->offered &= ~F(CTRL_VQ);
    d = dev_init(s, 1, 0);
    assert_false(s->driver_features & (F(MQ) | F(CTRL_VQ)));
    assert_null(d->ctrl);
    /* the device refusing VQ_PAIRS_SET fails the bring-up */
    s = mq_sim(0, 4);
    s->ctrl_mode = SIM_CTRL_ERR;
    dev_init(s, 2, -EIO);
}

static void test_rss_config(void **state)
{
    (void)state;
    struct sim_dev *s = mq_sim(F(RSS) | F(HASH_REPORT), 4);
    struct vnet_dev *d = dev_init(s, 2, 0);
    assert_true(s->driver_features & F(RSS));
    assert_true(s->driver_features & F(HASH_REPORT)); /* RSS_CONFIG configures its hash */
    assert_non_null(d->rss);
    /* the last command: RSS_CONFIG, after VQ_PAIRS_SET */
    assert_int_equal(s->ctrl_cmds, 2);
    uint8_t want[2 + 4 + 2 + 2 + 256 + 2 + 1 + 40] = {
        VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_RSS_CONFIG, 0x3f, 0, 0, 0, 127, 0, 0, 0};
    for (unsigned i = 0; i < 128; i++)
        want[10 + 2 * i] = (uint8_t)(i % 2);
    want[266] = 2; /* max_tx_vq */
    want[268] = 40;
    memcpy(want + 269, vnet_rss_key_ms, 40);
    sim_expect_ctrl(s, want, sizeof(want));
    /* limits below the spec's: RSS not negotiated */
    s = mq_sim(F(RSS), 4);
    sim_set_mq(s, 4, 40, 64, 0x3f);
    d = dev_init(s, 2, 0);
    assert_false(s->driver_features & F(RSS));
    assert_null(d->rss);
    assert_int_equal(s->ctrl_cmds, 1);
}

static void make_frame(uint8_t *f, uint8_t tag)
{
    memset(f, 0, 64);
    memset(f, 0xff, 6);
    f[12] = 0x08;
    f[14] = tag;
}

static void test_queue_isolation(void **state)
{
    (void)state;
    struct sim_dev *s = mq_sim(0, 2);
    struct vnet_dev *d = dev_init(s, 2, 0);
    struct vnet_txq *t0 = vnet_txq(d, 0), *t1 = vnet_txq(d, 1);
    struct vnet_rxq *r0 = vnet_rxq(d, 0), *r1 = vnet_rxq(d, 1);
    uint8_t *mem = mem_alloc_dma(8 * (VNET_HDR_ROOM + 64), 64);
    struct vnet_tx tx[8];
    for (int i = 0; i < 8; i++) {
        uint8_t *f = mem + i * (VNET_HDR_ROOM + 64) + VNET_HDR_ROOM;
        make_frame(f, (uint8_t)i);
        tx[i] = (struct vnet_tx){.frame = f, .len = 64};
    }
    uint64_t n0 = s->q[1].notifies;
    assert_int_equal(vnet_txq_burst(d, t1, tx, 8), 8);
    assert_int_equal(sim_tx_step_q(s, 1, 0), 8);
    assert_int_equal(vnet_txq_reclaim(d, t1), 8);
    assert_int_equal(t1->st.packets, 8);
    assert_int_equal(t1->st.bytes, 8 * 64);
    assert_int_equal(t0->st.packets, 0);
    assert_int_equal(t0->st.reclaim_calls, 0);
    assert_int_equal(s->q[1].notifies, n0);
    assert_int_equal(virtq_in_flight(t0->vq), 0);
    /* RX on pair 1 only: pair 0 sees nothing */
    uint8_t f[64];
    make_frame(f, 0x42);
    assert_int_equal(sim_rx_frame_q(s, 1, f, sizeof(f)), 1);
    struct vnet_rx rx[8];
    assert_int_equal(vnet_rxq_burst(d, r0, rx, 8), 0);
    assert_int_equal(vnet_rxq_burst(d, r1, rx, 8), 1);
    assert_int_equal(((uint8_t *)rx[0].frame)[14], 0x42);
    vnet_rx_release(d, rx[0].buf);
    assert_int_equal(r1->st.packets, 1);
    assert_int_equal(r0->st.packets, 0);
    assert_int_equal(r0->st.bad_release, 0);
    assert_int_equal(r1->st.bad_release, 0);
    /* a handle of pair 1 given to pair 0 is refused there */
    vnet_rxq_release(d, r0, rx[0].buf);
    assert_int_equal(r0->st.bad_release, 1);

    char buf[8192];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    vnet_stats_json(d, &j);
    json_obj_end(&j);
    const char *out = json_finish(&j);
    assert_non_null(strstr(out, "\"max_queue_pairs\":2,\"queues\":[{\"queue\":0,\"packets\":0,"));
    assert_non_null(strstr(out, "{\"queue\":1,\"packets\":9,\"tx_packets\":8,\"tx_bytes\":512,"));
}

/* The apps' RX call polls every pair: a frame on pair 1 is taken, counted
 * on pair 1 only, and its handle goes back to pair 1. */
static void test_rx_polls_every_pair(void **state)
{
    (void)state;
    struct sim_dev *s = mq_sim(0, 2);
    struct vnet_dev *d = dev_init(s, 2, 0);
    struct vnet_rxq *r0 = vnet_rxq(d, 0), *r1 = vnet_rxq(d, 1);
    uint8_t f[64];
    struct vnet_rx rx[8];
    for (int round = 0; round < 3; round++) {
        make_frame(f, (uint8_t)(0x40 + round));
        assert_int_equal(sim_rx_frame_q(s, 1, f, sizeof(f)), 1);
        assert_int_equal(vnet_rx_burst(d, rx, 8), 1);
        assert_int_equal(((uint8_t *)rx[0].frame)[14], 0x40 + round);
        vnet_rx_release(d, rx[0].buf);
    }
    assert_int_equal(r1->st.packets, 3);
    assert_int_equal(r0->st.packets, 0);
    assert_int_equal(r0->st.bad_release + r1->st.bad_release, 0);
    assert_int_equal(vnet_rx_burst(d, rx, 8), 0);
    /* both pairs busy: taken in turn, not pair 0 first every time */
    make_frame(f, 1);
    sim_rx_frame_q(s, 0, f, sizeof(f));
    sim_rx_frame_q(s, 0, f, sizeof(f));
    make_frame(f, 2);
    sim_rx_frame_q(s, 1, f, sizeof(f));
    uint8_t seen[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(vnet_rx_burst(d, rx, 1), 1);
        seen[i] = ((uint8_t *)rx[0].frame)[14];
        vnet_rx_release(d, rx[0].buf);
    }
    assert_int_not_equal(seen[0], seen[1]);
    assert_int_equal(r0->st.packets, 2);
    assert_int_equal(r1->st.packets, 4);
    /* a handle naming a pair not in use is refused, not followed */
    vnet_rx_release(d, 5u << 16);
    assert_int_equal(r0->st.bad_release, 1);
}

/* A flow's pair is its Toeplitz hash (Microsoft's key) through the table
 * of i mod N: Microsoft's published IPv4 TCP vectors, 0x51ccc178 (entry
 * 0x78: pair 0) and 0xafc7327f (entry 0x7f: pair 1); bound slots on pair 1
 * go out on transmitq(1) and count there only. */
static void test_flow_pair_and_tx(void **state)
{
    (void)state;
    struct sim_dev *s = mq_sim(F(RSS), 2);
    struct vnet_dev *d = dev_init(s, 2, 0);
    assert_non_null(d->rss);
    assert_int_equal(vnet_pairs(d), 2);
#define IP(a, b, c, e) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (e))
    assert_int_equal(vnet_flow_pair(d, IP(66, 9, 149, 187), IP(161, 142, 100, 80), 2794, 1766), 0);
    assert_int_equal(vnet_flow_pair(d, IP(38, 27, 205, 30), IP(209, 142, 163, 6), 48228, 2217), 1);
    /* the same without RSS (the device's own steering): the same map */
    struct sim_dev *s2 = mq_sim(0, 2);
    struct vnet_dev *d2 = dev_init(s2, 2, 0);
    assert_null(d2->rss);
    assert_int_equal(vnet_flow_pair(d2, IP(38, 27, 205, 30), IP(209, 142, 163, 6), 48228, 2217), 1);

    struct vnet_txslots sl;
    assert_int_equal(vnet_txslots_bind_q(d, 2, 0, &sl), -EINVAL);
    assert_int_equal(vnet_txslots_bind_q(d, 1, 128, &sl), 0);
    uint16_t first, len[4] = {64, 64, 64, 64};
    assert_int_equal(vnet_txslots_reserve_q(d, 1, 4, &first), 4);
    for (int i = 0; i < 4; i++)
        make_frame(sl.frame0 + (size_t)((first + i) & (sl.num - 1)) * sl.stride, (uint8_t)i);
    assert_int_equal(vnet_txslots_send_q(d, 1, 4, len, 0), 4);
    assert_int_equal(sim_tx_step_q(s, 1, 0), 4);
    assert_int_equal(vnet_tx_reclaim_q(d, 1), 4);
    assert_int_equal(vnet_tx_in_flight_q(d, 1), 0);
    assert_int_equal(vnet_txq(d, 1)->st.packets, 4);
    assert_int_equal(vnet_txq(d, 0)->st.packets, 0);
    /* pair 0 is not bound by it */
    assert_int_equal(vnet_txslots_reserve_q(d, 0, 4, &first), -EINVAL);
#undef IP
}

/* queues=1: every flow on pair 0, and RX handles are plain slots. */
static void test_one_pair_unchanged(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(BASE, 64, false);
    struct vnet_dev *d = dev_init(s, 1, 0);
    assert_int_equal(vnet_pairs(d), 1);
    for (uint16_t p = 1; p < 64; p++)
        assert_int_equal(vnet_flow_pair(d, 0x0a000001, 0x0a000002, p, 5000), 0);
    uint8_t f[64];
    make_frame(f, 7);
    assert_int_equal(sim_rx_frame_q(s, 0, f, sizeof(f)), 1);
    struct vnet_rx rx[8];
    assert_int_equal(vnet_rx_burst(d, rx, 8), 1);
    assert_true(rx[0].buf < vnet_rx_size(d));
    vnet_rx_release(d, rx[0].buf);
    assert_int_equal(vnet_rxq(d, 0)->st.bad_release, 0);
    assert_int_equal(vnet_rxq(d, 0)->st.packets, 1);
}

/* One CPU per pair (apps' per-vCPU instances): vnet_rx_burst_q takes
 * only its pair's frames, a frame sent back on the same pair zero-copy
 * (its RX buffer as the cookie) comes back through tx_done and is
 * released to that pair, and neither touches the other pair's counts. */
static struct vnet_dev *done_dev;
static unsigned done_calls;
static void release_done(void *ctx, void *cookie)
{
    (void)ctx;
    done_calls++;
    vnet_rx_release(done_dev, (uint32_t)(uintptr_t)cookie);
}

static void test_pair_calls_stay_on_their_pair(void **state)
{
    (void)state;
    struct sim_dev *s = mq_sim(0, 2);
    struct vnet_dev *d = dev_init(s, 2, 0);
    done_dev = d;
    done_calls = 0;
    vnet_set_tx_done(d, release_done, NULL);
    struct vnet_rxq *r0 = vnet_rxq(d, 0), *r1 = vnet_rxq(d, 1);
    struct vnet_rx rx[8];
    uint8_t f[64];
    make_frame(f, 0x51);
    assert_int_equal(sim_rx_frame_q(s, 1, f, sizeof(f)), 1);
    assert_int_equal(sim_rx_frame_q(s, 1, f, sizeof(f)), 1);
    assert_int_equal(vnet_rx_burst_q(d, 0, rx, 8), 0);
    assert_int_equal(vnet_rx_burst_q(d, 1, rx, 8), 2);
    assert_int_equal(((uint8_t *)rx[0].frame)[14], 0x51);
    assert_int_equal(vnet_rx_burst_q(d, 2, rx, 8), -EINVAL);
    uint64_t polls0 = r0->st.polls;
    struct vnet_tx tx[2];
    for (int i = 0; i < 2; i++)
        tx[i] = (struct vnet_tx){
            .frame = rx[i].frame, .len = rx[i].len, .cookie = (void *)(uintptr_t)rx[i].buf};
    assert_int_equal(vnet_tx_burst_q(d, 2, tx, 2), -EINVAL);
    assert_int_equal(vnet_tx_burst_q(d, 1, tx, 2), 2);
    assert_int_equal(sim_tx_step_q(s, 1, 0), 2);
    assert_int_equal(vnet_tx_reclaim_q(d, 1), 2);
    assert_int_equal(done_calls, 2);
    assert_int_equal(vnet_txq(d, 1)->st.packets, 2);
    assert_int_equal(vnet_txq(d, 0)->st.packets, 0);
    assert_int_equal(r1->st.packets, 2);
    assert_int_equal(r0->st.packets, 0);
    assert_int_equal(r0->st.polls, polls0);
    assert_int_equal(r0->st.bad_release + r1->st.bad_release, 0);
    /* both buffers are pair 1's again: released, none owned by the app */
    assert_int_equal(r1->npending, 2);
    assert_int_equal(r0->npending, 0);
    assert_int_equal(vnet_rx_notify_mode(d, 1), VNET_NOTIFY_POLL);
    assert_int_equal(vnet_rx_notify_mode(d, 7), VNET_NOTIFY_POLL);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_ctrl_ok_and_err),
        T(test_ctrl_never_answers),
        T(test_ctrl_bad_replies),
        T(test_mq_pairs_set),
        T(test_mq_refusals),
        T(test_rss_config),
        T(test_queue_isolation),
        T(test_rx_polls_every_pair),
        T(test_flow_pair_and_tx),
        T(test_one_pair_unchanged),
        T(test_pair_calls_stay_on_their_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
