/* How many CPUs the run gets (vcpus=, docs/config.md), their start, and
 * the line that says how many came up and how long each took. */
#include <stdio.h>

#include "apps/app_smp.h"
#include "kernel/apic.h"
#include "apps/app_config.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/smp.h"
#include "kernel/time.h"

_Static_assert(CFG_VCPUS_MAX == SMP_MAX_CPUS, "vcpus= takes what the kernel can start");

static unsigned vcpus_wanted(const struct app_config *cfg, unsigned listed)
{
    if (cfg->vcpus > listed)
        vn_fatal(VN_EXIT_CONFIG, "vcpus=%u: the machine has %u CPU%s (ACPI MADT; QEMU -smp)",
                 (unsigned)cfg->vcpus, listed, listed == 1 ? "" : "s");
    if (cfg->vcpus)
        return cfg->vcpus;
    unsigned n = listed < cfg->queues ? listed : cfg->queues;
    return n < SMP_MAX_CPUS ? n : SMP_MAX_CPUS;
}

static void smp_report(unsigned listed, unsigned up)
{
    printf("smp: %u of %u CPU%s up", up, listed, listed == 1 ? "" : "s");
    for (unsigned i = 1; i < up; i++)
        printf("%s CPU %u (APIC id %u) in %llu us", i == 1 ? ":" : ",", i, (unsigned)smp_apic_id(i),
               (unsigned long long)(time_cycles_to_ns(smp_start_cycles(i)) / 1000u));
    if (up > 1)
        printf(" (%s, trampoline at 0x%llx)", apic_mode(), (unsigned long long)smp_tramp_addr());
    printf("\n");

    struct json *j = result_begin("smp");
    json_u64(j, "listed", listed);
    json_u64(j, "up", up);
    json_arr_begin(j, "cpus");
    for (unsigned i = 0; i < up; i++) {
        json_obj_begin(j, NULL);
        json_u64(j, "cpu", i);
        json_u64(j, "apic_id", smp_apic_id(i));
        json_u64(j, "start_cycles", smp_start_cycles(i));
        json_u64(j, "start_ns", time_cycles_to_ns(smp_start_cycles(i)));
        json_u64(j, "kick_ns", time_cycles_to_ns(smp_kick_cycles(i)));
        json_obj_end(j);
    }
    json_arr_end(j);
    result_end();
}

void app_smp_start(const struct app_config *cfg)
{
    unsigned listed = smp_cpus_listed();
    unsigned n = vcpus_wanted(cfg, listed);
    smp_start(n, cfg->vcpu_test == CFG_VCPU_TEST_NOSIPI ? SMP_F_NO_SIPI : 0);
    smp_report(listed, smp_cpus_up());
}
