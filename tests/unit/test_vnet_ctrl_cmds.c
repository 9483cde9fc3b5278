/* drivers/virtio/vnet_ctrl_cmds.c against the simulated device (virtio
 * 1.2 s5.1.6.5.1-4): each command's bytes as the device reads them, its
 * reply checked (OK, ERR, a device that never answers), nothing sent
 * without the command's feature, the features asked for (CTRL_VLAN only
 * with a VLAN to add, none of them without the control queue), and the
 * announce ack when the status asks for it, once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_ctrl_cmds.h"
#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "sim_assert.h"

#define F(b) VIRTIO_BIT(VIRTIO_NET_F_##b)
#define CMDS (F(CTRL_RX) | F(CTRL_VLAN) | F(CTRL_MAC_ADDR) | F(GUEST_ANNOUNCE))

static struct vnet_dev *dev_init(struct sim_dev *s, bool vlan_filter)
{
    struct vnet_params p = {.rx_refill = 8, .vlan_filter = vlan_filter};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    return d;
}

static void test_features(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    dev_init(s, false);
    assert_int_equal(s->driver_features, SIM_CTRL_BASE | (CMDS & ~F(CTRL_VLAN)));
    s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    dev_init(s, true);
    assert_int_equal(s->driver_features, SIM_CTRL_BASE | CMDS);
    /* s5.1.3.1: each needs the control queue */
    s = sim_new((SIM_CTRL_BASE | CMDS) & ~F(CTRL_VQ), 64, false);
    dev_init(s, true);
    assert_int_equal(s->driver_features, SIM_CTRL_BASE & ~F(CTRL_VQ));
}

static void test_rx_mode(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_dev *d = dev_init(s, false);
    assert_int_equal(vnet_ctrl_promisc(d, false), 0);
    sim_expect_ctrl(s, (const uint8_t[]){0, 0, 0}, 3);
    assert_int_equal(vnet_ctrl_allmulti(d, true), 0);
    sim_expect_ctrl(s, (const uint8_t[]){0, 1, 1}, 3);
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_ctrl_promisc(d, true), -EIO);
    assert_int_equal(d->ctrl->err, 1);
    assert_int_equal(d->ctrl->ok, 2);
}

