/* kernel/acpi_walk.c: the RSDP, the root tables and a table by its
 * signature, over a buffer standing for physical memory. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/acpi_walk.h"

#define RSDT_PA 0x40
#define MADT_PA 0x80

static uint8_t ram[512];

static const void *ram_map(void *ctx, uint64_t pa, uint64_t len)
{
    (void)ctx;
    return pa <= sizeof(ram) && len <= sizeof(ram) - pa ? ram + pa : NULL;
}

static const struct acpi_mem mem = {ram_map, NULL};

static void fix(size_t off, size_t len, size_t at)
{
    uint8_t s = 0;
    ram[off + at] = 0;
    for (size_t i = 0; i < len; i++)
        s = (uint8_t)(s + ram[off + i]);
    ram[off + at] = (uint8_t)-s;
}

static void put32(size_t off, uint32_t v)
{
    memcpy(ram + off, &v, 4);
}

static void sdt(size_t pa, const char *sig, uint32_t len)
{
    memcpy(ram + pa, sig, 4);
    put32(pa + 4, len);
    fix(pa, len, 9);
}

/* SeaBIOS's layout: an ACPI 1.0 RSDP, an RSDT naming one MADT. */
static void image(const char *root_sig)
{
    memset(ram, 0, sizeof(ram));
    memcpy(ram, "RSD PTR ", 8);
    put32(16, RSDT_PA);
    fix(0, ACPI_RSDP_V1_LEN, 8);
    put32(RSDT_PA + 36, MADT_PA);
    sdt(MADT_PA, "APIC", 44);
    sdt(RSDT_PA, root_sig, 40);
}

static void test_finds_table(void **state)
{
    (void)state;
    struct acpi_root root;
    image("RSDT");
    assert_true(acpi_rsdp_ok(ram, sizeof(ram)));
    assert_int_equal(acpi_root_from_rsdp(&mem, ram, &root), 0);
    assert_int_equal(root.esz, 4);
    assert_ptr_equal(acpi_root_find(&mem, &root, "APIC"), ram + MADT_PA);
    assert_null(acpi_root_find(&mem, &root, "FACP"));
    ram[MADT_PA + 40]++; /* the checksum no longer right */
    assert_null(acpi_root_find(&mem, &root, "APIC"));
}

/* ACPI 6.4 s5.2.7: the RSDT's signature is "RSDT". A table of another
 * signature at its address was walked as the root (found by fuzz_acpi). */
static void test_root_signature(void **state)
{
    (void)state;
    struct acpi_root root;
    image("FACP");
    assert_int_equal(acpi_root_from_rsdp(&mem, ram, &root), -ENOENT);
    assert_null(acpi_root_find(&mem, &root, "APIC"));
}

/* Only the 36 bytes of an ACPI 2.0 RSDP are summed: its Length field
 * (2^32-1 here) sized the old extended checksum, a read far past it. */
static void test_rsdp_v2_length(void **state)
{
    (void)state;
    image("RSDT");
    ram[15] = 2;
    put32(20, 0xffffffffu);
    fix(0, ACPI_RSDP_V1_LEN, 8);
    fix(0, ACPI_RSDP_V2_LEN, 32);
    assert_true(acpi_rsdp_ok(ram, ACPI_RSDP_V2_LEN));
    assert_false(acpi_rsdp_ok(ram, ACPI_RSDP_V2_LEN - 1));
    put32(20, 20); /* shorter than an ACPI 2.0 RSDP */
    fix(0, ACPI_RSDP_V2_LEN, 32);
    assert_false(acpi_rsdp_ok(ram, ACPI_RSDP_V2_LEN));
}

/* A table whose length runs past what is mapped is not read. */
static void test_table_outside_map(void **state)
{
    (void)state;
    struct acpi_root root;
    image("RSDT");
    assert_int_equal(acpi_root_from_rsdp(&mem, ram, &root), 0);
    put32(MADT_PA + 4, sizeof(ram) - MADT_PA + 1);
    assert_null(acpi_root_find(&mem, &root, "APIC"));
    put32(RSDT_PA + 36, 0xfffffff0u);
    fix(RSDT_PA, 40, 9);
    assert_null(acpi_root_find(&mem, &root, "APIC"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_table),
        cmocka_unit_test(test_root_signature),
        cmocka_unit_test(test_rsdp_v2_length),
        cmocka_unit_test(test_table_outside_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
