/* A fixed open-addressing table: no allocation per frame or per stream. */
#include "tools/peer/peer_streams.h"

#include <errno.h>
#include <stdlib.h>

#define NSLOTS (2 * PEER_MAX_STREAMS) /* at most half full: probes stay short */

int peer_streams_init(struct peer_streams *s)
{
    s->slot = calloc(NSLOTS, sizeof(*s->slot));
    s->n = 0;
    s->overflow = 0;
    s->last = NULL;
    return s->slot ? 0 : -ENOMEM;
}

void peer_streams_free(struct peer_streams *s)
{
    free(s->slot);
}

void peer_streams_add(struct peer_streams *s, uint32_t id, uint64_t seq, size_t len)
{
    struct peer_stream *p = s->last;

    if (!p || p->id != id) {
        /* Fibonacci hashing spreads consecutive ids */
        uint32_t i = (uint32_t)(id * 2654435761u) % NSLOTS;

        while (s->slot[i].used && s->slot[i].id != id)
            i = (i + 1) % NSLOTS;
        p = &s->slot[i];
        if (!p->used) {
            if (s->n == PEER_MAX_STREAMS) {
                s->overflow++;
                return;
            }
            p->used = true;
            p->id = id;
            s->n++;
        }
        s->last = p;
    }
    p->bytes += len;
    seq_record(&p->seq, seq);
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = (*(const struct peer_stream *const *)a)->id;
    uint32_t y = (*(const struct peer_stream *const *)b)->id;

    return x < y ? -1 : x > y;
}

uint32_t peer_streams_sorted(const struct peer_streams *s, const struct peer_stream **out)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < NSLOTS; i++) {
        if (s->slot[i].used)
            out[n++] = &s->slot[i];
    }
    qsort(out, n, sizeof(*out), cmp_id);
    return n;
}
