/* I/O APIC registers: an index (IOREGSEL) and a data window (IOWIN). */
#include "kernel/ioapic.h"

#include <errno.h>

#include "kernel/io.h"
#include "kernel/mem.h"

#define IOREGSEL      0x00
#define IOWIN         0x10
#define IOAPIC_VER    0x01
#define IOAPIC_RTE(n) (0x10u + 2u * (n))
#define IOAPIC_WINDOW 0x20

static struct ioapic {
    uintptr_t base;
    uint32_t gsi_base;
    unsigned pins;
} ioapics[IOAPIC_MAX];
static unsigned n_ioapic;

static uint32_t ioapic_read(const struct ioapic *io, uint32_t reg)
{
    mmio_write32(io->base + IOREGSEL, reg);
    return mmio_read32(io->base + IOWIN);
}

static void ioapic_write(const struct ioapic *io, uint32_t reg, uint32_t v)
{
    mmio_write32(io->base + IOREGSEL, reg);
    mmio_write32(io->base + IOWIN, v);
}

/* The low word holds the mask: written last when unmasking, so the pin
 * never fires with half an entry. */
static void ioapic_set_rte(const struct ioapic *io, unsigned pin, uint64_t rte)
{
    ioapic_write(io, IOAPIC_RTE(pin), IOAPIC_RTE_MASKED);
    ioapic_write(io, IOAPIC_RTE(pin) + 1, (uint32_t)(rte >> 32));
    ioapic_write(io, IOAPIC_RTE(pin), (uint32_t)rte);
}

int ioapic_add(uint32_t addr, uint32_t gsi_base)
{
    if (n_ioapic == IOAPIC_MAX)
        return -ENOSPC;
    struct ioapic *io = &ioapics[n_ioapic];
    io->base = mem_map_mmio(addr, IOAPIC_WINDOW);
    if (!io->base)
        return -ENODEV;
    uint32_t ver = ioapic_read(io, IOAPIC_VER);
    if (ver == 0xffffffffu)
        return -ENODEV;
    io->pins = ((ver >> 16) & 0xff) + 1u;
    io->gsi_base = gsi_base;
    for (unsigned pin = 0; pin < io->pins; pin++)
        ioapic_set_rte(io, pin, ioapic_rte(0, 0, false, false, true));
    n_ioapic++;
    return (int)io->pins;
}

int ioapic_route(uint32_t gsi, uint8_t vector, uint8_t dest, bool level, bool active_low)
{
    for (unsigned i = 0; i < n_ioapic; i++) {
        const struct ioapic *io = &ioapics[i];
        if (gsi < io->gsi_base || gsi - io->gsi_base >= io->pins)
            continue;
        ioapic_set_rte(io, gsi - io->gsi_base, ioapic_rte(vector, dest, level, active_low, false));
        return 0;
    }
    return -ENOENT;
}

unsigned ioapic_count(void)
{
    return n_ioapic;
}
