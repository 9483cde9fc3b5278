#ifndef VN_BOOT_CPU_H
#define VN_BOOT_CPU_H

#include "kernel/boot_info.h"

void cpu_setup(void);
/* Identity map all RAM in bi (and the low 4 GiB for devices). */
void paging_init(const struct boot_info *bi);

#endif
