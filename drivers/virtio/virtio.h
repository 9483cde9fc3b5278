/* Virtio core: status and feature bits, and the transport interface that
 * the device code (drivers/virtio/vnet*.c) uses. PCI modern, PCI legacy and
 * MMIO each implement struct virtio_ops; nothing above this header knows
 * which transport it talks to. */
#ifndef VN_VIRTIO_H
#define VN_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>

/* Device status, virtio 1.2 s2.1 */
#define VIRTIO_STATUS_ACKNOWLEDGE        0x01
#define VIRTIO_STATUS_DRIVER             0x02
#define VIRTIO_STATUS_DRIVER_OK          0x04
#define VIRTIO_STATUS_FEATURES_OK        0x08
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 0x40
#define VIRTIO_STATUS_FAILED             0x80

/* Reserved (transport/ring) feature bits, virtio 1.2 s6 */
#define VIRTIO_F_NOTIFY_ON_EMPTY   24
#define VIRTIO_F_ANY_LAYOUT        27
#define VIRTIO_F_INDIRECT_DESC     28
#define VIRTIO_F_EVENT_IDX         29
#define VIRTIO_F_VERSION_1         32
#define VIRTIO_F_ACCESS_PLATFORM   33
#define VIRTIO_F_RING_PACKED       34
#define VIRTIO_F_IN_ORDER          35
#define VIRTIO_F_NOTIFICATION_DATA 38
#define VIRTIO_F_RING_RESET        40

/* virtio-net feature bits, virtio 1.2 s5.1.3 */
#define VIRTIO_NET_F_CSUM           0
#define VIRTIO_NET_F_GUEST_CSUM     1
#define VIRTIO_NET_F_MTU            3
#define VIRTIO_NET_F_MAC            5
#define VIRTIO_NET_F_GUEST_TSO4     7
#define VIRTIO_NET_F_GUEST_TSO6     8
#define VIRTIO_NET_F_GUEST_ECN      9
#define VIRTIO_NET_F_HOST_TSO4      11
#define VIRTIO_NET_F_HOST_TSO6      12
#define VIRTIO_NET_F_HOST_ECN       13
#define VIRTIO_NET_F_MRG_RXBUF      15
#define VIRTIO_NET_F_STATUS         16
#define VIRTIO_NET_F_CTRL_VQ        17
#define VIRTIO_NET_F_CTRL_RX        18
#define VIRTIO_NET_F_CTRL_VLAN      19
#define VIRTIO_NET_F_GUEST_ANNOUNCE 21
#define VIRTIO_NET_F_MQ             22
#define VIRTIO_NET_F_CTRL_MAC_ADDR  23
#define VIRTIO_NET_F_VQ_NOTF_COAL   52 /* virtio 1.3 s5.1.3 */
#define VIRTIO_NET_F_NOTF_COAL      53 /* virtio 1.3 s5.1.3 */
#define VIRTIO_NET_F_GUEST_USO4     54
#define VIRTIO_NET_F_GUEST_USO6     55
#define VIRTIO_NET_F_HOST_USO       56
#define VIRTIO_NET_F_HASH_REPORT    57
#define VIRTIO_NET_F_RSS            60
#define VIRTIO_NET_F_RSC_EXT        61
#define VIRTIO_NET_F_SPEED_DUPLEX   63

#define VIRTIO_BIT(b) (1ull << (b))

struct virtio_dev;
struct virtq;

/* One transport. Register access only; the init sequence lives in the
 * device code. queue_setup gets the three areas of a queue (s2.6: the
 * descriptor area, the driver area, the device area); a split ring comes
 * in the legacy (contiguous, used ring page aligned) layout, so legacy
 * transports use only the first. */
/* A device whose config_generation keeps moving gets this many tries. */
#define VIRTIO_CONFIG_TRIES 64

struct virtio_ops {
    /* 0, or -ETIMEDOUT when the device does not finish the reset. */
    int (*reset)(struct virtio_dev *d);
    uint8_t (*get_status)(struct virtio_dev *d);
    void (*set_status)(struct virtio_dev *d, uint8_t s);
    uint64_t (*get_features)(struct virtio_dev *d);
    void (*set_features)(struct virtio_dev *d, uint64_t f);
    /* Device-specific config space, consistent across config_generation:
     * 0, -EINVAL past the end of the device's config, -EIO when the
     * generation never settles (VIRTIO_CONFIG_TRIES). */
    int (*read_config)(struct virtio_dev *d, unsigned off, void *buf, unsigned len);
    /* Largest size of queue q; 0: no such queue. */
    uint16_t (*queue_max)(struct virtio_dev *d, unsigned q);
    /* Makes queue q live with num entries. Returns 0 or -errno. */
    int (*queue_setup)(struct virtio_dev *d, unsigned q, uint16_t num, uint64_t desc,
                       uint64_t driver, uint64_t device);
    /* VIRTIO_F_RING_RESET (virtio 1.2 s2.6.1): resets queue q alone and
     * waits until the device says it is done (queue_reset and the enable
     * bit read 0); queue_setup then re-enables it. 0, -EOPNOTSUPP when the
     * transport has no such register (NULL: legacy), -ETIMEDOUT when the
     * reset never completes, -EIO when the device claims completion with
     * the queue still enabled. */
    int (*queue_reset)(struct virtio_dev *d, unsigned q);
    /* Gives the virtqueue for q its doorbell (virtq_set_doorbell). */
    void (*queue_notifier)(struct virtio_dev *d, unsigned q, struct virtq *vq);
    /* Interrupts. irq_setup readies the device's path (MSI-X on, or its
     * pin routed to a vector); queue_irq then puts queue q's used-buffer
     * notifications on a vector, before queue_setup (virtio 1.2
     * s4.1.5.1.3). Both return 0, or -ENODEV with what is missing in
     * *why: the queue is then polled. */
    int (*irq_setup)(struct virtio_dev *d, const char **why);
    int (*queue_irq)(struct virtio_dev *d, unsigned q, int *vector, const char **why);
    /* Queue q's notifications (on vector, from queue_irq) sent to the CPU
     * whose local APIC ID is dest instead of the boot CPU; any time after
     * queue_irq. 0 or -errno. NULL where the transport cannot choose (an
     * I/O APIC line shared by the device's queues: virtio-mmio). */
    int (*queue_irq_to)(struct virtio_dev *d, unsigned q, int vector, uint32_t dest);
};

struct virtio_dev {
    const struct virtio_ops *ops;
    const char *transport; /* "modern", "legacy", "mmio" */
    bool legacy;           /* no VERSION_1, no FEATURES_OK step */
    bool queue_size_fixed; /* legacy PCI: the device's size is the size */
    uint16_t device_id;    /* virtio device type, 1 = net */
    char name[40];         /* "pci0:3.0 modern" */
};

#endif
