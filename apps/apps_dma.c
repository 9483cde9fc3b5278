#include "apps/apps_dma.h"

#include "kernel/mem.h"

void *apps_alloc_dma(size_t bytes, size_t align)
{
    return mem_alloc_dma(bytes, align);
}
