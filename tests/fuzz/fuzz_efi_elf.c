/* boot/efi/efi_elf.c: any image. What it accepts must be safe to copy:
 * segment data inside the image, page ranges that cover every segment
 * without wrapping, no overlap, the entry in an executable segment. */
#include <errno.h>

#include "boot/efi/efi_elf.h"
#include "tests/fuzz/fuzz.h"

typedef unsigned __int128 u128;

static void check_image(const struct efi_elf_image *im, size_t size)
{
    FUZZ_CHECK(im->nseg >= 1 && im->nseg <= EFI_ELF_MAX_SEGS);
    FUZZ_CHECK(im->nrange >= 1 && im->nrange <= im->nseg);
    bool entry_in = false;
    for (unsigned i = 0; i < im->nseg; i++) {
        const struct efi_elf_seg *s = &im->seg[i];
        FUZZ_CHECK(s->memsz > 0 && s->filesz <= s->memsz);
        FUZZ_CHECK((u128)s->offset + s->filesz <= size);
        FUZZ_CHECK((u128)s->paddr + s->memsz + EFI_ELF_PAGE <= (u128)UINT64_MAX + 1);
        if (i)
            FUZZ_CHECK((u128)im->seg[i - 1].paddr + im->seg[i - 1].memsz <= s->paddr);
        entry_in |= im->entry >= s->paddr && im->entry - s->paddr < s->memsz;
        /* Covered by one range. */
        bool covered = false;
        for (unsigned r = 0; r < im->nrange; r++) {
            u128 lo = im->range[r].base, hi = lo + (u128)im->range[r].pages * EFI_ELF_PAGE;
            covered |= lo <= s->paddr && (u128)s->paddr + s->memsz <= hi;
        }
        FUZZ_CHECK(covered);
    }
    FUZZ_CHECK(entry_in);
    for (unsigned r = 0; r < im->nrange; r++) {
        const struct efi_elf_range *g = &im->range[r];
        FUZZ_CHECK(g->pages > 0 && g->base % EFI_ELF_PAGE == 0);
        FUZZ_CHECK((u128)g->base + (u128)g->pages * EFI_ELF_PAGE <= (u128)UINT64_MAX + 1);
        if (r)
            FUZZ_CHECK((u128)im->range[r - 1].base + (u128)im->range[r - 1].pages * EFI_ELF_PAGE <
                       g->base);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 65536)
        return 0;
    /* Exactly n bytes, so ASan sees a read past the image. */
    uint8_t *img = malloc(n ? n : 1);
    if (!img)
        abort();
    memcpy(img, data, n);
    struct efi_elf_image im;
    const char *why = NULL;
    int rc = efi_elf_parse(img, n, &im, &why);
    if (rc == 0)
        check_image(&im, n);
    else
        FUZZ_CHECK(rc == -EINVAL && why && why[0]);
    free(img);
    return 0;
}
