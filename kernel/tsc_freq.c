/* The TSC's rate where the platform states it, so that no boot waits on a
 * calibration where it need not. Every value is checked: a leaf that is
 * absent, zero or gives a rate outside TSC_FREQ_MIN_HZ..MAX falls to the
 * next source. */
#include <string.h>

#include "kernel/tsc_freq.h"

#define HV_BASE           0x40000000u
#define HV_TIMING_LEAF    0x40000010u
#define KVM_FEATURES_LEAF 0x40000001u
/* KVM's Documentation/virt/kvm/x86/cpuid.rst: EAX bit 3 of 0x40000001,
 * kvmclock at MSRs 0x4b564d00/01. */
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)
#define KVM_SYSTEM_TIME_ENABLE   1u

int tsc_freq_valid(uint64_t hz)
{
    return hz >= TSC_FREQ_MIN_HZ && hz <= TSC_FREQ_MAX_HZ;
}

static uint64_t valid_or_0(uint64_t hz)
{
    return tsc_freq_valid(hz) ? hz : 0;
}

/* A leaf above the maximum one returns the highest basic leaf's data
 * (Intel SDM vol 2A, CPUID, "INPUT EAX = 0"): QEMU's -cpu max answers
 * 0x15 with leaf 0xd's words. So each leaf is read only below its max. */
static uint32_t max_basic_leaf(const struct tsc_hw *hw)
{
    uint32_t r[4];
    hw->cpuid(0, 0, r);
    return r[0];
}

/* The hypervisor's leaves exist only when CPUID.1:ECX[31] is set (it is
 * 0 on hardware, SDM vol 2A Table 3-10; on hardware 0x40000000 reads as
 * the highest basic leaf). Returns their max leaf and the signature
 * (zeros without the bit). */
static uint32_t hv_max_leaf(const struct tsc_hw *hw, char sig[12])
{
    uint32_t r[4];
    memset(sig, 0, 12);
    hw->cpuid(1, 0, r);
    if (!(r[2] & (1u << 31)))
        return 0;
    hw->cpuid(HV_BASE, 0, r);
    memcpy(sig, &r[1], 4);
    memcpy(sig + 4, &r[2], 4);
    memcpy(sig + 8, &r[3], 4);
    return r[0];
}

/* 0x40000010, the timing leaf VMware defined and QEMU/KVM gives with
 * -cpu ...,vmware-cpuid-freq=on,+invtsc: EAX = TSC kHz, EBX = APIC bus kHz. */
uint64_t tsc_freq_hv_leaf(const struct tsc_hw *hw)
{
    char sig[12];
    uint32_t r[4];

    if (hv_max_leaf(hw, sig) < HV_TIMING_LEAF)
        return 0;
    hw->cpuid(HV_TIMING_LEAF, 0, r);
    return valid_or_0((uint64_t)r[0] * 1000u);
}

/* KVM with kvmclock (cpuid.rst: signature "KVMKVMKVM\0\0\0"; a max leaf
 * of 0 from old hosts means 0x40000001). */
static int kvm_has_clocksource2(const struct tsc_hw *hw)
{
    char sig[12];
    uint32_t r[4];

    uint32_t max = hv_max_leaf(hw, sig);
    if (memcmp(sig, "KVMKVMKVM\0\0\0", 12) != 0)
        return 0;
    if (max != 0 && max < KVM_FEATURES_LEAF)
        return 0;
    hw->cpuid(KVM_FEATURES_LEAF, 0, r);
    return (r[0] & KVM_FEATURE_CLOCKSOURCE2) != 0;
}

/* msr.rst, MSR_KVM_SYSTEM_TIME_NEW: the page's guest-physical address
 * (identity mapped here) with bit 0 set enables it, and the host fills it
 * before the write returns to the guest. Only the rate is wanted, so the
 * page is turned off again: the host stops writing into it. */
uint64_t tsc_freq_kvmclock(const struct tsc_hw *hw, struct pvclock_time *page)
{
    uint32_t mul = 0;
    int8_t shift = 0;

    if (!kvm_has_clocksource2(hw))
        return 0;
    memset(page, 0, sizeof(*page));
    hw->msr_write(MSR_KVM_SYSTEM_TIME_NEW, (uint64_t)(uintptr_t)page | KVM_SYSTEM_TIME_ENABLE);
    int got = pvclock_read_scale(page, hw->relax, &mul, &shift);
    hw->msr_write(MSR_KVM_SYSTEM_TIME_NEW, 0);
    return got == 0 ? valid_or_0(pvclock_tsc_hz(mul, shift)) : 0;
}

/* SDM vol 2A, CPUID leaf 15H: TSC = ECX (crystal Hz) * EBX / EAX; a zero
 * EBX or ECX means "not enumerated". */
uint64_t tsc_freq_cpuid_15(const struct tsc_hw *hw)
{
    uint32_t r[4];

    if (max_basic_leaf(hw) < 0x15)
        return 0;
    hw->cpuid(0x15, 0, r);
    if (!r[0] || !r[1] || !r[2])
        return 0;
    return valid_or_0((uint64_t)r[2] * r[1] / r[0]);
}

/* SDM vol 2A, CPUID leaf 16H: EAX[15:0] = processor base frequency, MHz. */
uint64_t tsc_freq_cpuid_16(const struct tsc_hw *hw)
{
    uint32_t r[4];

    if (max_basic_leaf(hw) < 0x16)
        return 0;
    hw->cpuid(0x16, 0, r);
    return valid_or_0((uint64_t)(r[0] & 0xffffu) * 1000000u);
}

struct tsc_freq tsc_freq_platform(const struct tsc_hw *hw, struct pvclock_time *page)
{
    struct tsc_freq f = {0, NULL};

    if ((f.hz = tsc_freq_hv_leaf(hw)))
        f.source = "cpuid_40000010";
    else if ((f.hz = tsc_freq_kvmclock(hw, page)))
        f.source = "kvmclock";
    else if ((f.hz = tsc_freq_cpuid_15(hw)))
        f.source = "cpuid_15";
    else if ((f.hz = tsc_freq_cpuid_16(hw)))
        f.source = "cpuid_16";
    return f;
}
