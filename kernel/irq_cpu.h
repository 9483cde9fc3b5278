/* Interrupt state that must not be shared between CPUs: each CPU's own
 * halts, timer and stray interrupts, and per vector who took it. Pure,
 * unit-tested on the host. A device vector's MSI message names one CPU
 * (the owner of its queue, kernel/apic.h), so its state has one writer,
 * that CPU's handler; the timer vector fires on every CPU, so its note
 * lives in each CPU's own struct irq_cpu. No locks: a CPU writes only its
 * own line, and the boot CPU reads the others once they are done. */
#ifndef VN_IRQ_CPU_H
#define VN_IRQ_CPU_H

#include <stdint.h>

#define IRQ_CPU_MAX 8 /* SMP_MAX_CPUS (_Static_assert in kernel/irq.c) */

struct irq_cpu {
    uint64_t halts, halt_cycles;
    uint64_t timer_late; /* apic_late_avg of this CPU's timer */
    uint64_t spurious, unexpected;
    uint32_t timer_pending; /* set by the handler, taken by the halt */
    uint32_t timer_ready;   /* this CPU's LVT timer entry written */
} __attribute__((aligned(64)));

struct irq_vec_state {
    uint64_t count;
    uint32_t pending; /* set by the handler, taken by irq_take */
    uint32_t cpus;    /* bit k: CPU k took it */
};

/* The handler's note on CPU cpu: what (1 for an edge source, the
 * acknowledged status bits for a level one) arrived on v. */
static inline void irq_vec_note(struct irq_vec_state *v, unsigned cpu, uint32_t what)
{
    v->count++;
    v->pending |= what;
    v->cpus |= 1u << (cpu % IRQ_CPU_MAX);
}

/* The CPU that took every interrupt of a mask of irq_vec_state.cpus: its
 * index, -1 when none came, -2 when several CPUs took them. */
static inline int irq_cpus_one(uint32_t cpus)
{
    if (!cpus)
        return -1;
    if (cpus & (cpus - 1))
        return -2;
    return __builtin_ctz(cpus);
}

/* A halt of cycles on c. */
static inline void irq_cpu_halted(struct irq_cpu *c, uint64_t cycles)
{
    c->halts++;
    c->halt_cycles += cycles;
}

/* The first n CPUs' halts added up; the timer's lateness is the worst. */
static inline void irq_cpu_sum(const struct irq_cpu *c, unsigned n, struct irq_cpu *t)
{
    *t = (struct irq_cpu){0};
    for (unsigned k = 0; k < n && k < IRQ_CPU_MAX; k++) {
        t->halts += c[k].halts;
        t->halt_cycles += c[k].halt_cycles;
        t->spurious += c[k].spurious;
        t->unexpected += c[k].unexpected;
        if (c[k].timer_late > t->timer_late)
            t->timer_late = c[k].timer_late;
    }
}

#endif
