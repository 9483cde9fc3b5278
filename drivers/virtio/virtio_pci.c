/* virtio over PCI: find the functions, pick modern or legacy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_transport.h"
#include "kernel/irq.h"

static struct virtio_pci virtio_pci_devs[VIRTIO_TRANSPORT_MAX];
static int virtio_pci_used;

/* virtio 1.2 s4.1.2: 1af4:1040+type is modern-only; 1af4:1000..103f is
 * transitional and says its type in the subsystem device id. */
static int virtio_pci_type(const struct pci_dev *p)
{
    if (p->vendor != VIRTIO_PCI_VENDOR)
        return -1;
    if (p->device >= 0x1040 && p->device <= 0x107f)
        return p->device - 0x1040;
    if (p->device >= 0x1000 && p->device <= 0x103f)
        return pci_read16(p, PCI_SUBSYS_ID);
    return -1;
}

int virtio_pci_probe(struct virtio_dev **out, int max, uint16_t type, bool prefer_legacy)
{
    struct pci_dev all[PCI_MAX_DEVS];
    const char *how = pci_init();
    int n = pci_scan(all, PCI_MAX_DEVS), found = 0;
    for (int i = 0; i < n && found < max; i++) {
        const struct pci_dev *p = &all[i];
        if (virtio_pci_type(p) != type)
            continue;
        if (virtio_pci_used == VIRTIO_TRANSPORT_MAX) {
            printf("virtio-pci: more than %d devices, %02x:%02x.%u ignored\n", VIRTIO_TRANSPORT_MAX,
                   p->bus, p->dev, p->fn);
            break;
        }
        struct virtio_pci *vp = &virtio_pci_devs[virtio_pci_used];
        memset(vp, 0, sizeof(*vp));
        vp->pci = *p;
        /* Memory and I/O decode for the BARs, bus mastering for the rings
         * (QEMU drops DMA without it), INTx off: we poll. */
        pci_enable(p, PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
                          PCI_COMMAND_INTX_DISABLE);
        bool transitional = p->device < 0x1040;
        int r = -ENODEV;
        if (!(prefer_legacy && transitional))
            r = virtio_pci_modern_setup(vp);
        if (r && transitional)
            r = virtio_pci_legacy_setup(vp);
        if (r && prefer_legacy)
            r = virtio_pci_modern_setup(vp);
        if (r) {
            printf("virtio-pci: %02x:%02x.%u %04x:%04x: no usable interface\n", p->bus, p->dev,
                   p->fn, p->vendor, p->device);
            continue;
        }
        vp->vdev.device_id = type;
        snprintf(vp->vdev.name, sizeof(vp->vdev.name), "pci%u:%u.%u %s", p->bus, p->dev, p->fn,
                 vp->vdev.transport);
        printf("virtio-pci: %s (%04x:%04x, config via %s)\n", vp->vdev.name, p->vendor, p->device,
               how);
        virtio_pci_used++;
        out[found++] = &vp->vdev;
    }
    return found;
}

int virtio_pci_msix_setup(struct virtio_pci *vp, const char **why)
{
    if (vp->msix_table)
        return 0; /* set up before this reset: enabled still */
    int r = pci_msix_find(&vp->pci, &vp->msix);
    if (r) {
        *why = r == -ENOENT ? "no MSI-X capability (vectors=0?)" : "MSI-X table BIR names no BAR";
        return -ENODEV;
    }
    vp->msix_table = pci_msix_map(&vp->pci, &vp->msix);
    if (!vp->msix_table) {
        *why = "MSI-X table outside its BAR";
        return -ENODEV;
    }
    if (irq_init()) {
        *why = "no local APIC";
        return -ENODEV;
    }
    pci_msix_enable(&vp->pci, &vp->msix);
    return 0;
}

int virtio_pci_msix_entry(struct virtio_pci *vp, unsigned q, int *vector, const char **why)
{
    uint64_t addr;
    uint32_t data;
    if (!vp->msix_table || q >= vp->msix.entries || q >= 32) {
        *why = "fewer MSI-X vectors than queues";
        return -ENODEV;
    }
    int v = (vp->msix_queues & (1u << q)) ? vp->msix_vec[q] : irq_vector_alloc();
    if (v < 0 || irq_msi_msg(v, irq_boot_apic_id(), &addr, &data)) {
        irq_vector_free(v);
        vp->msix_queues &= ~(1u << q);
        *why = "no interrupt vector left";
        return -ENODEV;
    }
    pci_msix_set_entry(vp->msix_table, q, addr, data, false);
    vp->msix_queues |= 1u << q;
    vp->msix_vec[q] = v;
    *vector = v;
    return 0;
}

int virtio_pci_msix_refused(struct virtio_pci *vp, unsigned q, int vector, const char **why)
{
    pci_msix_set_entry(vp->msix_table, q, 0, 0, true);
    vp->msix_queues &= ~(1u << q);
    irq_vector_free(vector);
    *why = "the device refused the MSI-X vector (reads back NO_VECTOR)";
    return -ENODEV;
}

/* PCI 3.0 s6.8.3.5: an entry's address and data change only while it is
 * masked; pci_msix_set_entry masks it first and unmasks it last. An
 * interrupt the device raises meanwhile waits in its pending bit. */
int virtio_pci_queue_irq_to(struct virtio_dev *d, unsigned q, int vector, uint32_t dest)
{
    struct virtio_pci *vp = virtio_pci_of(d);
    uint64_t addr;
    uint32_t data;
    if (q >= 32 || !(vp->msix_queues & (1u << q)))
        return -ENODEV;
    int r = irq_msi_msg(vector, dest, &addr, &data);
    if (r)
        return r;
    pci_msix_set_entry(vp->msix_table, q, addr, data, false);
    return 0;
}
