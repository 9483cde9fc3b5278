/* The pure parts of interrupt delivery: MADT parsing, vector allocation,
 * the local APIC timer's arithmetic and MSI messages, I/O APIC
 * redirection entries, MSI-X capability decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/apic.h"
#include "kernel/ioapic.h"
#include "kernel/irq_cpu.h"
#include "kernel/irq_vec.h"
#include "kernel/madt.h"
#include "kernel/pci.h"

/* ---- MADT ---- */

struct madt_buf {
    uint8_t b[512];
    size_t len;
};

static void madt_start(struct madt_buf *m)
{
    memset(m, 0, sizeof(*m));
    memcpy(m->b, "APIC", 4);
    uint32_t lapic = 0xfee00000u;
    memcpy(m->b + 36, &lapic, 4);
    m->len = 44;
}

static void madt_add(struct madt_buf *m, const uint8_t *e, size_t n)
{
    memcpy(m->b + m->len, e, n);
    m->len += n;
}

static void madt_ioapic(struct madt_buf *m, uint8_t id, uint32_t addr, uint32_t gsi)
{
    uint8_t e[12] = {1, 12, id, 0};
    memcpy(e + 4, &addr, 4);
    memcpy(e + 8, &gsi, 4);
    madt_add(m, e, sizeof(e));
}

static void test_madt_qemu_layout(void **state)
{
    (void)state;
    struct madt_buf m;
    struct madt_info mi;
    madt_start(&m);
    const uint8_t lapic[8] = {0, 8, 0, 0, 1, 0, 0, 0};
    madt_add(&m, lapic, sizeof(lapic));
    madt_ioapic(&m, 0, 0xfec00000u, 0);
    const uint8_t iso[10] = {2, 10, 0, 0, 2, 0, 0, 0, 0, 0};
    madt_add(&m, iso, sizeof(iso));
    madt_ioapic(&m, 1, 0xfec10000u, 24); /* microvm's second one */
    const uint8_t nmi[6] = {4, 6, 0xff, 0, 0, 1};
    madt_add(&m, nmi, sizeof(nmi));
    assert_int_equal(madt_parse(m.b, m.len, &mi), 0);
    assert_int_equal(mi.n_ioapic, 2);
    assert_int_equal(mi.ioapic[0].addr, 0xfec00000u);
    assert_int_equal(mi.ioapic[0].gsi_base, 0);
    assert_int_equal(mi.ioapic[1].id, 1);
    assert_int_equal(mi.ioapic[1].addr, 0xfec10000u);
    assert_int_equal(mi.ioapic[1].gsi_base, 24);
    assert_int_equal(mi.skipped, 0);
    assert_int_equal(mi.n_cpu, 1);
    assert_int_equal(mi.cpu_apic_id[0], 0);
}

static void madt_lapic(struct madt_buf *m, uint8_t id, uint32_t flags)
{
    uint8_t e[8] = {0, 8, id, id};
    memcpy(e + 4, &flags, 4);
    madt_add(m, e, sizeof(e));
}

static void madt_x2apic(struct madt_buf *m, uint32_t id, uint32_t flags)
{
    uint8_t e[16] = {9, 16};
    memcpy(e + 4, &id, 4);
    memcpy(e + 8, &flags, 4);
    memcpy(e + 12, &id, 4);
    madt_add(m, e, sizeof(e));
}

/* QEMU with -smp 3,maxcpus=4: three enabled local APICs, a hot-plug slot
 * (flags 0), and x2APIC entries for IDs above 254; a CPU named by both
 * entry types counts once. */
static void test_madt_cpus(void **state)
{
    (void)state;
    struct madt_buf m;
    struct madt_info mi;
    madt_start(&m);
    madt_lapic(&m, 0, 1);
    madt_lapic(&m, 1, 1);
    madt_lapic(&m, 2, 3); /* enabled and online capable */
    madt_lapic(&m, 3, 0);
    madt_x2apic(&m, 300, 1);
    madt_x2apic(&m, 1, 1);
    madt_x2apic(&m, 301, 2); /* online capable only: not running now */
    assert_int_equal(madt_parse(m.b, m.len, &mi), 0);
    assert_int_equal(mi.n_cpu, 4);
    assert_int_equal(mi.cpu_apic_id[0], 0);
    assert_int_equal(mi.cpu_apic_id[1], 1);
    assert_int_equal(mi.cpu_apic_id[2], 2);
    assert_int_equal(mi.cpu_apic_id[3], 300);
    assert_int_equal(mi.cpu_disabled, 2);
    assert_int_equal(mi.cpu_skipped, 0);
    assert_int_equal(mi.n_ioapic, 0);
}

