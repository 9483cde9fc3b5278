/* A stream of one size written into TX slots frame after frame (gen's
 * streams when every one is unpaced and continuous, docs/streams.md):
 * a slot keeps the stream's template while the stream's frames follow,
 * and per frame only what changes is stored: the field engine's value,
 * the stamp's sequence number and timestamp, the checksums. With no var,
 * or one var that increments or decrements a 2- or 4-byte field, the
 * checksums are carried from one frame to the next (apps/stream_sum.h)
 * in a loop of their own; other vars add their sums per frame. Pure: the
 * slots are the caller's memory (tests/unit/test_stream_fast.c). */
#ifndef VN_STREAM_FAST_H
#define VN_STREAM_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps/stream_flows.h"
#include "apps/stream_frame.h"

/* The TX slots, as the driver binds them (struct vnet_txslots). */
struct stream_slots {
    uint8_t *frame0; /* slot k at frame0 + k * stride */
    uint16_t *tag;   /* per slot: the stream whose template it holds (0: none) */
    uint32_t stride;
    uint16_t mask;  /* slots - 1, the slots a power of two */
    uint16_t clear; /* a slot tagged 0 is zeroed over so many bytes first */
    uint16_t copy;  /* the template's bytes copied into a slot that held another's */
};

/* A stream as the loops take it: its template, where its walk stands,
 * and what stream_fast_init derives from them once. */
struct stream_fast {
    const struct stream_tmpl *t;
    const uint8_t *master; /* the template */
    uint16_t tag;          /* its slots' tag, not 0 */
    uint16_t len;          /* its one size */
    unsigned nvars;
    struct stream_fe *fe; /* nvars vars, their walks advanced */
    uint64_t *seq, *rng;  /* advanced */
    /* the flow var's values (the shorthand's flows=), or NULL */
    struct stream_flow *flows;
    /* stream_fast_init's */
    uint8_t loop;       /* which loop writes the frames */
    bool var_udp;       /* the walk's field is in the UDP sum */
    uint16_t l4;        /* the UDP header's offset */
    int16_t voff;       /* the walk's field from the UDP header */
    uint32_t udp, ip;   /* the template's UDP sum (swapped) and IPv4 header sum, modulo 0xffff */
    uint16_t nd, ndw;   /* the complement of what a frame (its sequence number and the
                         * walk's step) adds to the UDP sum, and with the walk's wrap */
    uint16_t ipd, ipdw; /* what the step and the wrap add to the IPv4 header's */
    uint64_t last, start, step; /* the walk: its value before the wrap, after it, its step */
    /* The next frame's checksums as the last burst left them (its UDP one
     * without the timestamp), for sequence number cseq and value ccur:
     * computed afresh when the walk moved without the loops (a drop). */
    uint64_t cseq, ccur;
    uint16_t cc, cips;
};

/* Fills s's derived members from the others (and again when its walk
 * moved). */
void stream_fast_init(struct stream_fast *s);

/* A burst over the slots, the streams taking them in turn. */
struct stream_burst {
    uint16_t first;      /* its first slot */
    unsigned n, step;    /* its frames; the streams: each takes every step-th slot */
    unsigned wrap;       /* the first frame past the slots' end (n or more: none) */
    unsigned per, extra; /* frames per stream: per, one more for the first extra */
    size_t pstep;        /* bytes from one of a stream's slots to its next */
    uint64_t now;        /* the frames' timestamp */
    uint16_t now_sum;    /* its sum, modulo 0xffff (swapped) */
    uint16_t *lens;      /* per frame, its length */
    /* the flows the burst's pair sends (NULL: none) */
    struct stream_flow_walk *walk;
};

/* The burst of n frames from slot first, ns streams in turn, stamped now
 * (no walk: set walk for a stream with flows). */
void stream_burst_init(struct stream_burst *b, const struct stream_slots *q, uint16_t first,
                       unsigned n, unsigned ns, uint64_t now, uint16_t *lens);

/* Slot k (below the slots) holding s's template: copied there where the
 * slot's tag is not s's, the slot zeroed first where it is 0. */
uint8_t *stream_slot(const struct stream_slots *q, unsigned k, const struct stream_fast *s);

/* s's frames from slot k (the slots not wrapping on the way), frame i of
 * burst b, frames of them; returns frames. */
unsigned stream_fast_run(struct stream_fast *s, const struct stream_slots *q,
                         const struct stream_burst *b, unsigned k, unsigned i, unsigned frames);

/* Every stream's frames of burst b: the streams ss[rr], ss[rr + 1], ...
 * (b->step of them, wrapping) take its slots in turn, each as
 * stream_fast_frames writes them (the frames of the j-th: b->per, one
 * more below b->extra). */
void stream_fast_burst(struct stream_fast *const *ss, unsigned rr, const struct stream_slots *q,
                       const struct stream_burst *b);

/* stream_fast_frames for a burst across the slots' end. */
unsigned stream_fast_wrapped(struct stream_fast *s, const struct stream_slots *q,
                             const struct stream_burst *b, unsigned j);

/* s's frames of burst b: the slots first + i (wrapping) for i = j, j +
 * step, ... below n, lens[i] each one's length; the frames written. */
static inline unsigned stream_fast_frames(struct stream_fast *s, const struct stream_slots *q,
                                          const struct stream_burst *b, unsigned j)
{
    if (b->wrap < b->n)
        return stream_fast_wrapped(s, q, b, j);
    unsigned frames = b->per + (j < b->extra);
    return frames ? stream_fast_run(s, q, b, b->first + j, j, frames) : 0;
}

#endif
