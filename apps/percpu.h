/* An app's instances on the CPUs of its plan (apps/qstats.h): each pair's
 * interrupts sent to the CPU that owns it, the APs' start, stop and end,
 * and an AP's loop, which halts on its own pairs' interrupts. */
#ifndef VN_PERCPU_H
#define VN_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/qstats.h"
#include "kernel/smp.h"

struct vnet_dev;

#define PERCPU_DEVS 2 /* fwd's two devices */

/* The plan for d's pairs over the CPUs up, each pair's RX and TX
 * notifications sent to its CPU (percpu_route). A pair whose CPU an MSI
 * cannot name (an APIC ID above 255) is polled: one line names them. */
void percpu_plan(const char *app, struct vnet_dev *d, struct qstats_plan *p);

/* Pair q's RX (or TX) interrupts to CPU cpu (vnet_queue_cpu). A
 * transport whose one line reaches only CPU 0 (virtio-mmio) is the config
 * error's one line, naming the notify= that works; anything else that
 * fails is the device's. Returns 1 when the queue is polled instead (its
 * CPU's APIC ID is beyond an MSI's destination field), else 0. */
int percpu_route(const char *app, struct vnet_dev *d, unsigned q, bool tx, unsigned cpu);

/* One app's run on its CPUs. round: one pass over CPU cpu's pairs, the
 * frames it took. due (NULL: none): the CPU's own next deadline (0:
 * none), such as a request's timeout. done (NULL: no count=): the app's
 * count so far; an AP that sees it reach count wakes CPU 0 once. With
 * tx_holds_rx (reflect, fwd, the rr server send the received buffer
 * itself) a CPU does not halt while its frames are on a TX ring: their
 * completion does not wake it, and they hold RX buffers. halt: the
 * devices' RX can end a halt (notify=irq|hybrid). */
struct percpu_job {
    const struct qstats_plan *plan;
    struct vnet_dev *dev[PERCPU_DEVS];
    unsigned ndev;
    int (*round)(unsigned cpu, uint64_t now);
    uint64_t (*due)(unsigned cpu);
    uint64_t (*done)(void);
    uint64_t end, count;
    uint32_t stop; /* CPU 0 tells the APs (release, percpu_stop) */
    bool halt, tx_holds_rx;
};

/* halt set from the job's devices (every one's RX can end a halt). */
void percpu_job_ready(struct percpu_job *j);

/* Runs fn(cpu, arg) on CPUs 1..ncpu-1; wait returns when all are done.
 * stop: *stop set (release) and every AP woken from its halt. */
void percpu_start(const char *app, const struct qstats_plan *p, smp_fn fn, void *arg);
void percpu_stop(const struct qstats_plan *p, uint32_t *stop);
void percpu_wait(const struct qstats_plan *p);

/* Whether CPU cpu, its last round empty, may halt: the job's devices
 * can end a halt and, with tx_holds_rx, none of its frames is on a TX
 * ring. CPU 0 then halts in net_idle (lwIP's timers end it too), an AP
 * in percpu_idle. */
bool percpu_may_halt(const struct percpu_job *j, unsigned cpu);

/* An AP's loop: rounds until stop or the end; a round that took nothing
 * halts (percpu_idle) when the job may, until the end or due's deadline. */
void percpu_loop(struct percpu_job *j, unsigned cpu);

/* On CPU cpu, with its RX queues empty: the race-free halt (kernel/irq.h)
 * on their interrupts on every device of j, until deadline (0: none; a
 * coalescing queue's bound comes first) or j->stop. Returns the cycles
 * halted (0: it did not halt: frames came, a queue is polled, or stop
 * was set). */
uint64_t percpu_idle(struct percpu_job *j, unsigned cpu, uint64_t deadline);

#endif
