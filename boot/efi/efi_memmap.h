/* The UEFI memory map as boot_info regions. Pure code: host unit tests
 * feed it hand-made maps. */
#ifndef VN_EFI_MEMMAP_H
#define VN_EFI_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/boot_info.h"

/* What a UEFI memory type becomes once boot services are gone. */
uint32_t efi_memmap_type(uint32_t efi_type);

/* Sorts the descriptors in map (in place), converts and merges touching
 * regions of the same kind into bi->mem/bi->nmem. Returns 0, -EINVAL for a
 * malformed map (bad descriptor size, wrapping or overlapping ranges), or
 * -ENOSPC when more than BOOT_MEM_MAX regions remain after merging. */
int efi_memmap_convert(void *map, size_t map_size, size_t desc_size, struct boot_info *bi);

#endif
