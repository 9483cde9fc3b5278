#include "apps/seqtrack.h"

#include <string.h>

static inline bool bit_test(const struct seq_stream *s, uint64_t q)
{
    return s->bits[(q % SEQ_WIN) / 64] >> (q % 64) & 1;
}
static inline void bit_set(struct seq_stream *s, uint64_t q)
{
    s->bits[(q % SEQ_WIN) / 64] |= (uint64_t)1 << (q % 64);
}
static inline void bit_clear(struct seq_stream *s, uint64_t q)
{
    s->bits[(q % SEQ_WIN) / 64] &= ~((uint64_t)1 << (q % 64));
}

/* seq > high. The slots of (high, seq] now stand for new numbers. No
 * high + 1: high may be 2^64 - 1 only when nothing is above it. */
static void advance(struct seq_stream *s, uint64_t seq)
{
    if (seq - s->high > SEQ_WIN)
        memset(s->bits, 0, sizeof(s->bits));
    else
        for (uint64_t q = s->high + 1; q < seq; q++)
            bit_clear(s, q);
    bit_set(s, seq);
    s->high = seq;
}

int seq_record(struct seq_stream *s, uint64_t seq)
{
    if (!s->active) {
        memset(s, 0, sizeof(*s));
        s->active = true;
        s->first = s->high = seq;
        s->unique = 1;
        bit_set(s, seq);
        return 1;
    }
    if (seq > s->high) {
        advance(s, seq);
        s->unique++;
        return 1;
    }
    if (seq < s->first) {
        /* Below anything seen, so new: the stream started earlier than we
         * thought; everything between counts as missing until it comes. */
        s->first = seq;
        s->unique++;
        s->reorder++;
        if (s->high - seq < SEQ_WIN)
            bit_set(s, seq);
        return 1;
    }
    if (s->high - seq >= SEQ_WIN) {
        /* Behind the window: a duplicate cannot be told from a very late
         * frame. Counted apart; the number stays lost, so lost never
         * goes below 0 and unique never counts one number twice. */
        s->stale++;
        return 0;
    }
    if (bit_test(s, seq)) {
        s->dup++;
        return 0;
    }
    bit_set(s, seq);
    s->unique++;
    s->reorder++;
    return 1;
}

void seq_sum(const struct seq_stream *s, unsigned n, struct seq_totals *t)
{
    memset(t, 0, sizeof(*t));
    for (unsigned i = 0; i < n; i++) {
        if (!s[i].active)
            continue;
        t->streams++;
        t->unique += s[i].unique;
        t->dup += s[i].dup;
        t->reorder += s[i].reorder;
        t->stale += s[i].stale;
        t->lost += seq_lost(&s[i]);
    }
}
