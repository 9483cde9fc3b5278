/* ACPI table walk (ACPI 6.4 s5.2.5 - s5.2.9); see acpi_walk.h. */
#include "kernel/acpi_walk.h"

#include <errno.h>
#include <string.h>

struct rsdp {
    char sig[8];
    uint8_t csum;
    char oem[6];
    uint8_t rev;
    uint32_t rsdt;
    uint32_t len; /* rev >= 2 */
    uint64_t xsdt;
    uint8_t xcsum;
    uint8_t rsvd[3];
} __attribute__((packed));
_Static_assert(sizeof(struct rsdp) == ACPI_RSDP_V2_LEN, "ACPI 6.4 s5.2.5.3: RSDP is 36 bytes");
_Static_assert(sizeof(struct acpi_sdt_hdr) == 36, "ACPI 6.4 s5.2.6: SDT header is 36 bytes");

#define FADT_PM_TMR_BLK   76
#define FADT_X_PM_TMR_BLK 208 /* a GAS: space id, width, offset, size, address */
#define GAS_SYSTEM_IO     1

static int csum_ok(const void *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s = (uint8_t)(s + ((const uint8_t *)p)[i]); /* mod 256 by definition */
    return s == 0;
}

/* The extended checksum covers the 36 bytes of the structure ACPICA
 * checks, not its Length field, which nothing bounds. */
int acpi_rsdp_ok(const void *p, size_t avail)
{
    const struct rsdp *r = p;
    if (avail < ACPI_RSDP_V1_LEN || memcmp(r->sig, "RSD PTR ", 8) || !csum_ok(r, ACPI_RSDP_V1_LEN))
        return 0;
    if (r->rev < 2)
        return 1;
    return avail >= ACPI_RSDP_V2_LEN && r->len >= ACPI_RSDP_V2_LEN && csum_ok(r, ACPI_RSDP_V2_LEN);
}

const struct acpi_sdt_hdr *acpi_sdt_at(const struct acpi_mem *m, uint64_t pa)
{
    const struct acpi_sdt_hdr *h = m->map(m->ctx, pa, sizeof(*h));
    if (!h || h->len < sizeof(*h) || h->len > ACPI_SDT_MAX)
        return NULL;
    uint32_t len = h->len; /* read once: the map may hand back another view */
    h = m->map(m->ctx, pa, len);
    return h && h->len == len && csum_ok(h, len) ? h : NULL;
}

/* s5.2.7, s5.2.8: a root table carries its own signature. */
static const struct acpi_sdt_hdr *root_at(const struct acpi_mem *m, uint64_t pa, const char *sig)
{
    const struct acpi_sdt_hdr *h = pa ? acpi_sdt_at(m, pa) : NULL;
    return h && memcmp(h->sig, sig, 4) == 0 ? h : NULL;
}

int acpi_root_from_rsdp(const struct acpi_mem *m, const void *rsdp, struct acpi_root *root)
{
    const struct rsdp *r = rsdp;
    root->sdt = r->rev >= 2 ? root_at(m, r->xsdt, "XSDT") : NULL;
    root->esz = 8;
    if (!root->sdt) {
        root->sdt = root_at(m, r->rsdt, "RSDT");
        root->esz = 4;
    }
    return root->sdt ? 0 : -ENOENT;
}

const struct acpi_sdt_hdr *acpi_root_find(const struct acpi_mem *m, const struct acpi_root *root,
                                          const char sig[4])
{
    if (!root->sdt)
        return NULL;
    size_t n = (root->sdt->len - sizeof(*root->sdt)) / root->esz;
    const uint8_t *ents = (const uint8_t *)(root->sdt + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t pa = 0;
        memcpy(&pa, ents + i * root->esz, root->esz);
        const struct acpi_sdt_hdr *h = pa ? acpi_sdt_at(m, pa) : NULL;
        if (h && memcmp(h->sig, sig, 4) == 0)
            return h;
    }
    return NULL;
}

uint16_t acpi_fadt_pm_timer(const struct acpi_sdt_hdr *f)
{
    const uint8_t *p = (const uint8_t *)f;
    if (f->len >= FADT_X_PM_TMR_BLK + 12 && p[FADT_X_PM_TMR_BLK] == GAS_SYSTEM_IO) {
        uint64_t a;
        memcpy(&a, p + FADT_X_PM_TMR_BLK + 4, 8);
        if (a && a < 0x10000)
            return (uint16_t)a;
    }
    if (f->len >= FADT_PM_TMR_BLK + 4) {
        uint32_t a;
        memcpy(&a, p + FADT_PM_TMR_BLK, 4);
        if (a && a < 0x10000)
            return (uint16_t)a;
    }
    return 0;
}
