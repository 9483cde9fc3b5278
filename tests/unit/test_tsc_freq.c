/* kernel/tsc_freq.c and kernel/pvclock.c against a fake CPU: CPUID leaves
 * from a table (a leaf above its max answers like QEMU's, with another
 * leaf's words), MSR writes recorded, and a fake host that fills the
 * kvmclock page when it is enabled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/tsc_freq.h"

#define HV_BIT (1u << 31)

struct leaf {
    uint32_t leaf;
    uint32_t r[4];
};

static struct {
    struct leaf leaves[16];
    unsigned n;
    uint32_t beyond[4]; /* what an absent leaf returns */
    uint32_t msr[4];
    uint64_t msr_val[4];
    unsigned msr_writes;
    struct pvclock_time host; /* what the host writes at enable */
    unsigned relaxes;
    unsigned even_after; /* relaxes after which version turns even; 0: never */
    struct pvclock_time *page;
} fake;

static void fake_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    (void)sub;
    for (unsigned i = 0; i < fake.n; i++)
        if (fake.leaves[i].leaf == leaf) {
            memcpy(r, fake.leaves[i].r, 16);
            return;
        }
    memcpy(r, fake.beyond, 16);
}

static void fake_msr_write(uint32_t msr, uint64_t v)
{
    assert_true(fake.msr_writes < 4);
    fake.msr[fake.msr_writes] = msr;
    fake.msr_val[fake.msr_writes++] = v;
    if (msr == MSR_KVM_SYSTEM_TIME_NEW && (v & 1u)) {
        fake.page = (struct pvclock_time *)(uintptr_t)(v & ~1ull);
        *fake.page = fake.host;
    }
}

static void fake_relax(void)
{
    if (++fake.relaxes == fake.even_after)
        fake.page->version++;
}

static const struct tsc_hw hw = {fake_cpuid, fake_msr_write, fake_relax};
static struct pvclock_time page;

static void add(uint32_t leaf, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    fake.leaves[fake.n++] = (struct leaf){leaf, {a, b, c, d}};
}

/* A CPU with basic leaves up to max and the hypervisor bit as given. */
static void cpu(uint32_t max, int hv)
{
    memset(&fake, 0, sizeof(fake));
    memset(&page, 0, sizeof(page));
    /* QEMU -cpu max's leaf 0xd words, and for leaf 0x16 a sane 2000 MHz:
     * read where it must not be, it would be taken. */
    fake.beyond[0] = 2000;
    fake.beyond[1] = 0x240;
    fake.beyond[2] = 0xa88;
    add(0, max, 0x68747541, 0x444d4163, 0x69746e65);
    add(1, 0x60fb1, 0x800, hv ? HV_BIT : 0, 0x78bfbfd);
}

static void hv_sig(uint32_t max, const char sig[12])
{
    uint32_t w[3];
    memcpy(w, sig, 12);
    add(0x40000000, max, w[0], w[1], w[2]);
}

static void kvm(uint32_t max, uint32_t features)
{
    hv_sig(max, "KVMKVMKVM\0\0\0");
    add(0x40000001, features, 0, 0, 0);
}

static void host_page(uint32_t version, uint32_t mul, int8_t shift)
{
    fake.host.version = version;
    fake.host.tsc_to_system_mul = mul;
    fake.host.tsc_shift = shift;
    fake.host.tsc_timestamp = 123456789;
}

