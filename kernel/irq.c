/* Interrupt vectors and their handler. This file is built with
 * -mgeneral-regs-only: the entry stubs (boot/traps.S) save only the
 * general registers, so nothing the handler runs may touch SSE state. */
#include "kernel/irq.h"

#include <errno.h>
#include <stdio.h>

#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/io.h"
#include "kernel/ioapic.h"
#include "kernel/irq_vec.h"
#include "kernel/madt.h"
#include "kernel/time.h"

#ifdef __SSE__
#error "kernel/irq.c must be built with -mgeneral-regs-only (see the Makefile)"
#endif

struct irq_vec {
    uint64_t count;
    uint32_t pending; /* set by the handler, taken by irq_take */
    uintptr_t ack_status, ack_write;
};

static struct irq_vec vecs[256];
static struct irq_vec_map vec_map;
static uint64_t n_unexpected, n_spurious;
static uint64_t idle_halts, idle_cycles;
static uint64_t timer_late; /* apic_late_avg of the timer's lateness */
static uint32_t my_apic_id;

void irq_dispatch(uint64_t vector);

void irq_dispatch(uint64_t vector)
{
    if (vector == IRQ_VEC_SPURIOUS) {
        n_spurious++; /* SDM 11.9: no EOI for the spurious vector */
        return;
    }
    if (vector == IRQ_VEC_WAKE) {
        apic_eoi(); /* the woken AP looks for its work itself */
        return;
    }
    struct irq_vec *v = &vecs[vector & 0xff];
    if (!irq_vec_used(&vec_map, (unsigned)vector)) {
        n_unexpected++; /* something firmware left armed */
        apic_eoi();
        return;
    }
    v->count++;
    uint32_t what = 1;
    if (v->ack_status) {
        what = mmio_read32(v->ack_status);
        mmio_write32(v->ack_write, what);
    }
    v->pending |= what;
    apic_eoi();
}

static int irq_apics(void)
{
    struct madt_info m;
    const struct acpi_sdt_hdr *h = acpi_find_table("APIC");
    int have_madt = h && madt_parse(h, h->len, &m) == 0;
    if (h && !have_madt)
        printf("irq: ACPI MADT malformed, ignored\n");
    int r = apic_init(IRQ_VEC_SPURIOUS);
    if (r) {
        printf("irq: no local APIC in CPUID: no interrupts, devices stay polled\n");
        return r;
    }
    my_apic_id = apic_id();
    for (unsigned i = 0; have_madt && i < m.n_ioapic; i++)
        if (ioapic_add(m.ioapic[i].addr, m.ioapic[i].gsi_base) < 0)
            printf("irq: I/O APIC %u at 0x%x does not answer, ignored\n", m.ioapic[i].id,
                   (unsigned)m.ioapic[i].addr);
    /* Without ACPI (microvm,acpi=off) try where PC chipsets put it. */
    if (!have_madt && ioapic_add(IOAPIC_DEFAULT_ADDR, 0) > 0)
        printf("irq: no ACPI MADT: I/O APIC at the default 0x%x\n", IOAPIC_DEFAULT_ADDR);
    printf("irq: local APIC %s id %u, %u I/O APIC%s\n", apic_mode(), (unsigned)my_apic_id,
           ioapic_count(), ioapic_count() == 1 ? "" : "s");
    return 0;
}

int irq_init(void)
{
    static int done, result;
    if (done)
        return result;
    done = 1;
    irq_vec_alloc(&vec_map, IRQ_VEC_TIMER, IRQ_VEC_TIMER);
    result = irq_apics();
    if (!result)
        cpu_sti();
    return result;
}

int irq_vector_alloc(void)
{
    return irq_vec_alloc(&vec_map, IRQ_VEC_DEV_FIRST, IRQ_VEC_DEV_LAST);
}

void irq_vector_free(int vec)
{
    if (vec < IRQ_VEC_DEV_FIRST || vec > IRQ_VEC_DEV_LAST)
        return;
    /* Unmarked first: from here the handler counts it as unexpected and
     * leaves its slot alone. */
    irq_vec_free(&vec_map, (unsigned)vec);
    vecs[vec] = (struct irq_vec){0};
}

void irq_vector_level_ack(int vec, uintptr_t status, uintptr_t ack)
{
    vecs[vec & 0xff].ack_write = ack;
    vecs[vec & 0xff].ack_status = status;
}

int irq_route_gsi(uint32_t gsi, int vec, bool level, bool active_low)
{
    return ioapic_route(gsi, (uint8_t)vec, (uint8_t)my_apic_id, level, active_low);
}

int irq_msi_msg(int vec, uint64_t *addr, uint32_t *data)
{
    return apic_msi_msg(my_apic_id, (uint8_t)vec, addr, data);
}

uint64_t irq_count(int vec)
{
    return VN_READ_ONCE(vecs[vec & 0xff].count);
}

uint32_t irq_take(int vec)
{
    /* xchg: the handler cannot slip in between the read and the clear. */
    return __atomic_exchange_n(&vecs[vec & 0xff].pending, 0, __ATOMIC_SEQ_CST);
}

uint64_t irq_unexpected(void)
{
    return VN_READ_ONCE(n_unexpected);
}

uint64_t irq_spurious(void)
{
    return VN_READ_ONCE(n_spurious);
}

int irq_timer_init(void)
{
    static int done, result;
    if (done)
        return result;
    done = 1;
    result = apic_timer_init(IRQ_VEC_TIMER, IRQ_TIMER_CAL_MS);
    if (result)
        printf("irq: the local APIC timer does not count: waits spin\n");
    else
        printf("irq: timer %s %llu Hz\n", apic_timer_mode(), (unsigned long long)apic_timer_hz());
    return result;
}

void irq_idle_enter(void)
{
    cpu_cli();
}

void irq_idle_leave(void)
{
    cpu_sti();
}

/* Woken by the timer: learn how late it was, then spin to the deadline
 * it was armed early for. */
static void irq_idle_timer_woke(uint64_t armed, uint64_t deadline)
{
    uint64_t now = rdtsc();
    timer_late = apic_late_avg(timer_late, now > armed ? now - armed : 0, time_tsc_hz);
    while ((int64_t)(rdtsc() - deadline) < 0)
        barrier_compiler();
}

uint64_t irq_idle(uint64_t deadline)
{
    uint64_t armed = deadline - timer_late;
    if (deadline && (int64_t)(armed - rdtsc()) <= 0) {
        /* Closer than the timer can wake: spin, interrupts on. */
        cpu_sti();
        while ((int64_t)(rdtsc() - deadline) < 0)
            barrier_compiler();
        return 0;
    }
    irq_take(IRQ_VEC_TIMER);
    if (deadline)
        apic_timer_arm(armed);
    uint64_t t0 = rdtsc();
    cpu_sti_hlt();
    uint64_t t = rdtsc() - t0;
    if (deadline) {
        apic_timer_stop();
        if (irq_take(IRQ_VEC_TIMER))
            irq_idle_timer_woke(armed, deadline);
    }
    idle_halts++;
    idle_cycles += t;
    return t;
}

void irq_idle_stats(struct irq_idle_stats *s)
{
    s->halts = idle_halts;
    s->halt_cycles = idle_cycles;
    s->timer_late_cycles = timer_late;
}
