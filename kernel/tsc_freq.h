/* The TSC's rate where the platform states it: the hypervisor's timing
 * leaf, kvmclock, CPUID 0x15/0x16. Hardware access goes through the
 * callbacks, so the unit tests play the CPU and the hypervisor. */
#ifndef VN_TSC_FREQ_H
#define VN_TSC_FREQ_H

#include <stdint.h>

#include "kernel/pvclock.h"

/* A rate outside this range is no TSC's: the source is ignored. */
#define TSC_FREQ_MIN_HZ 100000000ull
#define TSC_FREQ_MAX_HZ 10000000000ull

#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01u

struct tsc_hw {
    void (*cpuid)(uint32_t leaf, uint32_t sub, uint32_t r[4]);
    void (*msr_write)(uint32_t msr, uint64_t v);
    void (*relax)(void);
};

struct tsc_freq {
    uint64_t hz;        /* 0: no source gave a sane rate */
    const char *source; /* the boot line's and tsc_method's name */
};

int tsc_freq_valid(uint64_t hz);

/* Each returns the rate in Hz, or 0 when the source is absent, zero or
 * out of range. page is kvmclock's time area (guest RAM, identity mapped). */
uint64_t tsc_freq_hv_leaf(const struct tsc_hw *hw);
uint64_t tsc_freq_kvmclock(const struct tsc_hw *hw, struct pvclock_time *page);
uint64_t tsc_freq_cpuid_15(const struct tsc_hw *hw);
uint64_t tsc_freq_cpuid_16(const struct tsc_hw *hw);

/* The first source that gives a sane rate, in the order above. */
struct tsc_freq tsc_freq_platform(const struct tsc_hw *hw, struct pvclock_time *page);

#endif
