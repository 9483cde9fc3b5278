/* The ACPI table walk (ACPI 6.4 s5.2): RSDP, RSDT/XSDT, a table by its
 * signature, the FADT's PM timer. Pure parsing: memory is reached only
 * through a map callback, so the host fuzzes it over a buffer. */
#ifndef VN_ACPI_WALK_H
#define VN_ACPI_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/acpi.h"

#define ACPI_RSDP_V1_LEN 20         /* s5.2.5.3: the ACPI 1.0 checksum covers these */
#define ACPI_RSDP_V2_LEN 36         /* the extended checksum covers these */
#define ACPI_SDT_MAX     (1u << 20) /* longer tables are not trusted */

/* [pa, pa + len) as a pointer, or NULL when that range is not readable
 * (outside the map, or wrapping). */
typedef const void *(*acpi_map_fn)(void *ctx, uint64_t pa, uint64_t len);

struct acpi_mem {
    acpi_map_fn map;
    void *ctx;
};

struct acpi_root {
    const struct acpi_sdt_hdr *sdt; /* the RSDT or XSDT, checked */
    unsigned esz;                   /* 4 (RSDT) or 8 (XSDT) */
};

/* Whether p (avail readable bytes) holds an RSDP with a right checksum;
 * for revision 2 and later the extended one too. */
int acpi_rsdp_ok(const void *p, size_t avail);

/* From a checked RSDP: the XSDT when it has one that checks and is
 * signed "XSDT", else the RSDT likewise. Returns 0, or -ENOENT. */
int acpi_root_from_rsdp(const struct acpi_mem *m, const void *rsdp, struct acpi_root *root);

/* The table at pa when its length (header to ACPI_SDT_MAX) lies in the
 * map and its checksum is right, else NULL. */
const struct acpi_sdt_hdr *acpi_sdt_at(const struct acpi_mem *m, uint64_t pa);

/* The first table of the root with this signature that checks, or NULL. */
const struct acpi_sdt_hdr *acpi_root_find(const struct acpi_mem *m, const struct acpi_root *root,
                                          const char sig[4]);

/* s5.2.9: X_PM_TMR_BLK when it is in system I/O space, else PM_TMR_BLK;
 * 0 when neither names a port. */
uint16_t acpi_fadt_pm_timer(const struct acpi_sdt_hdr *fadt);

#endif
