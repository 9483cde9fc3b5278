/* kernel/fwcfg_dir.c: the fw_cfg file directory walk over an in-memory
 * item (QEMU docs/specs/fw_cfg.rst). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/fwcfg_dir.h"

struct item {
    uint8_t b[4 + 4 * 64];
    size_t off;
};

/* QEMU yields 0 past the end of an item. */
static void item_read(void *ctx, void *buf, size_t len)
{
    struct item *it = ctx;
    for (size_t i = 0; i < len; i++, it->off++)
        ((uint8_t *)buf)[i] = it->off < sizeof(it->b) ? it->b[it->off] : 0;
}

static void put_be(uint8_t *p, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> 8 * (n - 1 - i));
}

static void item_init(struct item *it, uint32_t count)
{
    memset(it, 0, sizeof(*it));
    put_be(it->b, count, 4);
}

static void item_entry(struct item *it, int i, uint32_t size, uint16_t sel, const char *name)
{
    uint8_t *e = it->b + 4 + 64 * i;
    put_be(e, size, 4);
    put_be(e + 4, sel, 2);
    memcpy(e + 8, name, strnlen(name, FWCFG_NAME_LEN));
}

static void test_finds_file(void **state)
{
    (void)state;
    struct item it;
    uint16_t sel = 0;
    uint32_t size = 0;
    item_init(&it, 3);
    item_entry(&it, 0, 80, 0x20, "etc/e820");
    item_entry(&it, 1, 36, 0x21, "etc/acpi/rsdp");
    item_entry(&it, 2, 24, 0x22, "opt/vnperf/config");
    assert_int_equal(fwcfg_dir_find(item_read, &it, "opt/vnperf/config", &sel, &size), 0);
    assert_int_equal(sel, 0x22);
    assert_int_equal(size, 24);
    it.off = 0;
    assert_int_equal(fwcfg_dir_find(item_read, &it, "etc/e", &sel, &size), -ENOENT);
    assert_int_equal(it.off, 4 + 3 * 64);
}

/* A count of 2^32-1 read 2^38 bytes through the port at boot: a hang. */
static void test_count_too_large(void **state)
{
    (void)state;
    struct item it;
    uint16_t sel;
    uint32_t size;
    item_init(&it, 0xffffffffu);
    assert_int_equal(fwcfg_dir_find(item_read, &it, "etc/e820", &sel, &size), -EINVAL);
    assert_int_equal(it.off, 4);
    item_init(&it, FWCFG_FILES_MAX + 1);
    assert_int_equal(fwcfg_dir_find(item_read, &it, "etc/e820", &sel, &size), -EINVAL);
}

/* A name filling all 56 bytes has no NUL: it matched a lookup of its
 * first 55 bytes. */
static void test_name_without_nul(void **state)
{
    (void)state;
    char full[FWCFG_NAME_LEN + 1], prefix[FWCFG_NAME_LEN];
    memset(full, 'a', FWCFG_NAME_LEN);
    full[FWCFG_NAME_LEN] = '\0';
    memcpy(prefix, full, FWCFG_NAME_LEN - 1);
    prefix[FWCFG_NAME_LEN - 1] = '\0';
    struct item it;
    uint16_t sel = 0;
    uint32_t size = 0;
    item_init(&it, 2);
    item_entry(&it, 0, 8, 0x20, full);
    item_entry(&it, 1, 8, 0x21, prefix);
    assert_int_equal(fwcfg_dir_find(item_read, &it, prefix, &sel, &size), -EINVAL);
    assert_int_equal(sel, 0);
}

/* Selectors below FW_CFG_FILE_FIRST are the fixed items (signature,
 * kernel, ...), not files; the write and arch bits are not a key. */
static void test_bad_selector(void **state)
{
    (void)state;
    struct item it;
    uint16_t sel;
    uint32_t size;
    static const uint16_t bad[] = {0x0000, 0x0019, 0x001f, 0x4020, 0x8020};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        item_init(&it, 1);
        item_entry(&it, 0, 8, bad[i], "etc/e820");
        assert_int_equal(fwcfg_dir_find(item_read, &it, "etc/e820", &sel, &size), -EINVAL);
    }
    item_init(&it, 1);
    item_entry(&it, 0, 8, FWCFG_ENTRY_MAX, "etc/e820");
    assert_int_equal(fwcfg_dir_find(item_read, &it, "etc/e820", &sel, &size), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_file),
        cmocka_unit_test(test_count_too_large),
        cmocka_unit_test(test_name_without_nul),
        cmocka_unit_test(test_bad_selector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
