/* First C code on every boot path: copy what the loader handed over, then
 * descriptors and page tables of our own, then the kernel proper. Both
 * loaders (QEMU's PVH ELF loader and boot/efi) zero .bss. */
#include <string.h>

#include "boot/cpu.h"
#include "kernel/boot_info.h"
#include "kernel/kernel.h"

struct boot_info kboot;

__attribute__((noreturn)) void kernel_start(const struct boot_info *bi);

void kernel_start(const struct boot_info *bi)
{
    memcpy(&kboot, bi, sizeof(kboot));
    kboot.cmdline[BOOT_CMDLINE_MAX - 1] = '\0';
    if (kboot.nmem > BOOT_MEM_MAX)
        kboot.nmem = BOOT_MEM_MAX;
    cpu_setup();
    paging_init(&kboot);
    kmain(&kboot);
}
