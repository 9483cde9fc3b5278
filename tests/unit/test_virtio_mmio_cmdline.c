/* drivers/virtio/virtio_mmio_cmdline.c: virtio_mmio.device= words. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtio_mmio_cmdline.h"

static int parse(const char *w, struct vm_word *v)
{
    return vm_word_parse(w, strlen(w), v);
}

static void test_qemu_words(void **state)
{
    (void)state;
    struct vm_word v;
    assert_int_equal(parse("virtio_mmio.device=512@0xfeb00e00:12", &v), 0);
    assert_true(v.size == 512 && v.base == 0xfeb00e00u && v.gsi == 12);
    assert_int_equal(parse("virtio_mmio.device=4K@0xd0000000:5:3", &v), 0);
    assert_true(v.size == 4096 && v.base == 0xd0000000u && v.gsi == 5);
    assert_int_equal(parse("virtio_mmio.device=1g@010:0x10", &v), 0);
    assert_true(v.size == 1ull << 30 && v.base == 8 && v.gsi == 16);
}

static void test_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "virtio_mmio.device=",
        "virtio_mmio.device=0@0x1000:5",
        "virtio_mmio.device=512@:5",
        "virtio_mmio.device=512@0x1000",
        "virtio_mmio.device=512@0x1000:",
        "virtio_mmio.device=512@0x1000:5:",
        "virtio_mmio.device=512@0x1000:5x",
        "virtio_mmio.device=512@0x1000:5:1:2",
        "virtio_mmio.device=0x@0:5",
        "virtio_mmio.device=512@0x1000:4294967296",
    };
    struct vm_word v;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(parse(bad[i], &v), -EINVAL);
}

/* strtoull took a sign, saturated a number past 64 bits, and the K/M/G
 * shift and the window's end wrapped: each gave a window that is not the
 * one written. */
static void test_overflow(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "virtio_mmio.device=-512@0x1000:5",
        "virtio_mmio.device=18446744073709551616@0:5",
        "virtio_mmio.device=512@0x10000000000000000:5",
        "virtio_mmio.device=0x4000000000000000K@0:5",
        "virtio_mmio.device=0x400000000G@0:5",
        "virtio_mmio.device=1K@0xfffffffffffffe00:5",
        "virtio_mmio.device=512@-0x1000:5",
    };
    struct vm_word v;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(parse(bad[i], &v), -EINVAL);
    assert_int_equal(parse("virtio_mmio.device=512@0xfffffffffffffe00:5", &v), 0);
    assert_true(v.base == 0xfffffffffffffe00ull && v.size == 512);
}

static void test_words(void **state)
{
    (void)state;
    static const char line[] = "console=ttyS0  virtio_mmio.device= virtio_mmio.device=512@0x1:5 "
                               "xvirtio_mmio.device=1@2:3 virtio_mmio.device=bad";
    size_t pos = 0, wlen;
    const char *w;
    assert_int_equal(vm_cmdline_next(line, sizeof(line) - 1, &pos, &w, &wlen), 1);
    assert_int_equal(wlen, strlen("virtio_mmio.device=512@0x1:5"));
    assert_int_equal(memcmp(w, "virtio_mmio.device=512@0x1:5", wlen), 0);
    assert_int_equal(vm_cmdline_next(line, sizeof(line) - 1, &pos, &w, &wlen), 1);
    assert_int_equal(memcmp(w, "virtio_mmio.device=bad", wlen), 0);
    assert_int_equal(vm_cmdline_next(line, sizeof(line) - 1, &pos, &w, &wlen), 0);
    assert_int_equal(pos, sizeof(line) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qemu_words),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
