/* UEFI memory map -> boot_info regions. Types follow UEFI 2.10 s7.2.1,
 * "Memory Type Usage after ExitBootServices()". */
#include "boot/efi/efi_memmap.h"

#include <efi/efi.h>
#include <errno.h>
#include <string.h>

#define EFI_PAGE 4096u

uint32_t efi_memmap_type(uint32_t efi_type)
{
    switch (efi_type) {
    /* Loader and boot services memory is free once boot services exit; the
     * kernel keeps its own image and copies boot_info before reusing any. */
    case EfiLoaderCode:
    case EfiLoaderData:
    case EfiBootServicesCode:
    case EfiBootServicesData:
    case EfiConventionalMemory:
        return BOOT_MEM_RAM;
    case EfiACPIReclaimMemory:
        return BOOT_MEM_ACPI;
    case EfiACPIMemoryNVS:
        return BOOT_MEM_NVS;
    default:
        /* Runtime services, MMIO, unusable, persistent and unknown types. */
        return BOOT_MEM_RESERVED;
    }
}

static EFI_MEMORY_DESCRIPTOR *desc_at(void *map, size_t desc_size, size_t i)
{
    return (EFI_MEMORY_DESCRIPTOR *)((unsigned char *)map + i * desc_size);
}

/* Insertion sort: firmware maps are short and usually already sorted. The
 * descriptor is at least sizeof(EFI_MEMORY_DESCRIPTOR) and may be longer,
 * so whole descriptors are moved via a bounded scratch buffer. */
static int sort_map(void *map, size_t n, size_t desc_size)
{
    unsigned char tmp[256];
    if (desc_size > sizeof(tmp))
        return -EINVAL;
    for (size_t i = 1; i < n; i++) {
        memcpy(tmp, desc_at(map, desc_size, i), desc_size);
        EFI_PHYSICAL_ADDRESS key = ((EFI_MEMORY_DESCRIPTOR *)tmp)->PhysicalStart;
        size_t j = i;
        for (; j > 0 && desc_at(map, desc_size, j - 1)->PhysicalStart > key; j--)
            memcpy(desc_at(map, desc_size, j), desc_at(map, desc_size, j - 1), desc_size);
        memcpy(desc_at(map, desc_size, j), tmp, desc_size);
    }
    return 0;
}

int efi_memmap_convert(void *map, size_t map_size, size_t desc_size, struct boot_info *bi)
{
    /* UEFI 2.10 s7.2.3: DescriptorSize may grow; never assume the struct size. */
    if (desc_size < sizeof(EFI_MEMORY_DESCRIPTOR) || desc_size % 8 != 0)
        return -EINVAL;
    size_t n = map_size / desc_size;
    if (sort_map(map, n, desc_size))
        return -EINVAL;

    uint64_t prev_end = 0;
    bi->nmem = 0;
    for (size_t i = 0; i < n; i++) {
        EFI_MEMORY_DESCRIPTOR d;
        memcpy(&d, desc_at(map, desc_size, i), sizeof(d));
        if (d.NumberOfPages == 0)
            continue;
        if (d.NumberOfPages > (UINT64_MAX - d.PhysicalStart) / EFI_PAGE)
            return -EINVAL;
        uint64_t base = d.PhysicalStart, len = d.NumberOfPages * EFI_PAGE;
        if (bi->nmem && base < prev_end)
            return -EINVAL;
        prev_end = base + len;

        uint32_t type = efi_memmap_type(d.Type);
        struct boot_mem_region *last = bi->nmem ? &bi->mem[bi->nmem - 1] : NULL;
        if (last && last->type == type && last->base + last->len == base) {
            last->len += len;
            continue;
        }
        if (bi->nmem == BOOT_MEM_MAX)
            return -ENOSPC;
        bi->mem[bi->nmem++] = (struct boot_mem_region){.base = base, .len = len, .type = type};
    }
    return 0;
}
