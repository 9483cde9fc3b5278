/* The pure decisions of AP start: where the trampoline goes, which CPUs. */
#include <errno.h>

#include "kernel/smp.h"

#define PAGE 4096u

uint64_t smp_tramp_page(const struct boot_mem_region *m, unsigned n, size_t bytes)
{
    if (bytes == 0 || bytes > PAGE)
        return 0;
    uint64_t best = 0;
    for (unsigned i = 0; i < n; i++) {
        if (m[i].type != BOOT_MEM_RAM || m[i].base >= SMP_TRAMP_HI)
            continue;
        uint64_t end = m[i].base + m[i].len;
        if (end < m[i].base) /* wraps: a lying map */
            continue;
        uint64_t p = (m[i].base + PAGE - 1) & ~(uint64_t)(PAGE - 1);
        if (p < SMP_TRAMP_LO)
            p = SMP_TRAMP_LO;
        if (p + bytes > end || p + PAGE > SMP_TRAMP_HI)
            continue;
        if (!best || p < best)
            best = p;
    }
    return best;
}

int smp_pick(const uint32_t *ids, unsigned n, uint32_t bsp, unsigned want, uint32_t *out)
{
    unsigned k = 0;
    if (want == 0 || want > SMP_MAX_CPUS)
        return -ERANGE;
    out[k++] = bsp;
    for (unsigned i = 0; i < n && k < want; i++)
        if (ids[i] != bsp)
            out[k++] = ids[i];
    return k == want ? (int)want : -ERANGE;
}