static void test_pvclock_math(void **state)
{
    (void)state;
    /* ns/tick = mul * 2^shift / 2^32, so hz = 10^9 * 2^32 / mul >> shift:
     * 2 GHz is 0.5 ns a tick: mul 2^31, shift 0. */
    assert_int_equal(pvclock_tsc_hz(0x80000000u, 0), 2000000000ull);
    /* 500 MHz, 2 ns a tick: mul 2^31, shift 2 (10^9 * 2 >> 2). */
    assert_int_equal(pvclock_tsc_hz(0x80000000u, 2), 500000000ull);
    /* 3 GHz: 1/3 ns = 2^33/3 / 2^32 * 2^-1: mul 0xaaaaaaaa, shift -1;
     * 10^9 * 2^32 / 0xaaaaaaaa = 1500000000.35 -> 1500000000, << 1. */
    assert_int_equal(pvclock_tsc_hz(0xaaaaaaaau, -1), 3000000000ull);
    /* KVM's scale for 2.1 GHz: mul floor(2^33 / 2.1) = 0xf3cf3cf3, shift -1. */
    assert_int_equal(pvclock_tsc_hz(0xf3cf3cf3u, -1), 2100000000ull);
    /* Truncation: 10^9 * 16 / 15 = 1066666666.67 -> 1066666666, << 1. */
    assert_int_equal(pvclock_tsc_hz(0xf0000000u, -1), 2133333332ull);
    /* No scale, shifts no rate needs, a quotient beyond 64 bits. */
    assert_int_equal(pvclock_tsc_hz(0, 0), 0);
    assert_int_equal(pvclock_tsc_hz(0x80000000u, 33), 0);
    assert_int_equal(pvclock_tsc_hz(0x80000000u, -33), 0);
    assert_int_equal(pvclock_tsc_hz(1, -32), 0);
    assert_int_equal(pvclock_tsc_hz(0x80000000u, -32), 2000000000ull << 32);
}

static void test_hv_leaf(void **state)
{
    (void)state;
    /* QEMU/KVM, vmware-cpuid-freq=on: 2108061 kHz. */
    cpu(0xd, 1);
    kvm(0x40000010, 0);
    add(0x40000010, 2108061, 1000000, 0, 0);
    assert_int_equal(tsc_freq_hv_leaf(&hw), 2108061000ull);
    struct tsc_freq f = tsc_freq_platform(&hw, &page);
    assert_int_equal(f.hz, 2108061000ull);
    assert_string_equal(f.source, "cpuid_40000010");
    assert_int_equal(fake.msr_writes, 0);
}

static void test_hv_leaf_absent(void **state)
{
    (void)state;
    /* TCG: "TCGTCGTCGTCG", max 0x40000001; 0x40000010 would read as the
     * max basic leaf (2000 in EAX: 2 MHz, and were it taken as MHz, sane). */
    cpu(0xd, 1);
    hv_sig(0x40000001, "TCGTCGTCGTCG");
    fake.beyond[0] = 2000000;
    assert_int_equal(tsc_freq_hv_leaf(&hw), 0);
    /* No hypervisor bit: 0x40000000 is not the hypervisor's. */
    cpu(0xd, 0);
    hv_sig(0x40000010, "VMwareVMware");
    add(0x40000010, 2000000, 0, 0, 0);
    assert_int_equal(tsc_freq_hv_leaf(&hw), 0);
    struct tsc_freq f = tsc_freq_platform(&hw, &page);
    assert_int_equal(f.hz, 0);
    assert_null(f.source);
}

static void test_hv_leaf_insane(void **state)
{
    (void)state;
    static const uint32_t khz[] = {0, 99999, 10000001, 0xffffffffu};
    for (unsigned i = 0; i < 4; i++) {
        cpu(0x16, 1);
        hv_sig(0x40000010, "VMwareVMware");
        add(0x40000010, khz[i], 0, 0, 0);
        add(0x15, 2, 176, 24000000, 0);
        assert_int_equal(tsc_freq_hv_leaf(&hw), 0);
        struct tsc_freq f = tsc_freq_platform(&hw, &page);
        assert_int_equal(f.hz, 2112000000ull);
        assert_string_equal(f.source, "cpuid_15");
    }
    /* The range's ends are sane. */
    cpu(0xd, 1);
    hv_sig(0x40000010, "VMwareVMware");
    add(0x40000010, 100000, 0, 0, 0);
    assert_int_equal(tsc_freq_hv_leaf(&hw), TSC_FREQ_MIN_HZ);
    fake.leaves[fake.n - 1].r[0] = 10000000;
    assert_int_equal(tsc_freq_hv_leaf(&hw), TSC_FREQ_MAX_HZ);
}

