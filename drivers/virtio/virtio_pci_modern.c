/* virtio-pci modern interface (virtio 1.2 s4.1.4): the vendor
 * capabilities point into memory BARs at the common config, notify, ISR
 * and device config windows. */
#include <errno.h>
#include <stdio.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_regs.h"
#include "drivers/virtio/virtio_transport.h"
#include "drivers/virtio/virtq.h"
#include "kernel/io.h"
#include "kernel/mem.h"

/* struct virtio_pci_cap, s4.1.4 */
#define VPCI_CAP_LEN      2
#define VPCI_CAP_CFG_TYPE 3
#define VPCI_CAP_BAR      4
#define VPCI_CAP_OFFSET   8
#define VPCI_CAP_LENGTH   12
#define VPCI_NOTIFY_MULT  16
#define VPCI_CAP_SIZE     16 /* sizeof(struct virtio_pci_cap) */
#define VPCI_NOTIFY_SIZE  20 /* sizeof(struct virtio_pci_notify_cap), s4.1.4.4 */
#define VPCI_CFG_SPACE    256

#define VPCI_TYPE_COMMON 1
#define VPCI_TYPE_NOTIFY 2
#define VPCI_TYPE_ISR    3
#define VPCI_TYPE_DEVICE 4

/* struct virtio_pci_common_cfg, s4.1.4.3 */
#define CC_DFSELECT  0x00
#define CC_DF        0x04
#define CC_GFSELECT  0x08
#define CC_GF        0x0c
#define CC_MSIX      0x10
#define CC_NUMQ      0x12
#define CC_STATUS    0x14
#define CC_CFGGEN    0x15
#define CC_Q_SELECT  0x16
#define CC_Q_SIZE    0x18
#define CC_Q_MSIX    0x1a
#define CC_Q_ENABLE  0x1c
#define CC_Q_NOFF    0x1e
#define CC_Q_DESCLO  0x20
#define CC_Q_DESCHI  0x24
#define CC_Q_AVAILLO 0x28
#define CC_Q_AVAILHI 0x2c
#define CC_Q_USEDLO  0x30
#define CC_Q_USEDHI  0x34
#define CC_LEN       0x38
#define CC_Q_RESET   0x3a /* virtio 1.2: after queue_notify_data */
#define CC_LEN_RESET 0x3c /* a common window that has queue_reset */

#define VPCI_RESET_SPINS 1000000

static int modern_reset(struct virtio_dev *d)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    mmio_write8(vp->common + CC_STATUS, 0);
    /* s4.1.4.3.2: the reset is done when status reads back 0. */
    for (int i = 0; i < VPCI_RESET_SPINS && mmio_read8(vp->common + CC_STATUS); i++)
        cpu_relax();
    return mmio_read8(vp->common + CC_STATUS) ? -ETIMEDOUT : 0;
}

static uint8_t modern_get_status(struct virtio_dev *d)
{
    return mmio_read8(virtio_pci_of(d)->common + CC_STATUS);
}

static void modern_set_status(struct virtio_dev *d, uint8_t s)
{
    mmio_write8(virtio_pci_of(d)->common + CC_STATUS, s);
}

static uint64_t modern_get_features(struct virtio_dev *d)
{
    uintptr_t c = virtio_pci_of(d)->common;
    return virtio_features_read(c + CC_DFSELECT, c + CC_DF);
}

static void modern_set_features(struct virtio_dev *d, uint64_t f)
{
    uintptr_t c = virtio_pci_of(d)->common;
    virtio_features_write(c + CC_GFSELECT, c + CC_GF, f);
}

/* s4.1.3.1: accesses as wide as the field; s2.5.1: retry until the
 * generation is the same before and after. */
static int modern_read_config(struct virtio_dev *d, unsigned off, void *buf, unsigned len)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    uint8_t *out = buf;
    if (len > vp->devcfg_len || off > vp->devcfg_len - len) { /* no wrap */
        for (unsigned i = 0; i < len; i++)
            out[i] = 0;
        return -EINVAL;
    }
    for (int tries = 0; tries < VIRTIO_CONFIG_TRIES; tries++) {
        uint8_t gen = mmio_read8(vp->common + CC_CFGGEN);
        virtio_config_copy(vp->devcfg + off, out, len);
        /* s4.1.4.3.1: read again until the generation is stable */
        if (gen == mmio_read8(vp->common + CC_CFGGEN))
            return 0;
    }
    return -EIO;
}

static uint16_t modern_queue_max(struct virtio_dev *d, unsigned q)
{
    uintptr_t c = virtio_pci_of(d)->common;
    if (q >= mmio_read16(c + CC_NUMQ))
        return 0;
    mmio_write16(c + CC_Q_SELECT, (uint16_t)q);
    return mmio_read16(c + CC_Q_SIZE);
}

