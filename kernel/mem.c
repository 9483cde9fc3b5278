/* Physical memory: the arena over the firmware's map, newlib's sbrk, and
 * DMA-able allocations for the drivers. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kernel/boot_info.h"
#include "kernel/exit.h"
#include "kernel/mem.h"
#include "kernel/mem_arena.h"

static struct mem_arena arena;
static uint64_t heap_high;

void mem_init(const struct boot_info *bi)
{
    extern char __kernel_start[], __kernel_end[];
    const struct mem_range excl[] = {
        /* real-mode area, BIOS data, PVH start_info and command line */
        {0, 0x100000},
        {(uint64_t)(uintptr_t)__kernel_start,
         (uint64_t)(uintptr_t)__kernel_end - (uint64_t)(uintptr_t)__kernel_start},
    };
    if (arena_init(&arena, bi->mem, bi->nmem, excl, sizeof(excl) / sizeof(excl[0])) < 0)
        vn_fatal(VN_EXIT_OOM, "memory: the firmware reported no usable RAM (%u regions)", bi->nmem);
    heap_high = arena.lo;
}

void *mem_alloc_dma(size_t bytes, size_t align)
{
    if (align < 16)
        align = 16;
    uint64_t p = arena_alloc_top(&arena, bytes, align);
    if (!p)
        vn_fatal(VN_EXIT_OOM, "out of memory: DMA allocation of %zu bytes (free %llu bytes)", bytes,
                 (unsigned long long)(arena.top - arena.brk));
    memset((void *)(uintptr_t)p, 0, bytes);
    return (void *)(uintptr_t)p;
}

/* newlib 3.3's mallocr.c returns int fields (40 bytes) while its malloc.h
 * declares size_t ones: through the header, uordblks is read from past the
 * struct the library wrote. Declared here as the library defines it. */
struct newlib_mallinfo {
    int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
struct newlib_mallinfo mallinfo(void);

void mem_get_stats(struct mem_stats *s)
{
    s->ram_total = arena.ram_total;
    s->heap_used = heap_high - arena.lo;
    s->heap_in_use = (uint64_t)(unsigned)mallinfo().uordblks;
    s->pages_used = arena.hi - arena.top;
    s->free = arena.top - arena.brk;
}

/* newlib: malloc's source of memory. Failure sets ENOMEM and malloc
 * returns NULL; callers that cannot cope end with VN_EXIT_OOM. */
void *sbrk(ptrdiff_t incr)
{
    uint64_t old = arena_sbrk(&arena, incr);
    if (old == UINT64_MAX) {
        errno = ENOMEM;
        return (void *)-1;
    }
    if (arena.brk > heap_high)
        heap_high = arena.brk;
    return (void *)(uintptr_t)old;
}
