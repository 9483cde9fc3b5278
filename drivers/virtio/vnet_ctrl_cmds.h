/* The control queue's other commands (virtio 1.2 s5.1.6.5.1-4): receive
 * mode, MAC filter table and address, VLAN filter, announce ack. Each is
 * one vnet_ctrl_cmd with its reply checked; each needs its feature
 * negotiated (-EOPNOTSUPP without, nothing sent). */
#ifndef VN_VNET_CTRL_CMDS_H
#define VN_VNET_CTRL_CMDS_H

#include <stdbool.h>
#include <stdint.h>

struct vnet_dev;

/* Classes and commands, virtio 1.2 s5.1.6.5 */
#define VIRTIO_NET_CTRL_RX            0
#define VIRTIO_NET_CTRL_RX_PROMISC    0
#define VIRTIO_NET_CTRL_RX_ALLMULTI   1
#define VIRTIO_NET_CTRL_MAC           1
#define VIRTIO_NET_CTRL_MAC_TABLE_SET 0
#define VIRTIO_NET_CTRL_MAC_ADDR_SET  1
#define VIRTIO_NET_CTRL_VLAN          2
#define VIRTIO_NET_CTRL_VLAN_ADD      0
#define VIRTIO_NET_CTRL_VLAN_DEL      1
#define VIRTIO_NET_CTRL_ANNOUNCE      3
#define VIRTIO_NET_CTRL_ANNOUNCE_ACK  0
#define VIRTIO_NET_S_ANNOUNCE         2
#define VNET_VLAN_MAX                 4095
/* MAC_TABLE_SET's two tables within VNET_CTRL_DATA_MAX: 8 + 6 * entries */
#define VNET_MAC_TABLE_MAX 32

/* s5.1.6.5.1 (CTRL_RX): promiscuous mode, all-multicast mode, on or off. */
int vnet_ctrl_promisc(struct vnet_dev *d, bool on);
int vnet_ctrl_allmulti(struct vnet_dev *d, bool on);

/* s5.1.6.5.2 (CTRL_RX): the unicast and multicast filter tables, nuc and
 * nmc addresses (their sum at most VNET_MAC_TABLE_MAX, else -EINVAL). */
int vnet_ctrl_mac_table(struct vnet_dev *d, const uint8_t (*uc)[6], unsigned nuc,
                        const uint8_t (*mc)[6], unsigned nmc);

/* s5.1.6.5.2 (CTRL_MAC_ADDR): the device's default MAC; on OK it is the
 * driver's too (vnet_mac). */
int vnet_ctrl_mac_addr(struct vnet_dev *d, const uint8_t mac[6]);

/* s5.1.6.5.3 (CTRL_VLAN): vid (0..4095, else -EINVAL) into or out of the
 * device's VLAN filter. */
int vnet_ctrl_vlan(struct vnet_dev *d, uint16_t vid, bool add);

/* s5.1.6.5.4 (GUEST_ANNOUNCE): when the config status has ANNOUNCE set,
 * acknowledges it (the device then clears it). 1: acknowledged, 0:
 * nothing to do (or not negotiated), -errno: the ack failed. */
int vnet_announce_poll(struct vnet_dev *d);

#endif
