/* The control queue's notification coalescing commands (virtio 1.3
 * s5.1.6.5.6; see vnet_coal.h). */
#include "drivers/virtio/vnet_coal.h"

#include <errno.h>
#include <string.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"

#define VNET_COAL_LEN    8 /* le32 max_packets, le32 max_usecs */
#define VNET_COAL_VQ_LEN 4 /* le16 vq_index, le16 reserved */

_Static_assert(VNET_COAL_LEN <= VNET_CTRL_RESULT_MAX, "VQ_GET's result fits");

static bool vnet_coal_has(const struct vnet_dev *d, unsigned bit)
{
    return (d->features & VIRTIO_BIT(bit)) != 0;
}

/* struct virtio_net_ctrl_coal, little endian (x86). */
static void vnet_coal_put(uint8_t *p, const struct vnet_coal *c)
{
    memcpy(p, &c->max_packets, 4);
    memcpy(p + 4, &c->max_usecs, 4);
}

static int vnet_coal_all(struct vnet_dev *d, uint8_t cmd, const struct vnet_coal *c)
{
    if (!vnet_coal_has(d, VIRTIO_NET_F_NOTF_COAL))
        return -EOPNOTSUPP;
    uint8_t buf[VNET_COAL_LEN];
    vnet_coal_put(buf, c);
    return vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_NOTF_COAL, cmd, buf, sizeof(buf));
}

int vnet_coal_tx_set(struct vnet_dev *d, const struct vnet_coal *c)
{
    return vnet_coal_all(d, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, c);
}

int vnet_coal_rx_set(struct vnet_dev *d, const struct vnet_coal *c)
{
    return vnet_coal_all(d, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, c);
}

/* s5.1.6.5.6: vq_index names an enabled transmit or receive virtqueue;
 * reserved is zero. 0, or -EOPNOTSUPP / -EINVAL with nothing to send. */
static int vnet_coal_vq_head(const struct vnet_dev *d, unsigned vq, uint8_t *p)
{
    if (!vnet_coal_has(d, VIRTIO_NET_F_VQ_NOTF_COAL))
        return -EOPNOTSUPP;
    if (vq >= 2u * d->npairs)
        return -EINVAL;
    uint16_t le = (uint16_t)vq;
    memcpy(p, &le, 2);
    memset(p + 2, 0, 2);
    return 0;
}

int vnet_coal_vq_set(struct vnet_dev *d, unsigned vq, const struct vnet_coal *c)
{
    uint8_t buf[VNET_COAL_VQ_LEN + VNET_COAL_LEN];
    int r = vnet_coal_vq_head(d, vq, buf);
    if (r)
        return r;
    vnet_coal_put(buf + VNET_COAL_VQ_LEN, c);
    return vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, buf,
                         sizeof(buf));
}

int vnet_coal_vq_get(struct vnet_dev *d, unsigned vq, struct vnet_coal *out)
{
    uint8_t buf[VNET_COAL_VQ_LEN], res[VNET_COAL_LEN];
    int r = vnet_coal_vq_head(d, vq, buf);
    if (r)
        return r;
    r = vnet_ctrl_cmd_result(d, VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET, buf,
                             sizeof(buf), res, sizeof(res));
    if (r)
        return r;
    memcpy(&out->max_packets, res, 4);
    memcpy(&out->max_usecs, res + 4, 4);
    return 0;
}

int vnet_coal_set(struct vnet_dev *d, bool tx, const struct vnet_coal *c)
{
    if (vnet_coal_has(d, VIRTIO_NET_F_NOTF_COAL))
        return tx ? vnet_coal_tx_set(d, c) : vnet_coal_rx_set(d, c);
    if (!vnet_coal_has(d, VIRTIO_NET_F_VQ_NOTF_COAL))
        return -EOPNOTSUPP;
    /* s5.1.2: pair p's receiveq is 2p, its transmitq 2p + 1 */
    for (unsigned p = 0; p < d->npairs; p++) {
        int r = vnet_coal_vq_set(d, 2u * p + tx, c);
        if (r)
            return r;
    }
    return 0;
}
