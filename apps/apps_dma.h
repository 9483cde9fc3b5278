/* Frame memory for apps that build their own frames. A separate unit
 * because kernel/mem.h and lwIP's mem.h both declare mem_init(). */
#ifndef VN_APPS_DMA_H
#define VN_APPS_DMA_H

#include <stddef.h>

/* Zeroed, contiguous, device-visible; out of memory ends the run. */
void *apps_alloc_dma(size_t bytes, size_t align);

#endif
