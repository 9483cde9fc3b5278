/* Interrupt vector allocation: a bitmap of the 256 IDT vectors. Pure,
 * unit-tested on the host. The local APIC ranks vectors by priority
 * class (vector / 16); all of ours are served one at a time anyway. */
#ifndef VN_IRQ_VEC_H
#define VN_IRQ_VEC_H

#include <errno.h>
#include <stdint.h>

struct irq_vec_map {
    uint64_t used[4];
};

/* Lowest free vector in [lo, hi], marked used; -ENOSPC when none. */
static inline int irq_vec_alloc(struct irq_vec_map *m, unsigned lo, unsigned hi)
{
    for (unsigned v = lo; v <= hi && v < 256; v++)
        if (!(m->used[v / 64] & (1ull << (v % 64)))) {
            m->used[v / 64] |= 1ull << (v % 64);
            return (int)v;
        }
    return -ENOSPC;
}

static inline void irq_vec_free(struct irq_vec_map *m, unsigned v)
{
    if (v < 256)
        m->used[v / 64] &= ~(1ull << (v % 64));
}

static inline int irq_vec_used(const struct irq_vec_map *m, unsigned v)
{
    return v < 256 && (m->used[v / 64] >> (v % 64)) & 1;
}

#endif
