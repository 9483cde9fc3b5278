/* Finding virtio devices on each transport. Each probe fills out[] with
 * devices of the given virtio type, reset and ready for the init
 * sequence, and returns how many. */
#ifndef VN_VIRTIO_TRANSPORT_H
#define VN_VIRTIO_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtio.h"

#define VIRTIO_ID_NET        1
#define VIRTIO_TRANSPORT_MAX 4

/* PCI: modern (1af4:1040+type, or transitional 1af4:10xx with the
 * vendor capabilities), legacy I/O BAR0 when the device has no modern
 * interface or prefer_legacy (features=-version_1) and it has one. */
int virtio_pci_probe(struct virtio_dev **out, int max, uint16_t type, bool prefer_legacy);

/* Legacy I/O-port interface of one PCI function (virtio_pci_legacy.c). */
struct virtio_pci;
int virtio_pci_legacy_setup(struct virtio_pci *vp);
int virtio_pci_modern_setup(struct virtio_pci *vp);

/* MMIO: the virtio_mmio.device=<size>@<base>:<irq> words of cmdline, and
 * the LNRO0005 devices of the ACPI DSDT (microvm with ACPI). */
int virtio_mmio_probe(struct virtio_dev **out, int max, uint16_t type, const char *cmdline);

#endif
