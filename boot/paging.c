/* Identity-mapped page tables with 2 MiB pages: all RAM the firmware
 * reported plus the low 4 GiB (where firmware puts most device BARs);
 * anything else a driver needs is added by mem_map_mmio(). Memory that is
 * not RAM is mapped uncached. */
#include <stdint.h>
#include <string.h>

#include "boot/cpu.h"
#include "kernel/exit.h"
#include "kernel/mem.h"

#define PTE_P    0x001ull
#define PTE_RW   0x002ull
#define PTE_PWT  0x008ull
#define PTE_PCD  0x010ull
#define PTE_PS   0x080ull
#define PTE_ADDR 0x000ffffffffff000ull

#define SZ_2M      0x200000ull
#define SZ_4G      0x100000000ull
#define POOL_PAGES 80 /* PML4 + PDPTs + PDs: 64 GiB of RAM plus a few MMIO holes */

static uint64_t pt_pool[POOL_PAGES][512] __attribute__((aligned(4096)));
static unsigned pt_used;
static uint64_t *pml4;
static const struct boot_info *pg_bi;

static uint64_t *pt_new(void)
{
    if (pt_used >= POOL_PAGES)
        vn_fatal(VN_EXIT_OOM, "paging: page-table pool (%u pages) exhausted", POOL_PAGES);
    uint64_t *t = pt_pool[pt_used++];
    memset(t, 0, 4096);
    return t;
}

static uint64_t *pt_next(uint64_t *t, unsigned idx)
{
    if (!(t[idx] & PTE_P))
        t[idx] = (uint64_t)(uintptr_t)pt_new() | PTE_P | PTE_RW;
    return (uint64_t *)(uintptr_t)(t[idx] & PTE_ADDR);
}

static int overlaps_ram(uint64_t base, uint64_t len)
{
    for (uint32_t i = 0; i < pg_bi->nmem; i++) {
        const struct boot_mem_region *r = &pg_bi->mem[i];
        if (r->type == BOOT_MEM_RESERVED)
            continue;
        if (r->base < base + len && base < r->base + r->len)
            return 1;
    }
    return 0;
}

static void map_2m(uint64_t addr)
{
    uint64_t *pdpt = pt_next(pml4, (addr >> 39) & 511);
    uint64_t *pd = pt_next(pdpt, (addr >> 30) & 511);
    uint64_t *e = &pd[(addr >> 21) & 511];
    if (*e & PTE_P)
        return;
    uint64_t flags = PTE_P | PTE_RW | PTE_PS;
    if (!overlaps_ram(addr, SZ_2M))
        flags |= PTE_PCD | PTE_PWT;
    *e = addr | flags;
}

static void load_cr3(void)
{
    __asm__ volatile("mov %0, %%cr3" : : "r"((uint64_t)(uintptr_t)pml4) : "memory");
}

void paging_init(const struct boot_info *bi)
{
    uint64_t top = SZ_4G;

    pg_bi = bi;
    pml4 = pt_new();
    for (uint32_t i = 0; i < bi->nmem; i++) {
        const struct boot_mem_region *r = &bi->mem[i];
        if (r->type != BOOT_MEM_RESERVED && r->base + r->len > top)
            top = r->base + r->len;
    }
    for (uint64_t a = 0; a < top; a += SZ_2M)
        map_2m(a);
    load_cr3();
}

uintptr_t mem_map_mmio(uint64_t phys, uint64_t len)
{
    if (len == 0 || phys + len < phys || phys + len > (1ull << 46))
        vn_fatal(VN_EXIT_DEVICE, "paging: bad MMIO range 0x%llx+0x%llx", (unsigned long long)phys,
                 (unsigned long long)len);
    for (uint64_t a = phys & ~(SZ_2M - 1); a < phys + len; a += SZ_2M)
        map_2m(a);
    load_cr3();
    return (uintptr_t)phys;
}
