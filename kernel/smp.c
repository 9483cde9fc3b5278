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
uint64_t smp_boot_stack;      /* the next AP's stack top: each takes one (lock xadd) */
uint64_t smp_boot_stack_step; /* and moves it on by this */
__attribute__((noreturn)) void smp_ap_main(void);

static struct smp_cpu cpus[SMP_MAX_CPUS];
static uint8_t ap_stacks[SMP_MAX_CPUS][AP_STACK] __attribute__((aligned(16)));
static unsigned n_up = 1;
static unsigned n_kicked = 1; /* cpus[1..n_kicked-1] were sent INIT-SIPI-SIPI */
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

/* The AP's own area, found by its APIC id: APs started together reach
 * this in any order. */
static struct smp_cpu *cpu_by_apic_id(uint32_t id)
{
    for (unsigned i = 1; i < VN_READ_ONCE(n_kicked); i++)
        if (cpus[i].apic_id == id)
            return &cpus[i];
    return NULL;
}

/* On the AP, from boot/smp_tramp.S: the APIC (its id says which CPU this
 * is), descriptors, GS, then the store the boot CPU waits for; halts until
 * smp_run wakes it (the wake vector only ends the hlt: kernel/irq.c). A CPU
 * no one started stays halted. */
void smp_ap_main(void)
{
    apic_init_ap(IRQ_VEC_SPURIOUS);
    struct smp_cpu *c = cpu_by_apic_id(apic_id());
    while (!c) {
        cpu_cli();
        cpu_sti_hlt();
    }
    cpu_setup_ap(c->index);
    gs_base_set(c);
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

static void kick_failed(unsigned idx, int r)
{
    vn_fatal(VN_EXIT_CPU, "smp: CPU %u (APIC id %u): the INIT/SIPI could not be sent (%d)", idx,
             (unsigned)cpus[idx].apic_id, r);
}

/* SDM 8.4.4.1: INIT, then two STARTUPs 200 us apart; the second is
 * ignored by an AP that already left wait-for-SIPI. Every AP gets each
 * step before any gets the next, so the gaps are waited once, not per
 * AP. No 10 ms after the INIT: Linux waits none on Intel family 6 and
 * AMD family 0xf on (smp_quirk_init_udelay, arch/x86/kernel/smpboot.c),
 * and QEMU's APs take the SIPI at once. */
static void kick_all(unsigned n, unsigned flags, uint64_t *t0)
{
    uint32_t vec = (uint32_t)(tramp_addr >> 12);
    int r = 0;

    for (unsigned i = 1; i < n; i++) {
        t0[i] = rdtsc();
        cpus[i].kick_cycles = t0[i] - t0[1];
        r = apic_send_ipi(cpus[i].apic_id, APIC_ICR_INIT | APIC_ICR_LEVEL | APIC_ICR_ASSERT);
        if (!r)
            r = apic_send_ipi(cpus[i].apic_id, APIC_ICR_INIT | APIC_ICR_LEVEL);
        if (r)
            kick_failed(i, r);
    }
    for (int k = 0; !(flags & SMP_F_NO_SIPI) && k < 2; k++) {
        for (unsigned i = 1; i < n; i++)
            if ((r = apic_send_ipi(cpus[i].apic_id, APIC_ICR_STARTUP | vec)))
                kick_failed(i, r);
        spin_us(SMP_SIPI_GAP_US);
    }
}

/* Every AP's first store, each timed from its INIT on this CPU's TSC (no
 * cross-CPU offset); the lowest that does not answer in time ends the
 * run. */
static void wait_all(unsigned n, unsigned flags, const uint64_t *t0)
{
    uint64_t end = t0[1] + time_ns_to_cycles((uint64_t)SMP_AP_TIMEOUT_MS * 1000000u);
    unsigned left = n - 1;

    while (left) {
        for (unsigned i = 1; i < n; i++) {
            if (cpus[i].start_cycles || !__atomic_load_n(&cpus[i].up, __ATOMIC_ACQUIRE))
                continue;
            cpus[i].start_cycles = rdtsc() - t0[i];
            left--;
        }
        if (left && (int64_t)(rdtsc() - end) > 0)
            for (unsigned i = 1; i < n; i++)
                if (!cpus[i].start_cycles)
                    vn_fatal(VN_EXIT_CPU,
                             "smp: CPU %u (APIC id %u) did not answer INIT-SIPI-SIPI within %u "
                             "ms%s",
                             i, (unsigned)cpus[i].apic_id, SMP_AP_TIMEOUT_MS,
                             flags & SMP_F_NO_SIPI ? " (vcpu_test=nosipi: no SIPI sent)" : "");
        cpu_relax();
    }
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
    for (unsigned i = 1; i < n; i++)
        cpus[i] = (struct smp_cpu){.self = &cpus[i], .index = i, .apic_id = ids[i]};
    smp_boot_stack = (uint64_t)(uintptr_t)(ap_stacks[1] + AP_STACK);
    smp_boot_stack_step = AP_STACK;
    n_kicked = n;
    barrier_mb();
    uint64_t t0[SMP_MAX_CPUS];
    kick_all(n, flags, t0);
    wait_all(n, flags, t0);
    n_up = n;
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

uint64_t smp_kick_cycles(unsigned cpu)
{
    return cpu < n_up ? cpus[cpu].kick_cycles : 0;
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
