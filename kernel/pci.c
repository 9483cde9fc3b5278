/* PCI configuration access, scan, BARs and capabilities. */
#include "kernel/pci.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/io.h"
#include "kernel/mem.h"

#define PCI_CFG_ADDR 0xcf8
#define PCI_CFG_DATA 0xcfc

/* MCFG (PCI Firmware spec 3.2, table 4-2): header, 8 reserved bytes, then
 * one entry per segment/bus range. */
struct mcfg_entry {
    uint64_t base;
    uint16_t seg;
    uint8_t bus_start;
    uint8_t bus_end;
    uint32_t reserved;
} __attribute__((packed));

static uintptr_t ecam_base; /* mapped address of bus ecam_bus0, 0: use ports */
static uint8_t ecam_bus0, ecam_bus1;

const char *pci_init(void)
{
    if (ecam_base)
        return "ecam";
    const struct acpi_sdt_hdr *h = acpi_find_table("MCFG");
    if (h && h->len >= sizeof(*h) + 8 + sizeof(struct mcfg_entry)) {
        const struct mcfg_entry *e = (const void *)((const uint8_t *)h + sizeof(*h) + 8);
        size_t n = (h->len - sizeof(*h) - 8) / sizeof(*e);
        for (size_t i = 0; i < n; i++) {
            if (e[i].seg != 0 || e[i].bus_end < e[i].bus_start || !e[i].base)
                continue;
            uint64_t len = (uint64_t)(e[i].bus_end - e[i].bus_start + 1) << 20;
            /* The base is for bus 0 of the segment, bus_start may be above. */
            uintptr_t m = mem_map_mmio(e[i].base + ((uint64_t)e[i].bus_start << 20), len);
            if (!m)
                continue;
            ecam_base = m;
            ecam_bus0 = e[i].bus_start;
            ecam_bus1 = e[i].bus_end;
            return "ecam";
        }
    }
    return "port";
}

/* ECAM address of a register, 0 if this bus is not in the ECAM window. */
static inline uintptr_t ecam_addr(const struct pci_dev *d, uint16_t off)
{
    if (!ecam_base || d->bus < ecam_bus0 || d->bus > ecam_bus1)
        return 0;
    return ecam_base + ((uintptr_t)(d->bus - ecam_bus0) << 20) + ((uintptr_t)d->dev << 15) +
           ((uintptr_t)d->fn << 12) + off;
}

static inline uint32_t port_addr(const struct pci_dev *d, uint16_t off)
{
    return 0x80000000u | (uint32_t)d->bus << 16 | (uint32_t)d->dev << 11 | (uint32_t)d->fn << 8 |
           (off & 0xfc);
}

uint32_t pci_read32(const struct pci_dev *d, uint16_t off)
{
    uintptr_t a = ecam_addr(d, off);
    if (a)
        return mmio_read32(a);
    pio_write32(PCI_CFG_ADDR, port_addr(d, off));
    return pio_read32(PCI_CFG_DATA);
}

uint16_t pci_read16(const struct pci_dev *d, uint16_t off)
{
    uintptr_t a = ecam_addr(d, off);
    if (a)
        return mmio_read16(a);
    pio_write32(PCI_CFG_ADDR, port_addr(d, off));
    return pio_read16(PCI_CFG_DATA + (off & 2));
}

uint8_t pci_read8(const struct pci_dev *d, uint16_t off)
{
    uintptr_t a = ecam_addr(d, off);
    if (a)
        return mmio_read8(a);
    pio_write32(PCI_CFG_ADDR, port_addr(d, off));
    return pio_read8(PCI_CFG_DATA + (off & 3));
}

void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v)
{
    uintptr_t a = ecam_addr(d, off);
    if (a) {
        mmio_write32(a, v);
        return;
    }
    pio_write32(PCI_CFG_ADDR, port_addr(d, off));
    pio_write32(PCI_CFG_DATA, v);
}

void pci_write16(const struct pci_dev *d, uint16_t off, uint16_t v)
{
    uintptr_t a = ecam_addr(d, off);
    if (a) {
        mmio_write16(a, v);
        return;
    }
    pio_write32(PCI_CFG_ADDR, port_addr(d, off));
    pio_write16(PCI_CFG_DATA + (off & 2), v);
}

struct pci_scan_state {
    struct pci_dev *out;
    int max, n;
    uint32_t buses_seen[8]; /* bitmap: a bridge loop cannot recurse forever */
};