static int modern_queue_setup(struct virtio_dev *d, unsigned q, uint16_t num, uint64_t desc,
                              uint64_t driver, uint64_t device)
{
    uintptr_t c = virtio_pci_of(d)->common;
    mmio_write16(c + CC_Q_SELECT, (uint16_t)q);
    if (mmio_read16(c + CC_Q_ENABLE))
        return -EBUSY;
    mmio_write16(c + CC_Q_SIZE, num);
    /* queue_irq set the vector first; a queue reset cleared it (s2.6.1.2:
     * re-enabling configures the queue as at discovery), so say it again. */
    bool msix = virtio_pci_of(d)->msix_queues & (1u << q);
    mmio_write16(c + CC_Q_MSIX, msix ? (uint16_t)q : VIRTIO_MSI_NO_VECTOR);
    /* s4.1.3.1: 64-bit fields may be written as two 32-bit halves. */
    mmio_write32(c + CC_Q_DESCLO, (uint32_t)desc);
    mmio_write32(c + CC_Q_DESCHI, (uint32_t)(desc >> 32));
    mmio_write32(c + CC_Q_AVAILLO, (uint32_t)driver);
    mmio_write32(c + CC_Q_AVAILHI, (uint32_t)(driver >> 32));
    mmio_write32(c + CC_Q_USEDLO, (uint32_t)device);
    mmio_write32(c + CC_Q_USEDHI, (uint32_t)(device >> 32));
    mmio_write16(c + CC_Q_ENABLE, 1);
    return 0;
}

/* s4.1.4.3.2: write 1 to queue_reset, then done only once it reads 0,
 * with queue_enable 0 too. */
static int modern_queue_reset(struct virtio_dev *d, unsigned q)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    if (vp->common_len < CC_LEN_RESET)
        return -EOPNOTSUPP;
    mmio_write16(vp->common + CC_Q_SELECT, (uint16_t)q);
    mmio_write16(vp->common + CC_Q_RESET, 1);
    for (int i = 0; i < VPCI_RESET_SPINS && mmio_read16(vp->common + CC_Q_RESET); i++)
        cpu_relax();
    if (mmio_read16(vp->common + CC_Q_RESET))
        return -ETIMEDOUT;
    return mmio_read16(vp->common + CC_Q_ENABLE) ? -EIO : 0;
}

/* The kick (s4.1.5.2): a 16-bit write of the queue index, or with
 * NOTIFICATION_DATA the 32-bit value virtq built. The ring stores before
 * it are ordered by virtq_kick's full fence, and x86 does not pass an
 * uncached store over earlier stores anyway. */
static void modern_notify(const struct virtq_doorbell *db, uint32_t val)
{
    if (db->data)
        mmio_write32(db->addr, val);
    else
        mmio_write16(db->addr, (uint16_t)val);
}

static void modern_queue_notifier(struct virtio_dev *d, unsigned q, struct virtq *vq)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    mmio_write16(vp->common + CC_Q_SELECT, (uint16_t)q);
    /* 64-bit: notify_off_multiplier is the device's 32-bit word, and a
     * product that wrapped would pass the window check below. */
    uint64_t off = (uint64_t)mmio_read16(vp->common + CC_Q_NOFF) * vp->notify_mult;
    /* s4.1.4.4: the address must lie inside the notify window; a device
     * that says otherwise gets the window's start (queue 0's spot) and
     * the queue is reported broken. */
    uint64_t width = virtq_notif_data(vq) ? 4 : 2;
    if (off + width > vp->notify_len) {
        virtq_set_broken(vq, VIRTQ_BAD_DEVICE, "queue_notify_off outside the notify window", q,
                         off > UINT32_MAX ? UINT32_MAX : (uint32_t)off, vp->notify_len);
        off = 0;
    }
    struct virtq_doorbell db = {modern_notify, vp->notify + (uintptr_t)off, vp, (uint16_t)q, false};
    virtq_set_doorbell(vq, &db);
}

static int modern_irq_setup(struct virtio_dev *d, const char **why)
{
    return virtio_pci_msix_setup(virtio_pci_of(d), why);
}

/* s4.1.4.3: the device answers a vector it cannot use with NO_VECTOR. */
static int modern_queue_irq(struct virtio_dev *d, unsigned q, int *vector, const char **why)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    int r = virtio_pci_msix_entry(vp, q, vector, why);
    if (r)
        return r;
    mmio_write16(vp->common + CC_Q_SELECT, (uint16_t)q);
    mmio_write16(vp->common + CC_Q_MSIX, (uint16_t)q);
    if (mmio_read16(vp->common + CC_Q_MSIX) == q)
        return 0;
    return virtio_pci_msix_refused(vp, q, *vector, why);
}

