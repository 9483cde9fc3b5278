/* An app's instances on the CPUs of its plan (apps/qstats.h): each pair's
 * interrupts sent to the CPU that owns it, the APs' start, stop and end,
 * and an AP's halt on its own pairs' interrupts. */
#ifndef VN_PERCPU_H
#define VN_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/qstats.h"
#include "kernel/smp.h"

struct vnet_dev;

/* The plan for d's pairs over the CPUs up, each pair's RX and TX
 * notifications sent to its CPU (percpu_route). */
void percpu_plan(const char *app, struct vnet_dev *d, struct qstats_plan *p);

/* Pair q's RX (or TX) interrupts to CPU cpu (vnet_queue_cpu). A
 * transport whose one line reaches only CPU 0 (virtio-mmio) is the config
 * error's one line, naming the notify= that works; anything else that
 * fails is the device's. */
void percpu_route(const char *app, struct vnet_dev *d, unsigned q, bool tx, unsigned cpu);

/* Runs fn(cpu, arg) on CPUs 1..ncpu-1; wait returns when all are done.
 * stop: *stop set (release) and every AP woken from its halt. */
void percpu_start(const char *app, const struct qstats_plan *p, smp_fn fn, void *arg);
void percpu_stop(const struct qstats_plan *p, uint32_t *stop);
void percpu_wait(const struct qstats_plan *p);

/* On CPU cpu, with its RX queues empty: the race-free halt (kernel/irq.h)
 * on their interrupts, until deadline (0: none; a coalescing queue's bound
 * comes first) or *stop. Returns the cycles halted (0: it did not halt:
 * frames came, a queue is polled, or stop was set). */
uint64_t percpu_idle(struct vnet_dev *d, unsigned cpu, uint64_t deadline, const uint32_t *stop);

#endif
