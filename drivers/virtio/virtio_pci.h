/* virtio over PCI: the state both PCI interfaces (modern, legacy) keep. */
#ifndef VN_VIRTIO_PCI_H
#define VN_VIRTIO_PCI_H

#include <stdint.h>

#include "drivers/virtio/virtio.h"
#include "kernel/pci.h"

#define VIRTIO_PCI_VENDOR 0x1af4

struct virtio_pci {
    struct virtio_dev vdev; /* first: the ops get this pointer */
    struct pci_dev pci;
    /* modern: mapped capability windows, virtio 1.2 s4.1.4 */
    uintptr_t common;
    uint32_t common_len;
    uintptr_t isr;
    uintptr_t devcfg;
    uint32_t devcfg_len;
    uintptr_t notify;
    uint32_t notify_len;
    uint32_t notify_mult;
    /* legacy: I/O port base of BAR0, virtio 1.2 s4.1.4.8; the device
     * config moves 4 bytes up once MSI-X is on */
    uint16_t iobase;
    uint16_t devcfg_off;
    /* MSI-X (virtio_pci_msix_setup): table entry q serves queue q */
    struct pci_msix msix;
    uintptr_t msix_table;
    uint32_t msix_queues; /* bit q: queue q has its entry */
    int msix_vec[32];     /* and this vector, kept when the device is set up again */
};

/* MSI-X on for vp: 0, or -ENODEV with why (no capability, as with
 * QEMU's vectors=0; an unusable table; no local APIC). */
int virtio_pci_msix_setup(struct virtio_pci *vp, const char **why);

/* A fresh vector in table entry q (queue q's), unmasked; *vector gets
 * it; a queue that has one (its device reset and set up again) keeps
 * it. 0, or -ENODEV with why. */
int virtio_pci_msix_entry(struct virtio_pci *vp, unsigned q, int *vector, const char **why);

/* virtio_ops.queue_irq_to: queue q's entry (set by virtio_pci_msix_entry)
 * rewritten, masked, to send vector to the local APIC with ID dest. 0,
 * -ENODEV for a queue without one, -ERANGE for an ID the message cannot
 * carry. */
int virtio_pci_queue_irq_to(struct virtio_dev *d, unsigned q, int vector, uint32_t dest);

/* Gives entry q back (masked, vector freed) after the device refused it:
 * virtio 1.2 s4.1.4.3 and s4.1.4.8, VIRTIO_MSI_NO_VECTOR read back.
 * Returns -ENODEV with why. */
int virtio_pci_msix_refused(struct virtio_pci *vp, unsigned q, int vector, const char **why);

#define VIRTIO_MSI_NO_VECTOR 0xffff

static inline struct virtio_pci *virtio_pci_of(struct virtio_dev *d)
{
    return (struct virtio_pci *)d;
}

#endif
