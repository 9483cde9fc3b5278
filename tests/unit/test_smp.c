/* The pure decisions of AP start (kernel/smp_plan.c): the trampoline's
 * page below 1 MiB, checked against the memory map, and the CPUs picked
 * from the MADT's list. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/smp.h"

#define RAM(b, l)                                                                                  \
    {                                                                                              \
        (b), (l), BOOT_MEM_RAM, 0                                                                  \
    }
#define RSV(b, l)                                                                                  \
    {                                                                                              \
        (b), (l), BOOT_MEM_RESERVED, 0                                                             \
    }

static void test_tramp_page_pvh_map(void **state)
{
    (void)state;
    /* QEMU's e820 on pc/q35/microvm: low RAM up to the EBDA. */
    const struct boot_mem_region m[] = {RAM(0, 0x9fc00), RSV(0x9fc00, 0x400), RSV(0xf0000, 0x10000),
                                        RAM(0x100000, 0x7f00000)};
    assert_int_equal(smp_tramp_page(m, 4, 64), 0x1000);
}

static void test_tramp_page_uefi_map(void **state)
{
    (void)state;
    /* OVMF-like: page 0 boot data, a reserved hole, RAM from an odd
     * start: the first whole page after it. */
    const struct boot_mem_region m[] = {RSV(0, 0x8000), RAM(0x8000, 0x800), RAM(0x9123, 0x20000),
                                        RSV(0x30000, 0x70000)};
    /* 0x8000 holds 0x800 bytes: enough for 64, not for 4096. */
    assert_int_equal(smp_tramp_page(m, 4, 64), 0x8000);
    assert_int_equal(smp_tramp_page(m, 4, 4096), 0xa000);
    /* Order does not matter: the lowest fitting page wins. */
    const struct boot_mem_region r[] = {RAM(0x50000, 0x1000), RAM(0x2000, 0x1000)};
    assert_int_equal(smp_tramp_page(r, 2, 100), 0x2000);
}

static void test_tramp_page_refusals(void **state)
{
    (void)state;
    /* Only page 0 (the IVT) free below 1 MiB; RAM only above; reserved
     * only; a region at the VGA hole; a wrapping length; too big a
     * trampoline: no page. */
    const struct boot_mem_region a[] = {RAM(0, 0x1000), RAM(0x100000, 0x100000)};
    assert_int_equal(smp_tramp_page(a, 2, 64), 0);
    const struct boot_mem_region b[] = {RSV(0x1000, 0x9e000)};
    assert_int_equal(smp_tramp_page(b, 1, 64), 0);
    const struct boot_mem_region c[] = {RAM(0x9f800, 0x10000)};
    assert_int_equal(smp_tramp_page(c, 1, 64), 0);
    const struct boot_mem_region d[] = {RAM(0x2000, UINT64_MAX - 0x1000)};
    assert_int_equal(smp_tramp_page(d, 1, 64), 0);
    const struct boot_mem_region e[] = {RAM(0, 0x9fc00)};
    assert_int_equal(smp_tramp_page(e, 1, 4097), 0);
    assert_int_equal(smp_tramp_page(e, 1, 0), 0);
    assert_int_equal(smp_tramp_page(e, 0, 64), 0);
    /* The last page below the SIPI limit is usable, the one across not. */
    const struct boot_mem_region f[] = {RAM(0x9f000, 0x1000)};
    assert_int_equal(smp_tramp_page(f, 1, 4096), 0x9f000);
    const struct boot_mem_region g[] = {RAM(0x9f001, 0x2000)};
    assert_int_equal(smp_tramp_page(g, 1, 16), 0);
}

static void test_pick(void **state)
{
    (void)state;
    uint32_t out[SMP_MAX_CPUS];
    /* Boot CPU first whatever its place in the table. */
    const uint32_t ids[] = {4, 0, 2, 6};
    assert_int_equal(smp_pick(ids, 4, 2, 3, out), 3);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 4);
    assert_int_equal(out[2], 0);
    assert_int_equal(smp_pick(ids, 4, 2, 4, out), 4);
    assert_int_equal(out[3], 6);
    /* More than listed, none, past the cap. */
    assert_int_equal(smp_pick(ids, 4, 2, 5, out), -ERANGE);
    assert_int_equal(smp_pick(ids, 4, 2, 0, out), -ERANGE);
    assert_int_equal(smp_pick(ids, 4, 2, SMP_MAX_CPUS + 1, out), -ERANGE);
    /* A boot CPU the table does not name still counts as one. */
    assert_int_equal(smp_pick(ids, 4, 9, 5, out), 5);
    assert_int_equal(out[0], 9);
    assert_int_equal(out[4], 6);
    assert_int_equal(smp_pick(ids, 0, 9, 1, out), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tramp_page_pvh_map),
        cmocka_unit_test(test_tramp_page_uefi_map),
        cmocka_unit_test(test_tramp_page_refusals),
        cmocka_unit_test(test_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
