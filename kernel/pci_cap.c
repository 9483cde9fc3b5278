/* BARs, capability lists and the command register: config space as
 * pci_read and pci_write give it (pci.c), so the host tests run them over
 * a simulated one (tests/unit/sim_pci.c). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "kernel/pci.h"

/* Whether BAR i is the upper half of a 64-bit BAR (PCI Local Bus 3.0
 * s6.2.5.1): the halves pair up from BAR 0. */
static bool pci_bar_upper(const struct pci_dev *d, int i)
{
    int j = 0;
    while (j < i) {
        uint32_t lo = pci_read32(d, (uint16_t)(PCI_BAR0 + 4 * j));
        j += !(lo & 1) && ((lo >> 1) & 3) == 2 ? 2 : 1;
    }
    return j != i;
}

int pci_bar(const struct pci_dev *d, int i, struct pci_bar *b)
{
    if (i < 0 || i > 5 || d->hdr_type != 0 || pci_bar_upper(d, i))
        return -EINVAL;
    memset(b, 0, sizeof(*b));
    uint16_t off = (uint16_t)(PCI_BAR0 + 4 * i);
    uint32_t lo = pci_read32(d, off);
    b->io = lo & 1;
    b->is64 = !b->io && ((lo >> 1) & 3) == 2;
    b->prefetch = !b->io && (lo & 8);
    if (b->is64 && i == 5)
        return -EINVAL;
    uint32_t hi = b->is64 ? pci_read32(d, off + 4) : 0;

    /* Size it: all ones, read back, restore, with decode off meanwhile so
     * the device does not answer at a bogus address. */
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    pci_write16(d, PCI_COMMAND, cmd & ~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY));
    pci_write32(d, off, 0xffffffffu);
    uint32_t mlo = pci_read32(d, off);
    pci_write32(d, off, lo);
    uint32_t mhi = 0xffffffffu;
    if (b->is64) {
        pci_write32(d, off + 4, 0xffffffffu);
        mhi = pci_read32(d, off + 4);
        pci_write32(d, off + 4, hi);
    }
    pci_write16(d, PCI_COMMAND, cmd);

    if (b->io) {
        uint32_t mask = mlo & ~3u;
        if (!mask)
            return -ENOENT;
        b->size = (uint16_t)(~mask + 1);
        b->addr = lo & ~3u;
    } else {
        uint64_t mask = mlo & ~0xfu;
        if (b->is64)
            mask |= (uint64_t)mhi << 32;
        else if (mask)
            mask |= 0xffffffff00000000ull;
        if (!mask)
            return -ENOENT;
        b->size = ~mask + 1;
        b->addr = ((uint64_t)hi << 32) | (lo & ~0xfu);
    }
    if (!b->size || !b->addr)
        return -ENOENT; /* empty, or firmware left it unassigned */
    return 0;
}

uint8_t pci_cap_next(const struct pci_dev *d, uint8_t pos, uint8_t id)
{
    if (!pos) {
        if (!(pci_read16(d, PCI_STATUS) & PCI_STATUS_CAP_LIST))
            return 0;
        pos = pci_read8(d, PCI_CAP_PTR);
    } else {
        pos = pci_read8(d, pos + 1);
    }
    /* more than PCI_CAP_MAX entries: the list loops */
    for (int n = 0; n < PCI_CAP_MAX && pos >= 0x40; n++) {
        pos &= 0xfc;
        if (pci_read8(d, pos) == id)
            return pos;
        pos = pci_read8(d, pos + 1);
    }
    return 0;
}

void pci_enable(const struct pci_dev *d, uint16_t bits)
{
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    if ((cmd & bits) != bits)
        pci_write16(d, PCI_COMMAND, cmd | bits);
}
