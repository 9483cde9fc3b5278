#include "apps/percpu.h"

#include <errno.h>

#include "drivers/virtio/vnet.h"
#include "kernel/exit.h"
#include "kernel/irq.h"
#include "kernel/time.h"

void percpu_route(const char *app, struct vnet_dev *d, unsigned q, bool tx, unsigned cpu)
{
    int r = vnet_queue_cpu(d, q, tx, cpu, smp_apic_id(cpu));
    if (r == -EOPNOTSUPP)
        vn_fatal(VN_EXIT_CONFIG,
                 "%s: vcpus=%u: pair %u runs on CPU %u, which the device's one interrupt line "
                 "(virtio-mmio) does not reach: notify=poll",
                 app, smp_cpus_up(), q, cpu);
    if (r)
        vn_fatal(VN_EXIT_DEVICE,
                 "%s: pair %u %s: its interrupts cannot go to CPU %u (APIC id %u): %d", app, q,
                 tx ? "TX" : "RX", cpu, (unsigned)smp_apic_id(cpu), r);
}

void percpu_plan(const char *app, struct vnet_dev *d, struct qstats_plan *p)
{
    qstats_plan(p, vnet_pairs(d), smp_cpus_up());
    for (unsigned q = 0; q < p->npairs; q++) {
        percpu_route(app, d, q, false, p->cpu_of[q]);
        percpu_route(app, d, q, true, p->cpu_of[q]);
    }
}

void percpu_start(const char *app, const struct qstats_plan *p, smp_fn fn, void *arg)
{
    for (unsigned k = 1; k < p->ncpu; k++)
        if (smp_run(k, fn, arg) < 0)
            vn_fatal(VN_EXIT_INTERNAL, "%s: CPU %u is not idle", app, k);
}

void percpu_stop(const struct qstats_plan *p, uint32_t *stop)
{
    __atomic_store_n(stop, 1, __ATOMIC_RELEASE);
    for (unsigned k = 1; k < p->ncpu; k++)
        smp_wake(k);
}

void percpu_wait(const struct qstats_plan *p)
{
    for (unsigned k = 1; k < p->ncpu; k++)
        smp_wait(k);
}

/* The earlier of deadline and the bound of a coalescing RX queue, whose
 * interrupt may not come (vnet_idle_max_ns). */
static uint64_t percpu_until(const struct vnet_dev *d, uint64_t deadline)
{
    uint64_t max = vnet_idle_max_ns(d);
    if (!max)
        return deadline;
    uint64_t bound = time_cycles() + time_ns_to_cycles(max);
    return deadline && deadline < bound ? deadline : bound;
}

uint64_t percpu_idle(struct vnet_dev *d, unsigned cpu, uint64_t deadline, const uint32_t *stop)
{
    uint64_t until = percpu_until(d, deadline), cycles = 0;
    irq_idle_enter();
    int busy = vnet_idle_arm_cpu(d, cpu);
    /* After the arming: a stop stored later comes with its wake IPI,
     * which ends the halt at once. */
    if (!busy && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
        busy = 1;
    if (busy)
        irq_idle_leave();
    else
        cycles = irq_idle(until);
    vnet_idle_done_cpu(d, cpu, cycles);
    return cycles;
}
