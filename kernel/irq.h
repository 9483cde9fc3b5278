/* Interrupts: vectors, their entry (boot/traps.S -> irq_dispatch), the
 * local and I/O APICs behind them, and the halt that waits for them.
 *
 * Nothing here runs unless a driver or app asks for interrupts: the
 * polled paths never call irq_init and keep interrupts off (IF=0) for
 * the whole run. After irq_init interrupts stay on (IF=1), except while
 * a waiter makes its last check before halting (irq_idle). A handler
 * only counts, notes the vector as pending, acknowledges a level source
 * at the device and ends the interrupt at the local APIC; all real work
 * happens in the code that takes the pending note (irq_take). */
#ifndef VN_IRQ_H
#define VN_IRQ_H

#include <stdbool.h>
#include <stdint.h>

#define IRQ_VEC_DEV_FIRST 0x30
#define IRQ_VEC_DEV_LAST  0xdf
#define IRQ_VEC_TIMER     0xef
#define IRQ_VEC_WAKE      0xee /* IPI that only ends an idle AP's hlt (kernel/smp.c) */
#define IRQ_VEC_SPURIOUS  0xff /* low nibble all ones: older APICs force it */
#define IRQ_TIMER_CAL_MS  10

/* Local APIC on, I/O APICs from the ACPI MADT (else the one at the
 * default address, when it answers), interrupts enabled. Once; later
 * calls return the first answer. Prints one line. 0 or -ENODEV. */
int irq_init(void);

/* A device vector (IRQ_VEC_DEV_FIRST..LAST), or -ENOSPC. */
int irq_vector_alloc(void);
void irq_vector_free(int vec);

/* For sources that stay asserted until acknowledged at the device
 * (virtio-mmio's InterruptStatus/InterruptACK, virtio 1.2 s4.2.2): the
 * handler reads the 32-bit status register and writes what it read to
 * the ack register before the EOI, so a level-triggered pin drops. */
void irq_vector_level_ack(int vec, uintptr_t status, uintptr_t ack);

/* Routes a GSI (an I/O APIC pin) to vec on this CPU. 0 or -ENOENT. */
int irq_route_gsi(uint32_t gsi, int vec, bool level, bool active_low);

/* The MSI message for vec on the CPU whose local APIC ID is dest
 * (kernel/apic.h: physical destination mode, IDs 0..255). */
int irq_msi_msg(int vec, uint32_t dest, uint64_t *addr, uint32_t *data);

/* The local APIC ID of the CPU that ran irq_init (the boot CPU): where
 * a message goes until its queue's owner is known. */
uint32_t irq_boot_apic_id(void);

/* Interrupts taken on vec so far, and which CPUs took them (bit k: CPU
 * k; kernel/irq_cpu.h's irq_cpus_one names the one). */
uint64_t irq_count(int vec);
uint32_t irq_cpus(int vec);

/* What arrived on vec since the last take: 1 for an edge source, the
 * acknowledged status bits for a level one, 0 for nothing; clears it. */
uint32_t irq_take(int vec);

/* Interrupts on vectors nobody allocated, and spurious ones. */
uint64_t irq_unexpected(void);
uint64_t irq_spurious(void);

/* The local APIC timer on IRQ_VEC_TIMER (kernel/apic.h), once, on the
 * boot CPU; 0 or -EIO. Prints one line. An AP's own timer is set up at
 * its first timed halt, with the boot CPU's calibration. */
int irq_timer_init(void);

/* The race-free halt: irq_idle_enter (interrupts off), the last look
 * for work, then irq_idle when there was none, irq_idle_leave when there
 * was. irq_idle halts with interrupts on again (sti; hlt: nothing can
 * slip in between), until an interrupt or, when deadline is not 0, until
 * the timer's interrupt once the TSC reaches it. Returns the TSC cycles
 * spent halted. */
void irq_idle_enter(void);
void irq_idle_leave(void);
uint64_t irq_idle(uint64_t deadline);

/* Every halt so far, the cycles they took (all waiters together), and
 * how late the timer's interrupt comes, on average (every CPU keeps its
 * own; the sum has the latest CPU's). _cpu: CPU cpu's alone. */
struct irq_idle_stats {
    uint64_t halts, halt_cycles, timer_late_cycles;
};
void irq_idle_stats(struct irq_idle_stats *s);
void irq_idle_stats_cpu(unsigned cpu, struct irq_idle_stats *s);

#endif
