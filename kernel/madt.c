/* ACPI MADT parsing (ACPI 6.4 s5.2.12). */
#include "kernel/madt.h"

#include <errno.h>
#include <string.h>

#define MADT_HDR         44 /* SDT header (36), local APIC address, flags */
#define MADT_LAPIC       0  /* s5.2.12.2: type, length, UID, APIC id, flags */
#define MADT_LAPIC_LEN   8
#define MADT_IOAPIC      1
#define MADT_IOAPIC_LEN  12 /* type, length, id, reserved, address, GSI base */
#define MADT_X2APIC      9  /* s5.2.12.12: type, length, reserved(2), id, flags, UID */
#define MADT_X2APIC_LEN  16
#define MADT_CPU_ENABLED 1u /* s5.2.12.2 table 5.23: usable now; else online capable or not */

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void add_cpu(struct madt_info *out, uint32_t id, uint32_t flags)
{
    if (!(flags & MADT_CPU_ENABLED)) {
        out->cpu_disabled++;
        return;
    }
    for (unsigned i = 0; i < out->n_cpu; i++)
        if (out->cpu_apic_id[i] == id)
            return;
    if (out->n_cpu == MADT_MAX_CPU) {
        out->cpu_skipped++;
        return;
    }
    out->cpu_apic_id[out->n_cpu++] = id;
}

/* One entry of a type we use; -EINVAL when shorter than its fields. */
static int entry(const uint8_t *e, struct madt_info *out)
{
    switch (e[0]) {
    case MADT_LAPIC:
        if (e[1] < MADT_LAPIC_LEN)
            return -EINVAL;
        add_cpu(out, e[3], rd32(e + 4));
        return 0;
    case MADT_X2APIC:
        if (e[1] < MADT_X2APIC_LEN)
            return -EINVAL;
        add_cpu(out, rd32(e + 4), rd32(e + 8));
        return 0;
    case MADT_IOAPIC:
        if (e[1] < MADT_IOAPIC_LEN)
            return -EINVAL;
        if (out->n_ioapic == MADT_MAX_IOAPIC) {
            out->skipped++;
            return 0;
        }
        out->ioapic[out->n_ioapic++] = (struct madt_ioapic){e[2], rd32(e + 4), rd32(e + 8)};
        return 0;
    default:
        return 0;
    }
}

int madt_parse(const void *table, size_t len, struct madt_info *out)
{
    const uint8_t *t = table;
    memset(out, 0, sizeof(*out));
    if (len < MADT_HDR)
        return -EINVAL;
    for (size_t off = MADT_HDR; off < len;) {
        const uint8_t *e = t + off;
        /* Every entry starts with its type and length (>= 2). */
        if (len - off < 2 || e[1] < 2 || e[1] > len - off)
            return -EINVAL;
        off += e[1];
        if (entry(e, out) < 0)
            return -EINVAL;
    }
    return 0;
}
