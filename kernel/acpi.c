/* Just enough ACPI to find tables (MCFG for PCI ECAM, FADT for the PM
 * timer). The walk itself is acpi_walk.c; this file finds the RSDP and
 * says which memory the tables may lie in: the low 4 GiB the boot-time
 * identity map always covers (boot/paging.c), where QEMU puts them. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/acpi_walk.h"
#include "kernel/io.h"

#define LOW_4G 0x100000000ull

static struct acpi_root root;

static const void *low_map(void *ctx, uint64_t pa, uint64_t len)
{
    (void)ctx;
    if (pa >= LOW_4G || len > LOW_4G - pa)
        return NULL;
    return (const void *)(uintptr_t)pa;
}

static const struct acpi_mem low_mem = {low_map, NULL};

/* ACPI 6.4 s5.2.5.1: on a 16-byte boundary in the given range. */
static const void *rsdp_scan(uintptr_t lo, uintptr_t hi)
{
    for (uintptr_t a = lo; a + ACPI_RSDP_V1_LEN <= hi; a += 16)
        if (acpi_rsdp_ok((const void *)a, hi - a))
            return (const void *)a;
    return NULL;
}

int acpi_init(uint64_t rsdp_pa)
{
    const void *r = NULL;

    if (rsdp_pa) {
        r = low_map(NULL, rsdp_pa, ACPI_RSDP_V2_LEN);
        if (r && !acpi_rsdp_ok(r, ACPI_RSDP_V2_LEN))
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
    return acpi_root_from_rsdp(&low_mem, r, &root);
}

const struct acpi_sdt_hdr *acpi_find_table(const char sig[4])
{
    return acpi_root_find(&low_mem, &root, sig);
}

const struct acpi_sdt_hdr *acpi_table_at(uint64_t pa, const char sig[4])
{
    const struct acpi_sdt_hdr *h = pa ? acpi_sdt_at(&low_mem, pa) : NULL;
    return h && memcmp(h->sig, sig, 4) == 0 ? h : NULL;
}

uint16_t acpi_pm_timer_port(void)
{
    const struct acpi_sdt_hdr *f = acpi_find_table("FACP");
    return f ? acpi_fadt_pm_timer(f) : 0;
}
