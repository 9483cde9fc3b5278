/* drivers/virtio/vnet_coal.c against the simulated device (virtio 1.3
 * s5.1.6.5.6, notification coalescing): the features asked for (each
 * needs the control queue, s5.1.3.1), each command's bytes as the device
 * reads them, VQ_GET's result read back after the ack, a result the
 * device did not write refused, ERR leaving the caller's value alone,
 * nothing sent without the feature or for a queue that is not an
 * enabled transmit or receive queue. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_coal.h"
#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "sim_assert.h"

#define F(b) VIRTIO_BIT(VIRTIO_NET_F_##b)
#define COAL (F(NOTF_COAL) | F(VQ_NOTF_COAL))

static struct vnet_dev *dev_init(struct sim_dev *s, uint64_t off)
{
    struct vnet_params p = {.rx_refill = 8, .features_off = off};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    return d;
}

static void test_features(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | COAL, 64, false);
    dev_init(s, 0);
    assert_int_equal(s->driver_features, SIM_CTRL_BASE | COAL);
    /* s5.1.3.1: both need the control queue */
    s = sim_new((SIM_CTRL_BASE | COAL) & ~F(CTRL_VQ), 64, false);
    dev_init(s, 0);
    assert_int_equal(s->driver_features, SIM_CTRL_BASE & ~F(CTRL_VQ));
    /* features= switches each off */
    uint64_t off;
    assert_int_equal(vnet_features_parse("-notf_coal,-vq_notf_coal", &off), 0);
    assert_int_equal(off, COAL);
}

static void test_tx_rx_set(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | COAL, 64, false);
    struct vnet_dev *d = dev_init(s, 0);
    struct vnet_coal tx = {32, 0x01020304}, rx = {0x11223344, 50};
    assert_int_equal(vnet_coal_tx_set(d, &tx), 0);
    sim_expect_ctrl(s, (const uint8_t[]){6, 0, 32, 0, 0, 0, 4, 3, 2, 1}, 10);
    assert_int_equal(vnet_coal_rx_set(d, &rx), 0);
    sim_expect_ctrl(s, (const uint8_t[]){6, 1, 0x44, 0x33, 0x22, 0x11, 50, 0, 0, 0}, 10);
    /* the device applied each to its queues: TX 1, RX 0 */
    assert_int_equal(s->coal[1][0], 32);
    assert_int_equal(s->coal[0][1], 50);
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_coal_tx_set(d, &tx), -EIO);
    assert_int_equal(d->ctrl->ok, 2);
    assert_int_equal(d->ctrl->err, 1);
}

static void test_vq_set_get(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | COAL, 64, false);
    struct vnet_dev *d = dev_init(s, 0);
    struct vnet_coal c = {8, 0x200}, got = {0, 0};
    assert_int_equal(vnet_coal_vq_set(d, 1, &c), 0);
    sim_expect_ctrl(s, (const uint8_t[]){6, 2, 1, 0, 0, 0, 8, 0, 0, 0, 0, 2, 0, 0}, 14);
    assert_int_equal(vnet_coal_vq_get(d, 1, &got), 0);
    sim_expect_ctrl(s, (const uint8_t[]){6, 3, 1, 0, 0, 0}, 6);
    assert_int_equal(got.max_packets, 8);
    assert_int_equal(got.max_usecs, 0x200);
    /* the receive queue kept its own (none set) */
    assert_int_equal(vnet_coal_vq_get(d, 0, &got), 0);
    assert_int_equal(got.max_packets, 0);
    assert_int_equal(got.max_usecs, 0);
    assert_int_equal(d->ctrl->ok, 3);
}

/* VQ_GET's result comes after the ack (virtio 1.3 s5.1.6.5): OK with
 * no result written is a malformed reply; ERR leaves *out alone (the
 * driver MUST ignore the result then). */
