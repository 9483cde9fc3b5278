/* Application processor start and the per-CPU areas (kernel/smp.h). */
#include "kernel/smp.h"

#include <errno.h>
#include <string.h>

#include "boot/cpu.h"
#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/exit.h"
#include "kernel/irq.h"
#include "kernel/kernel.h"
#include "kernel/madt.h"
#include "kernel/time.h"

#define MSR_GS_BASE 0xc0000101
#define AP_STACK    32768
#define AP_STARTED  1u

/* boot/smp_tramp.S */
extern const char smp_tramp_start[], smp_tramp_end[];
uint32_t smp_boot_cr3;
uint64_t smp_boot_stack;
__attribute__((noreturn)) void smp_ap_main(void);

static struct smp_cpu cpus[SMP_MAX_CPUS];
static uint8_t ap_stacks[SMP_MAX_CPUS][AP_STACK] __attribute__((aligned(16)));
static unsigned n_up = 1;
static unsigned booting; /* the AP smp_ap_main is for */
static uint64_t tramp_addr;

static void gs_base_set(struct smp_cpu *c)
{
    msr_write(MSR_GS_BASE, (uint64_t)(uintptr_t)c);
}

void smp_bsp_init(void)
{
    cpus[0].self = &cpus[0];
    gs_base_set(&cpus[0]);
}

unsigned smp_cpus_listed(void)
{
    struct madt_info m;
    const struct acpi_sdt_hdr *h = acpi_find_table("APIC");
    if (!h || madt_parse(h, h->len, &m) < 0 || m.n_cpu == 0)
        return 1;
    return m.n_cpu;
}

/* On the AP, from boot/smp_tramp.S: descriptors, GS, the APIC, then the
 * store the boot CPU waits for; halts until smp_run wakes it (the wake
 * vector only ends the hlt: kernel/irq.c). */
void smp_ap_main(void)
{
    struct smp_cpu *c = &cpus[VN_READ_ONCE(booting)];
    cpu_setup_ap(c->index);
    gs_base_set(c);
    apic_init_ap(IRQ_VEC_SPURIOUS);
    __atomic_store_n(&c->up, AP_STARTED, __ATOMIC_RELEASE);
    for (;;) {
        cpu_cli();
        smp_fn fn = __atomic_load_n(&c->fn, __ATOMIC_ACQUIRE);
        if (!fn) {
            cpu_sti_hlt();
            continue;
        }
        c->rc = fn(c->index, c->arg);
        __atomic_store_n(&c->fn, (smp_fn)0, __ATOMIC_RELEASE);
    }
}

static void spin_us(uint64_t us)
{
    uint64_t end = rdtsc() + time_ns_to_cycles(us * 1000u);
    while ((int64_t)(rdtsc() - end) < 0)
        cpu_relax();
}

/* SDM 8.4.4.1: INIT, then two STARTUPs; the second is ignored by an AP
 * that already left wait-for-SIPI. */
static int ap_kick(uint32_t id, unsigned flags)
{
    uint32_t vec = (uint32_t)(tramp_addr >> 12);
    int r = apic_send_ipi(id, APIC_ICR_INIT | APIC_ICR_LEVEL | APIC_ICR_ASSERT);
    if (!r)
        r = apic_send_ipi(id, APIC_ICR_INIT | APIC_ICR_LEVEL);
    for (int i = 0; !r && !(flags & SMP_F_NO_SIPI) && i < 2; i++) {
        r = apic_send_ipi(id, APIC_ICR_STARTUP | vec);
        spin_us(SMP_SIPI_GAP_US);
    }
    return r;
}

