/* Application processors (Intel SDM vol 3 8.4): the CPUs the ACPI MADT
 * lists, started with INIT-SIPI-SIPI through the local APIC, all at
 * once, each on its own stack, GDT and TSS, with its own per-CPU area
 * (struct smp_cpu, reached through GS). An AP that is up halts until the
 * boot CPU hands it one function (smp_run); what the function touches is
 * its own until smp_wait returns its value, so nothing here takes a lock.
 * An AP that does not answer within SMP_AP_TIMEOUT_MS ends the run with
 * one line and VN_EXIT_CPU. */
#ifndef VN_SMP_H
#define VN_SMP_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/boot_info.h"

#define SMP_MAX_CPUS      8        /* one per queue pair (VNET_MAX_PAIRS) */
#define SMP_AP_TIMEOUT_MS 2000     /* from the INIT to the AP's first store */
#define SMP_SIPI_GAP_US   200      /* between the two SIPIs (SDM 8.4.4.1) */
#define SMP_TRAMP_LO      0x1000u  /* page 0: the real-mode IVT */
#define SMP_TRAMP_HI      0xa0000u /* SIPI vectors 0xa0..0xbf are reserved */
#define SMP_F_NO_SIPI     1u       /* test only: INIT but no SIPI, so no AP answers */

typedef int (*smp_fn)(unsigned cpu, void *arg);

struct smp_cpu {
    struct smp_cpu *self; /* %gs:0 */
    unsigned index;
    uint32_t apic_id;
    uint32_t up;           /* the AP's first store (release) */
    uint64_t start_cycles; /* TSC from its INIT to that store; 0 on the boot CPU */
    uint64_t kick_cycles;  /* TSC from the first AP's INIT to its own */
    smp_fn fn;             /* handed over by smp_run, cleared by the AP when done */
    void *arg;
    int rc;
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct smp_cpu, self) == 0, "%gs:0 is the area's own address");

/* This CPU's index, 0 on the boot CPU (from smp_bsp_init on). */
static inline unsigned smp_cpu_index(void)
{
    unsigned v;
    __asm__ volatile("movl %%gs:%c1, %0" : "=r"(v) : "i"(offsetof(struct smp_cpu, index)));
    return v;
}

/* Pure (unit-tested): the lowest page in [SMP_TRAMP_LO, SMP_TRAMP_HI)
 * that holds bytes and lies wholly inside one RAM region of the map, or
 * 0 when none does. */
uint64_t smp_tramp_page(const struct boot_mem_region *m, unsigned n, size_t bytes);

/* Pure: the CPUs to run, in out[0..want-1]: the boot CPU (bsp) first,
 * then the other listed IDs in table order. Returns want, or -ERANGE
 * when the list has fewer CPUs (the boot CPU counted even if unlisted). */
int smp_pick(const uint32_t *ids, unsigned n, uint32_t bsp, unsigned want, uint32_t *out);

/* Boot CPU's per-CPU area (GS base); kmain calls it first. */
void smp_bsp_init(void);

/* Enabled CPUs the ACPI MADT lists (1 without a MADT). */
unsigned smp_cpus_listed(void);

/* Starts CPUs 1..n-1 (n <= smp_cpus_listed(), <= SMP_MAX_CPUS), each
 * answering within SMP_AP_TIMEOUT_MS or the run ends (VN_EXIT_CPU). */
void smp_start(unsigned n, unsigned flags);

unsigned smp_cpus_up(void);
uint32_t smp_apic_id(unsigned cpu);
uint64_t smp_start_cycles(unsigned cpu);
uint64_t smp_kick_cycles(unsigned cpu);
uint64_t smp_tramp_addr(void); /* the trampoline page, 0 before smp_start */

/* Runs fn(cpu, arg) on AP cpu (1..smp_cpus_up()-1), which must be idle;
 * smp_wait spins until it returns and gives its value. -EINVAL for a CPU
 * that is not up or busy. */
int smp_run(unsigned cpu, smp_fn fn, void *arg);
int smp_wait(unsigned cpu);

/* Ends a halt of CPU cpu (any CPU up, the boot CPU too): the wake IPI,
 * which the handler only acknowledges; one sent while the CPU has
 * interrupts off ends its next halt at once. 0, -EINVAL, or
 * apic_send_ipi's error. */
int smp_wake(unsigned cpu);

#endif
