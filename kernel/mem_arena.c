#include <errno.h>

#include "kernel/mem_arena.h"

#define ARENA_ALIGN 4096u

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}
static uint64_t align_down(uint64_t v, uint64_t a)
{
    return v & ~(a - 1);
}

/* Largest piece of [base, end) left after cutting out every excl range. */
static void best_piece(uint64_t base, uint64_t end, const struct mem_range *excl, unsigned nexcl,
                       unsigned from, uint64_t *bb, uint64_t *be)
{
    for (unsigned i = from; i < nexcl; i++) {
        uint64_t xb = excl[i].base, xe = excl[i].base + excl[i].len;
        if (xe <= base || xb >= end)
            continue;
        if (xb > base)
            best_piece(base, xb, excl, nexcl, i + 1, bb, be);
        if (xe < end)
            best_piece(xe, end, excl, nexcl, i + 1, bb, be);
        return;
    }
    if (end - base > *be - *bb) {
        *bb = base;
        *be = end;
    }
}

int arena_init(struct mem_arena *a, const struct boot_mem_region *mem, uint32_t nmem,
               const struct mem_range *excl, unsigned nexcl)
{
    uint64_t bb = 0, be = 0;

    a->ram_total = 0;
    for (uint32_t i = 0; i < nmem; i++) {
        if (mem[i].type != BOOT_MEM_RAM || mem[i].len == 0)
            continue;
        a->ram_total += mem[i].len;
        uint64_t b = align_up(mem[i].base, ARENA_ALIGN);
        uint64_t e = align_down(mem[i].base + mem[i].len, ARENA_ALIGN);
        if (e > b)
            best_piece(b, e, excl, nexcl, 0, &bb, &be);
    }
    if (be <= bb)
        return -ENOMEM;
    a->lo = align_up(bb, ARENA_ALIGN);
    a->hi = align_down(be, ARENA_ALIGN);
    if (a->hi <= a->lo)
        return -ENOMEM;
    a->brk = a->lo;
    a->top = a->hi;
    return 0;
}

uint64_t arena_sbrk(struct mem_arena *a, int64_t incr)
{
    uint64_t old = a->brk;
    if (incr >= 0) {
        if ((uint64_t)incr > a->top - a->brk)
            return UINT64_MAX;
    } else if ((uint64_t)-incr > a->brk - a->lo) {
        return UINT64_MAX;
    }
    a->brk += (uint64_t)incr;
    return old;
}

uint64_t arena_alloc_top(struct mem_arena *a, uint64_t bytes, uint64_t align)
{
    if (bytes == 0 || align == 0 || (align & (align - 1)) || bytes > a->top - a->brk)
        return 0;
    uint64_t p = align_down(a->top - bytes, align);
    if (p < a->brk)
        return 0;
    a->top = p;
    return p;
}
