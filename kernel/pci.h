/* PCI configuration space (ECAM from the ACPI MCFG table when there is
 * one, else the 0xCF8/0xCFC ports), bus scan, BARs, capability lists. */
#ifndef VN_PCI_H
#define VN_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_VENDOR_ID     0x00
#define PCI_DEVICE_ID     0x02
#define PCI_COMMAND       0x04
#define PCI_STATUS        0x06
#define PCI_CLASS_REV     0x08
#define PCI_HEADER_TYPE   0x0e
#define PCI_BAR0          0x10
#define PCI_SUBSYS_ID     0x2e
#define PCI_CAP_PTR       0x34
#define PCI_SECONDARY_BUS 0x19

#define PCI_COMMAND_IO           0x1
#define PCI_COMMAND_MEMORY       0x2
#define PCI_COMMAND_MASTER       0x4
#define PCI_COMMAND_INTX_DISABLE 0x400
#define PCI_STATUS_CAP_LIST      0x10

#define PCI_CAP_ID_VNDR 0x09
#define PCI_CAP_ID_MSIX 0x11

#define PCI_MSIX_ENTRY_BYTES 16

#define PCI_MAX_DEVS 64

struct pci_dev {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint32_t class_rev; /* class << 8 | revision */
    uint8_t hdr_type;   /* without the multi-function bit */
};

struct pci_bar {
    uint64_t addr; /* bus address (== physical here) or I/O port */
    uint64_t size;
    bool io;
    bool is64;
    bool prefetch;
};

/* Picks the access method (ECAM if MCFG has segment 0). Call after
 * acpi_init(); safe to call again. Returns "ecam" or "port". */
const char *pci_init(void);

uint32_t pci_read32(const struct pci_dev *d, uint16_t off);
uint16_t pci_read16(const struct pci_dev *d, uint16_t off);
uint8_t pci_read8(const struct pci_dev *d, uint16_t off);
void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v);
void pci_write16(const struct pci_dev *d, uint16_t off, uint16_t v);

/* Every function on every bus reachable from bus 0 through bridges.
 * Returns how many were stored in out. */
int pci_scan(struct pci_dev *out, int max);

/* Decodes BAR i (sizing it with decode briefly off). Returns 0, -ENOENT
 * for an empty or unassigned BAR, -EINVAL for a bad index (one that is
 * the upper half of a 64-bit BAR too). */
int pci_bar(const struct pci_dev *d, int i, struct pci_bar *b);

/* Next capability with this id after position pos (0: from the start).
 * Returns its offset in config space or 0. One call is bounded, so a
 * looping list ends; a caller walking the list bounds its walk by
 * PCI_CAP_MAX (48 entries of 4 bytes fill the 192 after the header). */
#define PCI_CAP_MAX 48
uint8_t pci_cap_next(const struct pci_dev *d, uint8_t pos, uint8_t id);

/* MSI-X (PCI Local Bus 3.0 s6.8.2): the capability as the device
 * describes it. */
struct pci_msix {
    uint8_t cap;        /* capability offset in config space */
    uint16_t entries;   /* table size */
    uint8_t table_bar;  /* BIR */
    uint32_t table_off; /* into that BAR */
};

/* Decodes Message Control and Table Offset/BIR: 0, or -EINVAL for a BIR
 * that names no BAR. Pure. */
int pci_msix_decode(uint16_t ctrl, uint32_t table, struct pci_msix *m);

/* Whether a table of entries 16-byte entries at off fits a BAR of
 * bar_size bytes. Pure. */
bool pci_msix_fits(uint32_t off, uint16_t entries, uint64_t bar_size);

/* Finds and decodes the MSI-X capability: 0, -ENOENT (none), -EINVAL. */
int pci_msix_find(const struct pci_dev *d, struct pci_msix *m);

/* Maps the table; 0 when its BAR is missing, I/O, or too small. */
uintptr_t pci_msix_map(const struct pci_dev *d, const struct pci_msix *m);

/* Entry i: the message, written while masked; unmasked last when
 * !masked. */
void pci_msix_set_entry(uintptr_t table, unsigned i, uint64_t addr, uint32_t data, bool masked);

/* MSI-X Enable on, function mask off; each entry stays masked until
 * pci_msix_set_entry unmasks it. */
void pci_msix_enable(const struct pci_dev *d, const struct pci_msix *m);

/* Sets command bits (I/O, memory decode, bus mastering, INTx off). */
void pci_enable(const struct pci_dev *d, uint16_t bits);

#endif