static void test_vq_get_bad_replies(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | COAL, 64, false);
    struct vnet_dev *d = dev_init(s, 0);
    struct vnet_coal got = {77, 88};
    s->ctrl_mode = SIM_CTRL_NORESULT;
    assert_int_equal(vnet_coal_vq_get(d, 1, &got), -EPROTO);
    assert_int_equal(d->ctrl->bad_reply, 1);
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_coal_vq_get(d, 1, &got), -EIO);
    assert_int_equal(got.max_packets, 77);
    assert_int_equal(got.max_usecs, 88);
    /* after both, the queue serves the next command */
    s->ctrl_mode = SIM_CTRL_OK;
    struct vnet_coal c = {1, 1};
    assert_int_equal(vnet_coal_vq_set(d, 0, &c), 0);
    assert_int_equal(s->coal[0][0], 1);
}

/* Nothing sent without the feature, or for a queue that is not an
 * enabled transmit or receive queue (the control queue, 2 with one pair). */
static void test_not_sent(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | COAL, 64, false);
    struct vnet_dev *d = dev_init(s, 0);
    struct vnet_coal c = {1, 1};
    assert_int_equal(vnet_coal_vq_set(d, 2, &c), -EINVAL);
    assert_int_equal(vnet_coal_vq_get(d, 2, &c), -EINVAL);
    assert_int_equal(s->ctrl_cmds, 0);
    s = sim_new(SIM_CTRL_BASE | F(NOTF_COAL), 64, false);
    d = dev_init(s, 0);
    assert_int_equal(vnet_coal_vq_set(d, 0, &c), -EOPNOTSUPP);
    assert_int_equal(vnet_coal_vq_get(d, 0, &c), -EOPNOTSUPP);
    assert_int_equal(vnet_coal_tx_set(d, &c), 0);
    s = sim_new(SIM_CTRL_BASE | F(VQ_NOTF_COAL), 64, false);
    d = dev_init(s, 0);
    assert_int_equal(vnet_coal_tx_set(d, &c), -EOPNOTSUPP);
    assert_int_equal(vnet_coal_rx_set(d, &c), -EOPNOTSUPP);
    assert_int_equal(vnet_coal_vq_set(d, 1, &c), 0);
    s = sim_new(SIM_CTRL_BASE, 64, false);
    d = dev_init(s, 0);
    assert_int_equal(vnet_coal_tx_set(d, &c), -EOPNOTSUPP);
    assert_int_equal(vnet_coal_vq_get(d, 0, &c), -EOPNOTSUPP);
    assert_int_equal(s->ctrl_cmds, 0);
}

/* vnet_coal_set: one TX_SET / RX_SET with NOTF_COAL, else VQ_SET on the
 * direction's queue of every pair in use, else nothing sent. */
static void test_set_by_what_is_offered(void **state)
{
    (void)state;
    struct vnet_coal c = {16, 100};
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | COAL, 64, false);
    struct vnet_dev *d = dev_init(s, 0);
    assert_int_equal(vnet_coal_set(d, true, &c), 0);
    sim_expect_ctrl(s, (const uint8_t[]){6, 0, 16, 0, 0, 0, 100, 0, 0, 0}, 10);
    assert_int_equal(s->ctrl_cmds, 1);
    s = sim_new(SIM_CTRL_BASE | F(VQ_NOTF_COAL), 64, false);
    d = dev_init(s, 0);
    assert_int_equal(vnet_coal_set(d, false, &c), 0);
    sim_expect_ctrl(s, (const uint8_t[]){6, 2, 0, 0, 0, 0, 16, 0, 0, 0, 100, 0, 0, 0}, 14);
    assert_int_equal(s->coal[0][0], 16);
    assert_int_equal(s->coal[1][0], 0);
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_coal_set(d, true, &c), -EIO);
    s = sim_new(SIM_CTRL_BASE, 64, false);
    d = dev_init(s, 0);
    assert_int_equal(vnet_coal_set(d, true, &c), -EOPNOTSUPP);
    assert_int_equal(s->ctrl_cmds, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_features, sim_teardown),
        cmocka_unit_test_teardown(test_tx_rx_set, sim_teardown),
        cmocka_unit_test_teardown(test_vq_set_get, sim_teardown),
        cmocka_unit_test_teardown(test_vq_get_bad_replies, sim_teardown),
        cmocka_unit_test_teardown(test_not_sent, sim_teardown),
        cmocka_unit_test_teardown(test_set_by_what_is_offered, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
