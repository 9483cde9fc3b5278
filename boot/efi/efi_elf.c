/* Validates the embedded kernel ELF and works out what to allocate. Every
 * field is checked against the image size before it is used: a truncated
 * or foreign image must give a reason, never a wild copy. */
#include "boot/efi/efi_elf.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

static int fail(const char **why, const char *reason)
{
    *why = reason;
    return -EINVAL;
}

static int check_header(const Elf64_Ehdr *eh, size_t size, const char **why)
{
    if (eh->e_ident[EI_MAG0] != ELFMAG0 || eh->e_ident[EI_MAG1] != ELFMAG1 ||
        eh->e_ident[EI_MAG2] != ELFMAG2 || eh->e_ident[EI_MAG3] != ELFMAG3)
        return fail(why, "not an ELF file (bad magic)");
    if (eh->e_ident[EI_CLASS] != ELFCLASS64)
        return fail(why, "not a 64-bit ELF (EI_CLASS)");
    if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
        return fail(why, "not little-endian (EI_DATA)");
    if (eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
        return fail(why, "unknown ELF version");
    if (eh->e_type != ET_EXEC)
        return fail(why, "not an executable (e_type)");
    if (eh->e_machine != EM_X86_64)
        return fail(why, "not an x86-64 image (e_machine)");
    if (eh->e_phentsize != sizeof(Elf64_Phdr))
        return fail(why, "unexpected program header size (e_phentsize)");
    if (eh->e_phnum == 0 || eh->e_phnum == PN_XNUM)
        return fail(why, "no usable program headers (e_phnum)");
    if (eh->e_phoff > size || (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
        return fail(why, "program headers run past the end of the image");
    return 0;
}

static int check_segment(const Elf64_Phdr *ph, size_t size, const char **why)
{
    if (ph->p_vaddr != ph->p_paddr)
        return fail(why, "segment with vaddr != paddr (the kernel must be identity mapped)");
    if (ph->p_filesz > ph->p_memsz)
        return fail(why, "segment with p_filesz > p_memsz");
    if (ph->p_memsz == 0)
        return fail(why, "empty PT_LOAD segment");
    if (ph->p_offset > size || size - ph->p_offset < ph->p_filesz)
        return fail(why, "segment data runs past the end of the image");
    /* Leaves room to round the end up to a page without wrapping; memsz
     * first, or the bound itself wraps. */
    if (ph->p_memsz > UINT64_MAX - EFI_ELF_PAGE ||
        ph->p_paddr > UINT64_MAX - EFI_ELF_PAGE - ph->p_memsz)
        return fail(why, "segment address range wraps around");
    return 0;
}

static void sort_segments(struct efi_elf_seg *s, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        struct efi_elf_seg cur = s[i];
        unsigned j = i;
        for (; j > 0 && s[j - 1].paddr > cur.paddr; j--)
            s[j] = s[j - 1];
        s[j] = cur;
    }
}

/* Segments are sorted; page-rounded ranges that overlap or touch merge. */
static void build_ranges(struct efi_elf_image *out)
{
    out->nrange = 0;
    for (unsigned i = 0; i < out->nseg; i++) {
        uint64_t lo = out->seg[i].paddr & ~(uint64_t)(EFI_ELF_PAGE - 1);
        uint64_t hi = (out->seg[i].paddr + out->seg[i].memsz + EFI_ELF_PAGE - 1) &
                      ~(uint64_t)(EFI_ELF_PAGE - 1);
        struct efi_elf_range *last = out->nrange ? &out->range[out->nrange - 1] : NULL;
        if (last && lo <= last->base + last->pages * EFI_ELF_PAGE) {
            uint64_t end = last->base + last->pages * EFI_ELF_PAGE;
            if (hi > end)
                last->pages = (hi - last->base) / EFI_ELF_PAGE;
            continue;
        }
        out->range[out->nrange].base = lo;
        out->range[out->nrange].pages = (hi - lo) / EFI_ELF_PAGE;
        out->nrange++;
    }
}

int efi_elf_parse(const void *img, size_t size, struct efi_elf_image *out, const char **why)
{
    const unsigned char *p = img;
    Elf64_Ehdr eh;
    int entry_ok = 0;

    memset(out, 0, sizeof(*out));
    if (size < sizeof(eh))
        return fail(why, "image smaller than an ELF header");
    memcpy(&eh, p, sizeof(eh));
    int rc = check_header(&eh, size, why);
    if (rc)
        return rc;

    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, p + eh.e_phoff + (size_t)i * sizeof(ph), sizeof(ph));
        if (ph.p_type != PT_LOAD)
            continue;
        rc = check_segment(&ph, size, why);
        if (rc)
            return rc;
        if (out->nseg == EFI_ELF_MAX_SEGS)
            return fail(why, "too many PT_LOAD segments");
        if ((ph.p_flags & PF_X) && eh.e_entry >= ph.p_vaddr && eh.e_entry - ph.p_vaddr < ph.p_memsz)
            entry_ok = 1;
        out->seg[out->nseg++] = (struct efi_elf_seg){
            .paddr = ph.p_paddr, .filesz = ph.p_filesz, .memsz = ph.p_memsz, .offset = ph.p_offset};
    }
    if (out->nseg == 0)
        return fail(why, "no PT_LOAD segments");
    if (!entry_ok)
        return fail(why, "entry point is not inside an executable PT_LOAD segment");

    sort_segments(out->seg, out->nseg);
    for (unsigned i = 1; i < out->nseg; i++)
        if (out->seg[i].paddr < out->seg[i - 1].paddr + out->seg[i - 1].memsz)
            return fail(why, "PT_LOAD segments overlap");
    build_ranges(out);
    out->entry = eh.e_entry;
    return 0;
}
