/* Log-linear latency histogram (HDR style): values below 2^HIST_SUB_BITS
 * get one bucket each, above that every power of two is split into
 * 2^HIST_SUB_BITS linear buckets, so a bucket is at most 1/32 (3.1%) wide
 * relative to its values. Recording is a shift and an add. */
#ifndef VN_HIST_H
#define VN_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 5
#define HIST_SUB      (1u << HIST_SUB_BITS)
#define HIST_BUCKETS  ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
    uint64_t count;
    uint64_t min, max, sum;
    uint32_t bucket[HIST_BUCKETS];
};

void hist_init(struct hist *h);

static inline unsigned hist_index(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - HIST_SUB_BITS;
    return (shift + 1) * HIST_SUB + (unsigned)((v >> shift) & (HIST_SUB - 1));
}

static inline void hist_add(struct hist *h, uint64_t v)
{
    h->bucket[hist_index(v)]++;
    h->count++;
    h->sum += v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

/* Lowest and highest value that land in bucket i. */
uint64_t hist_bucket_low(unsigned i);
uint64_t hist_bucket_high(unsigned i);

/* Value at quantile q (0 < q <= 1): the highest value of the bucket that
 * holds the ceil(q * count)-th smallest sample, capped at max; 0 when
 * empty. */
uint64_t hist_quantile(const struct hist *h, double q);

void hist_merge(struct hist *dst, const struct hist *src);

#endif
