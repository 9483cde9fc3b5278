/* Kernel-wide state set up by kmain before the app runs. */
#ifndef VN_KERNEL_H
#define VN_KERNEL_H

#include "kernel/boot_info.h"

/* The kernel's own copy of what the boot path handed over. */
extern struct boot_info kboot;

/* The appliance above the kernel (apps/apps_main.c): reads the config,
 * runs the app and returns its exit code. Declared here so that the
 * kernel calls up through its own interface and includes nothing of
 * apps/. */
int apps_main(const struct boot_info *bi);

#endif
