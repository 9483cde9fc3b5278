/* Just enough ACPI to find tables (MCFG for PCI ECAM, FADT for the PM
 * timer). Tables are in RAM the identity map covers; every length and
 * checksum is checked before a table is used. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/io.h"

struct rsdp {
    char sig[8];
    uint8_t csum;
    char oem[6];
    uint8_t rev;
    uint32_t rsdt;
    uint32_t len; /* rev >= 2 */
    uint64_t xsdt;
    uint8_t xcsum;
    uint8_t rsvd[3];
} __attribute__((packed));

static const struct acpi_sdt_hdr *root;
static int root_is_xsdt;

static int csum_ok(const void *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((const uint8_t *)p)[i];
    return s == 0;
}

static const struct rsdp *rsdp_scan(uintptr_t lo, uintptr_t hi)
{
    for (uintptr_t a = lo; a + sizeof(struct rsdp) <= hi; a += 16) {
        const struct rsdp *r = (const struct rsdp *)a;
        if (memcmp(r->sig, "RSD PTR ", 8) == 0 && csum_ok(r, 20))
            return r;
    }
    return NULL;
}

static int sdt_ok(const struct acpi_sdt_hdr *h)
{
    return h && h->len >= sizeof(*h) && h->len < (1u << 20) && csum_ok(h, h->len);
}

int acpi_init(uint64_t rsdp_pa)
{
    const struct rsdp *r = NULL;

    if (rsdp_pa) {
        r = (const struct rsdp *)(uintptr_t)rsdp_pa;
        if (memcmp(r->sig, "RSD PTR ", 8) != 0 || !csum_ok(r, 20))
            r = NULL;
    }
    if (!r) {
        /* BIOS data area word at 0x40e: EBDA segment */
        uintptr_t ebda = (uintptr_t)mmio_read16(0x40e) << 4;
        if (ebda >= 0x80000 && ebda < 0xa0000)
            r = rsdp_scan(ebda, ebda + 1024);
    }
    if (!r)
        r = rsdp_scan(0xe0000, 0x100000);
    if (!r)
        return -ENOENT;
    if (r->rev >= 2 && r->xsdt && csum_ok(r, r->len < 36 ? 36 : r->len)) {
        root = (const struct acpi_sdt_hdr *)(uintptr_t)r->xsdt;
        root_is_xsdt = 1;
    } else {
        root = (const struct acpi_sdt_hdr *)(uintptr_t)r->rsdt;
        root_is_xsdt = 0;
    }
    if (!sdt_ok(root)) {
        root = NULL;
        return -ENOENT;
    }
    return 0;
}

const struct acpi_sdt_hdr *acpi_find_table(const char sig[4])
{
    if (!root)
        return NULL;
    size_t esz = root_is_xsdt ? 8 : 4;
    size_t n = (root->len - sizeof(*root)) / esz;
    const uint8_t *ents = (const uint8_t *)(root + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t pa = 0;
        memcpy(&pa, ents + i * esz, esz);
        const struct acpi_sdt_hdr *h = (const struct acpi_sdt_hdr *)(uintptr_t)pa;
        if (pa && memcmp(h->sig, sig, 4) == 0 && sdt_ok(h))
            return h;
    }
    return NULL;
}

uint16_t acpi_pm_timer_port(void)
{
    const struct acpi_sdt_hdr *f = acpi_find_table("FACP");
    if (!f)
        return 0;
    const uint8_t *p = (const uint8_t *)f;
    /* ACPI 6.4 s5.2.9: X_PM_TMR_BLK (GAS at 208) if present, else PM_TMR_BLK (76). */
    if (f->len >= 220 && p[208] == 1 /* system I/O space */) {
        uint64_t a;
        memcpy(&a, p + 212, 8);
        if (a && a < 0x10000)
            return (uint16_t)a;
    }
    if (f->len >= 80) {
        uint32_t a;
        memcpy(&a, p + 76, 4);
        if (a && a < 0x10000)
            return (uint16_t)a;
    }
    return 0;
}
