/* Early CPU setup: our own GDT (with a TSS so every exception runs on a
 * known-good IST stack, even after a kernel stack overflow), one of each
 * per CPU (a TSS cannot be shared: ltr marks it busy), and the IDT, which
 * every CPU loads:
 * the 32 exception vectors, then the interrupt vectors (kernel/irq.c),
 * which run on the interrupted stack. Interrupts stay off until a driver
 * asks for them (irq_init). */
#include <stdint.h>
#include <string.h>

#include "boot/cpu.h"
#include "kernel/io.h"
#include "kernel/smp.h"

struct tss64 {
    uint32_t rsvd0;
    uint64_t rsp[3];
    uint64_t rsvd1;
    uint64_t ist[7];
    uint64_t rsvd2;
    uint16_t rsvd3;
    uint16_t iomap_base;
} __attribute__((packed));

struct idt_gate {
    uint16_t off_lo;
    uint16_t sel;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t off_mid;
    uint32_t off_hi;
    uint32_t rsvd;
} __attribute__((packed));

struct desc_ptr {
    uint16_t limit;
    uint64_t base;
} __attribute__((packed));

#define SEL_CODE 0x08
#define SEL_DATA 0x10
#define SEL_TSS  0x18

#define IRQ_STUB_BYTES 16
extern const uint64_t trap_stubs[32];
extern const uint8_t irq_stub_32[];

static uint64_t gdts[SMP_MAX_CPUS][5] __attribute__((aligned(16)));
static struct tss64 tsss[SMP_MAX_CPUS] __attribute__((aligned(16)));
static struct idt_gate idt[256] __attribute__((aligned(16)));
static uint8_t ist_stacks[SMP_MAX_CPUS][16384] __attribute__((aligned(16)));

static void gdt_load(unsigned cpu)
{
    uint64_t *gdt = gdts[cpu];
    struct tss64 *tss = &tsss[cpu];
    uint64_t base = (uint64_t)(uintptr_t)tss;
    uint64_t limit = sizeof(*tss) - 1;

    gdt[0] = 0;
    gdt[1] = 0x00af9a000000ffffull; /* 64-bit code, DPL 0 */
    gdt[2] = 0x00cf92000000ffffull; /* data */
    /* 64-bit available TSS, 16 bytes (Intel SDM vol 3 7.2.3) */
    gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
             (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    gdt[4] = base >> 32;

    struct desc_ptr p = {sizeof(gdts[0]) - 1, (uint64_t)(uintptr_t)gdt};
    __asm__ volatile("lgdt %0\n\t"
                     "pushq %1\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "movw %w2, %%ds\n\t"
                     "movw %w2, %%es\n\t"
                     "movw %w2, %%ss\n\t"
                     "movw %w3, %%fs\n\t"
                     "movw %w3, %%gs\n\t"
                     "ltr %w4"
                     :
                     : "m"(p), "i"(SEL_CODE), "r"(SEL_DATA), "r"(0), "r"(SEL_TSS)
                     : "rax", "memory");
}

static void idt_set(int v, uint64_t h, uint8_t ist)
{
    idt[v].off_lo = h & 0xffff;
    idt[v].sel = SEL_CODE;
    idt[v].ist = ist;
    idt[v].type_attr = 0x8e; /* present, DPL 0, interrupt gate: IF cleared on entry */
    idt[v].off_mid = (h >> 16) & 0xffff;
    idt[v].off_hi = h >> 32;
    idt[v].rsvd = 0;
}

static void idt_fill(void)
{
    for (int v = 0; v < 32; v++)
        idt_set(v, trap_stubs[v], 1);
    for (int v = 32; v < 256; v++)
        idt_set(v, (uint64_t)(uintptr_t)(irq_stub_32 + (v - 32) * IRQ_STUB_BYTES), 0);
}

static void idt_load(void)
{
    struct desc_ptr p = {sizeof(idt) - 1, (uint64_t)(uintptr_t)idt};
    __asm__ volatile("lidt %0" : : "m"(p));
}

/* Firmware leaves the 8259 PICs with lines unmasked (SeaBIOS: the PIT's
 * IRQ0, PCI INTx). With IF=0 nothing is ever acknowledged, so INTR stays
 * asserted, and a CPU with a pending interrupt request costs dearly:
 * under TCG every exit from translated code then takes QEMU's global
 * lock, which the device thread needs (measured: 64-byte TX into a null
 * sink on -M pc went from 1.0 to 3.8 Mpps once masked). Mask them all. */
static void pic_mask_all(void)
{
    pio_write8(0x21, 0xff); /* master IMR */
    pio_write8(0xa1, 0xff); /* slave IMR */
}

static void tss_init(unsigned cpu)
{
    struct tss64 *tss = &tsss[cpu];
    memset(tss, 0, sizeof(*tss));
    tss->ist[0] = (uint64_t)(uintptr_t)(ist_stacks[cpu] + sizeof(ist_stacks[cpu]));
    tss->iomap_base = sizeof(*tss);
}

void cpu_setup(void)
{
    pic_mask_all();
    tss_init(0);
    gdt_load(0);
    idt_fill();
    idt_load();
}

void cpu_setup_ap(unsigned cpu)
{
    tss_init(cpu);
    gdt_load(cpu);
    idt_load();
}
