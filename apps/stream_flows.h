/* The field engine's flow var: the config line's flows= on the one-stream
 * shorthand (docs/streams.md, "The shorthand"). Its values are the flows
 * of flows_expand, in its order (the source port fastest, then the
 * destination port, the source and the destination address); a frame of
 * flow k carries the flow's addresses and ports, k as its stream id and
 * flow k's own sequence number, so the receivers count each flow as a
 * stream of its own (the host peer's streams, gen's returned frames). A
 * walk is a queue pair's share of the flows (gen sends each flow on the
 * pair its replies come back on, docs/apps.md), taken in turn or at
 * random. Pure (tests/unit/test_stream_flows.c). */
#ifndef VN_STREAM_FLOWS_H
#define VN_STREAM_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/stream_frame.h"
#include "net/pkt.h"

/* The fields the flow var writes (with the stamp's stream id): a flows
 * stream's template has them at zero (stream_tmpl_build's varies) and id
 * 0. */
#define STREAM_FLOW_FIELDS                                                                         \
    (1u << SF_SRC_IP | 1u << SF_DST_IP | 1u << SF_SRC_PORT | 1u << SF_DST_PORT)

/* A flow as the frames of a template carry it. */
struct stream_flow {
    uint8_t addrs[8]; /* source, destination: as the IPv4 header has them */
    uint8_t ports[4]; /* source, destination: as the UDP header has them */
    uint16_t id;      /* the stamp's stream id (flows_expand's index, below 2^16) */
    uint16_t ipc;     /* the IPv4 header checksum of the template's length */
    uint16_t cs;      /* the template's UDP sum with the flow's fields, modulo 0xffff,
                       * swapped (apps/stream_sum.h): the fast loop's */
    uint32_t udp;     /* what the addresses, ports and id add to the UDP sum */
    uint32_t ip;      /* what the addresses add to the IPv4 header's */
    uint64_t seq;     /* the flow's next sequence number */
};

/* A pair's share of the flows: order[0 .. n), in turn or at random. */
struct stream_flow_walk {
    const uint16_t *order;
    unsigned n, pos;
    bool random;
    uint64_t rng; /* xorshift64 state, not 0 */
};

/* The flows in[0 .. n) as frames of template t (IPv4 UDP, its addresses
 * and ports varying, stream id 0) carry them, into out. */
void stream_flows_init(struct stream_flow *out, const struct pkt_flow *in, unsigned n,
                       const struct stream_tmpl *t);

/* The walk over order[0 .. n) (n at least 1), seeded for random. */
void stream_flow_walk_init(struct stream_flow_walk *w, const uint16_t *order, unsigned n,
                           bool random, uint64_t seed);

/* The next flow's index. */
static inline unsigned stream_flow_walk_next(struct stream_flow_walk *w)
{
    if (w->random) {
        w->rng ^= w->rng << 13;
        w->rng ^= w->rng >> 7;
        w->rng ^= w->rng << 17;
        return w->order[(unsigned)(((w->rng >> 32) * w->n) >> 32)];
    }
    unsigned k = w->pos;
    w->pos = k + 1 == w->n ? 0 : k + 1;
    return w->order[k];
}

/* Flow fl's addresses, ports and stream id written into f (a frame of
 * template t), their sums added to udp and ip. */
static inline __attribute__((always_inline)) void stream_flow_apply(const struct stream_flow *fl,
                                                                    uint8_t *f,
                                                                    const struct stream_tmpl *t,
                                                                    uint32_t *udp, uint32_t *ip)
{
    __builtin_memcpy(f + t->l3 + 12, fl->addrs, 8);
    __builtin_memcpy(f + t->l4, fl->ports, 4);
    /* The short stamp's id, the low half of the long one's (its high
     * half 0 in the template). */
    wrle16(f + t->pl + PL_OFF_STREAM, fl->id);
    *udp += fl->udp;
    *ip += fl->ip;
}

#endif
