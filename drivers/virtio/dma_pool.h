/* A device's queue memory, kept for its next bring-up. mem_alloc_dma never
 * frees, so a driver that resets its device and negotiates again (virtio
 * 1.2 s2.4, s3.1.1) would take its queues' memory once per bring-up; with
 * a pool, what the last bring-up took is handed back in one go once the
 * device is reset (it no longer reads or writes it) and the next one
 * takes its blocks again, new memory only where none fits. */
#ifndef VN_DMA_POOL_H
#define VN_DMA_POOL_H

#include <stdbool.h>
#include <stddef.h>

/* Blocks one bring-up takes: per queue pair two virtqueues (5 blocks
 * each), 4 RX and 4 TX arrays and 2 for bound TX slots; the control
 * queue's 7 and RSS's 1. */
#define DMA_POOL_BLOCKS (8 * (2 * 5 + 10) + 8 + 8)

struct dma_block {
    void *p;
    size_t bytes;
    bool taken;
};

struct dma_pool {
    unsigned n;
    struct dma_block b[DMA_POOL_BLOCKS];
};

/* Zeroed, aligned to align (a power of two): the smallest free block that
 * fits, else new memory (mem_alloc_dma, kept in the pool while it has
 * room). pool NULL: mem_alloc_dma alone. */
void *dma_pool_alloc(struct dma_pool *pool, size_t bytes, size_t align);

/* Every block free again: only once the device that used them is reset. */
void dma_pool_release(struct dma_pool *pool);

#endif