static void test_kvmclock(void **state)
{
    (void)state;
    cpu(0xd, 1);
    kvm(0x40000001, 1u << 3);
    host_page(2, 0xf3cf3cf3u, -1);
    struct tsc_freq f = tsc_freq_platform(&hw, &page);
    assert_int_equal(f.hz, 2100000000ull);
    assert_string_equal(f.source, "kvmclock");
    /* Enabled at the page's address, then turned off. */
    assert_int_equal(fake.msr_writes, 2);
    assert_int_equal(fake.msr[0], 0x4b564d01u);
    assert_int_equal(fake.msr_val[0], (uint64_t)(uintptr_t)&page | 1u);
    assert_int_equal(fake.msr[1], 0x4b564d01u);
    assert_int_equal(fake.msr_val[1], 0);
    assert_int_equal(fake.relaxes, 0);
}

static void test_kvmclock_old_host_max_0(void **state)
{
    (void)state;
    /* cpuid.rst: an old host's max leaf 0 means 0x40000001. */
    cpu(0xd, 1);
    kvm(0, 1u << 3);
    host_page(4, 0x80000000u, 0);
    assert_int_equal(tsc_freq_kvmclock(&hw, &page), 2000000000ull);
}

static void test_kvmclock_not_offered(void **state)
{
    (void)state;
    /* KVM without CLOCKSOURCE2 (only the old MSR, bit 0), another
     * hypervisor, or no hypervisor bit: no MSR is written. */
    cpu(0xd, 1);
    kvm(0x40000001, 1u << 0);
    host_page(2, 0x80000000u, 0);
    assert_int_equal(tsc_freq_kvmclock(&hw, &page), 0);
    assert_int_equal(fake.msr_writes, 0);
    cpu(0xd, 1);
    hv_sig(0x40000001, "TCGTCGTCGTCG");
    add(0x40000001, 1u << 3, 0, 0, 0);
    assert_int_equal(tsc_freq_kvmclock(&hw, &page), 0);
    assert_int_equal(fake.msr_writes, 0);
    cpu(0xd, 0);
    kvm(0x40000001, 1u << 3);
    assert_int_equal(tsc_freq_kvmclock(&hw, &page), 0);
    assert_int_equal(fake.msr_writes, 0);
    /* KVM's max leaf below its features leaf (and not the old hosts' 0). */
    cpu(0xd, 1);
    kvm(0x40000000, 1u << 3);
    assert_int_equal(tsc_freq_kvmclock(&hw, &page), 0);
    assert_int_equal(fake.msr_writes, 0);
}

static void test_kvmclock_odd_then_even(void **state)
{
    (void)state;
    /* The host is mid-update for three looks, then done. */
    cpu(0xd, 1);
    kvm(0x40000001, 1u << 3);
    host_page(5, 0x80000000u, 2);
    fake.even_after = 3;
    assert_int_equal(tsc_freq_kvmclock(&hw, &page), 500000000ull);
    assert_int_equal(fake.relaxes, 3);
}

static void test_kvmclock_stays_odd(void **state)
{
    (void)state;
    /* A version that stays odd: PVCLOCK_TRIES looks, then CPUID 0x16;
     * the page is still turned off. */
    cpu(0x16, 1);
    kvm(0x40000001, 1u << 3);
    add(0x15, 0, 0, 0, 0);
    add(0x16, 2100, 3000, 100, 0);
    host_page(7, 0x80000000u, 0);
    struct tsc_freq f = tsc_freq_platform(&hw, &page);
    assert_int_equal(fake.relaxes, PVCLOCK_TRIES);
    assert_int_equal(f.hz, 2100000000ull);
    assert_string_equal(f.source, "cpuid_16");
    assert_int_equal(fake.msr_writes, 2);
    assert_int_equal(fake.msr_val[1], 0);
}

static void test_kvmclock_insane_scale(void **state)
{
    (void)state;
    /* A page the host never filled (mul 0), and scales for 50 MHz and
     * 16 GHz: no rate. */
    static const struct {
        uint32_t mul;
        int8_t shift;
    } s[] = {{0, 0}, {0xa0000000u, 5}, {0x80000000u, -3}};
    for (unsigned i = 0; i < 3; i++) {
        cpu(0xd, 1);
        kvm(0x40000001, 1u << 3);
        host_page(2, s[i].mul, s[i].shift);
        assert_int_equal(tsc_freq_kvmclock(&hw, &page), 0);
        assert_int_equal(fake.msr_writes, 2);
    }
}

