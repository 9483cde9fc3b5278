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

int seq_record(struct seq_stream *s, uint64_t seq)
{
    if (!s->active) {
        memset(s, 0, sizeof(*s));
        s->active = true;
        s->first = seq;
        s->next = seq + 1;
        s->unique = 1;
        bit_set(s, seq);
        return 1;
    }
    if (seq >= s->next) {
        /* Slots for [next, seq] now stand for new numbers. */
        if (seq - s->next >= SEQ_WIN)
            memset(s->bits, 0, sizeof(s->bits));
        else
            for (uint64_t q = s->next; q < seq; q++)
                bit_clear(s, q);
        bit_set(s, seq);
        s->next = seq + 1;
        s->unique++;
        return 1;
    }
    if (seq < s->first) {
        /* Older than anything seen: the stream started earlier than we
         * thought; everything between counts as missing until it comes. */
        s->first = seq;
        s->unique++;
        s->reorder++;
        if (s->next - seq <= SEQ_WIN)
            bit_set(s, seq);
        return 1;
    }
    if (s->next - seq > SEQ_WIN) {
        /* Too old for the window: cannot be told from a duplicate; taken
         * as a late frame. */
        s->unique++;
        s->reorder++;
        return 1;
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
        t->lost += seq_lost(&s[i]);
    }
}
