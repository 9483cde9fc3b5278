/* The fw_cfg file directory (QEMU docs/specs/fw_cfg.rst, "File
 * Directory"): a big-endian count, then 64-byte entries. Pure parsing
 * over a read callback: no port access, fuzzed on the host. */
#ifndef VN_FWCFG_DIR_H
#define VN_FWCFG_DIR_H

#include <stddef.h>
#include <stdint.h>

#define FWCFG_FILE_FIRST 0x0020 /* the first file selector */
#define FWCFG_ENTRY_MAX  0x3fff /* selector bits below the write/arch bits */
#define FWCFG_FILES_MAX  (FWCFG_ENTRY_MAX + 1 - FWCFG_FILE_FIRST)
#define FWCFG_NAME_LEN   56

/* Reads the next len bytes of the selected item (QEMU gives 0 past its
 * end). */
typedef void (*fwcfg_read_fn)(void *ctx, void *buf, size_t len);

/* Walks the directory the reader yields, starting at its count. A count
 * above FWCFG_FILES_MAX, or an entry whose name has no NUL or whose
 * selector is not a file's, is -EINVAL (nothing after it is trusted).
 * Returns 0 with the file's selector and size, -ENOENT, or -EINVAL. */
int fwcfg_dir_find(fwcfg_read_fn rd, void *ctx, const char *name, uint16_t *sel, uint32_t *size);

#endif
