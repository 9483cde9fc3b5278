/* kmain: bring the machine up, then hand it to the appliance above. */
#include <stdio.h>

#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/boot_info.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/irq.h"
#include "kernel/kernel.h"
#include "kernel/mem.h"
#include "kernel/result.h"
#include "kernel/smp.h"
#include "kernel/time.h"

static const char *path_name(uint32_t p)
{
    return p == BOOT_PATH_PVH ? "pvh" : p == BOOT_PATH_UEFI ? "uefi" : "unknown";
}

/* newlib's printf converts a double it cannot round in double arithmetic
 * (a tie like 4325.375 at 6 digits, tiny values at fixed precision) with
 * big numbers it allocates the first time it needs them and keeps on a free
 * list: heap_in_use stepped by up to 240 B whenever a report first printed
 * such a value, minutes into a run. These five, formatted in this order,
 * fill that list: afterwards 6 * 10^7 values (1e-6 to 1e12, ties included,
 * as %.6g, %.0f, %.1f and %.3f) allocated nothing more (a host program on
 * this newlib, build/newlib; issue 13). */
static void prime_number_cache(void)
{
    static const struct {
        const char *fmt;
        double v;
    } v[] = {
        {"%.1f", 0x1.0918224dc231ap-17}, {"%.1f", 0x1.8f21459ff24e6p-24},
        {"%.0f", 0x1.00a33e0823652p-10}, {"%.6g", 0x1.ef81113e6a13dp-16},
        {"%.0f", 0x1.06f77d1p+27},
    };
    char b[64];
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        snprintf(b, sizeof(b), v[i].fmt, v[i].v);
}

void kmain(const struct boot_info *bi)
{
    struct mem_stats ms;

    smp_bsp_init();
    console_init();
    mem_init(bi);
    /* Unbuffered: a fault or exit must not lose what was printed before. */
    setvbuf(stdout, NULL, _IONBF, 0);
    int acpi = acpi_init(bi->rsdp);
    /* A calibration's window runs from here through the work below; the
     * local APIC's one-shot timer is counted over the same window. */
    time_init(acpi == 0 ? acpi_pm_timer_port() : 0);
    if (apic_init(IRQ_VEC_SPURIOUS) == 0)
        apic_timer_window_start();
    time_tsc_start = bi->tsc_boot ? bi->tsc_boot : rdtsc();
    prime_number_cache();
    printf("vnperf: booted via %s, %u memory regions\n", path_name(bi->path), bi->nmem);

    const char *method = time_finish();
    apic_timer_window_end();
    printf("vnperf: TSC %llu.%03llu MHz (%s, within %u ppm)\n",
           (unsigned long long)(time_tsc_hz / 1000000u),
           (unsigned long long)(time_tsc_hz / 1000u % 1000u), method, (unsigned)time_tsc_ppm);

    mem_get_stats(&ms);
    struct json *j = result_begin("boot");
    json_str(j, "boot_path", path_name(bi->path));
    json_u64(j, "tsc_hz", time_tsc_hz);
    json_str(j, "tsc_method", method);
    json_u64(j, "tsc_ppm", time_tsc_ppm);
    json_bool(j, "acpi", acpi == 0);
    json_u64(j, "ram_bytes", ms.ram_total);
    json_u64(j, "arena_free_bytes", ms.free);
    result_end();

    vn_exit(apps_main(bi));
}
