#ifndef VN_ACPI_H
#define VN_ACPI_H

#include <stdint.h>

struct acpi_sdt_hdr {
    char sig[4];
    uint32_t len;
    uint8_t rev;
    uint8_t csum;
    char oem[6];
    char oem_table[8];
    uint32_t oem_rev;
    uint32_t creator;
    uint32_t creator_rev;
} __attribute__((packed));

/* rsdp: from boot_info, 0 to search the BIOS areas. Returns 0 or -ENOENT. */
int acpi_init(uint64_t rsdp);

/* The first table with this signature ("MCFG", "FACP", ...) whose checksum
 * is right, or NULL. */
const struct acpi_sdt_hdr *acpi_find_table(const char sig[4]);

/* The table at pa (the FADT's DSDT, ...) when it has this signature, lies
 * in the memory tables may use and its checksum is right, or NULL. */
const struct acpi_sdt_hdr *acpi_table_at(uint64_t pa, const char sig[4]);

/* ACPI PM timer I/O port from the FADT, 0 when there is none. */
uint16_t acpi_pm_timer_port(void);

#endif
