/* Kernel-wide state set up by kmain before the app runs. */
#ifndef VN_KERNEL_H
#define VN_KERNEL_H

#include "kernel/boot_info.h"

/* The kernel's own copy of what the boot path handed over. */
extern struct boot_info kboot;

#endif
