/* TSC frequency: asked of the CPU when it says (CPUID 0x15/0x16, the
 * hypervisor timing leaf), otherwise measured against a timer of known
 * frequency (ACPI PM timer, else PIT channel 2). */
#include <stddef.h>

#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/time.h"

uint64_t time_tsc_hz;
uint64_t time_tsc_start;
uint64_t time_app_start;

#define PM_TIMER_HZ 3579545u
#define PIT_HZ      1193182u
#define CAL_MS      20u

static uint64_t cpuid_tsc_hz(const char **method)
{
    uint32_t r[4];

    cpuid(0, 0, r);
    uint32_t max = r[0];
    if (max >= 0x15) {
        cpuid(0x15, 0, r); /* TSC = crystal * ebx / eax */
        if (r[0] && r[1] && r[2]) {
            *method = "cpuid_15";
            return (uint64_t)r[2] * r[1] / r[0];
        }
    }
    if (max >= 0x16) {
        cpuid(0x16, 0, r); /* base frequency in MHz */
        if (r[0]) {
            *method = "cpuid_16";
            return (uint64_t)r[0] * 1000000u;
        }
    }
    cpuid(1, 0, r);
    if (r[2] & (1u << 31)) { /* running under a hypervisor */
        cpuid(0x40000000, 0, r);
        if (r[0] >= 0x40000010) {
            cpuid(0x40000010, 0, r); /* TSC kHz (VMware/QEMU timing leaf) */
            if (r[0]) {
                *method = "cpuid_hv";
                return (uint64_t)r[0] * 1000u;
            }
        }
    }
    return 0;
}

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

const char *time_init(uint64_t acpi_pm_port)
{
    const char *method = NULL;

    time_tsc_hz = cpuid_tsc_hz(&method);
    if (!time_tsc_hz && acpi_pm_port) {
        time_tsc_hz = pm_calibrate((uint16_t)acpi_pm_port);
        method = "acpi_pm_timer";
    }
    if (!time_tsc_hz) {
        time_tsc_hz = pit_calibrate();
        method = "pit";
    }
    /* Every rate and latency rests on this: never run on a guess. */
    if (!time_tsc_hz)
        vn_fatal(VN_EXIT_INTERNAL, "time: no TSC frequency (no CPUID leaf, ACPI PM timer or PIT)");
    return method;
}

void time_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + time_ns_to_cycles(us * 1000u);
    while ((int64_t)(rdtsc() - end) < 0)
        cpu_relax();
}