static void test_cpuid_15(void **state)
{
    (void)state;
    /* 24 MHz crystal * 176 / 2 = 2112 MHz. */
    cpu(0x16, 0);
    add(0x15, 2, 176, 24000000, 0);
    add(0x16, 2100, 3000, 100, 0);
    assert_int_equal(tsc_freq_cpuid_15(&hw), 2112000000ull);
    /* Not enumerated (EBX or ECX 0; EAX 0 would divide by zero): 0x16. */
    static const uint32_t z[][3] = {{2, 176, 0}, {2, 0, 24000000}, {0, 176, 24000000}};
    for (unsigned i = 0; i < 3; i++) {
        cpu(0x16, 0);
        add(0x15, z[i][0], z[i][1], z[i][2], 0);
        add(0x16, 2100, 3000, 100, 0);
        assert_int_equal(tsc_freq_cpuid_15(&hw), 0);
        struct tsc_freq f = tsc_freq_platform(&hw, &page);
        assert_int_equal(f.hz, 2100000000ull);
        assert_string_equal(f.source, "cpuid_16");
    }
    /* Out of range: 24 MHz * 1 / 1. */
    cpu(0x15, 0);
    add(0x15, 1, 1, 24000000, 0);
    assert_int_equal(tsc_freq_cpuid_15(&hw), 0);
}

static void test_cpuid_above_max(void **state)
{
    (void)state;
    /* Max basic leaf 0xd (QEMU -cpu max): 0x15 and 0x16 answer with leaf
     * 0xd's words, never read. */
    cpu(0xd, 0);
    fake.beyond[0] = 2;
    fake.beyond[1] = 176;
    fake.beyond[2] = 24000000;
    assert_int_equal(tsc_freq_cpuid_15(&hw), 0);
    assert_int_equal(tsc_freq_cpuid_16(&hw), 0);
    /* Max 0x15: 0x16 is above it. */
    cpu(0x15, 0);
    add(0x15, 2, 176, 0, 0);
    assert_int_equal(tsc_freq_cpuid_16(&hw), 0);
    assert_null(tsc_freq_platform(&hw, &page).source);
}

static void test_cpuid_16(void **state)
{
    (void)state;
    /* Bits 31:16 are reserved: 0x1234 << 16 | 2100. */
    cpu(0x16, 0);
    add(0x16, 0x12340834u, 0, 0, 0);
    assert_int_equal(tsc_freq_cpuid_16(&hw), 2100000000ull);
    cpu(0x16, 0);
    add(0x16, 0, 0, 0, 0);
    assert_int_equal(tsc_freq_cpuid_16(&hw), 0);
    cpu(0x16, 0);
    add(0x16, 99, 0, 0, 0);
    assert_int_equal(tsc_freq_cpuid_16(&hw), 0);
}

static void test_order(void **state)
{
    (void)state;
    /* Every source present: the timing leaf first, no MSR written. */
    cpu(0x16, 1);
    kvm(0x40000010, 1u << 3);
    add(0x40000010, 2000000, 0, 0, 0);
    add(0x15, 2, 176, 24000000, 0);
    add(0x16, 2100, 0, 0, 0);
    host_page(2, 0x80000000u, -1);
    assert_string_equal(tsc_freq_platform(&hw, &page).source, "cpuid_40000010");
    assert_int_equal(fake.msr_writes, 0);
    /* Without it, kvmclock before the CPU's leaves. */
    fake.leaves[2].r[0] = 0x40000001;
    struct tsc_freq f = tsc_freq_platform(&hw, &page);
    assert_string_equal(f.source, "kvmclock");
    assert_int_equal(f.hz, 4000000000ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvclock_math),
        cmocka_unit_test(test_hv_leaf),
        cmocka_unit_test(test_hv_leaf_absent),
        cmocka_unit_test(test_hv_leaf_insane),
        cmocka_unit_test(test_kvmclock),
        cmocka_unit_test(test_kvmclock_old_host_max_0),
        cmocka_unit_test(test_kvmclock_not_offered),
        cmocka_unit_test(test_kvmclock_odd_then_even),
        cmocka_unit_test(test_kvmclock_stays_odd),
        cmocka_unit_test(test_kvmclock_insane_scale),
        cmocka_unit_test(test_cpuid_15),
        cmocka_unit_test(test_cpuid_above_max),
        cmocka_unit_test(test_cpuid_16),
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
