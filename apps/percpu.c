#include "apps/percpu.h"

#include "drivers/virtio/vnet.h"
#include "kernel/exit.h"

void percpu_plan(const char *app, struct vnet_dev *d, bool tx, struct qstats_plan *p)
{
    qstats_plan(p, vnet_pairs(d), smp_cpus_up());
    for (unsigned q = 0; q < p->npairs; q++) {
        if (!p->cpu_of[q])
            continue;
        bool rx_irq = vnet_rx_notify_mode(d, q) != VNET_NOTIFY_POLL;
        bool tx_irq = tx && vnet_tx_notify_mode(d, q) != VNET_NOTIFY_POLL;
        if (rx_irq || tx_irq)
            vn_fatal(VN_EXIT_CONFIG,
                     "%s: vcpus=%u: pair %u runs on CPU %u, which interrupts do not reach: "
                     "notify=poll",
                     app, smp_cpus_up(), q, (unsigned)p->cpu_of[q]);
    }
}

void percpu_start(const char *app, const struct qstats_plan *p, smp_fn fn, void *arg)
{
    for (unsigned k = 1; k < p->ncpu; k++)
        if (smp_run(k, fn, arg) < 0)
            vn_fatal(VN_EXIT_INTERNAL, "%s: CPU %u is not idle", app, k);
}

void percpu_wait(const struct qstats_plan *p)
{
    for (unsigned k = 1; k < p->ncpu; k++)
        smp_wait(k);
}
