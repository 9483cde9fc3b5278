/* The arena: one contiguous range of free RAM. The heap (sbrk) grows up
 * from its bottom, DMA allocations come down from its top; out of memory
 * is when they would meet. Pure logic, unit-tested on the host. */
#ifndef VN_MEM_ARENA_H
#define VN_MEM_ARENA_H

#include <stdint.h>

#include "kernel/boot_info.h"

struct mem_arena {
    uint64_t lo, hi; /* [lo, hi) */
    uint64_t brk;    /* heap end, grows up */
    uint64_t top;    /* lowest DMA allocation, grows down */
    uint64_t ram_total;
};

struct mem_range {
    uint64_t base, len;
};

/* Picks the largest RAM range that avoids every range in excl. Returns 0
 * or -ENOMEM when there is no usable RAM. */
int arena_init(struct mem_arena *a, const struct boot_mem_region *mem, uint32_t nmem,
               const struct mem_range *excl, unsigned nexcl);

/* sbrk semantics: the old break, or UINT64_MAX when it does not fit. */
uint64_t arena_sbrk(struct mem_arena *a, int64_t incr);

/* Aligned block from the top: its address, or 0 when it does not fit.
 * align must be a power of two. */
uint64_t arena_alloc_top(struct mem_arena *a, uint64_t bytes, uint64_t align);

#endif
