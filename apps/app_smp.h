/* The run's CPUs (apps/app_smp.c). */
#ifndef VN_APP_SMP_H
#define VN_APP_SMP_H

#include "apps/app_config.h"

/* Starts the CPUs vcpus= asks for (0: every CPU the MADT lists, at most
 * queues=), or ends the run with one line: more than the machine has is
 * a config error (2), an AP that does not answer VN_EXIT_CPU (10). Prints
 * the smp line and its machine line. */
void app_smp_start(const struct app_config *cfg);

#endif
