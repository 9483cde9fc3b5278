/* Simulated interrupts (see sim_irq.h). */
#include "sim_irq.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernel/irq.h"

void sim_relax(void);

void (*sim_idle_race)(void);
unsigned sim_lost_wakeups, sim_halts;
static uint64_t counts[256];
static uint32_t pending[256];
static bool irqs_off, irr;

void sim_irq_reset(void)
{
    memset(counts, 0, sizeof(counts));
    memset(pending, 0, sizeof(pending));
    irqs_off = irr = false;
    sim_idle_race = 0;
    sim_lost_wakeups = sim_halts = 0;
}

void sim_irq_raise(int vec)
{
    counts[vec & 0xff]++;
    pending[vec & 0xff] |= 1;
    if (irqs_off)
        irr = true;
}

int irq_timer_init(void)
{
    return 0;
}

uint64_t irq_count(int vec)
{
    return counts[vec & 0xff];
}

/* The simulated device's interrupts all reach CPU 0. */
uint32_t irq_cpus(int vec)
{
    return counts[vec & 0xff] ? 1u : 0u;
}

uint32_t irq_take(int vec)
{
    uint32_t p = pending[vec & 0xff];
    pending[vec & 0xff] = 0;
    return p;
}

void irq_idle_enter(void)
{
    assert(!irqs_off); /* never nested */
    irqs_off = true;
    irr = false;
}

void irq_idle_leave(void)
{
    assert(irqs_off);
    irqs_off = false;
}

uint64_t irq_idle(uint64_t deadline)
{
    assert(irqs_off);
    sim_halts++;
    if (sim_idle_race)
        sim_idle_race();
    sim_relax();
    irqs_off = false;
    if (!irr && !deadline)
        sim_lost_wakeups++;
    return 1000;
}
