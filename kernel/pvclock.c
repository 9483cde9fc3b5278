/* kvmclock's time page: its scale read under the version protocol, and
 * the TSC rate it implies (KVM's Documentation/virt/kvm/x86/msr.rst,
 * MSR_KVM_SYSTEM_TIME_NEW). */
#include "kernel/pvclock.h"
#include "kernel/io.h"

uint64_t pvclock_tsc_hz(uint32_t mul, int8_t shift)
{
    if (!mul || shift > 32 || shift < -32)
        return 0;
    unsigned __int128 hz = ((unsigned __int128)1000000000u << 32) / mul;
    hz = shift < 0 ? hz << -shift : hz >> shift;
    return hz > UINT64_MAX ? 0 : (uint64_t)hz;
}

/* Volatile loads keep their program order, and x86 does not reorder
 * loads with loads (Intel SDM vol 3A 9.2.2, 8.2.2 in older editions): no
 * fence is needed between them. */
int pvclock_read_scale(const struct pvclock_time *p, void (*relax)(void), uint32_t *mul,
                       int8_t *shift)
{
    for (uint32_t i = 0; i < PVCLOCK_TRIES; i++) {
        uint32_t v = VN_READ_ONCE(p->version);
        uint32_t m = VN_READ_ONCE(p->tsc_to_system_mul);
        int8_t s = VN_READ_ONCE(p->tsc_shift);
        if (!(v & 1u) && VN_READ_ONCE(p->version) == v) {
            *mul = m;
            *shift = s;
            return 0;
        }
        relax();
    }
    return -1;
}
