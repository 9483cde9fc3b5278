/* An app's instances on the CPUs of its plan (apps/qstats.h): the check
 * that every pair an AP owns is polled (interrupts reach CPU 0 only), and
 * the APs' start and end. */
#ifndef VN_PERCPU_H
#define VN_PERCPU_H

#include <stdbool.h>

#include "apps/qstats.h"
#include "kernel/smp.h"

struct vnet_dev;

/* The plan for d's pairs over the CPUs up; a pair on a CPU other than 0
 * whose RX (and TX when tx) waits for interrupts is the config error's
 * one line, naming the notify= that works. */
void percpu_plan(const char *app, struct vnet_dev *d, bool tx, struct qstats_plan *p);

/* Runs fn(cpu, arg) on CPUs 1..ncpu-1; wait returns when all are done. */
void percpu_start(const char *app, const struct qstats_plan *p, smp_fn fn, void *arg);
void percpu_wait(const struct qstats_plan *p);

#endif
