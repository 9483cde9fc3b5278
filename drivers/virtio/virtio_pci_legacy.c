/* virtio-pci legacy interface (virtio 0.9.5; virtio 1.2 s4.1.4.8): all
 * registers in the I/O BAR0, the ring given as one page frame number. */
#include <errno.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_transport.h"
#include "drivers/virtio/virtq.h"
#include "kernel/io.h"

#define VL_HOST_FEATURES  0x00
#define VL_GUEST_FEATURES 0x04
#define VL_QUEUE_PFN      0x08
#define VL_QUEUE_NUM      0x0c
#define VL_QUEUE_SEL      0x0e
#define VL_QUEUE_NOTIFY   0x10
#define VL_STATUS         0x12
#define VL_ISR            0x13
#define VL_CONFIG         0x14 /* device config while MSI-X is off */
#define VL_MSI_CONFIG     0x14 /* with MSI-X on: config vector, queue vector, */
#define VL_MSI_QUEUE      0x16
#define VL_CONFIG_MSIX    0x18 /* then the device config */

static int legacy_reset(struct virtio_dev *d)
{
    /* 0.9.5: writing 0 resets; there is nothing to wait for. */
    pio_write8(virtio_pci_of(d)->iobase + VL_STATUS, 0);
    return 0;
}

static uint8_t legacy_get_status(struct virtio_dev *d)
{
    return pio_read8(virtio_pci_of(d)->iobase + VL_STATUS);
}

static void legacy_set_status(struct virtio_dev *d, uint8_t s)
{
    pio_write8(virtio_pci_of(d)->iobase + VL_STATUS, s);
}

static uint64_t legacy_get_features(struct virtio_dev *d)
{
    return pio_read32(virtio_pci_of(d)->iobase + VL_HOST_FEATURES);
}

static void legacy_set_features(struct virtio_dev *d, uint64_t f)
{
    pio_write32(virtio_pci_of(d)->iobase + VL_GUEST_FEATURES, (uint32_t)f);
}

/* Legacy config is guest-endian and has no generation counter. */
static int legacy_read_config(struct virtio_dev *d, unsigned off, void *buf, unsigned len)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    uint8_t *out = buf;
    uint16_t base = vp->iobase + vp->devcfg_off;
    /* Nothing past the end of the BAR. */
    for (unsigned i = 0; i < len; i++)
        out[i] = off + i < vp->devcfg_len ? pio_read8((uint16_t)(base + off + i)) : 0;
    return off + len <= vp->devcfg_len ? 0 : -EINVAL;
}

static uint16_t legacy_queue_max(struct virtio_dev *d, unsigned q)
{
    uint16_t io = virtio_pci_of(d)->iobase;
    pio_write16(io + VL_QUEUE_SEL, (uint16_t)q);
    return pio_read16(io + VL_QUEUE_NUM);
}

static int legacy_queue_setup(struct virtio_dev *d, unsigned q, uint16_t num, uint64_t desc,
                              uint64_t driver, uint64_t device)
{
    (void)driver;
    (void)device;
    uint16_t io = virtio_pci_of(d)->iobase;
    pio_write16(io + VL_QUEUE_SEL, (uint16_t)q);
    /* The size is the device's; the ring is one contiguous legacy layout
     * starting on a 4096-byte page. */
    if (num != pio_read16(io + VL_QUEUE_NUM) || (desc & (VIRTQ_ALIGN - 1)) ||
        (desc >> 12) > 0xffffffffu)
        return -EINVAL;
    pio_write32(io + VL_QUEUE_PFN, (uint32_t)(desc >> 12));
    return 0;
}

/* An out instruction is serializing: the ring stores are visible first. */
static void legacy_notify(const struct virtq_doorbell *db, uint32_t val)
{
    (void)val; /* 32 feature bits: no NOTIFICATION_DATA */
    pio_write16((uint16_t)db->addr, db->index);
}

static void legacy_queue_notifier(struct virtio_dev *d, unsigned q, struct virtq *vq)
{
    struct virtq_doorbell db = {legacy_notify, virtio_pci_of(d)->iobase + VL_QUEUE_NOTIFY, d,
                                (uint16_t)q, false};
    virtq_set_doorbell(vq, &db);
}

/* MSI-X on moves the device config 4 bytes up (virtio 1.2 s4.1.4.8);
 * the config vector stays NO_VECTOR: the link state is polled. */
static int legacy_irq_setup(struct virtio_dev *d, const char **why)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    int r = virtio_pci_msix_setup(vp, why);
    if (r)
        return r;
    vp->devcfg_off = VL_CONFIG_MSIX;
    vp->devcfg_len -= VL_CONFIG_MSIX - VL_CONFIG;
    pio_write16(vp->iobase + VL_MSI_CONFIG, VIRTIO_MSI_NO_VECTOR);
    return 0;
}

static int legacy_queue_irq(struct virtio_dev *d, unsigned q, int *vector, const char **why)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    int r = virtio_pci_msix_entry(vp, q, vector, why);
    if (r)
        return r;
    pio_write16(vp->iobase + VL_QUEUE_SEL, (uint16_t)q);
    pio_write16(vp->iobase + VL_MSI_QUEUE, (uint16_t)q);
    if (pio_read16(vp->iobase + VL_MSI_QUEUE) == q)
        return 0;
    return virtio_pci_msix_refused(vp, q, *vector, why);
}

static const struct virtio_ops legacy_ops = {
    .reset = legacy_reset,
    .get_status = legacy_get_status,
    .set_status = legacy_set_status,
    .get_features = legacy_get_features,
    .set_features = legacy_set_features,
    .read_config = legacy_read_config,
    .queue_max = legacy_queue_max,
    .queue_setup = legacy_queue_setup,
    .queue_notifier = legacy_queue_notifier,
    .irq_setup = legacy_irq_setup,
    .queue_irq = legacy_queue_irq,
    .queue_irq_to = virtio_pci_queue_irq_to,
};

int virtio_pci_legacy_setup(struct virtio_pci *vp)
{
    struct pci_bar b;
    if (pci_bar(&vp->pci, 0, &b) || !b.io || b.addr > 0xffff || b.size < VL_CONFIG_MSIX)
        return -ENODEV;
    vp->iobase = (uint16_t)b.addr;
    vp->devcfg_off = VL_CONFIG;
    vp->devcfg_len = (uint32_t)b.size - VL_CONFIG;
    vp->vdev.ops = &legacy_ops;
    vp->vdev.transport = "legacy";
    vp->vdev.legacy = true;
    vp->vdev.queue_size_fixed = true;
    return 0;
}
