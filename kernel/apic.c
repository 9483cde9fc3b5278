/* Local APIC: mode, registers, timer (Intel SDM vol 3 ch. 11). */
#include "kernel/apic.h"

#include <errno.h>

#include "kernel/mem.h"
#include "kernel/time.h"

#define MSR_APIC_BASE     0x1b
#define APIC_BASE_EXTD    (1ull << 10) /* x2APIC mode */
#define APIC_BASE_EN      (1ull << 11)
#define APIC_BASE_ADDR    0x000ffffffffff000ull
#define MSR_TSC_DEADLINE  0x6e0
#define CPUID1_EDX_APIC   (1u << 9)
#define CPUID1_ECX_X2APIC (1u << 21)
#define CPUID1_ECX_TSCDL  (1u << 24)

#define APIC_REG_ID      0x020
#define APIC_REG_VERSION 0x030
#define APIC_REG_TPR     0x080
#define APIC_REG_SVR     0x0f0
#define APIC_REG_ESR     0x280
#define APIC_REG_LVT_TMR 0x320
#define APIC_REG_LVT_THM 0x330
#define APIC_REG_LVT_PMC 0x340
#define APIC_REG_LINT0   0x350
#define APIC_REG_LINT1   0x360
#define APIC_REG_LVT_ERR 0x370
#define APIC_REG_TMR_INI 0x380
#define APIC_REG_TMR_CUR 0x390
#define APIC_REG_TMR_DIV 0x3e0

#define APIC_SVR_ENABLE (1u << 8)
#define APIC_LVT_MASKED (1u << 16)
#define APIC_LVT_TSC_DL (2u << 17)
#define APIC_TMR_DIV_1  0xb

uintptr_t apic_mmio;
static bool apic_x2;
static bool timer_tscdl;
static uint64_t timer_hz;
static uint8_t timer_vec;

static uint32_t apic_read(unsigned reg)
{
    if (apic_mmio)
        return mmio_read32(apic_mmio + reg);
    return (uint32_t)msr_read(APIC_X2APIC_MSR + (reg >> 4));
}

static void apic_write(unsigned reg, uint32_t v)
{
    if (apic_mmio)
        mmio_write32(apic_mmio + reg, v);
    else
        msr_write(APIC_X2APIC_MSR + (reg >> 4), v);
}

/* This CPU's APIC: the mode the boot CPU chose (IA32_APIC_BASE is per
 * CPU), every LVT entry masked, software enabled. */
static void apic_local_setup(uint8_t spurious_vector)
{
    uint64_t base = msr_read(MSR_APIC_BASE);
    /* SDM 11.12.5: disabled -> x2APIC is not a valid transition; go
     * through xAPIC (enabled) first. */
    if (!(base & APIC_BASE_EN)) {
        base |= APIC_BASE_EN;
        msr_write(MSR_APIC_BASE, base);
    }
    if (apic_x2 && !(base & APIC_BASE_EXTD))
        msr_write(MSR_APIC_BASE, base | APIC_BASE_EXTD);
    /* Whatever firmware left armed stays quiet: LVT entries masked
     * (LINT0 is where the 8259s would come in). */
    unsigned max_lvt = (apic_read(APIC_REG_VERSION) >> 16) & 0xff;
    apic_write(APIC_REG_TMR_INI, 0);
    apic_write(APIC_REG_LVT_TMR, APIC_LVT_MASKED);
    apic_write(APIC_REG_LINT0, APIC_LVT_MASKED);
    apic_write(APIC_REG_LINT1, APIC_LVT_MASKED);
    apic_write(APIC_REG_LVT_ERR, APIC_LVT_MASKED);
    if (max_lvt >= 4)
        apic_write(APIC_REG_LVT_PMC, APIC_LVT_MASKED);
    if (max_lvt >= 5)
        apic_write(APIC_REG_LVT_THM, APIC_LVT_MASKED);
    apic_write(APIC_REG_ESR, 0); /* SDM 11.5.3: write before reading; clears it */
    apic_write(APIC_REG_TPR, 0);
    apic_write(APIC_REG_SVR, APIC_SVR_ENABLE | spurious_vector);
}

int apic_init(uint8_t spurious_vector)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    if (!(r[3] & CPUID1_EDX_APIC))
        return -ENODEV;
    uint64_t base = msr_read(MSR_APIC_BASE);
    apic_x2 = (r[2] & CPUID1_ECX_X2APIC) || (base & APIC_BASE_EXTD);
    apic_mmio = 0;
    if (!apic_x2) {
        apic_mmio = mem_map_mmio(base & APIC_BASE_ADDR, PAGE_SIZE);
        if (!apic_mmio)
            return -ENODEV;
    }
    apic_local_setup(spurious_vector);
    return 0;
}

void apic_init_ap(uint8_t spurious_vector)
{
    apic_local_setup(spurious_vector);
}

/* Interrupt command register (SDM 11.6.1): xAPIC writes the destination
 * (ICR high) first, the low half sends; x2APIC is one MSR write
 * (SDM 11.12.9) with the 32-bit destination in the high half. */
#define APIC_REG_ICR_LO   0x300
#define APIC_REG_ICR_HI   0x310
#define APIC_ICR_PENDING  (1u << 12)
#define APIC_ICR_BUSY_CAP 1000000u /* polls; QEMU clears it at once */