static void test_madt_cpu_limits(void **state)
{
    (void)state;
    struct madt_buf m;
    struct madt_info mi;
    /* More enabled CPUs than the cap: the first MADT_MAX_CPU kept. */
    size_t cap = 44 + 16 * (MADT_MAX_CPU + 4);
    uint8_t *t = calloc(1, cap);
    assert_non_null(t);
    size_t len = 44;
    for (uint32_t id = 0; id < MADT_MAX_CPU + 4; id++, len += 16) {
        uint32_t fl = 1;
        t[len] = 9;
        t[len + 1] = 16;
        memcpy(t + len + 4, &id, 4);
        memcpy(t + len + 8, &fl, 4);
    }
    assert_int_equal(madt_parse(t, len, &mi), 0);
    assert_int_equal(mi.n_cpu, MADT_MAX_CPU);
    assert_int_equal(mi.cpu_skipped, 4);
    assert_int_equal(mi.cpu_apic_id[MADT_MAX_CPU - 1], MADT_MAX_CPU - 1);
    free(t);
    /* Entries shorter than their fields: nothing after them is trusted. */
    madt_start(&m);
    madt_add(&m, (uint8_t[]){0, 6, 0, 1, 1, 0}, 6);
    assert_int_equal(madt_parse(m.b, m.len, &mi), -EINVAL);
    madt_start(&m);
    madt_add(&m, (uint8_t[]){9, 12, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0}, 12);
    assert_int_equal(madt_parse(m.b, m.len, &mi), -EINVAL);
}

static void test_madt_rejects_bad_lengths(void **state)
{
    (void)state;
    struct madt_buf m;
    struct madt_info mi;
    madt_start(&m);
    assert_int_equal(madt_parse(m.b, 43, &mi), -EINVAL);
    /* An entry of length 0 or 1 would loop or step into itself. */
    for (uint8_t l = 0; l < 2; l++) {
        madt_start(&m);
        madt_add(&m, (uint8_t[]){0, l}, 2);
        assert_int_equal(madt_parse(m.b, m.len, &mi), -EINVAL);
    }
    /* Past the end of the table. */
    madt_start(&m);
    madt_ioapic(&m, 0, 0xfec00000u, 0);
    assert_int_equal(madt_parse(m.b, m.len - 1, &mi), -EINVAL);
    /* An I/O APIC entry too short for its fields. */
    madt_start(&m);
    madt_add(&m, (uint8_t[]){1, 8, 0, 0, 0, 0, 0xc0, 0xfe}, 8);
    assert_int_equal(madt_parse(m.b, m.len, &mi), -EINVAL);
    /* A lone trailing byte. */
    madt_start(&m);
    madt_ioapic(&m, 0, 0xfec00000u, 0);
    m.len++;
    assert_int_equal(madt_parse(m.b, m.len, &mi), -EINVAL);
    /* Empty (no entries) is fine. */
    madt_start(&m);
    assert_int_equal(madt_parse(m.b, m.len, &mi), 0);
    assert_int_equal(mi.n_ioapic, 0);
}

static void test_madt_too_many_ioapics(void **state)
{
    (void)state;
    struct madt_buf m;
    struct madt_info mi;
    madt_start(&m);
    for (unsigned i = 0; i < MADT_MAX_IOAPIC + 3; i++)
        madt_ioapic(&m, (uint8_t)i, 0xfec00000u + 0x1000 * i, 24 * i);
    assert_int_equal(madt_parse(m.b, m.len, &mi), 0);
    assert_int_equal(mi.n_ioapic, MADT_MAX_IOAPIC);
    assert_int_equal(mi.skipped, 3);
    assert_int_equal(mi.ioapic[MADT_MAX_IOAPIC - 1].gsi_base, 24 * (MADT_MAX_IOAPIC - 1));
    assert_int_equal(mi.n_cpu, 0);
}

/* ---- vectors ---- */

static void test_vector_alloc(void **state)
{
    (void)state;
    struct irq_vec_map m = {{0}};
    assert_int_equal(irq_vec_alloc(&m, 0xef, 0xef), 0xef);
    assert_int_equal(irq_vec_alloc(&m, 0xef, 0xef), -ENOSPC);
    /* Lowest first, each once, across the 64-bit words. */
    for (unsigned v = 0x30; v <= 0xdf; v++)
        assert_int_equal(irq_vec_alloc(&m, 0x30, 0xdf), (int)v);
    assert_int_equal(irq_vec_alloc(&m, 0x30, 0xdf), -ENOSPC);
    assert_true(irq_vec_used(&m, 0x3f) && irq_vec_used(&m, 0x40) && irq_vec_used(&m, 0xdf));
    assert_false(irq_vec_used(&m, 0x2f) || irq_vec_used(&m, 0xe0) || irq_vec_used(&m, 300));
    irq_vec_free(&m, 0x41);
    irq_vec_free(&m, 0x80);
    assert_int_equal(irq_vec_alloc(&m, 0x30, 0xdf), 0x41);
    assert_int_equal(irq_vec_alloc(&m, 0x30, 0xdf), 0x80);
    /* A range past 255 stops at 255. */
    struct irq_vec_map e = {{0}};
    assert_int_equal(irq_vec_alloc(&e, 0xff, 0x1ff), 0xff);
    assert_int_equal(irq_vec_alloc(&e, 0xff, 0x1ff), -ENOSPC);
}

