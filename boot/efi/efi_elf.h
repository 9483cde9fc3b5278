/* The kernel ELF the loader carries: validation and the page ranges its
 * PT_LOAD segments need. Pure code, no firmware calls, so the host unit
 * tests run it on hand-made images. */
#ifndef VN_EFI_ELF_H
#define VN_EFI_ELF_H

#include <stddef.h>
#include <stdint.h>

#define EFI_ELF_MAX_SEGS 16
#define EFI_ELF_PAGE     4096u

struct efi_elf_seg {
    uint64_t paddr;  /* == vaddr: the kernel runs identity mapped */
    uint64_t filesz; /* bytes copied from the image */
    uint64_t memsz;  /* filesz..memsz is zero-filled (bss) */
    uint64_t offset; /* of the bytes in the image */
};

/* A page-aligned physical range to allocate; overlapping or touching
 * segments share one. */
struct efi_elf_range {
    uint64_t base;
    uint64_t pages;
};

struct efi_elf_image {
    uint64_t entry;
    unsigned nseg;
    struct efi_elf_seg seg[EFI_ELF_MAX_SEGS];
    unsigned nrange;
    struct efi_elf_range range[EFI_ELF_MAX_SEGS];
};

/* Checks everything the loader relies on (magic, class, byte order,
 * machine, type, header and segment bounds, overlap, entry inside a loaded
 * executable segment) and fills out. Returns 0, or -EINVAL with a reason
 * in *why. */
int efi_elf_parse(const void *img, size_t size, struct efi_elf_image *out, const char **why);

#endif
