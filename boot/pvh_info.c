/* PVH: turn Xen's hvm_start_info into the kernel's boot_info. */
#include <stdint.h>
#include <string.h>

#include "kernel/boot_info.h"
#include "kernel/fwcfg.h"

#define HVM_START_MAGIC 0x336ec578u

/* xen/include/public/arch-x86/hvm/start_info.h */
struct hvm_start_info {
    uint32_t magic;
    uint32_t version;
    uint32_t flags;
    uint32_t nr_modules;
    uint64_t modlist_paddr;
    uint64_t cmdline_paddr;
    uint64_t rsdp_paddr;
    uint64_t memmap_paddr; /* version >= 1 */
    uint32_t memmap_entries;
    uint32_t reserved;
};

struct hvm_memmap_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;
    uint32_t reserved;
};

static struct boot_info pvh_bi;

static uint32_t e820_to_boot(uint32_t t)
{
    switch (t) {
    case 1:
        return BOOT_MEM_RAM;
    case 3:
        return BOOT_MEM_ACPI;
    case 4:
        return BOOT_MEM_NVS;
    default:
        return BOOT_MEM_RESERVED;
    }
}

static void add_region(uint64_t base, uint64_t len, uint32_t e820_type)
{
    if (pvh_bi.nmem >= BOOT_MEM_MAX || len == 0)
        return;
    struct boot_mem_region *r = &pvh_bi.mem[pvh_bi.nmem++];
    r->base = base;
    r->len = len;
    r->type = e820_to_boot(e820_type);
}

/* QEMU's etc/e820 entries: the same layout as the PVH memmap. */
static void memmap_from_fwcfg(void)
{
    struct hvm_memmap_entry e;
    uint32_t size;
    uint16_t sel;

    if (fwcfg_find("etc/e820", &sel, &size) < 0)
        return;
    fwcfg_select(sel);
    for (uint32_t off = 0; off + sizeof(e) <= size; off += sizeof(e)) {
        fwcfg_read(&e, sizeof(e));
        add_region(e.addr, e.size, e.type);
    }
}

__attribute__((noreturn)) void pvh_start(uint32_t si_paddr, uint64_t tsc_boot);

void pvh_start(uint32_t si_paddr, uint64_t tsc_boot)
{
    const struct hvm_start_info *si = (const struct hvm_start_info *)(uintptr_t)si_paddr;

    pvh_bi.magic = BOOT_INFO_MAGIC;
    pvh_bi.path = BOOT_PATH_PVH;
    pvh_bi.tsc_boot = tsc_boot;
    if (si && si->magic == HVM_START_MAGIC) {
        if (si->cmdline_paddr) {
            const char *line = (const char *)(uintptr_t)si->cmdline_paddr;
            size_t n = strnlen(line, sizeof(pvh_bi.cmdline));
            if (n < sizeof(pvh_bi.cmdline))
                memcpy(pvh_bi.cmdline, line, n + 1);
            else
                pvh_bi.flags |= BOOT_F_CMDLINE_TOO_LONG;
        }
        pvh_bi.rsdp = si->rsdp_paddr;
        if (si->version >= 1 && si->memmap_paddr) {
            const struct hvm_memmap_entry *m =
                (const struct hvm_memmap_entry *)(uintptr_t)si->memmap_paddr;
            for (uint32_t i = 0; i < si->memmap_entries; i++)
                add_region(m[i].addr, m[i].size, m[i].type);
        }
    }
    if (pvh_bi.nmem == 0 && fwcfg_present())
        memmap_from_fwcfg();
    kernel_entry64(&pvh_bi);
}