/* ---- local APIC timer arithmetic ---- */

static void test_timer_ticks(void **state)
{
    (void)state;
    const uint64_t tsc = 2100000000ull, hz = 1000000000ull;
    /* 1 ms of TSC is 1 ms of timer ticks, rounded down. */
    assert_int_equal(apic_ticks_for(tsc / 1000, hz, tsc), 1000000);
    assert_int_equal(apic_ticks_for(2099, hz, tsc), 999);
    /* Never 0 (that stops the timer): a wait that is due fires at once. */
    assert_int_equal(apic_ticks_for(0, hz, tsc), 1);
    assert_int_equal(apic_ticks_for(1, hz, tsc), 1);
    /* Past the 32-bit counter: the longest wait, the caller looks again. */
    assert_int_equal(apic_ticks_for(10 * tsc, hz, tsc), APIC_TICKS_MAX);
    assert_int_equal(apic_ticks_for(UINT64_MAX, hz, tsc), APIC_TICKS_MAX);
    /* No product overflow for large inputs with a fast timer. */
    assert_int_equal(apic_ticks_for(UINT64_MAX / 2, UINT64_MAX / 4, UINT64_MAX), APIC_TICKS_MAX);
    assert_int_equal(apic_ticks_for(5, hz, 0), 1);
}

static void test_timer_calibration(void **state)
{
    (void)state;
    const uint64_t tsc = 2100000000ull;
    /* 10 ms: 10e6 ticks while the TSC went 21e6 cycles: 1 GHz. */
    assert_int_equal(apic_hz_from(10000000u, 21000000ull, tsc), 1000000000ull);
    assert_int_equal(apic_hz_from(APIC_TICKS_MAX, 21000000ull, tsc),
                     (uint64_t)((unsigned __int128)APIC_TICKS_MAX * tsc / 21000000ull));
    assert_int_equal(apic_hz_from(0, 21000000ull, tsc), 0);
    assert_int_equal(apic_hz_from(1000, 0, tsc), 0);
}

static void test_timer_lateness(void **state)
{
    (void)state;
    const uint64_t tsc = 1000000000ull, cap = tsc / APIC_LATE_CAP_DIV;
    uint64_t avg = 0;
    for (int i = 0; i < 200; i++)
        avg = apic_late_avg(avg, 80000, tsc);
    assert_true(avg > 79000 && avg <= 80000);
    /* One descheduled wake counts as the cap only. */
    uint64_t before = avg;
    avg = apic_late_avg(avg, 500 * cap, tsc);
    assert_int_equal(avg, before + (cap - before) / 8);
    for (int i = 0; i < 200; i++)
        avg = apic_late_avg(avg, 0, tsc);
    assert_true(avg < 100);
}

static void test_msi_message(void **state)
{
    (void)state;
    uint64_t addr;
    uint32_t data;
    assert_int_equal(apic_msi_msg(0, 0x30, &addr, &data), 0);
    assert_int_equal(addr, 0xfee00000ull);
    assert_int_equal(data, 0x30); /* fixed, edge */
    assert_int_equal(apic_msi_msg(3, 0xdf, &addr, &data), 0);
    assert_int_equal(addr, 0xfee03000ull);
    assert_int_equal(data, 0xdf);
    assert_int_equal(apic_msi_msg(256, 0x30, &addr, &data), -ERANGE);
    assert_int_equal(apic_msi_msg(0, 31, &addr, &data), -EINVAL);
}

/* Intel SDM vol 3 11.11.1: address 0xFEE in bits 31:20, the destination
 * APIC ID in 19:12, RH (bit 3) and DM (bit 2) 0: physical, no
 * redirection; data: the vector, fixed delivery (10:8 = 0), edge
 * (bit 15 = 0). Every ID 0..255 lands in its field and nowhere else. */
static void test_msi_destination(void **state)
{
    (void)state;
    for (uint32_t dest = 0; dest < 256; dest++) {
        uint64_t addr;
        uint32_t data;
        assert_int_equal(apic_msi_msg(dest, 0x41, &addr, &data), 0);
        assert_int_equal(addr >> 20, 0xfee);
        assert_int_equal((addr >> 12) & 0xff, dest);
        assert_int_equal(addr & 0xfff, 0); /* RH, DM 0 */
        assert_int_equal(data, 0x41);
    }
}

