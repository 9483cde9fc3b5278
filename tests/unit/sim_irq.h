/* Simulated interrupts for the host tests: what kernel/irq.h gives the
 * driver. A simulated queue raises its vector whenever the device would
 * send a used buffer notification (sim_queue.c decides, virtio 1.2
 * s2.7.7.2). Raised while interrupts are off (between irq_idle_enter and
 * the halt) it waits, as in a real APIC's IRR, and ends the next halt at
 * once. irq_idle lets the device work first (TX completions as sim_relax
 * does, then sim_idle_race: what a test wants to happen between the
 * driver's last look and its halt). A halt that nothing ends, neither an
 * interrupt nor a deadline, is a lost wakeup: counted in
 * sim_lost_wakeups (the real one would sleep for ever). */
#ifndef VN_SIM_IRQ_H
#define VN_SIM_IRQ_H

#define SIM_VEC0 0x30 /* queue q's vector is SIM_VEC0 + q (or SIM_VEC0 when shared) */

extern void (*sim_idle_race)(void);
extern unsigned sim_lost_wakeups;
extern unsigned sim_halts;

void sim_irq_reset(void);
void sim_irq_raise(int vec);

#endif
