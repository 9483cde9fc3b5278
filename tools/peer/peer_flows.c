/* A fixed open-addressing table like peer_streams.c: no allocation per
 * frame or per flow. */
#include "tools/peer/peer_flows.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static bool same(const struct peer_flow_key *a, const struct peer_flow_key *b)
{
    return memcmp(a->saddr, b->saddr, 16) == 0 && memcmp(a->daddr, b->daddr, 16) == 0 &&
           a->sport == b->sport && a->dport == b->dport;
}

static uint32_t slot_of(const struct peer_flow_key *k)
{
    uint32_t h = 0, w;

    /* Fibonacci hashing of each word spreads consecutive ports */
    for (unsigned i = 0; i < 16; i += 4) {
        memcpy(&w, k->saddr + i, 4);
        h = (h ^ w) * 2654435761u;
        memcpy(&w, k->daddr + i, 4);
        h = (h ^ w) * 2654435761u;
    }
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
    int c = memcmp(x->saddr, y->saddr, 16);

    if (!c)
        c = memcmp(x->daddr, y->daddr, 16);
    return c ? c
             : cmp_u64((uint64_t)x->sport << 16 | x->dport, (uint64_t)y->sport << 16 | y->dport);
}

/* An address as text: dotted for a mapped IPv4 one, else IPv6's form. */
static void addr_text(const uint8_t a[16], char out[INET6_ADDRSTRLEN])
{
    if (memcmp(a, v4_mapped, 12) == 0)
        inet_ntop(AF_INET, a + 12, out, INET6_ADDRSTRLEN);
    else
        inet_ntop(AF_INET6, a, out, INET6_ADDRSTRLEN);
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
        char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

        addr_text(k->saddr, src);
        addr_text(k->daddr, dst);
        fprintf(out,
                "%s{\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,\"packets\":%llu,"
                "\"bytes\":%llu}",
                i ? "," : "", src, k->sport, dst, k->dport, (unsigned long long)sorted[i]->packets,
                (unsigned long long)sorted[i]->bytes);
    }
    fprintf(out, "],\"flows_overflow\":%llu", (unsigned long long)f->overflow);
}
