/* The ELF note that makes an image PVH-bootable (QEMU -kernel reads it:
 * Xen's XEN_ELFNOTE_PHYS32_ENTRY, the 32-bit entry's physical address).
 * For assembly: PVH_NOTE(symbol) emits it in its own .note.Xen section. */
#ifndef VN_PVH_NOTE_H
#define VN_PVH_NOTE_H

#define XEN_ELFNOTE_PHYS32_ENTRY 18

/* clang-format off */
#define PVH_NOTE(entry)                                 \
    .pushsection .note.Xen, "a";                        \
    .p2align 2;                                         \
    .long 2f - 1f;          /* namesz */                \
    .long 4f - 3f;          /* descsz */                \
    .long XEN_ELFNOTE_PHYS32_ENTRY;                     \
1:  .asciz "Xen";                                       \
2:  .p2align 2;                                         \
3:  .long entry;                                        \
4:  .p2align 2;                                         \
    .popsection
/* clang-format on */

#endif
