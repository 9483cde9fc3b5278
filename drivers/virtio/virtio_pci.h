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
    uintptr_t isr;
    uintptr_t devcfg;
    uint32_t devcfg_len;
    uintptr_t notify;
    uint32_t notify_len;
    uint32_t notify_mult;
    /* legacy: I/O port base of BAR0, virtio 1.2 s4.1.4.8 */
    uint16_t iobase;
};

static inline struct virtio_pci *virtio_pci_of(struct virtio_dev *d)
{
    return (struct virtio_pci *)d;
}

#endif
