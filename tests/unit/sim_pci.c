/* The simulated PCI function (see sim_pci.h). */
#include "sim_pci.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/virtio_pci.h"
#include "kernel/mem.h"

struct sim_pci *sim_pci;

static uint32_t get(const struct sim_pci *p, unsigned off, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint32_t)p->cfg[off + i] << (8 * i);
    return v;
}

void sim_pci_put32(struct sim_pci *p, unsigned off, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        p->cfg[off + i] = (uint8_t)(v >> (8 * i));
}

/* BAR i's register as read while sizing: the size mask, type bits kept. */
static uint32_t bar_sized(const struct sim_pci *p, unsigned i, bool hi)
{
    uint32_t lo = get(p, PCI_BAR0 + 4 * i, 4);
    uint64_t mask = p->bar_size[i] ? ~(p->bar_size[i] - 1) : 0;
    if (hi)
        return (uint32_t)(mask >> 32);
    uint32_t type = lo & 1 ? 3u : 0xfu;
    return ((uint32_t)mask & ~type) | (lo & type);
}

/* The 64-bit BAR whose high dword is at BAR slot i, or -1: the halves
 * pair up from BAR 0. */
static int bar_hi_of(const struct sim_pci *p, unsigned i)
{
    unsigned j = 0, step = 1;
    while (j < i) {
        uint32_t lo = get(p, PCI_BAR0 + 4 * j, 4);
        step = !(lo & 1) && ((lo >> 1) & 3) == 2 ? 2 : 1;
        j += step;
    }
    return j == i ? -1 : (int)(j - step);
}

static uint32_t cfg_read(const struct pci_dev *d, uint16_t off, unsigned n)
{
    (void)d;
    struct sim_pci *p = sim_pci;
    if (p->cfg_limit && ++p->cfg_reads > p->cfg_limit) {
        p->cfg_faults++;
        return 0;
    }
    if ((uint32_t)off + n > SIM_PCI_CFG || off % n) {
        p->cfg_faults++;
        return n == 4 ? 0xffffffffu : (1u << (8 * n)) - 1;
    }
    unsigned bar = (unsigned)(off - PCI_BAR0) / 4;
    if (off >= PCI_BAR0 && bar < 6 && n == 4) {
        int lo = bar_hi_of(p, bar);
        if (lo >= 0 && p->sizing_hi[lo])
            return bar_sized(p, (unsigned)lo, true);
        if (lo < 0 && p->sizing[bar])
            return bar_sized(p, bar, false);
    }
    return get(p, off, n);
}

uint32_t pci_read32(const struct pci_dev *d, uint16_t off)
{
    return cfg_read(d, off, 4);
}

uint16_t pci_read16(const struct pci_dev *d, uint16_t off)
{
    return (uint16_t)cfg_read(d, off, 2);
}

uint8_t pci_read8(const struct pci_dev *d, uint16_t off)
{
    return (uint8_t)cfg_read(d, off, 1);
}

static void cfg_write(uint16_t off, uint32_t v, unsigned n)
{
    struct sim_pci *p = sim_pci;
    if ((uint32_t)off + n > SIM_PCI_CFG || off % n) {
        p->cfg_faults++;
        return;
    }
    unsigned bar = (unsigned)(off - PCI_BAR0) / 4;
    if (off >= PCI_BAR0 && bar < 6 && n == 4) {
        int lo = bar_hi_of(p, bar);
        if (lo >= 0)
            p->sizing_hi[lo] = v == 0xffffffffu;
        else
            p->sizing[bar] = v == 0xffffffffu;
        if (v == 0xffffffffu)
            return; /* the address stays; reads give the mask meanwhile */
    }
    for (unsigned i = 0; i < n; i++)
        p->cfg[off + i] = (uint8_t)(v >> (8 * i));
}

void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v)
{
    (void)d;
    cfg_write(off, v, 4);
}

void pci_write16(const struct pci_dev *d, uint16_t off, uint16_t v)
{
    (void)d;
    cfg_write(off, v, 2);
}

/* BAR i's bus address, as the registers hold it; 0 for an I/O BAR. */
static uint64_t bar_addr(const struct sim_pci *p, unsigned i)
{
    uint32_t lo = get(p, PCI_BAR0 + 4 * i, 4);
    if (lo & 1)
        return 0;
    uint64_t hi = ((lo >> 1) & 3) == 2 && i < 5 ? get(p, PCI_BAR0 + 4 * (i + 1), 4) : 0;
    return hi << 32 | (lo & ~0xfu);
}

void sim_pci_bars(struct sim_pci *p)
{
    for (unsigned i = 0; i < 6; i++) {
        p->bar_mem[i] = NULL;
        /* the address bits below the size read as zero */
        uint32_t lo = get(p, PCI_BAR0 + 4 * i, 4);
        if (bar_hi_of(p, i) < 0 && p->bar_size[i])
            sim_pci_put32(p, PCI_BAR0 + 4 * i,
                          (lo & ~(uint32_t)(p->bar_size[i] - 1)) | (lo & (lo & 1 ? 3u : 0xfu)));
    }
    sim_pci = p;
}

void sim_pci_free(struct sim_pci *p)
{
    for (unsigned i = 0; i < 6; i++) {
        free(p->bar_mem[i]);
        p->bar_mem[i] = NULL;
    }
}

/* Inside a memory BAR: its memory (made at its first mapping); else a
 * fault, and 0 (what the kernel returns for a mapping it cannot make). */
uintptr_t mem_map_mmio(uint64_t phys, uint64_t len)
{
    struct sim_pci *p = sim_pci;
    for (unsigned i = 0; i < 6; i++) {
        uint64_t a = bar_addr(p, i), size = p->bar_size[i];
        if (bar_hi_of(p, i) >= 0 || !a || !size || size > SIM_PCI_BAR_MAX || phys < a ||
            phys - a > size || len > size - (phys - a))
            continue;
        if (!p->bar_mem[i] && !(p->bar_mem[i] = calloc(1, size)))
            abort();
        return (uintptr_t)(p->bar_mem[i] + (phys - a));
    }
    p->map_faults++;
    return 0;
}

/* The simulated function has no MSI-X: the transport polls. */
int virtio_pci_msix_setup(struct virtio_pci *vp, const char **why)
{
    (void)vp;
    *why = "sim_pci: no MSI-X";
    return -ENODEV;
}

int virtio_pci_msix_entry(struct virtio_pci *vp, unsigned q, int *vector, const char **why)
{
    (void)vp;
    (void)q;
    (void)vector;
    *why = "sim_pci: no MSI-X";
    return -ENODEV;
}

int virtio_pci_msix_refused(struct virtio_pci *vp, unsigned q, int vector, const char **why)
{
    (void)vp;
    (void)q;
    (void)vector;
    *why = "sim_pci: no MSI-X";
    return -ENODEV;
}

int virtio_pci_queue_irq_to(struct virtio_dev *d, unsigned q, int vector, uint32_t dest)
{
    (void)d;
    (void)q;
    (void)vector;
    (void)dest;
    return -ENODEV;
}
