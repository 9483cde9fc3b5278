/* Loss, duplicate and reorder accounting from per-stream sequence numbers.
 * Each stream keeps a window of the last SEQ_WIN sequence numbers so a
 * late frame can be told from a duplicate. */
#ifndef VN_SEQTRACK_H
#define VN_SEQTRACK_H

#include <stdbool.h>
#include <stdint.h>

#define SEQ_WIN 1024 /* power of two */

struct seq_stream {
    bool active;
    uint64_t first;   /* first sequence number seen */
    uint64_t next;    /* highest seen + 1 */
    uint64_t unique;  /* distinct sequence numbers received */
    uint64_t dup;     /* seen before (inside the window) */
    uint64_t reorder; /* arrived after a higher one */
    uint64_t bits[SEQ_WIN / 64];
};

struct seq_totals {
    uint64_t streams, unique, dup, reorder, lost;
};

/* Records one sequence number; returns 1 if it was new, 0 for a duplicate. */
int seq_record(struct seq_stream *s, uint64_t seq);

/* Missing so far: numbers between the first and the highest seen that
 * never arrived (frames still in flight count until they arrive). */
static inline uint64_t seq_lost(const struct seq_stream *s)
{
    return s->active ? s->next - s->first - s->unique : 0;
}

void seq_sum(const struct seq_stream *s, unsigned n, struct seq_totals *t);

#endif
