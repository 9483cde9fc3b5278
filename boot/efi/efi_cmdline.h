/* The image's load options (UCS-2, from the boot entry or the EFI shell)
 * as the ASCII config line for boot_info.cmdline. Pure code. */
#ifndef VN_EFI_CMDLINE_H
#define VN_EFI_CMDLINE_H

#include <stddef.h>
#include <stdint.h>

/* Converts bytes of UCS-2 text at opts into out (NUL-terminated). The EFI
 * shell passes the command it ran as the first word; when that word names
 * image_path (the image's file path, UCS-2, NUL-terminated, may be NULL),
 * it is dropped. Returns 0; -EINVAL when the options are not printable
 * ASCII text (boot entries may carry binary data there); -E2BIG when the
 * line does not fit in outlen. */
int efi_cmdline_convert(const void *opts, size_t bytes, const uint16_t *image_path, char *out,
                        size_t outlen);

#endif
