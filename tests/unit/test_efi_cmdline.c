#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <uchar.h>
#include <cmocka.h>

#include "boot/efi/efi_cmdline.h"

static const uint16_t *path(const char16_t *s)
{
    return (const uint16_t *)s;
}

static int conv(const char16_t *opts, size_t bytes, const char16_t *img, char *out, size_t n)
{
    return efi_cmdline_convert(opts, bytes, img ? path(img) : NULL, out, n);
}

#define CONV_OK(opts, img, want)                                                                   \
    do {                                                                                           \
        char out[64];                                                                              \
        assert_int_equal(conv(opts, sizeof(opts), img, out, sizeof(out)), 0);                      \
        assert_string_equal(out, want);                                                            \
    } while (0)

static void boot_entry_text(void **state)
{
    (void)state;
    CONV_OK(u"app=gen size=64", NULL, "app=gen size=64");
    CONV_OK(u"  app=gen\tsize=64  ", u"\\EFI\\BOOT\\BOOTX64.EFI", "app=gen size=64");
    CONV_OK(u"", NULL, "");
}

static void shell_argv0_dropped(void **state)
{
    (void)state;
    const char16_t *img = u"\\EFI\\BOOT\\BOOTX64.EFI";
    CONV_OK(u"fs0:\\EFI\\BOOT\\BOOTX64.EFI app=selftest", img, "app=selftest");
    CONV_OK(u"bootx64 app=selftest", img, "app=selftest");
    CONV_OK(u"BOOTX64.efi", img, "");
    CONV_OK(u"vnperf.efi app=fault", u"\\vnperf.efi", "app=fault");
    /* Not the image: left for the config parser to judge. */
    CONV_OK(u"other.efi app=selftest", img, "other.efi app=selftest");
    CONV_OK(u"app=selftest bootx64", img, "app=selftest bootx64");
}

static void stops_at_nul_and_size(void **state)
{
    (void)state;
    char out[64];
    const char16_t s[] = u"app=gen\0junk";
    assert_int_equal(conv(s, sizeof(s), NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "app=gen");
    /* No terminator inside the given size: take exactly that many chars. */
    assert_int_equal(conv(u"app=genXYZ", 7 * 2, NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "app=gen");
}

static void binary_is_not_text(void **state)
{
    (void)state;
    char out[64];
    const uint16_t bin[] = {0x4e2d, 0x0001, 0xffff};
    memset(out, 'Z', sizeof(out));
    assert_int_equal(efi_cmdline_convert(bin, sizeof(bin), NULL, out, sizeof(out)), -EINVAL);
    assert_string_equal(out, "");
    assert_int_equal(conv(u"app=x", 3, NULL, out, sizeof(out)), -EINVAL);
    assert_int_equal(conv(u"app=\u00e9", sizeof(u"app=\u00e9"), NULL, out, sizeof(out)), -EINVAL);
}

static void too_long(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(conv(u"app=selftest", sizeof(u"app=selftest"), NULL, out, sizeof(out)),
                     -E2BIG);
    assert_string_equal(out, "");
    assert_int_equal(conv(u"app=gen", sizeof(u"app=gen"), NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "app=gen");
    assert_int_equal(conv(u"a", sizeof(u"a"), NULL, out, 0), -E2BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(boot_entry_text),
        cmocka_unit_test(shell_argv0_dropped),
        cmocka_unit_test(stops_at_nul_and_size),
        cmocka_unit_test(binary_is_not_text),
        cmocka_unit_test(too_long),
    };
    return cmocka_run_group_tests_name("efi_cmdline", tests, NULL, NULL);
}
