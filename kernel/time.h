#ifndef VN_TIME_H
#define VN_TIME_H

#include <stdint.h>
#include "kernel/io.h"

extern uint64_t time_tsc_hz;    /* TSC ticks per second: coarse from time_init, final from
                                 * time_finish */
extern uint32_t time_tsc_ppm;   /* the measured rate's worst-case error; 0 when stated */
extern uint64_t time_tsc_start; /* TSC when the kernel started */
extern uint64_t time_app_start; /* TSC when the app started (apps/apps_main.c) */

/* Finds the TSC frequency (hypervisor leaf 0x40000010, kvmclock, CPUID
 * 0x15/0x16), else starts a calibration against the ACPI PM timer or the
 * PIT: from here time_tsc_hz is at least a coarse rate (within a few
 * hundred ppm), good for waits and timeouts. */
void time_init(uint64_t acpi_pm_port);

/* The final rate: ends the calibration's window (waiting until its error
 * is at most 50 ppm, kernel/time.c) or returns at once for a stated one.
 * Returns the source's name (the boot line's tsc_method). */
const char *time_finish(void);

static inline uint64_t time_cycles(void)
{
    return rdtsc();
}

static inline uint64_t time_cycles_to_ns(uint64_t c)
{
    return (uint64_t)((unsigned __int128)c * 1000000000u / time_tsc_hz);
}

/* Nanoseconds since the kernel started. */
static inline uint64_t time_ns(void)
{
    return time_cycles_to_ns(rdtsc() - time_tsc_start);
}

static inline uint64_t time_ns_to_cycles(uint64_t ns)
{
    return (uint64_t)((unsigned __int128)ns * time_tsc_hz / 1000000000u);
}

void time_delay_us(uint64_t us);

#endif
