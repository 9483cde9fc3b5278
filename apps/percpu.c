#include "apps/percpu.h"

#include <errno.h>
#include <stdio.h>

#include "drivers/virtio/vnet.h"
#include "kernel/exit.h"
#include "kernel/irq.h"
#include "kernel/time.h"

int percpu_route(const char *app, struct vnet_dev *d, unsigned q, bool tx, unsigned cpu)
{
    int r = vnet_queue_cpu(d, q, tx, cpu, smp_apic_id(cpu));
    if (r == -EOPNOTSUPP)
        vn_fatal(VN_EXIT_CONFIG,
                 "%s: vcpus=%u: pair %u runs on CPU %u, which the device's one interrupt line "
                 "(virtio-mmio) does not reach: notify=poll",
                 app, smp_cpus_up(), q, cpu);
    if (r < 0)
        vn_fatal(VN_EXIT_DEVICE,
                 "%s: pair %u %s: its interrupts cannot go to CPU %u (APIC id %u): %d", app, q,
                 tx ? "TX" : "RX", cpu, (unsigned)smp_apic_id(cpu), r);
    return r == VNET_QUEUE_POLLED;
}

/* The one line for the pairs whose CPU an MSI cannot name. */
static void percpu_polled_line(const char *app, struct vnet_dev *d, const struct qstats_plan *p,
                               const bool *polled)
{
    char list[VNET_MAX_PAIRS * 12] = "";
    size_t at = 0;
    for (unsigned q = 0; q < p->npairs && at < sizeof(list); q++)
        if (polled[q])
            at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%u (APIC id %u)",
                                   at ? ", " : "", q, (unsigned)smp_apic_id(p->cpu_of[q]));
    if (at)
        printf("%s: %s: pairs %s polled: an MSI names APIC ids 0..255 only (no interrupt "
               "remapping)\n",
               app, vnet_name(d), list);
}

void percpu_plan(const char *app, struct vnet_dev *d, struct qstats_plan *p)
{
    bool polled[VNET_MAX_PAIRS] = {false};
    qstats_plan(p, vnet_pairs(d), smp_cpus_up());
    for (unsigned q = 0; q < p->npairs; q++) {
        polled[q] = percpu_route(app, d, q, false, p->cpu_of[q]);
        polled[q] = percpu_route(app, d, q, true, p->cpu_of[q]) || polled[q];
    }
    percpu_polled_line(app, d, p, polled);
}

void percpu_job_ready(struct percpu_job *j)
{
    j->halt = true;
    for (unsigned i = 0; i < j->ndev; i++)
        j->halt = j->halt && vnet_can_idle(j->dev[i]);
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

/* count= reached on this AP's frames: CPU 0, which may be halted on its
 * own pairs, is woken to end the run (once). */
static void percpu_count_check(const struct percpu_job *j, bool *woke)
{
    if (*woke || !j->done || !j->count || j->done() < j->count)
        return;
    smp_wake(0);
    *woke = true;
}

/* Whether CPU cpu's frames are all off its TX rings. */
static bool percpu_tx_idle(const struct percpu_job *j, unsigned cpu)
{
    for (unsigned q = 0; q < j->plan->npairs; q++) {
        if (j->plan->cpu_of[q] != cpu)
            continue;
        for (unsigned i = 0; i < j->ndev; i++)
            if (vnet_tx_in_flight_q(j->dev[i], q) > 0)
                return false;
    }
    return true;
}

bool percpu_may_halt(const struct percpu_job *j, unsigned cpu)
{
    return j->halt && (!j->tx_holds_rx || percpu_tx_idle(j, cpu));
}

/* The earlier of two deadlines (0: none). */
static uint64_t percpu_earlier(uint64_t a, uint64_t b)
{
    return a && (!b || a < b) ? a : b;
}

void percpu_loop(struct percpu_job *j, unsigned cpu)
{
    bool woke = false;
    while (!__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) {
        uint64_t now = time_cycles();
        if (now >= j->end)
            break;
        if (j->round(cpu, now))
            percpu_count_check(j, &woke);
        else if (percpu_may_halt(j, cpu))
            percpu_idle(j, cpu, percpu_earlier(j->due ? j->due(cpu) : 0, j->end));
    }
}

/* The earlier of deadline and the bound of a coalescing RX queue, whose
 * interrupt may not come (vnet_idle_max_ns). */
static uint64_t percpu_until(const struct percpu_job *j, uint64_t deadline)
{
    uint64_t now = time_cycles();
    for (unsigned i = 0; i < j->ndev; i++) {
        uint64_t max = vnet_idle_max_ns(j->dev[i]);
        if (max)
            deadline = percpu_earlier(deadline, now + time_ns_to_cycles(max));
    }
    return deadline;
}

uint64_t percpu_idle(struct percpu_job *j, unsigned cpu, uint64_t deadline)
{
    uint64_t until = percpu_until(j, deadline), cycles = 0;
    irq_idle_enter();
    int busy = 0;
    unsigned armed = 0;
    while (armed < j->ndev && !busy)
        busy = vnet_idle_arm_cpu(j->dev[armed++], cpu);
    /* After the arming: a stop stored later comes with its wake IPI,
     * which ends the halt at once. */
    if (!busy && __atomic_load_n(&j->stop, __ATOMIC_ACQUIRE))
        busy = 1;
    if (busy)
        irq_idle_leave();
    else
        cycles = irq_idle(until);
    for (unsigned i = 0; i < armed; i++)
        vnet_idle_done_cpu(j->dev[i], cpu, cycles);
    return cycles;
}
