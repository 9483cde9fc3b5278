/* MSI-X capability decoding (PCI Local Bus 3.0 s6.8.2): pure, so the
 * host unit tests can feed it anything a device might say. */
#include <errno.h>

#include "kernel/pci.h"

#define MSIX_CTRL_SIZE 0x07ff

int pci_msix_decode(uint16_t ctrl, uint32_t table, struct pci_msix *m)
{
    m->entries = (uint16_t)((ctrl & MSIX_CTRL_SIZE) + 1);
    m->table_bar = table & 7;
    m->table_off = table & ~7u;
    return m->table_bar > 5 ? -EINVAL : 0;
}

bool pci_msix_fits(uint32_t off, uint16_t entries, uint64_t bar_size)
{
    return (uint64_t)off + (uint64_t)entries * PCI_MSIX_ENTRY_BYTES <= bar_size;
}