static void ap_start(unsigned idx, uint32_t id, unsigned flags)
{
    struct smp_cpu *c = &cpus[idx];
    *c = (struct smp_cpu){.self = c, .index = idx, .apic_id = id};
    booting = idx;
    smp_boot_stack = (uint64_t)(uintptr_t)(ap_stacks[idx] + AP_STACK);
    barrier_mb();
    uint64_t t0 = rdtsc();
    int r = ap_kick(id, flags);
    if (r)
        vn_fatal(VN_EXIT_CPU, "smp: CPU %u (APIC id %u): the INIT/SIPI could not be sent (%d)", idx,
                 (unsigned)id, r);
    uint64_t end = t0 + time_ns_to_cycles((uint64_t)SMP_AP_TIMEOUT_MS * 1000000u);
    while (!__atomic_load_n(&c->up, __ATOMIC_ACQUIRE))
        if ((int64_t)(rdtsc() - end) > 0)
            vn_fatal(VN_EXIT_CPU,
                     "smp: CPU %u (APIC id %u) did not answer INIT-SIPI-SIPI within %u ms%s", idx,
                     (unsigned)id, SMP_AP_TIMEOUT_MS,
                     flags & SMP_F_NO_SIPI ? " (vcpu_test=nosipi: no SIPI sent)" : "");
        else
            cpu_relax();
    c->start_cycles = rdtsc() - t0; /* on this CPU's TSC: no cross-CPU offset */
}

/* The trampoline's page below 1 MiB, and the boot CPU's page tables,
 * which the AP loads in 32-bit mode: both checked, not assumed. */
static void tramp_install(void)
{
    size_t len = (size_t)(smp_tramp_end - smp_tramp_start);
    tramp_addr = smp_tramp_page(kboot.mem, kboot.nmem, len);
    if (!tramp_addr)
        vn_fatal(VN_EXIT_CPU, "smp: no free RAM page below 0x%x for the AP trampoline",
                 SMP_TRAMP_HI);
    uint64_t cr3;
    __asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
    if (cr3 >> 32)
        vn_fatal(VN_EXIT_INTERNAL, "smp: page tables at 0x%llx, above what 32-bit code loads",
                 (unsigned long long)cr3);
    smp_boot_cr3 = (uint32_t)cr3;
    memcpy((void *)(uintptr_t)tramp_addr, smp_tramp_start, len);
}

void smp_start(unsigned n, unsigned flags)
{
    struct madt_info m;
    uint32_t ids[SMP_MAX_CPUS];
    const struct acpi_sdt_hdr *h = acpi_find_table("APIC");
    if (n <= 1)
        return;
    if (!h || madt_parse(h, h->len, &m) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "smp: %u CPUs asked for without a usable ACPI MADT", n);
    if (apic_init(IRQ_VEC_SPURIOUS) < 0)
        vn_fatal(VN_EXIT_CPU, "smp: no local APIC in CPUID: no AP can be started");
    uint32_t bsp = apic_id();
    if (smp_pick(m.cpu_apic_id, m.n_cpu, bsp, n, ids) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "smp: %u CPUs asked for, the MADT lists %u", n, m.n_cpu);
    cpus[0].apic_id = bsp;
    tramp_install();
    for (unsigned i = 1; i < n; i++) {
        ap_start(i, ids[i], flags);
        n_up = i + 1;
    }
}

unsigned smp_cpus_up(void)
{
    return n_up;
}

uint32_t smp_apic_id(unsigned cpu)
{
    return cpu < n_up ? cpus[cpu].apic_id : 0;
}

uint64_t smp_start_cycles(unsigned cpu)
{
    return cpu < n_up ? cpus[cpu].start_cycles : 0;
}

uint64_t smp_tramp_addr(void)
{
    return tramp_addr;
}

int smp_run(unsigned cpu, smp_fn fn, void *arg)
{
    if (cpu == 0 || cpu >= n_up || !fn || __atomic_load_n(&cpus[cpu].fn, __ATOMIC_ACQUIRE))
        return -EINVAL;
    cpus[cpu].arg = arg;
    cpus[cpu].rc = 0;
    __atomic_store_n(&cpus[cpu].fn, fn, __ATOMIC_RELEASE);
    return smp_wake(cpu);
}

int smp_wake(unsigned cpu)
{
    if (cpu >= n_up)
        return -EINVAL;
    return apic_send_ipi(cpus[cpu].apic_id, APIC_ICR_FIXED | APIC_ICR_ASSERT | IRQ_VEC_WAKE);
}

int smp_wait(unsigned cpu)
{
    if (cpu == 0 || cpu >= n_up)
        return -EINVAL;
    while (__atomic_load_n(&cpus[cpu].fn, __ATOMIC_ACQUIRE))
        cpu_relax();
    return cpus[cpu].rc;
}
