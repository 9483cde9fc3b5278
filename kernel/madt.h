/* The ACPI MADT ("APIC" table, ACPI 6.4 s5.2.12): the processors (local
 * APIC and local x2APIC entries), the I/O APICs and the GSIs each serves.
 * Pure parsing: no hardware access, unit-tested on the host. */
#ifndef VN_MADT_H
#define VN_MADT_H

#include <stddef.h>
#include <stdint.h>

#define MADT_MAX_IOAPIC 8
#define MADT_MAX_CPU    64

struct madt_ioapic {
    uint8_t id;
    uint32_t addr;
    uint32_t gsi_base;
};

struct madt_info {
    unsigned n_ioapic;
    struct madt_ioapic ioapic[MADT_MAX_IOAPIC];
    unsigned skipped; /* I/O APICs past MADT_MAX_IOAPIC, not used */
    /* Enabled processors' APIC IDs in table order (firmware lists the boot
     * CPU first, ACPI 6.4 s5.2.12.15, but nothing here relies on it), each
     * once: a CPU named by both entry types counts once. */
    unsigned n_cpu;
    uint32_t cpu_apic_id[MADT_MAX_CPU];
    unsigned cpu_skipped;  /* enabled CPUs past MADT_MAX_CPU */
    unsigned cpu_disabled; /* entries neither enabled nor usable now (hot-plug slots) */
};

/* Parses the whole table (header included, len bytes, checksum already
 * checked by acpi_find_table). Every entry length is checked against its
 * type's minimum and the table's end. Returns 0, or -EINVAL for a table
 * too short or an entry that does not fit (nothing after it is trusted). */
int madt_parse(const void *table, size_t len, struct madt_info *out);

#endif
