/* Loss, duplicate and reorder accounting from per-stream sequence numbers.
 * Each stream keeps a window of the last SEQ_WIN sequence numbers so a
 * late frame can be told from a duplicate. */
#ifndef VN_SEQTRACK_H
#define VN_SEQTRACK_H

#include <stdbool.h>
#include <stdint.h>

#define SEQ_WIN 1024 /* power of two */

_Static_assert((SEQ_WIN & (SEQ_WIN - 1)) == 0 && SEQ_WIN % 64 == 0, "SEQ_WIN: power of two");

/* The whole 64-bit space is used: 2^64 - 1 is a sequence number like any
 * other, and nothing wraps to 0 after it. */
struct seq_stream {
    bool active;
    uint64_t first;   /* lowest sequence number seen */
    uint64_t high;    /* highest sequence number seen */
    uint64_t unique;  /* distinct sequence numbers received, never above high - first + 1 */
    uint64_t dup;     /* seen before (inside the window) */
    uint64_t reorder; /* new, but arrived after a higher one */
    uint64_t stale;   /* SEQ_WIN or more below high: a duplicate or a very late frame */
    uint64_t bits[SEQ_WIN / 64];
};

struct seq_totals {
    uint64_t streams, unique, dup, reorder, stale, lost;
};

/* Records one sequence number; returns 1 if it was new, 0 for a duplicate
 * or a stale one. */
int seq_record(struct seq_stream *s, uint64_t seq);

/* Missing so far: numbers between the first and the highest seen that
 * never arrived (frames still in flight count until they arrive). */
static inline uint64_t seq_lost(const struct seq_stream *s)
{
    return s->active ? (s->high - s->first) - (s->unique - 1) : 0;
}

void seq_sum(const struct seq_stream *s, unsigned n, struct seq_totals *t);

#endif
