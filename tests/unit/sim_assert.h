/* cmocka checks on the simulated device that several driver tests make;
 * include after <cmocka.h>. */
#ifndef VN_SIM_ASSERT_H
#define VN_SIM_ASSERT_H

#include "sim_virtio.h"

/* The features every control-queue test offers beside its own (virtio
 * 1.2 s5.1.3: the control queue and what a plain device has). */
#define SIM_CTRL_BASE                                                                              \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |                               \
     VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) |                        \
     VIRTIO_BIT(VIRTIO_F_EVENT_IDX) | VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ))

/* The last control command's bytes as the device read them. */
static inline void sim_expect_ctrl(const struct sim_dev *s, const uint8_t *want, uint32_t len)
{
    assert_int_equal(s->ctrl_last_len, len);
    assert_memory_equal(s->ctrl_last, want, len);
}

#endif
