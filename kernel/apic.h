/* Local APIC of each CPU: xAPIC (registers in MMIO) or x2APIC
 * (registers as MSRs), whichever CPUID offers, x2APIC first; its timer
 * (TSC-deadline when CPUID has it, else one-shot calibrated against the
 * TSC); the MSI message that reaches it. Intel SDM vol 3 ch. 11. */
#ifndef VN_APIC_H
#define VN_APIC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel/io.h"

#define APIC_REG_EOI    0x0b0
#define APIC_X2APIC_MSR 0x800 /* + register offset / 16 */
#define APIC_MSI_BASE   0xfee00000u
#define APIC_TICKS_MAX  0xffffffffu

extern uintptr_t apic_mmio; /* xAPIC register page; 0 in x2APIC mode */

/* Enables the local APIC at the address IA32_APIC_BASE gives (software
 * enable, spurious vector, every LVT entry masked, task priority 0).
 * Returns 0 or -ENODEV (no APIC in CPUID). */
int apic_init(uint8_t spurious_vector);
/* The same on an application processor, after apic_init on the boot CPU:
 * its APIC in the boot CPU's mode, LVT entries masked, enabled. */
void apic_init_ap(uint8_t spurious_vector);

/* Inter-processor interrupts (SDM 11.6.1): the ICR's low word (delivery
 * mode, level, vector) to the APIC with ID dest. 0, -ERANGE (an ID xAPIC
 * cannot address) or -EIO (xAPIC: still pending after many polls). */
#define APIC_ICR_INIT    0x00000500u
#define APIC_ICR_STARTUP 0x00000600u
#define APIC_ICR_FIXED   0x00000000u
#define APIC_ICR_ASSERT  0x00004000u
#define APIC_ICR_LEVEL   0x00008000u
int apic_send_ipi(uint32_t dest, uint32_t icr_lo);

const char *apic_mode(void); /* "xapic" or "x2apic" */
uint32_t apic_id(void);

/* End of interrupt: one register write. Inline and without SSE so the
 * interrupt path (kernel/irq.c, built without SSE) can use it. */
static inline void apic_eoi(void)
{
    if (apic_mmio)
        mmio_write32(apic_mmio + APIC_REG_EOI, 0);
    else
        msr_write(APIC_X2APIC_MSR + (APIC_REG_EOI >> 4), 0);
}

/* The one-shot timer's rate over the TSC calibration's window, with no
 * wait of its own (kmain, after apic_init): start counts down from
 * APIC_TICKS_MAX, masked, end reads the count against the final TSC
 * rate; each end is one read bracketed by the TSC (the narrowest of 4).
 * Nothing on a TSC-deadline CPU. */
void apic_timer_window_start(void);
void apic_timer_window_end(void);

/* Timer on vector. TSC-deadline needs nothing more; one-shot takes the
 * boot window's rate, else is calibrated against the TSC for cal_ms.
 * Returns 0 or -EIO when the one-shot counter does not count. */
int apic_timer_init(uint8_t vector, unsigned cal_ms);
/* This AP's timer in the boot CPU's mode and calibration, after
 * apic_timer_init succeeded there. */
void apic_timer_init_ap(void);
const char *apic_timer_mode(void);   /* "tsc_deadline" or "oneshot" */
const char *apic_timer_source(void); /* where its rate came from, for the irq line */
uint64_t apic_timer_hz(void);        /* one-shot ticks per second (0 for TSC-deadline) */

/* One interrupt once the TSC reaches deadline (one-shot: at most
 * APIC_TICKS_MAX ticks from now; waking earlier is the caller's to
 * handle). apic_timer_stop cancels it. */
void apic_timer_arm(uint64_t deadline);
void apic_timer_stop(void);

/* One-shot ticks for a wait of cycles TSC cycles: rounded down (an early
 * wake is looked at again, a late one delays what waits), at least 1, at
 * most APIC_TICKS_MAX. */
static inline uint32_t apic_ticks_for(uint64_t cycles, uint64_t timer_hz, uint64_t tsc_hz)
{
    if (!tsc_hz)
        return 1;
    unsigned __int128 t = (unsigned __int128)cycles * timer_hz / tsc_hz;
    if (t == 0)
        return 1;
    return t > APIC_TICKS_MAX ? APIC_TICKS_MAX : (uint32_t)t;
}

/* Calibration: the counter went down by ticks while the TSC advanced
 * cycles. Ticks per second, 0 when nothing was measured. */
static inline uint64_t apic_hz_from(uint32_t ticks, uint64_t cycles, uint64_t tsc_hz)
{
    if (!cycles || !ticks)
        return 0;
    return (uint64_t)((unsigned __int128)ticks * tsc_hz / cycles);
}

/* The timer's interrupt comes some cycles after its deadline (under TCG
 * tens of microseconds: the host's timer, then QEMU). A waiter that must
 * not be late arms it that much early and spins the rest. The estimate
 * is a running mean, 1/8 weight per sample; a sample above the cap (the
 * vCPU was descheduled, not the timer slow) counts as the cap. */
#define APIC_LATE_CAP_DIV 1000 /* cap: a millisecond's worth of cycles */
static inline uint64_t apic_late_avg(uint64_t avg, uint64_t sample, uint64_t tsc_hz)
{
    uint64_t cap = tsc_hz / APIC_LATE_CAP_DIV;
    if (sample > cap)
        sample = cap;
    return sample >= avg ? avg + (sample - avg) / 8 : avg - (avg - sample) / 8;
}

/* The MSI message (Intel SDM vol 3 11.11) for a fixed, edge-triggered
 * interrupt on vector to the local APIC with ID dest, physical
 * destination mode. Destinations above 255 need interrupt remapping
 * (-ERANGE); vectors below 32 are the CPU's exceptions (-EINVAL). */
static inline int apic_msi_msg(uint32_t dest, uint8_t vector, uint64_t *addr, uint32_t *data)
{
    if (dest > 255)
        return -ERANGE;
    if (vector < 32)
        return -EINVAL;
    *addr = APIC_MSI_BASE | (uint64_t)dest << 12;
    *data = vector;
    return 0;
}

#endif
