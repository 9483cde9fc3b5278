#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>

#include "kernel/mem_arena.h"

#define MB (1ull << 20)

static void picks_largest_piece(void **state)
{
    (void)state;
    const struct boot_mem_region mem[] = {
        {0, 0x9fc00, BOOT_MEM_RAM, 0},
        {0xf0000, 0x10000, BOOT_MEM_RESERVED, 0},
        {MB, 127 * MB, BOOT_MEM_RAM, 0},
        {128 * MB, MB, BOOT_MEM_ACPI, 0},
    };
    /* low megabyte and a kernel at 1..3 MiB excluded */
    const struct mem_range excl[] = {{0, MB}, {MB, 2 * MB}};
    struct mem_arena a;
    assert_int_equal(arena_init(&a, mem, 4, excl, 2), 0);
    assert_int_equal(a.lo, 3 * MB);
    assert_int_equal(a.hi, 128 * MB);
    assert_int_equal(a.ram_total, 0x9fc00 + 127 * MB);
}

static void exclusion_in_middle(void **state)
{
    (void)state;
    const struct boot_mem_region mem[] = {{0, 100 * MB, BOOT_MEM_RAM, 0}};
    const struct mem_range excl[] = {{30 * MB, MB}};
    struct mem_arena a;
    assert_int_equal(arena_init(&a, mem, 1, excl, 1), 0);
    assert_int_equal(a.lo, 31 * MB);
    assert_int_equal(a.hi, 100 * MB);
}

static void unaligned_edges(void **state)
{
    (void)state;
    const struct boot_mem_region mem[] = {{0x1234, 0x10000, BOOT_MEM_RAM, 0}};
    struct mem_arena a;
    assert_int_equal(arena_init(&a, mem, 1, NULL, 0), 0);
    assert_int_equal(a.lo, 0x2000);
    assert_int_equal(a.hi, 0x11000);
}

static void no_ram(void **state)
{
    (void)state;
    const struct boot_mem_region mem[] = {{0, MB, BOOT_MEM_RESERVED, 0},
                                          {MB, 0x800, BOOT_MEM_RAM, 0}};
    struct mem_arena a;
    assert_int_equal(arena_init(&a, mem, 2, NULL, 0), -ENOMEM);
    const struct boot_mem_region all[] = {{0, MB, BOOT_MEM_RAM, 0}};
    const struct mem_range excl[] = {{0, MB}};
    assert_int_equal(arena_init(&a, all, 1, excl, 1), -ENOMEM);
}

static void heap_and_dma_meet(void **state)
{
    (void)state;
    const struct boot_mem_region mem[] = {{MB, MB, BOOT_MEM_RAM, 0}};
    struct mem_arena a;
    assert_int_equal(arena_init(&a, mem, 1, NULL, 0), 0);
    assert_int_equal(arena_sbrk(&a, 4096), MB);
    assert_int_equal(arena_sbrk(&a, 0), MB + 4096);
    uint64_t d = arena_alloc_top(&a, 3000, 4096);
    assert_int_equal(d, 2 * MB - 4096);
    uint64_t d2 = arena_alloc_top(&a, 100, 64);
    assert_true(d2 < d && d2 % 64 == 0);
    /* heap may take exactly what is left, not a byte more */
    uint64_t left = a.top - a.brk;
    assert_int_equal(arena_sbrk(&a, (int64_t)left + 1), UINT64_MAX);
    assert_int_not_equal(arena_sbrk(&a, (int64_t)left), UINT64_MAX);
    assert_int_equal(arena_alloc_top(&a, 16, 16), 0);
    /* shrinking works, but not below the start */
    assert_int_not_equal(arena_sbrk(&a, -4096), UINT64_MAX);
    assert_int_equal(arena_sbrk(&a, -(int64_t)(2 * MB)), UINT64_MAX);
}

static void bad_alloc_args(void **state)
{
    (void)state;
    const struct boot_mem_region mem[] = {{MB, MB, BOOT_MEM_RAM, 0}};
    struct mem_arena a;
    assert_int_equal(arena_init(&a, mem, 1, NULL, 0), 0);
    assert_int_equal(arena_alloc_top(&a, 0, 16), 0);
    assert_int_equal(arena_alloc_top(&a, 16, 24), 0);
    assert_int_equal(arena_alloc_top(&a, 2 * MB, 16), 0);
    assert_int_equal(arena_alloc_top(&a, UINT64_MAX, 16), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(picks_largest_piece), cmocka_unit_test(exclusion_in_middle),
        cmocka_unit_test(unaligned_edges),     cmocka_unit_test(no_ram),
        cmocka_unit_test(heap_and_dma_meet),   cmocka_unit_test(bad_alloc_args),
    };
    return cmocka_run_group_tests_name("mem_arena", tests, NULL, NULL);
}
