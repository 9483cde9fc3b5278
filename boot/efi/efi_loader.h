/* Pieces of the UEFI loader (boot/efi/efi_main.c is the sequence). */
#ifndef VN_EFI_LOADER_H
#define VN_EFI_LOADER_H

#include <efi.h>

#include "boot/efi/efi_elf.h"

/* One clear line on the console, then leave: under QEMU through
 * isa-debug-exit with code (kernel/exit.h), on real firmware by returning
 * the status to the boot manager. */
EFI_STATUS efi_fail(int code, EFI_STATUS st, const CHAR16 *fmt, ...);

/* Allocates every range of img at its fixed address and copies/zero-fills
 * the segments. On failure nothing stays allocated and the reason (with
 * the firmware's use of the range, self is this loader) has been printed. */
EFI_STATUS efi_load_kernel(const void *elf, const struct efi_elf_image *img,
                           const EFI_LOADED_IMAGE *self);

/* Gives the pages efi_load_kernel() took back (boot services only). */
void efi_free_kernel(const struct efi_elf_image *img);

#endif
