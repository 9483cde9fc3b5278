/* The kvmclock (pvclock) per-vCPU time page, read for the TSC's rate. */
#ifndef VN_PVCLOCK_H
#define VN_PVCLOCK_H

#include <stdint.h>

/* KVM's Documentation/virt/kvm/x86/msr.rst, MSR_KVM_SYSTEM_TIME_NEW: the
 * 32-byte area the host fills. version is odd while the host updates it.
 * ns = ((tsc - tsc_timestamp) shifted left by tsc_shift, right when
 * negative) * tsc_to_system_mul >> 32, plus system_time. Natural layout,
 * no padding; aligned to its size so it never crosses a page (the host
 * maps one page for it). */
struct pvclock_time {
    uint32_t version;
    uint32_t pad0;
    uint64_t tsc_timestamp;
    uint64_t system_time;
    uint32_t tsc_to_system_mul;
    int8_t tsc_shift;
    uint8_t flags;
    uint8_t pad[2];
} __attribute__((aligned(32)));
_Static_assert(sizeof(struct pvclock_time) == 32, "msr.rst's layout");

/* How often an odd version is read again before giving up: the host
 * finishes an update within one VM exit, so a version still odd after
 * this many looks is a broken page, not a slow host. */
#define PVCLOCK_TRIES 1000u

/* TSC ticks per second for a scale (mul, shift): the inverse of the ns
 * formula above, 10^9 * 2^32 / mul, shifted the other way. 0 when mul is
 * 0 or the shift is beyond what any rate needs (|shift| > 32). */
uint64_t pvclock_tsc_hz(uint32_t mul, int8_t shift);

/* Reads (mul, shift) from the page under the version protocol: version
 * even and the same before and after. relax runs between tries. Returns
 * 0 and the scale, or -1 after PVCLOCK_TRIES tries. */
int pvclock_read_scale(const struct pvclock_time *p, void (*relax)(void), uint32_t *mul,
                       int8_t *shift);

#endif
