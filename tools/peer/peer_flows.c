/* A fixed open-addressing table like peer_streams.c: no allocation per
 * frame or per flow. */
#include "tools/peer/peer_flows.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#define NSLOTS (2 * PEER_MAX_FLOWS) /* at most half full: probes stay short */

int peer_flows_init(struct peer_flows *f)
{
    f->slot = calloc(NSLOTS, sizeof(*f->slot));
    f->n = 0;
    f->overflow = 0;
    f->last = NULL;
    return f->slot ? 0 : -ENOMEM;
}

void peer_flows_free(struct peer_flows *f)
{
    free(f->slot);
}

static bool same(const struct peer_flow_key *a, const struct peer_flow_key *b)
{
    return a->saddr == b->saddr && a->daddr == b->daddr && a->sport == b->sport &&
           a->dport == b->dport;
}

static uint32_t slot_of(const struct peer_flow_key *k)
{
    uint32_t h = k->saddr * 2654435761u;

    /* Fibonacci hashing of each word spreads consecutive ports */
    h = (h ^ k->daddr) * 2654435761u;
    h = (h ^ ((uint32_t)k->sport << 16 | k->dport)) * 2654435761u;
    return h % NSLOTS;
}

void peer_flows_add(struct peer_flows *f, const struct peer_flow_key *k, size_t len)
{
    struct peer_flow *p = f->last;

    if (!p || !same(&p->key, k)) {
        uint32_t i = slot_of(k);

        while (f->slot[i].used && !same(&f->slot[i].key, k))
            i = (i + 1) % NSLOTS;
        p = &f->slot[i];
        if (!p->used) {
            if (f->n == PEER_MAX_FLOWS) {
                f->overflow++;
                return;
            }
            p->used = true;
            p->key = *k;
            f->n++;
        }
        f->last = p;
    }
    p->packets++;
    p->bytes += len;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
    return x < y ? -1 : x > y;
}

static int cmp_flow(const void *a, const void *b)
{
    const struct peer_flow_key *x = &(*(const struct peer_flow *const *)a)->key;
    const struct peer_flow_key *y = &(*(const struct peer_flow *const *)b)->key;
    int c = cmp_u64((uint64_t)x->saddr << 32 | x->daddr, (uint64_t)y->saddr << 32 | y->daddr);

    return c ? c
             : cmp_u64((uint64_t)x->sport << 16 | x->dport, (uint64_t)y->sport << 16 | y->dport);
}

uint32_t peer_flows_sorted(const struct peer_flows *f, const struct peer_flow **out)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < NSLOTS; i++) {
        if (f->slot[i].used)
            out[n++] = &f->slot[i];
    }
    qsort(out, n, sizeof(*out), cmp_flow);
    return n;
}

void peer_flows_json(FILE *out, const struct peer_flows *f)
{
    static const struct peer_flow *sorted[PEER_MAX_FLOWS];
    uint32_t n = peer_flows_sorted(f, sorted);

    fputs(",\"flows\":[", out);
    for (uint32_t i = 0; i < n; i++) {
        const struct peer_flow_key *k = &sorted[i]->key;
        struct in_addr s = {htonl(k->saddr)}, d = {htonl(k->daddr)};
        char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];

        inet_ntop(AF_INET, &s, src, sizeof(src));
        inet_ntop(AF_INET, &d, dst, sizeof(dst));
        fprintf(out,
                "%s{\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,\"packets\":%llu,"
                "\"bytes\":%llu}",
                i ? "," : "", src, k->sport, dst, k->dport, (unsigned long long)sorted[i]->packets,
                (unsigned long long)sorted[i]->bytes);
    }
    fprintf(out, "],\"flows_overflow\":%llu", (unsigned long long)f->overflow);
}
