/* What a boot path hands the kernel. Both the PVH entry and the UEFI loader
 * fill one of these and jump to kernel_entry64(); nothing after that knows
 * which path booted. */
#ifndef VN_BOOT_INFO_H
#define VN_BOOT_INFO_H

#include <stdint.h>

#define BOOT_INFO_MAGIC  0x564e5046u /* "VNPF" */
#define BOOT_MEM_MAX     128
#define BOOT_CMDLINE_MAX 1024

enum boot_path { BOOT_PATH_PVH = 1, BOOT_PATH_UEFI = 2 };

/* The loader's command line did not fit in cmdline: the kernel refuses to
 * run on a cut line (a cut word reads as another value, and microvm's
 * virtio_mmio.device= words come last). */
#define BOOT_F_CMDLINE_TOO_LONG 1u

enum boot_mem_type {
    BOOT_MEM_RAM = 1,      /* free for the kernel to use */
    BOOT_MEM_RESERVED = 2, /* firmware, MMIO, anything not ours */
    BOOT_MEM_ACPI = 3,     /* ACPI tables: keep, may be read */
    BOOT_MEM_NVS = 4,
};

struct boot_mem_region {
    uint64_t base;
    uint64_t len;
    uint32_t type; /* enum boot_mem_type */
    uint32_t pad;
};

struct boot_info {
    uint32_t magic;
    uint32_t path;                  /* enum boot_path */
    char cmdline[BOOT_CMDLINE_MAX]; /* NUL-terminated, may be empty */
    uint64_t rsdp;                  /* physical address of the ACPI RSDP, 0 if unknown */
    uint64_t tsc_boot;              /* TSC at the first instruction we control */
    uint32_t nmem;
    uint32_t flags; /* BOOT_F_* */
    struct boot_mem_region mem[BOOT_MEM_MAX];
};

/* 64-bit kernel entry (boot/entry64.S). Long mode, paging on with at least
 * the kernel image and *bi identity mapped, interrupts off. bi is copied
 * before anything else runs, so it may live in memory the kernel reuses. */
void kernel_entry64(const struct boot_info *bi) __attribute__((noreturn));

void kmain(const struct boot_info *bi) __attribute__((noreturn));

#endif
