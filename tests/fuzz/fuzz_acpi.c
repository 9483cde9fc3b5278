/* kernel/acpi_walk.c and kernel/madt.c: the RSDP, the RSDT/XSDT, the
 * tables it names, the FADT's PM timer and the MADT. Input: physical
 * memory from address 0, the RSDP at 0. When bit 0 of the RSDP's first
 * reserved byte (33) is set, the harness first makes the RSDP's, the
 * roots' and their tables' checksums right, so the fuzzer gets past them.
 * Every table found must lie in the input, carry its signature and sum
 * to 0; the MADT's I/O APICs must fit its entries. */
#include <errno.h>

#include "kernel/acpi_walk.h"
#include "kernel/madt.h"
#include "tests/fuzz/fuzz.h"

struct image {
    uint8_t *p;
    size_t n;
};

static const void *img_map(void *ctx, uint64_t pa, uint64_t len)
{
    const struct image *im = ctx;
    return pa <= im->n && len <= im->n - pa ? im->p + pa : NULL;
}

static uint64_t rd(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}

static void fix(struct image *im, uint64_t off, uint64_t len, size_t at)
{
    if (off > im->n || len > im->n - off || at >= len)
        return;
    uint8_t *t = im->p + off, s = 0;
    t[at] = 0;
    for (size_t i = 0; i < len; i++)
        s += t[i];
    t[at] = (uint8_t)-s;
}

/* A table at pa: its own checksum, and with esz its entries' too. */
static void fix_sdt(struct image *im, uint64_t pa, unsigned esz)
{
    if (pa > im->n || im->n - pa < 36)
        return;
    uint32_t len = (uint32_t)rd(im->p + pa + 4, 4);
    if (len < 36 || len > ACPI_SDT_MAX || len > im->n - pa)
        return;
    for (uint32_t o = 36; esz && o + esz <= len; o += esz)
        fix_sdt(im, rd(im->p + pa + o, esz), 0);
    fix(im, pa, len, 9);
}

static void fix_all(struct image *im)
{
    fix_sdt(im, rd(im->p + 16, 4), 4);
    if (im->p[15] >= 2)
        fix_sdt(im, rd(im->p + 24, 8), 8);
    fix(im, 0, ACPI_RSDP_V1_LEN, 8);
    fix(im, 0, ACPI_RSDP_V2_LEN, 32);
}

static void check_table(const struct image *im, const struct acpi_sdt_hdr *h, const char *sig)
{
    const uint8_t *t = (const uint8_t *)h;
    FUZZ_CHECK(t >= im->p && (size_t)(t - im->p) <= im->n && h->len <= im->n - (size_t)(t - im->p));
    FUZZ_CHECK(h->len >= 36 && h->len <= ACPI_SDT_MAX && memcmp(h->sig, sig, 4) == 0);
    uint8_t s = 0;
    for (uint32_t i = 0; i < h->len; i++)
        s += t[i];
    FUZZ_CHECK(s == 0);
}

static void check_madt(const struct acpi_sdt_hdr *h)
{
    struct madt_info mi;
    int rc = madt_parse(h, h->len, &mi);
    FUZZ_CHECK(rc == 0 || rc == -EINVAL);
    FUZZ_CHECK(mi.n_ioapic <= MADT_MAX_IOAPIC && mi.n_cpu <= MADT_MAX_CPU);
    if (rc == 0)
        FUZZ_CHECK(h->len >= 44 && mi.n_ioapic + mi.skipped <= (h->len - 44) / 12);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < ACPI_RSDP_V2_LEN || n > 1 << 16)
        return 0;
    struct image im = {malloc(n), n}; /* exactly n bytes: ASan sees a read past */
    if (!im.p)
        abort();
    memcpy(im.p, data, n);
    if (im.p[33] & 1)
        fix_all(&im);
    struct acpi_mem m = {img_map, &im};
    struct acpi_root root;
    if (acpi_rsdp_ok(im.p, n) && acpi_root_from_rsdp(&m, im.p, &root) == 0) {
        check_table(&im, root.sdt, root.esz == 8 ? "XSDT" : "RSDT");
        static const char *const sigs[] = {"APIC", "FACP", "MCFG", "HPET"};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
            const struct acpi_sdt_hdr *h = acpi_root_find(&m, &root, sigs[i]);
            if (!h)
                continue;
            check_table(&im, h, sigs[i]);
            if (i == 0)
                check_madt(h);
            if (i == 1)
                (void)acpi_fadt_pm_timer(h);
        }
    }
    free(im.p);
    return 0;
}