static void pci_scan_bus(struct pci_scan_state *s, uint8_t bus);

static void pci_scan_fn(struct pci_scan_state *s, uint8_t bus, uint8_t dev, uint8_t fn)
{
    struct pci_dev d = {.bus = bus, .dev = dev, .fn = fn};
    uint32_t id = pci_read32(&d, PCI_VENDOR_ID);
    if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0)
        return;
    d.vendor = (uint16_t)id;
    d.device = (uint16_t)(id >> 16);
    d.class_rev = pci_read32(&d, PCI_CLASS_REV);
    d.hdr_type = pci_read8(&d, PCI_HEADER_TYPE) & 0x7f;
    if (s->n < s->max)
        s->out[s->n++] = d;
    /* PCI-to-PCI bridge (class 06 04, header type 1): its secondary bus. */
    if (d.hdr_type == 1 && (d.class_rev >> 16) == 0x0604) {
        uint8_t sec = pci_read8(&d, PCI_SECONDARY_BUS);
        if (sec > bus)
            pci_scan_bus(s, sec);
    }
}

static void pci_scan_bus(struct pci_scan_state *s, uint8_t bus)
{
    if (s->buses_seen[bus / 32] & (1u << (bus % 32)))
        return;
    s->buses_seen[bus / 32] |= 1u << (bus % 32);
    for (uint8_t dev = 0; dev < 32; dev++) {
        struct pci_dev d = {.bus = bus, .dev = dev, .fn = 0};
        uint16_t vendor = pci_read16(&d, PCI_VENDOR_ID);
        if (vendor == 0xffff || vendor == 0)
            continue;
        pci_scan_fn(s, bus, dev, 0);
        if (pci_read8(&d, PCI_HEADER_TYPE) & 0x80)
            for (uint8_t fn = 1; fn < 8; fn++)
                pci_scan_fn(s, bus, dev, fn);
    }
}

int pci_scan(struct pci_dev *out, int max)
{
    struct pci_scan_state s;
    memset(&s, 0, sizeof(s));
    s.out = out;
    s.max = max;
    pci_scan_bus(&s, 0);
    return s.n;
}

/* MSI-X, PCI Local Bus 3.0 s6.8.2 */
#define MSIX_CTRL           2
#define MSIX_TABLE          4
#define MSIX_CTRL_FUNC_MASK 0x4000
#define MSIX_CTRL_ENABLE    0x8000
#define MSIX_ENTRY_VCTRL    12
#define MSIX_VCTRL_MASKED   1

int pci_msix_find(const struct pci_dev *d, struct pci_msix *m)
{
    uint8_t cap = pci_cap_next(d, 0, PCI_CAP_ID_MSIX);
    if (!cap)
        return -ENOENT;
    m->cap = cap;
    return pci_msix_decode(pci_read16(d, cap + MSIX_CTRL), pci_read32(d, cap + MSIX_TABLE), m);
}

uintptr_t pci_msix_map(const struct pci_dev *d, const struct pci_msix *m)
{
    struct pci_bar b;
    if (pci_bar(d, m->table_bar, &b) || b.io || !pci_msix_fits(m->table_off, m->entries, b.size))
        return 0;
    return mem_map_mmio(b.addr + m->table_off, (uint64_t)m->entries * PCI_MSIX_ENTRY_BYTES);
}

void pci_msix_set_entry(uintptr_t table, unsigned i, uint64_t addr, uint32_t data, bool masked)
{
    uintptr_t e = table + (uintptr_t)i * PCI_MSIX_ENTRY_BYTES;
    mmio_write32(e + MSIX_ENTRY_VCTRL, MSIX_VCTRL_MASKED);
    mmio_write32(e, (uint32_t)addr);
    mmio_write32(e + 4, (uint32_t)(addr >> 32));
    mmio_write32(e + 8, data);
    if (!masked)
        mmio_write32(e + MSIX_ENTRY_VCTRL, 0);
}

/* Entries come out of reset masked one by one (s6.8.2.9), so the
 * function as a whole needs no mask while they are written. */
void pci_msix_enable(const struct pci_dev *d, const struct pci_msix *m)
{
    uint16_t c = pci_read16(d, m->cap + MSIX_CTRL);
    pci_write16(d, m->cap + MSIX_CTRL, (c | MSIX_CTRL_ENABLE) & ~MSIX_CTRL_FUNC_MASK);
}
