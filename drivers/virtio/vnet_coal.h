/* Notification coalescing (VIRTIO_NET_F_NOTF_COAL, VIRTIO_NET_F_VQ_NOTF_COAL;
 * virtio 1.3 s5.1.6.5.6, final since virtio 1.3 cs01): the control queue's
 * VIRTIO_NET_CTRL_NOTF_COAL class, each command's reply checked. No backend
 * on this machine offers either feature (docs/driver.md, "Notification
 * coalescing"); the commands are tested against the simulated device. */
#ifndef VN_VNET_COAL_H
#define VN_VNET_COAL_H

#include <stdbool.h>
#include <stdint.h>

struct vnet_dev;

/* Class and commands, virtio 1.3 s5.1.6.5.6 */
#define VIRTIO_NET_CTRL_NOTF_COAL        6
#define VIRTIO_NET_CTRL_NOTF_COAL_TX_SET 0
#define VIRTIO_NET_CTRL_NOTF_COAL_RX_SET 1
#define VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET 2
#define VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET 3

/* struct virtio_net_ctrl_coal: a used buffer notification after at most
 * max_packets buffers or max_usecs microseconds (0 and 0: none held). */
struct vnet_coal {
    uint32_t max_packets;
    uint32_t max_usecs;
};

/* TX_SET, RX_SET: every transmit (receive) virtqueue's parameters.
 * Need NOTF_COAL (-EOPNOTSUPP without, nothing sent); the reply as
 * vnet_ctrl_cmd's. */
int vnet_coal_tx_set(struct vnet_dev *d, const struct vnet_coal *c);
int vnet_coal_rx_set(struct vnet_dev *d, const struct vnet_coal *c);

/* VQ_SET, VQ_GET: one virtqueue's parameters, vq an enabled transmit or
 * receive virtqueue (below 2 x the pairs in use; else -EINVAL, nothing
 * sent: s5.1.6.5.6's driver requirement). Need VQ_NOTF_COAL. VQ_GET
 * fills *out only on VIRTIO_NET_OK with the whole result (-EPROTO for a
 * short one); on VIRTIO_NET_ERR *out is left as it was. */
int vnet_coal_vq_set(struct vnet_dev *d, unsigned vq, const struct vnet_coal *c);
int vnet_coal_vq_get(struct vnet_dev *d, unsigned vq, struct vnet_coal *out);

/* Every transmit (tx) or receive virtqueue in use: TX_SET or RX_SET
 * where NOTF_COAL is negotiated, else VQ_SET on each pair's queue where
 * VQ_NOTF_COAL is (the same parameters either way). -EOPNOTSUPP with
 * neither, nothing sent; else the first reply that is not OK. */
int vnet_coal_set(struct vnet_dev *d, bool tx, const struct vnet_coal *c);

#endif
