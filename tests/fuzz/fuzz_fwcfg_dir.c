/* kernel/fwcfg_dir.c: the fw_cfg file directory. Input: a length byte,
 * that many bytes of the name looked up, then the directory item as the
 * device returns it (0 past its end, as QEMU does). A hit must be the
 * first entry whose NUL-terminated name equals the lookup, and the walk
 * reads at most the count and FWCFG_FILES_MAX entries. */
#include <errno.h>

#include "kernel/fwcfg_dir.h"
#include "tests/fuzz/fuzz.h"

struct item {
    const uint8_t *p;
    size_t n, off;
};

static void item_read(void *ctx, void *buf, size_t len)
{
    struct item *it = ctx;
    FUZZ_CHECK(it->off <= 4 + (size_t)FWCFG_FILES_MAX * 64 && len <= 64);
    for (size_t i = 0; i < len; i++, it->off++)
        ((uint8_t *)buf)[i] = it->off < it->n ? it->p[it->off] : 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The entry the walk stopped at (off is just past it) is the lookup. */
static void check_hit(const struct item *it, const char *name, uint16_t sel, uint32_t size)
{
    FUZZ_CHECK(it->off >= 4 + 64 && (it->off - 4) % 64 == 0);
    uint8_t e[64] = {0};
    for (size_t i = 0; i < 64; i++) {
        size_t o = it->off - 64 + i;
        e[i] = o < it->n ? it->p[o] : 0;
    }
    FUZZ_CHECK(be32(e) == size && (e[4] << 8 | e[5]) == sel);
    FUZZ_CHECK(sel >= FWCFG_FILE_FIRST && sel <= FWCFG_ENTRY_MAX);
    size_t len = strlen(name);
    FUZZ_CHECK(len < FWCFG_NAME_LEN && memcmp(e + 8, name, len + 1) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 1 || n - 1 < data[0] % 64)
        return 0;
    size_t nl = data[0] % 64;
    char *name = fuzz_cstr(data + 1, nl);
    struct item it = {data + 1 + nl, n - 1 - nl, 0};
    uint16_t sel = 0;
    uint32_t size = 0;
    uint8_t count[4] = {0};
    memcpy(count, it.p, it.n < 4 ? it.n : 4);
    int rc = fwcfg_dir_find(item_read, &it, name, &sel, &size);
    FUZZ_CHECK(rc == 0 || rc == -ENOENT || rc == -EINVAL);
    if (rc == 0)
        check_hit(&it, name, sel, size);
    else if (rc == -ENOENT)
        FUZZ_CHECK(it.off == 4 + (size_t)be32(count) * 64);
    else
        FUZZ_CHECK(it.off == 4 || it.off % 64 == 4);
    free(name);
    return 0;
}
