/* TSC frequency: taken from the platform where it states it
 * (kernel/tsc_freq.c), otherwise measured against a timer of known
 * frequency (ACPI PM timer, else PIT channel 0) over the boot's own work
 * (kernel/tsc_cal.c): time_init takes the window's first edge and a
 * coarse rate, time_finish the rate once the window is long enough. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/time.h"
#include "kernel/tsc_cal.h"
#include "kernel/tsc_freq.h"

uint64_t time_tsc_hz;
uint64_t time_tsc_start;
uint64_t time_app_start;
uint32_t time_tsc_ppm;

#define PM_TIMER_HZ 3579545u
#define PIT_HZ      1193182u
/* The window ends once the rate's worst-case error is at most CAL_PPM: the
 * old 20 ms window's best (one PIT tick in 23864); under TCG brackets of
 * ~300 cycles reach it in ~6 ms. Past CAL_MAX_MS (a host that keeps
 * stopping the guest) the rate is taken with the error it has. */
#define CAL_PPM    50u
#define CAL_MAX_MS 100u

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

static uint16_t pm_port;
static struct tsc_cal cal;
static const char *method;
static bool calibrating;

static uint64_t tsc_now(void)
{
    return rdtsc();
}

/* The PM timer counts at 3.579545 MHz; only 24 bits are guaranteed. */
static uint32_t pm_read(void)
{
    return pio_read32(pm_port);
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

static const struct tsc_cal_ref pm_ref = {pm_read, tsc_now, PM_TIMER_HZ, 0xffffff, false};
static const struct tsc_cal_ref pit_ref = {pit_read, tsc_now, PIT_HZ, 0xffff, true};

static void pit_setup(void)
{
    pio_write8(0x43, 0x34); /* ch0, lo/hi, mode 2 (rate generator), binary */
    pio_write8(0x40, 0x00); /* reload 65536: counts down, wraps every 55 ms */
    pio_write8(0x40, 0x00);
}

/* A reference that does not count, or whose coarse rate is no TSC's, is no
 * reference: the next one runs. */
static int cal_start(const struct tsc_cal_ref *r, const char *name)
{
    uint64_t hz = 0;

    if (r == &pit_ref)
        pit_setup();
    if (tsc_cal_start(&cal, r, &hz) < 0 || !tsc_freq_valid(hz))
        return -ENODEV;
    time_tsc_hz = hz;
    method = name;
    return 0;
}

static int cal_finish(struct tsc_cal_rate *out)
{
    uint64_t max_ticks = (uint64_t)cal.ref->hz * CAL_MAX_MS / 1000u;
    int rc = tsc_cal_finish(&cal, CAL_PPM, max_ticks, out);

    if (rc == -EAGAIN && cal_start(cal.ref, method) == 0)
        rc = tsc_cal_finish(&cal, CAL_PPM, max_ticks, out);
    return rc == 0 && tsc_freq_valid(out->hz) ? 0 : -EIO;
}

static void no_rate(void)
{
    /* Every rate and latency rests on this: never run on a guess. */
    vn_fatal(VN_EXIT_INTERNAL,
             "time: no TSC frequency (no CPUID leaf or kvmclock; ACPI PM timer and PIT "
             "gave none in 100 MHz..10 GHz)");
}

void time_init(uint64_t acpi_pm_port)
{
    struct tsc_freq f = tsc_freq_platform(&cpu_hw, &pvclock_page);

    if (f.hz) {
        time_tsc_hz = f.hz;
        method = f.source;
        return;
    }
    pm_port = (uint16_t)acpi_pm_port;
    if ((!pm_port || cal_start(&pm_ref, "acpi_pm_timer") < 0) && cal_start(&pit_ref, "pit") < 0)
        no_rate();
    calibrating = true;
}

const char *time_finish(void)
{
    struct tsc_cal_rate r;

    if (!calibrating)
        return method;
    calibrating = false;
    if (cal_finish(&r) < 0 &&
        (cal.ref == &pit_ref || cal_start(&pit_ref, "pit") < 0 || cal_finish(&r) < 0))
        no_rate();
    time_tsc_hz = r.hz;
    time_tsc_ppm = r.ppm;
    return method;
}

void time_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + time_ns_to_cycles(us * 1000u);
    while ((int64_t)(rdtsc() - end) < 0)
        cpu_relax();
}
