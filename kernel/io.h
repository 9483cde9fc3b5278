/* Hardware access: the only place that touches ports, MMIO and barriers.
 * Everything else goes through these helpers so the access width and the
 * ordering rules are visible in one file. */
#ifndef VN_IO_H
#define VN_IO_H

#include <stdbool.h>
#include <stdint.h>

static inline void pio_write8(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline void pio_write16(uint16_t port, uint16_t v)
{
    __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}
static inline void pio_write32(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}
static inline uint8_t pio_read8(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint16_t pio_read16(uint16_t port)
{
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t pio_read32(uint16_t port)
{
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* MMIO: one volatile access of exactly the named width. */
static inline uint8_t mmio_read8(uintptr_t a)
{
    return *(volatile const uint8_t *)a;
}
static inline uint16_t mmio_read16(uintptr_t a)
{
    return *(volatile const uint16_t *)a;
}
static inline uint32_t mmio_read32(uintptr_t a)
{
    return *(volatile const uint32_t *)a;
}
static inline uint64_t mmio_read64(uintptr_t a)
{
    return *(volatile const uint64_t *)a;
}
static inline void mmio_write8(uintptr_t a, uint8_t v)
{
    *(volatile uint8_t *)a = v;
}
static inline void mmio_write16(uintptr_t a, uint16_t v)
{
    *(volatile uint16_t *)a = v;
}
static inline void mmio_write32(uintptr_t a, uint32_t v)
{
    *(volatile uint32_t *)a = v;
}
static inline void mmio_write64(uintptr_t a, uint64_t v)
{
    *(volatile uint64_t *)a = v;
}

/* Barriers. x86 is TSO: stores are not reordered with older stores and
 * loads are not reordered with older loads, so the SMP read/write barriers
 * only have to stop the compiler. Store->load ordering (needed before
 * reading a notification-suppression field after publishing an index) is
 * the one case that needs a real fence. */
static inline void barrier_compiler(void)
{
    __asm__ volatile("" ::: "memory");
}
static inline void barrier_rmb(void)
{
    barrier_compiler();
}
static inline void barrier_wmb(void)
{
    barrier_compiler();
}
static inline void barrier_mb(void)
{
    __asm__ volatile("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
}

/* mfence, where the SDM asks for it by name: before a WRMSR that must
 * not pass earlier stores (IA32_TSC_DEADLINE after an xAPIC LVT write,
 * Intel SDM vol 3 11.5.4.1). */
static inline void barrier_mfence(void)
{
    __asm__ volatile("mfence" ::: "memory");
}

/* Shared-memory (ring) accesses: read/write once, never torn or cached in
 * a register, without implying any ordering. */
#define VN_READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define VN_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid"
                     : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(sub));
}

static inline uint64_t msr_read(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

/* A memory clobber: an x2APIC EOI or a TSC-deadline write must not be
 * moved before the stores it follows. */
static inline void msr_write(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/* Interrupt flag. cpu_sti_hlt is the race-free idle: sti takes effect
 * after the next instruction, so an interrupt that became pending while
 * IF was 0 (after the caller's last look for work) is taken in the hlt
 * and ends it, instead of slipping in before it and being slept on. */
static inline void cpu_cli(void)
{
    __asm__ volatile("cli" ::: "memory");
}
static inline void cpu_sti(void)
{
    __asm__ volatile("sti" ::: "memory");
}
static inline void cpu_sti_hlt(void)
{
    __asm__ volatile("sti; hlt" ::: "memory");
}
static inline bool cpu_irqs_on(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f & (1u << 9);
}

#endif
