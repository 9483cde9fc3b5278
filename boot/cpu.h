#ifndef VN_BOOT_CPU_H
#define VN_BOOT_CPU_H

#include "kernel/boot_info.h"

/* The boot CPU: descriptors of CPU 0, the IDT every CPU shares. */
void cpu_setup(void);
/* Application processor cpu (1..SMP_MAX_CPUS-1): its GDT and TSS, the
 * shared IDT. */
void cpu_setup_ap(unsigned cpu);
/* Identity map all RAM in bi (and the low 4 GiB for devices). */
void paging_init(const struct boot_info *bi);

#endif
