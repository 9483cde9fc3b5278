/* TSC frequency: taken from the platform where it states it
 * (kernel/tsc_freq.c), otherwise measured against a timer of known
 * frequency (ACPI PM timer, else PIT channel 0). */
#include <stddef.h>

#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/time.h"
#include "kernel/tsc_freq.h"

uint64_t time_tsc_hz;
uint64_t time_tsc_start;
uint64_t time_app_start;

#define PM_TIMER_HZ 3579545u
#define PIT_HZ      1193182u
#define CAL_MS      20u

/* The real CPU behind tsc_freq's callbacks: io.h's helpers, the only
 * place that executes cpuid and wrmsr. */
static const struct tsc_hw cpu_hw = {
    .cpuid = cpuid,
    .msr_write = msr_write,
    .relax = cpu_relax,
};

/* kvmclock's time area: the boot CPU's, for this boot (in .bss, so in
 * guest RAM and identity mapped). */
static struct pvclock_time pvclock_page;

/* The PM timer counts at 3.579545 MHz; only 24 bits are guaranteed. */
static uint64_t pm_calibrate(uint16_t port)
{
    const uint32_t mask = 0xffffff;
    const uint32_t want = PM_TIMER_HZ / 1000u * CAL_MS;
    uint32_t t0 = pio_read32(port) & mask, elapsed = 0, last = t0;
    uint64_t c0 = rdtsc();
    uint32_t stuck = 0;

    while (elapsed < want) {
        uint32_t t = pio_read32(port) & mask;
        if (t == last) {
            if (++stuck > 100000u)
                return 0; /* the timer does not move */
            continue;
        }
        stuck = 0;
        elapsed += (t - last) & mask;
        last = t;
    }
    uint64_t c1 = rdtsc();
    return (c1 - c0) * PM_TIMER_HZ / elapsed;
}

/* PIT channel 0 as a free-running counter, read with the latch command:
 * needs neither port 0x61 (absent on microvm) nor an interrupt. */
static uint32_t pit_read(void)
{
    pio_write8(0x43, 0x00); /* latch channel 0 */
    uint32_t lo = pio_read8(0x40);
    uint32_t hi = pio_read8(0x40);
    return hi << 8 | lo;
}

static uint64_t pit_calibrate(void)
{
    const uint32_t want = PIT_HZ / 1000u * CAL_MS;
    uint32_t elapsed = 0, stuck = 0;

    pio_write8(0x43, 0x34); /* ch0, lo/hi, mode 2 (rate generator), binary */
    pio_write8(0x40, 0x00); /* reload 65536 */
    pio_write8(0x40, 0x00);
    uint32_t last = pit_read();
    uint64_t c0 = rdtsc();
    while (elapsed < want) {
        uint32_t t = pit_read();
        if (t == last) {
            if (++stuck > 100000u)
                return 0; /* not counting: no PIT */
            continue;
        }
        stuck = 0;
        elapsed += (last - t) & 0xffff; /* counts down, wraps at the reload */
        last = t;
    }
    uint64_t c1 = rdtsc();
    return (c1 - c0) * PIT_HZ / elapsed;
}

/* A calibration that reads an insane rate is no rate: the next one runs. */
static struct tsc_freq calibrate(uint16_t acpi_pm_port)
{
    struct tsc_freq f = {0, NULL};

    if (acpi_pm_port) {
        f.hz = pm_calibrate(acpi_pm_port);
        f.source = "acpi_pm_timer";
    }
    if (!tsc_freq_valid(f.hz)) {
        f.hz = pit_calibrate();
        f.source = "pit";
    }
    return f;
}

const char *time_init(uint64_t acpi_pm_port)
{
    struct tsc_freq f = tsc_freq_platform(&cpu_hw, &pvclock_page);

    if (!f.hz)
        f = calibrate((uint16_t)acpi_pm_port);
    /* Every rate and latency rests on this: never run on a guess. */
    if (!tsc_freq_valid(f.hz))
        vn_fatal(VN_EXIT_INTERNAL,
                 "time: no TSC frequency (no CPUID leaf or kvmclock; ACPI PM timer and PIT "
                 "gave none in 100 MHz..10 GHz)");
    time_tsc_hz = f.hz;
    return f.source;
}

void time_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + time_ns_to_cycles(us * 1000u);
    while ((int64_t)(rdtsc() - end) < 0)
        cpu_relax();
}
