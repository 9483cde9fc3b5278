/* fw_cfg file directory walk (QEMU docs/specs/fw_cfg.rst). */
#include "kernel/fwcfg_dir.h"

#include <errno.h>
#include <string.h>

struct fwcfg_file {
    uint32_t size; /* big-endian, as every field */
    uint16_t select;
    uint16_t reserved;
    char name[FWCFG_NAME_LEN];
};
_Static_assert(sizeof(struct fwcfg_file) == 64, "fw_cfg.rst: FWCfgFile is 64 bytes");

/* A name is NUL-terminated within its 56 bytes: one that fills them would
 * otherwise match a lookup of its first 55. */
static int entry_ok(const struct fwcfg_file *f, uint16_t sel)
{
    return memchr(f->name, '\0', sizeof(f->name)) && sel >= FWCFG_FILE_FIRST &&
           sel <= FWCFG_ENTRY_MAX;
}

int fwcfg_dir_find(fwcfg_read_fn rd, void *ctx, const char *name, uint16_t *sel, uint32_t *size)
{
    uint32_t count;
    struct fwcfg_file f;

    rd(ctx, &count, sizeof(count));
    count = __builtin_bswap32(count);
    if (count > FWCFG_FILES_MAX)
        return -EINVAL;
    for (uint32_t i = 0; i < count; i++) {
        rd(ctx, &f, sizeof(f));
        uint16_t s = __builtin_bswap16(f.select);
        if (!entry_ok(&f, s))
            return -EINVAL;
        if (strcmp(f.name, name) == 0) {
            *sel = s;
            *size = __builtin_bswap32(f.size);
            return 0;
        }
    }
    return -ENOENT;
}