static const struct virtio_ops modern_ops = {
    .reset = modern_reset,
    .get_status = modern_get_status,
    .set_status = modern_set_status,
    .get_features = modern_get_features,
    .set_features = modern_set_features,
    .read_config = modern_read_config,
    .queue_max = modern_queue_max,
    .queue_setup = modern_queue_setup,
    .queue_reset = modern_queue_reset,
    .queue_notifier = modern_queue_notifier,
    .irq_setup = modern_irq_setup,
    .queue_irq = modern_queue_irq,
    .queue_irq_to = virtio_pci_queue_irq_to,
};

/* Maps the window one capability describes; 0 if it is not usable. */
static uintptr_t modern_map_cap(struct virtio_pci *vp, uint8_t cap, uint32_t *len)
{
    const struct pci_dev *p = &vp->pci;
    uint8_t bar = pci_read8(p, cap + VPCI_CAP_BAR);
    uint32_t off = pci_read32(p, cap + VPCI_CAP_OFFSET);
    uint32_t length = pci_read32(p, cap + VPCI_CAP_LENGTH);
    struct pci_bar b;
    if (bar > 5 || pci_bar(p, bar, &b) || b.io || !length)
        return 0;
    if ((uint64_t)off + length > b.size)
        return 0;
    *len = length;
    return mem_map_mmio(b.addr + off, length);
}

/* s4.1.4: cap_len covers the structure of its type, and the structure
 * lies in config space; one that does not is ignored, not read past. */
static bool modern_cap_fits(const struct pci_dev *p, uint8_t cap, uint8_t type)
{
    unsigned need = type == VPCI_TYPE_NOTIFY ? VPCI_NOTIFY_SIZE : VPCI_CAP_SIZE;
    unsigned len = pci_read8(p, cap + VPCI_CAP_LEN);
    return len >= need && len <= VPCI_CFG_SPACE - (unsigned)cap;
}

/* One vendor capability: s4.1.4, the first of each type is used. The
 * list's entries are 4-byte aligned, so cap_len and cfg_type lie in
 * config space. */
static void modern_take_cap(struct virtio_pci *vp, uint8_t cap, uint32_t *common_len)
{
    const struct pci_dev *p = &vp->pci;
    uint8_t type = pci_read8(p, cap + VPCI_CAP_CFG_TYPE);
    uint32_t len = 0;
    if (type < VPCI_TYPE_COMMON || type > VPCI_TYPE_DEVICE || !modern_cap_fits(p, cap, type))
        return;
    if (type == VPCI_TYPE_COMMON && !vp->common) {
        vp->common = modern_map_cap(vp, cap, &len);
        *common_len = len;
    } else if (type == VPCI_TYPE_NOTIFY && !vp->notify) {
        vp->notify = modern_map_cap(vp, cap, &len);
        vp->notify_len = len;
        vp->notify_mult = pci_read32(p, cap + VPCI_NOTIFY_MULT);
    } else if (type == VPCI_TYPE_ISR && !vp->isr) {
        vp->isr = modern_map_cap(vp, cap, &len);
    } else if (type == VPCI_TYPE_DEVICE && !vp->devcfg) {
        vp->devcfg = modern_map_cap(vp, cap, &len);
        vp->devcfg_len = len;
    }
}

int virtio_pci_modern_setup(struct virtio_pci *vp)
{
    const struct pci_dev *p = &vp->pci;
    uint32_t common_len = 0;
    /* A list that loops ends: PCI_CAP_MAX capabilities fill config space
     * (pci_cap_next bounds one call, not the walk). */
    uint8_t cap = pci_cap_next(p, 0, PCI_CAP_ID_VNDR);
    for (int n = 0; cap && n < PCI_CAP_MAX; n++, cap = pci_cap_next(p, cap, PCI_CAP_ID_VNDR))
        modern_take_cap(vp, cap, &common_len);
    if (!vp->common || common_len < CC_LEN || !vp->notify || !vp->devcfg)
        return -ENODEV;
    vp->common_len = common_len;
    vp->vdev.ops = &modern_ops;
    vp->vdev.transport = "modern";
    vp->vdev.legacy = false;
    vp->vdev.queue_size_fixed = false;
    /* Config changes are never signalled: the link state is polled. */
    mmio_write16(vp->common + CC_MSIX, VIRTIO_MSI_NO_VECTOR);
    return 0;
}
