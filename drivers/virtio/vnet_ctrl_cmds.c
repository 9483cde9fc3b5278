/* The control queue's receive mode, MAC, VLAN and announce commands
 * (virtio 1.2 s5.1.6.5.1-4; see vnet_ctrl_cmds.h). */
#include "drivers/virtio/vnet_ctrl_cmds.h"

#include <errno.h>
#include <string.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"

#define VNET_CFG_STATUS 6 /* s5.1.4: le16 status, with VIRTIO_NET_F_STATUS */

_Static_assert(8 + 6 * VNET_MAC_TABLE_MAX <= VNET_CTRL_DATA_MAX, "both MAC tables fit a command");

static bool vnet_has(const struct vnet_dev *d, unsigned bit)
{
    return (d->features & VIRTIO_BIT(bit)) != 0;
}

/* s5.1.6.5.1: one byte, 0 off, 1 on. */
static int vnet_ctrl_rx(struct vnet_dev *d, uint8_t cmd, bool on)
{
    if (!vnet_has(d, VIRTIO_NET_F_CTRL_RX))
        return -EOPNOTSUPP;
    uint8_t v = on ? 1 : 0;
    return vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_RX, cmd, &v, 1);
}

int vnet_ctrl_promisc(struct vnet_dev *d, bool on)
{
    return vnet_ctrl_rx(d, VIRTIO_NET_CTRL_RX_PROMISC, on);
}

int vnet_ctrl_allmulti(struct vnet_dev *d, bool on)
{
    return vnet_ctrl_rx(d, VIRTIO_NET_CTRL_RX_ALLMULTI, on);
}

/* One struct virtio_net_ctrl_mac: le32 entries, then the addresses. */
static uint32_t vnet_mac_list(uint8_t *p, const uint8_t (*mac)[6], unsigned n)
{
    uint32_t le = n; /* x86: little endian */
    memcpy(p, &le, 4);
    if (n)
        memcpy(p + 4, mac, 6u * n);
    return 4u + 6u * n;
}

int vnet_ctrl_mac_table(struct vnet_dev *d, const uint8_t (*uc)[6], unsigned nuc,
                        const uint8_t (*mc)[6], unsigned nmc)
{
    /* s5.1.6.5.2: MAC_TABLE_SET is a CTRL_RX command */
    if (!vnet_has(d, VIRTIO_NET_F_CTRL_RX))
        return -EOPNOTSUPP;
    if (nuc > VNET_MAC_TABLE_MAX || nmc > VNET_MAC_TABLE_MAX - nuc)
        return -EINVAL;
    uint8_t buf[8 + 6 * VNET_MAC_TABLE_MAX];
    uint32_t len = vnet_mac_list(buf, uc, nuc);
    len += vnet_mac_list(buf + len, mc, nmc);
    return vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, buf, len);
}

int vnet_ctrl_mac_addr(struct vnet_dev *d, const uint8_t mac[6])
{
    if (!vnet_has(d, VIRTIO_NET_F_CTRL_MAC_ADDR))
        return -EOPNOTSUPP;
    int r = vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, mac, 6);
    if (!r)
        memcpy(d->mac, mac, sizeof(d->mac));
    return r;
}

int vnet_ctrl_vlan(struct vnet_dev *d, uint16_t vid, bool add)
{
    if (!vnet_has(d, VIRTIO_NET_F_CTRL_VLAN))
        return -EOPNOTSUPP;
    if (vid > VNET_VLAN_MAX)
        return -EINVAL;
    uint16_t le = vid; /* s5.1.6.5.3: le16 */
    return vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_VLAN,
                         add ? VIRTIO_NET_CTRL_VLAN_ADD : VIRTIO_NET_CTRL_VLAN_DEL, &le, 2);
}

int vnet_announce_poll(struct vnet_dev *d)
{
    if (!vnet_has(d, VIRTIO_NET_F_GUEST_ANNOUNCE) || !vnet_has(d, VIRTIO_NET_F_STATUS))
        return 0;
    uint16_t st = 0;
    if (d->vdev->ops->read_config(d->vdev, VNET_CFG_STATUS, &st, sizeof(st)) < 0)
        return -EIO;
    if (!(st & VIRTIO_NET_S_ANNOUNCE))
        return 0;
    /* s5.1.6.5.4: the driver acknowledges; the device clears the bit */
    int r = vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_ANNOUNCE, VIRTIO_NET_CTRL_ANNOUNCE_ACK, NULL, 0);
    if (r)
        return r;
    d->announces++;
    return 1;
}