/* Per-CPU interrupt state (kernel/irq_cpu.h): a vector records the CPU
 * that took it, two CPUs' halts stay apart until added up. */
static void test_irq_cpu_state(void **state)
{
    (void)state;
    struct irq_vec_state v = {0};
    assert_int_equal(irq_cpus_one(v.cpus), -1);
    irq_vec_note(&v, 1, 1);
    irq_vec_note(&v, 1, 1);
    assert_int_equal(v.count, 2);
    assert_int_equal(v.pending, 1);
    assert_int_equal(irq_cpus_one(v.cpus), 1);
    irq_vec_note(&v, 0, 4);
    assert_int_equal(v.pending, 5);
    assert_int_equal(irq_cpus_one(v.cpus), -2); /* two CPUs took it */

    struct irq_cpu c[IRQ_CPU_MAX] = {0}, t;
    irq_cpu_halted(&c[0], 100);
    irq_cpu_halted(&c[1], 30);
    irq_cpu_halted(&c[1], 20);
    c[0].timer_late = 7;
    c[1].timer_late = 9;
    assert_int_equal(c[0].halts, 1);
    assert_int_equal(c[1].halts, 2);
    assert_int_equal(c[1].halt_cycles, 50);
    irq_cpu_sum(c, 2, &t);
    assert_int_equal(t.halts, 3);
    assert_int_equal(t.halt_cycles, 150);
    assert_int_equal(t.timer_late, 9);
    irq_cpu_sum(c, 1, &t);
    assert_int_equal(t.halts, 1);
}

/* ---- I/O APIC ---- */

static void test_ioapic_rte(void **state)
{
    (void)state;
    /* 82093AA: vector 0-7, fixed delivery, physical mode, polarity 13,
     * trigger 15, mask 16, destination 56-63. */
    assert_int_equal(ioapic_rte(0x31, 0, true, false, false), 0x8031ull);
    assert_int_equal(ioapic_rte(0x31, 0, false, true, false), 0x2031ull);
    assert_int_equal(ioapic_rte(0x40, 5, false, false, true), (5ull << 56) | 0x10040ull);
}

/* ---- MSI-X capability ---- */

static void test_msix_decode(void **state)
{
    (void)state;
    struct pci_msix m;
    /* QEMU's virtio-net-pci: 3 vectors, table in BAR1 at 0. */
    assert_int_equal(pci_msix_decode(0x0002, 0x00000001, &m), 0);
    assert_int_equal(m.entries, 3);
    assert_int_equal(m.table_bar, 1);
    assert_int_equal(m.table_off, 0);
    /* Enable and function-mask bits are not part of the size. */
    assert_int_equal(pci_msix_decode(0xc7ff, 0x00002004, &m), 0);
    assert_int_equal(m.entries, 2048);
    assert_int_equal(m.table_bar, 4);
    assert_int_equal(m.table_off, 0x2000);
    /* BIR 6 and 7 name no BAR. */
    assert_int_equal(pci_msix_decode(0, 0x1006, &m), -EINVAL);
    assert_int_equal(pci_msix_decode(0, 0x1007, &m), -EINVAL);
}

static void test_msix_fits(void **state)
{
    (void)state;
    assert_true(pci_msix_fits(0, 3, 48));
    assert_false(pci_msix_fits(0, 3, 47));
    assert_true(pci_msix_fits(0x1000, 2048, 0x1000 + 2048 * 16));
    assert_false(pci_msix_fits(0xfffffff8u, 2048, 0x100000000ull));
    /* No 32-bit wrap: an offset near 4 GiB does not fit a small BAR. */
    assert_false(pci_msix_fits(0xfffffff0u, 2, 0x4000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_madt_qemu_layout),
        cmocka_unit_test(test_madt_rejects_bad_lengths),
        cmocka_unit_test(test_madt_too_many_ioapics),
        cmocka_unit_test(test_madt_cpus),
        cmocka_unit_test(test_madt_cpu_limits),
        cmocka_unit_test(test_vector_alloc),
        cmocka_unit_test(test_timer_ticks),
        cmocka_unit_test(test_timer_calibration),
        cmocka_unit_test(test_timer_lateness),
        cmocka_unit_test(test_msi_message),
        cmocka_unit_test(test_msi_destination),
        cmocka_unit_test(test_irq_cpu_state),
        cmocka_unit_test(test_ioapic_rte),
        cmocka_unit_test(test_msix_decode),
        cmocka_unit_test(test_msix_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
