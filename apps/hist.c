#include "apps/hist.h"

#include <string.h>

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

uint64_t hist_bucket_low(unsigned i)
{
    if (i < HIST_SUB)
        return i;
    unsigned shift = i / HIST_SUB - 1;
    return (uint64_t)(HIST_SUB + i % HIST_SUB) << shift;
}

uint64_t hist_bucket_high(unsigned i)
{
    if (i < HIST_SUB)
        return i;
    unsigned shift = i / HIST_SUB - 1;
    return hist_bucket_low(i) + (((uint64_t)1 << shift) - 1);
}

uint64_t hist_quantile(const struct hist *h, double q)
{
    if (h->count == 0)
        return 0;
    double want = q * (double)h->count;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = hist_bucket_high(i);
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}
