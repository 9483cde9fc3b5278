/* Physical memory. The kernel identity maps all RAM, so a physical address
 * is also a pointer: what the allocator returns can go straight into a
 * virtqueue descriptor. */
#ifndef VN_MEM_H
#define VN_MEM_H

#include <stddef.h>
#include <stdint.h>

#define PAGE_SIZE 4096u

struct boot_info;

void mem_init(const struct boot_info *bi);

/* Zeroed, physically contiguous, aligned to align (a power of two >= 16).
 * Never fails: out of memory ends the run with VN_EXIT_OOM. */
void *mem_alloc_dma(size_t bytes, size_t align);

/* Makes [phys, phys+len) accessible (uncached) for device registers that
 * lie outside the boot-time mapping. Returns the address to use. */
uintptr_t mem_map_mmio(uint64_t phys, uint64_t len);

static inline uint64_t mem_virt_to_phys(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

struct mem_stats {
    uint64_t ram_total;   /* bytes of RAM the firmware reported */
    uint64_t heap_used;   /* sbrk high-water mark */
    uint64_t heap_in_use; /* bytes malloc has handed out and not got back */
    uint64_t pages_used;  /* bytes handed out by mem_alloc_dma */
    uint64_t free;        /* bytes left in the arena */
};
void mem_get_stats(struct mem_stats *s);

#endif
