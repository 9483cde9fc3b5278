/* ACPI MADT parsing (ACPI 6.4 s5.2.12). */
#include "kernel/madt.h"

#include <errno.h>
#include <string.h>

#define MADT_HDR        44 /* SDT header (36), local APIC address, flags */
#define MADT_IOAPIC     1
#define MADT_IOAPIC_LEN 12 /* type, length, id, reserved, address, GSI base */

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
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
        if (e[0] != MADT_IOAPIC)
            continue;
        if (e[1] < MADT_IOAPIC_LEN)
            return -EINVAL;
        if (out->n_ioapic == MADT_MAX_IOAPIC) {
            out->skipped++;
            continue;
        }
        out->ioapic[out->n_ioapic++] = (struct madt_ioapic){e[2], rd32(e + 4), rd32(e + 8)};
    }
    return 0;
}
