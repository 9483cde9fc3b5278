/* See dma_pool.h. */
#include "drivers/virtio/dma_pool.h"

#include <stdint.h>
#include <string.h>

#include "kernel/mem.h"

static struct dma_block *dma_pool_fit(struct dma_pool *pool, size_t bytes, size_t align)
{
    struct dma_block *best = NULL;
    for (unsigned i = 0; i < pool->n; i++) {
        struct dma_block *b = &pool->b[i];
        if (b->taken || b->bytes < bytes || ((uintptr_t)b->p & (align - 1)))
            continue;
        if (!best || b->bytes < best->bytes)
            best = b;
    }
    return best;
}

void *dma_pool_alloc(struct dma_pool *pool, size_t bytes, size_t align)
{
    if (!pool)
        return mem_alloc_dma(bytes, align);
    struct dma_block *b = dma_pool_fit(pool, bytes, align);
    if (b) {
        b->taken = true;
        memset(b->p, 0, b->bytes);
        return b->p;
    }
    void *p = mem_alloc_dma(bytes, align);
    if (pool->n < DMA_POOL_BLOCKS)
        pool->b[pool->n++] = (struct dma_block){p, bytes, true};
    return p;
}

void dma_pool_release(struct dma_pool *pool)
{
    for (unsigned i = 0; i < pool->n; i++)
        pool->b[i].taken = false;
}
