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
#include "kernel/irq_cpu.h"
#include "kernel/irq_vec.h"
#include "kernel/madt.h"
#include "kernel/smp.h"
#include "kernel/time.h"

#ifdef __SSE__
#error "kernel/irq.c must be built with -mgeneral-regs-only (see the Makefile)"
#endif

_Static_assert(IRQ_CPU_MAX == SMP_MAX_CPUS, "one struct irq_cpu per CPU the kernel starts");

struct irq_vec {
    struct irq_vec_state s;
    uintptr_t ack_status, ack_write;
};

static struct irq_vec vecs[256];
static struct irq_vec_map vec_map;
static struct irq_cpu cpu_state[IRQ_CPU_MAX];
static uint32_t my_apic_id;
static int timer_result = -EIO; /* the boot CPU's irq_timer_init */

static struct irq_cpu *irq_this_cpu(void)
{
    return &cpu_state[smp_cpu_index() % IRQ_CPU_MAX];
}

void irq_dispatch(uint64_t vector);

/* The vectors that are no device's: the spurious one, the wake IPI,
 * the timer (every CPU's own), and strays. 1 when vector was one. */
static int irq_dispatch_cpu(uint64_t vector)
{
    struct irq_cpu *c = irq_this_cpu();
    if (vector == IRQ_VEC_SPURIOUS) {
        c->spurious++; /* SDM 11.9: no EOI for the spurious vector */
        return 1;
    }
    bool device = vector != IRQ_VEC_TIMER && vector != IRQ_VEC_WAKE;
    if (device && irq_vec_used(&vec_map, (unsigned)vector))
        return 0;
    if (vector == IRQ_VEC_TIMER)
        c->timer_pending = 1;
    else if (device)
        c->unexpected++; /* something firmware left armed */
    /* The wake IPI only ends a hlt: the woken CPU looks for work itself. */
    apic_eoi();
    return 1;
}

void irq_dispatch(uint64_t vector)
{
    if (irq_dispatch_cpu(vector))
        return;
    struct irq_vec *v = &vecs[vector & 0xff];
    uint32_t what = 1;
    if (v->ack_status) {
        what = mmio_read32(v->ack_status);
        mmio_write32(v->ack_write, what);
    }
    irq_vec_note(&v->s, smp_cpu_index(), what);
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

int irq_msi_msg(int vec, uint32_t dest, uint64_t *addr, uint32_t *data)
{
    return apic_msi_msg(dest, (uint8_t)vec, addr, data);
}

uint32_t irq_boot_apic_id(void)
{
    return my_apic_id;
}

uint64_t irq_count(int vec)
{
    return VN_READ_ONCE(vecs[vec & 0xff].s.count);
}

uint32_t irq_cpus(int vec)
{
    return VN_READ_ONCE(vecs[vec & 0xff].s.cpus);
}

uint32_t irq_take(int vec)
{
    /* xchg: the handler cannot slip in between the read and the clear. */
    return __atomic_exchange_n(&vecs[vec & 0xff].s.pending, 0, __ATOMIC_SEQ_CST);
}

uint64_t irq_unexpected(void)
{
    struct irq_cpu t;
    irq_cpu_sum(cpu_state, IRQ_CPU_MAX, &t);
    return t.unexpected;
}

uint64_t irq_spurious(void)
{
    struct irq_cpu t;
    irq_cpu_sum(cpu_state, IRQ_CPU_MAX, &t);
    return t.spurious;
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
        printf("irq: timer %s %llu Hz (from %s)\n", apic_timer_mode(),
               (unsigned long long)apic_timer_hz(), apic_timer_source());
    timer_result = result;
    cpu_state[0].timer_ready = !result;
    return result;
}

/* An AP's first timed halt: its own LVT timer entry, with the boot CPU's
 * calibration (the same bus clock on every CPU). */
static void irq_timer_local(struct irq_cpu *c)
{
    if (timer_result)
        return;
    apic_timer_init_ap();
    c->timer_ready = 1;
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
static void irq_idle_timer_woke(struct irq_cpu *c, uint64_t armed, uint64_t deadline)
{
    uint64_t now = rdtsc();
    c->timer_late = apic_late_avg(c->timer_late, now > armed ? now - armed : 0, time_tsc_hz);
    while ((int64_t)(rdtsc() - deadline) < 0)
        barrier_compiler();
}

uint64_t irq_idle(uint64_t deadline)
{
    struct irq_cpu *c = irq_this_cpu();
    if (deadline && !c->timer_ready)
        irq_timer_local(c);
    uint64_t armed = deadline - c->timer_late;
    if (deadline && (int64_t)(armed - rdtsc()) <= 0) {
        /* Closer than the timer can wake: spin, interrupts on. */
        cpu_sti();
        while ((int64_t)(rdtsc() - deadline) < 0)
            barrier_compiler();
        return 0;
    }
    __atomic_exchange_n(&c->timer_pending, 0, __ATOMIC_SEQ_CST);
    if (deadline)
        apic_timer_arm(armed);
    uint64_t t0 = rdtsc();
    cpu_sti_hlt();
    uint64_t t = rdtsc() - t0;
    if (deadline) {
        apic_timer_stop();
        if (__atomic_exchange_n(&c->timer_pending, 0, __ATOMIC_SEQ_CST))
            irq_idle_timer_woke(c, armed, deadline);
    }
    irq_cpu_halted(c, t);
    return t;
}

static void irq_stats_of(const struct irq_cpu *c, struct irq_idle_stats *s)
{
    s->halts = c->halts;
    s->halt_cycles = c->halt_cycles;
    s->timer_late_cycles = c->timer_late;
}

void irq_idle_stats(struct irq_idle_stats *s)
{
    struct irq_cpu t;
    irq_cpu_sum(cpu_state, IRQ_CPU_MAX, &t);
    irq_stats_of(&t, s);
}

void irq_idle_stats_cpu(unsigned cpu, struct irq_idle_stats *s)
{
    irq_stats_of(&cpu_state[cpu % IRQ_CPU_MAX], s);
}