static void test_mac(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_dev *d = dev_init(s, false);
    static const uint8_t m[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    static const uint8_t mc[2][6] = {{0x01, 0, 0x5e, 0, 0, 1}, {0x33, 0x33, 0, 0, 0, 1}};
    assert_int_equal(vnet_ctrl_mac_addr(d, m), 0);
    sim_expect_ctrl(s, (const uint8_t[]){1, 1, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55}, 8);
    assert_memory_equal(vnet_mac(d), m, 6); /* the driver's address too */
    assert_int_equal(vnet_ctrl_mac_table(d, &m, 1, mc, 2), 0);
    const uint8_t want[] = {1, 0, 1,    0, 0,    0, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 2, 0,
                            0, 0, 0x01, 0, 0x5e, 0, 0,    1,    0x33, 0x33, 0,    0,    0, 1};
    sim_expect_ctrl(s, want, sizeof(want));
    assert_int_equal(vnet_ctrl_mac_table(d, NULL, 0, NULL, 0), 0);
    sim_expect_ctrl(s, (const uint8_t[]){1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10);
    assert_int_equal(vnet_ctrl_mac_table(d, mc, VNET_MAC_TABLE_MAX, mc, 1), -EINVAL);
    /* refused: the device keeps its address, so does the driver */
    static const uint8_t other[6] = {0x02, 9, 9, 9, 9, 9};
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_ctrl_mac_addr(d, other), -EIO);
    assert_memory_equal(vnet_mac(d), m, 6);
}

static void test_vlan(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_dev *d = dev_init(s, true);
    assert_int_equal(vnet_ctrl_vlan(d, 0x123, true), 0);
    sim_expect_ctrl(s, (const uint8_t[]){2, 0, 0x23, 0x01}, 4);
    assert_int_equal(vnet_ctrl_vlan(d, 4095, false), 0);
    sim_expect_ctrl(s, (const uint8_t[]){2, 1, 0xff, 0x0f}, 4);
    uint64_t sent = d->ctrl->sent;
    assert_int_equal(vnet_ctrl_vlan(d, 4096, true), -EINVAL);
    assert_int_equal(d->ctrl->sent, sent);
}

/* Without the feature nothing goes out (s5.1.6.5.1.1, .2.1, .3.1). */
static void test_not_negotiated(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_dev *d = dev_init(s, false); /* no CTRL_VLAN asked */
    uint64_t off;
    assert_int_equal(vnet_ctrl_vlan(d, 5, true), -EOPNOTSUPP);
    s = sim_new(SIM_CTRL_BASE, 64, false);
    d = dev_init(s, true);
    static const uint8_t m[6] = {2, 0, 0, 0, 0, 1};
    assert_int_equal(vnet_ctrl_promisc(d, true), -EOPNOTSUPP);
    assert_int_equal(vnet_ctrl_allmulti(d, true), -EOPNOTSUPP);
    assert_int_equal(vnet_ctrl_mac_table(d, &m, 1, NULL, 0), -EOPNOTSUPP);
    assert_int_equal(vnet_ctrl_mac_addr(d, m), -EOPNOTSUPP);
    assert_int_equal(vnet_ctrl_vlan(d, 5, true), -EOPNOTSUPP);
    assert_int_equal(vnet_announce_poll(d), 0);
    assert_int_equal(d->ctrl->sent, 0);
    assert_int_equal(s->ctrl_cmds, 0);
    /* features= switches each off */
    assert_int_equal(vnet_features_parse("-ctrl_rx,-ctrl_mac_addr", &off), 0);
    s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_params p = {.rx_refill = 8, .features_off = off};
    d = mem_alloc_dma(sizeof(*d), 64);
    assert_int_equal(vnet_dev_init(d, &s->vdev, &p), 0);
    assert_int_equal(vnet_ctrl_promisc(d, true), -EOPNOTSUPP);
    assert_int_equal(vnet_ctrl_mac_addr(d, m), -EOPNOTSUPP);
}

/* A device that takes the command and never answers: -ETIMEDOUT once,
 * then the queue is not used again (-EIO), and nothing else is sent. */
static void test_never_answers(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_dev *d = dev_init(s, true);
    s->ctrl_mode = SIM_CTRL_SILENT;
    assert_int_equal(vnet_ctrl_vlan(d, 7, true), -ETIMEDOUT);
    assert_int_equal(d->ctrl->timeouts, 1);
    s->ctrl_mode = SIM_CTRL_OK;
    assert_int_equal(vnet_ctrl_promisc(d, false), -EIO);
    assert_int_equal(s->ctrl_cmds, 1);
}

static void test_announce(void **state)
{
    (void)state;
    struct sim_dev *s = sim_new(SIM_CTRL_BASE | CMDS, 64, false);
    struct vnet_dev *d = dev_init(s, false);
    assert_int_equal(vnet_announce_poll(d), 0); /* not asked */
    assert_int_equal(s->ctrl_cmds, 0);
    s->config[6] |= VIRTIO_NET_S_ANNOUNCE;
    assert_int_equal(vnet_announce_poll(d), 1);
    sim_expect_ctrl(s, (const uint8_t[]){3, 0}, 2);
    assert_int_equal(s->config[6] & VIRTIO_NET_S_ANNOUNCE, 0); /* the device cleared it */
    assert_int_equal(vnet_announce_poll(d), 0);
    assert_int_equal(d->announces, 1);
    /* an ack the device refuses is the caller's to count */
    s->config[6] |= VIRTIO_NET_S_ANNOUNCE;
    s->ctrl_mode = SIM_CTRL_ERR;
    assert_int_equal(vnet_announce_poll(d), -EIO);
    assert_int_equal(d->announces, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_features, sim_teardown),
        cmocka_unit_test_teardown(test_rx_mode, sim_teardown),
        cmocka_unit_test_teardown(test_mac, sim_teardown),
        cmocka_unit_test_teardown(test_vlan, sim_teardown),
        cmocka_unit_test_teardown(test_not_negotiated, sim_teardown),
        cmocka_unit_test_teardown(test_never_answers, sim_teardown),
        cmocka_unit_test_teardown(test_announce, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
