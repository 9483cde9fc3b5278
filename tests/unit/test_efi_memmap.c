#include <efi/efi.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "boot/efi/efi_memmap.h"

/* Firmware descriptors are at least the struct and may be longer (UEFI
 * 2.10 s7.2.3); OVMF uses 48 bytes, so the tests do too. */
#define DSIZE 48
#define MAXD  (2 * BOOT_MEM_MAX + 4)

static unsigned char map[MAXD * DSIZE];
static size_t nmap;
static struct boot_info bi;

static void add(uint32_t type, uint64_t base, uint64_t pages)
{
    EFI_MEMORY_DESCRIPTOR d = {.Type = type, .PhysicalStart = base, .NumberOfPages = pages};
    memset(map + nmap * DSIZE, 0xa5, DSIZE);
    memcpy(map + nmap * DSIZE, &d, sizeof(d));
    nmap++;
}

static int reset(void **state)
{
    (void)state;
    nmap = 0;
    memset(&bi, 0, sizeof(bi));
    return 0;
}

static void types(void **state)
{
    (void)state;
    assert_int_equal(efi_memmap_type(EfiConventionalMemory), BOOT_MEM_RAM);
    assert_int_equal(efi_memmap_type(EfiLoaderCode), BOOT_MEM_RAM);
    assert_int_equal(efi_memmap_type(EfiLoaderData), BOOT_MEM_RAM);
    assert_int_equal(efi_memmap_type(EfiBootServicesCode), BOOT_MEM_RAM);
    assert_int_equal(efi_memmap_type(EfiBootServicesData), BOOT_MEM_RAM);
    assert_int_equal(efi_memmap_type(EfiACPIReclaimMemory), BOOT_MEM_ACPI);
    assert_int_equal(efi_memmap_type(EfiACPIMemoryNVS), BOOT_MEM_NVS);
    assert_int_equal(efi_memmap_type(EfiRuntimeServicesData), BOOT_MEM_RESERVED);
    assert_int_equal(efi_memmap_type(EfiMemoryMappedIO), BOOT_MEM_RESERVED);
    assert_int_equal(efi_memmap_type(EfiUnusableMemory), BOOT_MEM_RESERVED);
    assert_int_equal(efi_memmap_type(0x80000001u), BOOT_MEM_RESERVED);
}

static void sorts_and_merges(void **state)
{
    (void)state;
    add(EfiBootServicesData, 0x200000, 0x10);
    add(EfiConventionalMemory, 0x0, 0xa0);
    add(EfiConventionalMemory, 0x100000, 0x100); /* merges with the one above */
    add(EfiACPIReclaimMemory, 0x210000, 1);
    add(EfiLoaderData, 0x300000, 0); /* empty: dropped */
    add(EfiRuntimeServicesCode, 0x400000, 2);
    add(EfiRuntimeServicesData, 0x402000, 2); /* same kind: merges */
    assert_int_equal(efi_memmap_convert(map, nmap * DSIZE, DSIZE, &bi), 0);
    assert_int_equal(bi.nmem, 4);
    assert_int_equal(bi.mem[0].base, 0);
    assert_int_equal(bi.mem[0].len, 0xa0000);
    assert_int_equal(bi.mem[1].base, 0x100000);
    assert_int_equal(bi.mem[1].len, 0x110000);
    assert_int_equal(bi.mem[1].type, BOOT_MEM_RAM);
    assert_int_equal(bi.mem[2].type, BOOT_MEM_ACPI);
    assert_int_equal(bi.mem[3].base, 0x400000);
    assert_int_equal(bi.mem[3].len, 0x4000);
    assert_int_equal(bi.mem[3].type, BOOT_MEM_RESERVED);
}

static void malformed(void **state)
{
    (void)state;
    add(EfiConventionalMemory, 0x100000, 0x100);
    add(EfiConventionalMemory, 0x1ff000, 2); /* overlaps */
    assert_int_equal(efi_memmap_convert(map, nmap * DSIZE, DSIZE, &bi), -EINVAL);
    reset(state);
    add(EfiConventionalMemory, UINT64_MAX - 0xfff, 2); /* wraps */
    assert_int_equal(efi_memmap_convert(map, nmap * DSIZE, DSIZE, &bi), -EINVAL);
    reset(state);
    add(EfiConventionalMemory, 0, 1);
    assert_int_equal(efi_memmap_convert(map, DSIZE, sizeof(EFI_MEMORY_DESCRIPTOR) - 8, &bi),
                     -EINVAL);
    assert_int_equal(efi_memmap_convert(map, DSIZE, 44, &bi), -EINVAL);
}

static void too_many_regions(void **state)
{
    (void)state;
    /* Alternating kinds never merge. */
    for (unsigned i = 0; i <= BOOT_MEM_MAX; i++)
        add(i % 2 ? EfiConventionalMemory : EfiMemoryMappedIO, (uint64_t)i << 12, 1);
    assert_int_equal(efi_memmap_convert(map, nmap * DSIZE, DSIZE, &bi), -ENOSPC);
    reset(state);
    for (unsigned i = 0; i < BOOT_MEM_MAX; i++)
        add(i % 2 ? EfiConventionalMemory : EfiMemoryMappedIO, (uint64_t)i << 12, 1);
    assert_int_equal(efi_memmap_convert(map, nmap * DSIZE, DSIZE, &bi), 0);
    assert_int_equal(bi.nmem, BOOT_MEM_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(types, reset),
        cmocka_unit_test_setup(sorts_and_merges, reset),
        cmocka_unit_test_setup(malformed, reset),
        cmocka_unit_test_setup(too_many_regions, reset),
    };
    return cmocka_run_group_tests_name("efi_memmap", tests, NULL, NULL);
}