int apic_send_ipi(uint32_t dest, uint32_t icr_lo)
{
    if (!apic_x2) {
        if (dest > 255 || !apic_mmio)
            return -ERANGE;
        mmio_write32(apic_mmio + APIC_REG_ICR_HI, dest << 24);
        mmio_write32(apic_mmio + APIC_REG_ICR_LO, icr_lo);
        for (unsigned i = 0; mmio_read32(apic_mmio + APIC_REG_ICR_LO) & APIC_ICR_PENDING; i++)
            if (i == APIC_ICR_BUSY_CAP)
                return -EIO;
        return 0;
    }
    barrier_mfence(); /* SDM 11.12.3: WRMSR to the ICR is not serializing */
    msr_write(APIC_X2APIC_MSR + (APIC_REG_ICR_LO >> 4), (uint64_t)dest << 32 | icr_lo);
    return 0;
}

const char *apic_mode(void)
{
    return apic_x2 ? "x2apic" : "xapic";
}

uint32_t apic_id(void)
{
    uint32_t id = apic_read(APIC_REG_ID);
    return apic_x2 ? id : id >> 24;
}

/* One-shot ticks per second, counted against the TSC over cal_ms with
 * the timer's interrupt masked. */
static uint64_t apic_calibrate(unsigned cal_ms)
{
    apic_write(APIC_REG_TMR_DIV, APIC_TMR_DIV_1);
    apic_write(APIC_REG_LVT_TMR, APIC_LVT_MASKED | timer_vec);
    uint64_t c0 = rdtsc();
    apic_write(APIC_REG_TMR_INI, APIC_TICKS_MAX);
    uint64_t end = c0 + time_ns_to_cycles((uint64_t)cal_ms * 1000000u);
    while ((int64_t)(rdtsc() - end) < 0)
        barrier_compiler();
    uint32_t cur = apic_read(APIC_REG_TMR_CUR);
    uint64_t c1 = rdtsc();
    apic_write(APIC_REG_TMR_INI, 0);
    return apic_hz_from(APIC_TICKS_MAX - cur, c1 - c0, time_tsc_hz);
}

/* The count at a TSC instant: the read bracketed by the TSC, the narrowest
 * of APIC_WINDOW_TRIES, its middle. */
#define APIC_WINDOW_TRIES 4
static uint32_t window_read(uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    uint32_t count = 0;
    for (unsigned i = 0; i < APIC_WINDOW_TRIES; i++) {
        uint64_t a = rdtsc();
        uint32_t v = apic_read(APIC_REG_TMR_CUR);
        uint64_t b = rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            count = v;
        }
    }
    return count;
}

static struct {
    bool on;
    uint64_t c0;
    uint32_t t0;
    uint64_t hz; /* the window's rate, 0 until it ended */
} window;

void apic_timer_window_start(void)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    if (r[2] & CPUID1_ECX_TSCDL)
        return; /* TSC-deadline: no rate to measure */
    apic_write(APIC_REG_TMR_DIV, APIC_TMR_DIV_1);
    apic_write(APIC_REG_LVT_TMR, APIC_LVT_MASKED);
    apic_write(APIC_REG_TMR_INI, APIC_TICKS_MAX);
    window.t0 = window_read(&window.c0);
    window.on = true;
}

void apic_timer_window_end(void)
{
    uint64_t c1;
    if (!window.on)
        return;
    window.on = false;
    uint32_t t1 = window_read(&c1);
    apic_write(APIC_REG_TMR_INI, 0);
    /* A counter that ran out (over 4 s at 1 GHz) or never ran: no rate. */
    if (t1 && t1 < window.t0)
        window.hz = apic_hz_from(window.t0 - t1, c1 - window.c0, time_tsc_hz);
}

int apic_timer_init(uint8_t vector, unsigned cal_ms)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    timer_vec = vector;
    timer_tscdl = r[2] & CPUID1_ECX_TSCDL;
    if (timer_tscdl) {
        apic_write(APIC_REG_LVT_TMR, APIC_LVT_TSC_DL | vector);
        /* SDM 11.5.4.1: the LVT write before any deadline write. */
        barrier_mfence();
        return 0;
    }
    timer_hz = window.hz ? window.hz : apic_calibrate(cal_ms);
    if (!timer_hz)
        return -EIO;
    apic_write(APIC_REG_LVT_TMR, vector); /* one-shot, unmasked; stopped while INI is 0 */
    return 0;
}

/* The same mode on an AP: its own LVT timer entry and divider (SDM
 * 11.5.4: every local APIC has its own); the one-shot rate measured on
 * the boot CPU holds, every APIC counting the same bus clock. */
void apic_timer_init_ap(void)
{
    if (timer_tscdl) {
        apic_write(APIC_REG_LVT_TMR, APIC_LVT_TSC_DL | timer_vec);
        barrier_mfence(); /* SDM 11.5.4.1 */
        return;
    }
    apic_write(APIC_REG_TMR_DIV, APIC_TMR_DIV_1);
    apic_write(APIC_REG_LVT_TMR, timer_vec);
}

const char *apic_timer_mode(void)
{
    return timer_tscdl ? "tsc_deadline" : "oneshot";
}

const char *apic_timer_source(void)
{
    return timer_tscdl ? "the TSC" : window.hz ? "the boot's TSC window" : "a TSC wait";
}

uint64_t apic_timer_hz(void)
{
    return timer_hz;
}

void apic_timer_arm(uint64_t deadline)
{
    if (timer_tscdl) {
        msr_write(MSR_TSC_DEADLINE, deadline ? deadline : 1); /* 0 would disarm */
        return;
    }
    uint64_t now = rdtsc();
    uint64_t wait = (int64_t)(deadline - now) > 0 ? deadline - now : 0;
    apic_write(APIC_REG_TMR_INI, apic_ticks_for(wait, timer_hz, time_tsc_hz));
}

void apic_timer_stop(void)
{
    if (timer_tscdl)
        msr_write(MSR_TSC_DEADLINE, 0);
    else
        apic_write(APIC_REG_TMR_INI, 0);
}
