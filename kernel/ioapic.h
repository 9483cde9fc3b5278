/* I/O APICs (82093AA datasheet; ACPI 6.4 s5.2.12.3): global system
 * interrupts (GSIs) routed to a vector of the boot CPU. Used for the
 * pins of devices without MSI (virtio-mmio on microvm). */
#ifndef VN_IOAPIC_H
#define VN_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define IOAPIC_DEFAULT_ADDR 0xfec00000u /* where PC chipsets put the first one */
#define IOAPIC_MAX          8

/* Redirection entry: fixed delivery, physical destination mode. */
#define IOAPIC_RTE_LOW_ACTIVE (1u << 13)
#define IOAPIC_RTE_LEVEL      (1u << 15)
#define IOAPIC_RTE_MASKED     (1u << 16)
static inline uint64_t ioapic_rte(uint8_t vector, uint8_t dest, bool level, bool active_low,
                                  bool masked)
{
    return (uint64_t)dest << 56 | (masked ? IOAPIC_RTE_MASKED : 0) |
           (level ? IOAPIC_RTE_LEVEL : 0) | (active_low ? IOAPIC_RTE_LOW_ACTIVE : 0) | vector;
}

/* Registers the I/O APIC at addr serving GSIs from gsi_base on and masks
 * all its pins. Returns its pin count, or -ENODEV when nothing answers
 * there (the version register reads all ones), -ENOSPC past
 * IOAPIC_MAX. */
int ioapic_add(uint32_t addr, uint32_t gsi_base);

/* Routes gsi to vector on the APIC with ID dest and unmasks it. 0, or
 * -ENOENT when no registered I/O APIC has that pin. */
int ioapic_route(uint32_t gsi, uint8_t vector, uint8_t dest, bool level, bool active_low);

unsigned ioapic_count(void);

#endif
