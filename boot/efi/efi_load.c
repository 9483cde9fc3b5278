/* Puts the kernel's PT_LOAD segments at their link addresses. */
#include <efi.h>
#include <efilib.h>

#include "boot/efi/efi_loader.h"

#include <string.h>

static const char *type_name(UINT32 t)
{
    /* UEFI 2.10 s7.2.1, EFI_MEMORY_TYPE */
    static const char *const names[] = {
        "Reserved",
        "LoaderCode",
        "LoaderData",
        "BootServicesCode",
        "BootServicesData",
        "RuntimeServicesCode",
        "RuntimeServicesData",
        "Conventional",
        "Unusable",
        "ACPIReclaim",
        "ACPINVS",
        "MMIO",
        "MMIOPortSpace",
        "PalCode",
        "Persistent",
    };
    return t < sizeof(names) / sizeof(names[0]) ? names[t] : "vendor-specific";
}

/* Names what the firmware has in [base, end) so "range taken" says by whom. */
static void print_users(uint64_t base, uint64_t end, const EFI_LOADED_IMAGE *self)
{
    uint64_t self_lo = (uintptr_t)self->ImageBase, self_hi = self_lo + self->ImageSize;
    if (self_lo < end && self_hi > base)
        Print(L"vnperf.efi:   the firmware loaded vnperf.efi itself at 0x%lx-0x%lx; with more "
              L"guest memory it loads it higher\n",
              self_lo, self_hi);
    UINTN entries, key, dsize;
    UINT32 dver;
    EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&entries, &key, &dsize, &dver);
    if (!map)
        return;
    for (UINTN i = 0; i < entries; i++) {
        EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + i * dsize);
        uint64_t lo = d->PhysicalStart, hi = lo + d->NumberOfPages * EFI_PAGE_SIZE;
        if (lo < end && hi > base && d->Type != EfiConventionalMemory)
            Print(L"vnperf.efi:   0x%lx-0x%lx is firmware memory (%a)\n", lo, hi,
                  type_name(d->Type));
    }
    FreePool(map);
}

static void free_ranges(const struct efi_elf_image *img, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        uefi_call_wrapper(BS->FreePages, 2, img->range[i].base, img->range[i].pages);
}

void efi_free_kernel(const struct efi_elf_image *img)
{
    free_ranges(img, img->nrange);
}

EFI_STATUS efi_load_kernel(const void *elf, const struct efi_elf_image *img,
                           const EFI_LOADED_IMAGE *self)
{
    for (unsigned i = 0; i < img->nrange; i++) {
        EFI_PHYSICAL_ADDRESS addr = img->range[i].base;
        /* LoaderCode: firmware NX policies may cover LoaderData, and the
         * kernel runs from here on the firmware's page tables at first. */
        EFI_STATUS st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress, EfiLoaderCode,
                                          img->range[i].pages, &addr);
        if (EFI_ERROR(st)) {
            uint64_t end = img->range[i].base + img->range[i].pages * EFI_PAGE_SIZE;
            Print(L"vnperf.efi: error: kernel range 0x%lx-0x%lx is not free (%r)\n",
                  img->range[i].base, end, st);
            print_users(img->range[i].base, end, self);
            free_ranges(img, i);
            return st;
        }
    }
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct efi_elf_seg *s = &img->seg[i];
        void *dst = (void *)(uintptr_t)s->paddr;
        memcpy(dst, (const UINT8 *)elf + s->offset, s->filesz);
        memset((UINT8 *)dst + s->filesz, 0, s->memsz - s->filesz);
    }
    return EFI_SUCCESS;
}
