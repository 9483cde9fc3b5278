#include "apps/stream_fast.h"

#include <stdbool.h>
#include <string.h>

#include "apps/stream_sum.h"
#include "net/pkt.h"

/* Offsets from the UDP header: its checksum, the stamp's sequence number
 * and timestamp, and an IPv4 header's checksum (RFC 791 s3.1). */
#define AT_UDP_CSUM 6
#define AT_SEQ      (UDP_HLEN + PL_OFF_SEQ)
#define AT_TSC      (UDP_HLEN + PL_OFF_TSC)
#define AT_IP_CSUM  (10 - IP4_HLEN)

static void slot_fill(const struct stream_slots *q, unsigned k, const struct stream_fast *s)
{
    uint8_t *f = q->frame0 + (size_t)k * q->stride;
    if (!q->tag[k])
        memset(f, 0, q->clear);
    memcpy(f, s->master, q->copy);
    q->tag[k] = s->tag;
}

uint8_t *stream_slot(const struct stream_slots *q, unsigned k, const struct stream_fast *s)
{
    if (q->tag[k] != s->tag)
        slot_fill(q, k, s);
    return q->frame0 + (size_t)k * q->stride;
}

/* The loop of carried checksums over frames slots from slot k (no wrap
 * on the way), frame i of burst b. nb and op are constants of each
 * caller, so each gets a loop of its own: nb 0, no var; 2 or 4, one var
 * over a field of so many bytes that op (SOP_INC or SOP_DEC) walks, with
 * ip4 when it is in the IPv4 header (an address). Everything the loop
 * reads is a local (the frame's byte stores alias none of it). The UDP
 * checksum is kept as it is stored, in 1 .. 0xffff (never 0, RFC 768),
 * each frame adding the complement of what it adds to the sum; the IPv4
 * header's sum as the fold leaves it, 1 .. 0xffff, stored complemented. */
static inline __attribute__((always_inline)) void
carry_loop(struct stream_fast *s, const struct stream_slots *q, const struct stream_burst *b,
           unsigned k, unsigned i, unsigned frames, unsigned nb, enum stream_op op, bool ip4)
{
    uint8_t *p = q->frame0 + (size_t)k * q->stride + s->l4;
    const uint16_t *tag = q->tag + k;
    uint16_t *ln = b->lens + i;
    const unsigned step = b->step;
    const uint64_t now = b->now;
    const uint16_t want = s->tag, len = s->len;
    const intptr_t voff = s->voff;
    uint64_t v = nb ? s->fe->cur : 0, seq = *s->seq;
    const uint64_t end = seq + frames;
    if (__builtin_expect(seq != s->cseq || (nb && v != s->ccur), 0))
        stream_fast_init(s);
    /* The timestamp's share: the complement of its sum added. */
    uint16_t c = sum_add16(s->cc, (uint16_t)~b->now_sum), ips = ip4 ? s->cips : 0;
    /* What is only added or compared (s's and b's members) is read where
     * it is used: an operand of the add, no register held for it. */
    for (; seq != end; p += b->pstep, tag += step, ln += step) {
        if (__builtin_expect(*tag != want, 0))
            slot_fill(q, (unsigned)(tag - q->tag), s);
        if (nb == 2)
            wrle16(p + voff, __builtin_bswap16((uint16_t)v));
        else if (nb == 4)
            wrle32(p + voff, __builtin_bswap32((uint32_t)v));
        wrle64(p + AT_SEQ, seq);
        wrle64(p + AT_TSC, now);
        wrle16(p + AT_UDP_CSUM, c);
        if (ip4)
            wrle16(p + AT_IP_CSUM, (uint16_t)~ips);
        *ln = len;
        seq++;
        if (nb && __builtin_expect(v == s->last, 0)) {
            v = s->start;
            c = sum_add16(c, s->ndw);
            ips = ip4 ? sum_add16(ips, s->ipdw) : 0;
        } else {
            if (nb)
                v = op == SOP_DEC ? v - s->step : v + s->step;
            c = sum_add16(c, s->nd);
            ips = ip4 ? sum_add16(ips, s->ipd) : 0;
        }
    }
    *s->seq = seq;
    if (nb)
        s->fe->cur = v;
    s->cseq = seq;
    s->ccur = v;
    s->cc = sum_add16(c, b->now_sum);
    s->cips = ips;
}

/* Any other vars (random, MACs, the flow label, TOS, several): each
 * var's sums added per frame (stream_fe_apply), the sequence number's
 * carried. */
static __attribute__((noinline)) void any_loop(const struct stream_fast *s,
                                               const struct stream_slots *q,
                                               const struct stream_burst *b, unsigned k, unsigned i,
                                               unsigned frames)
{
    const struct stream_tmpl *t = s->t;
    const unsigned nv = s->nvars;
    const uint16_t csum_off = (uint16_t)(t->l4 + AT_UDP_CSUM);
    const uint16_t ipc_off = t->ip == 4 && !t->ip_fixed ? (uint16_t)(t->l3 + 10) : 0;
    const uint32_t udp0 = t->udp_base + pkt_sum_add_le64(0, b->now), ip0 = t->ip_base;
    struct stream_fe fe[STREAM_VARS_MAX];
    uint64_t rng = *s->rng, seq = *s->seq;
    uint32_t sq = sum_swap(sum_mod(seq)); /* the sequence number's network-order sum */
    memcpy(fe, s->fe, nv * sizeof(fe[0]));
    for (unsigned f = 0; f < frames; f++, k += b->step, i += b->step) {
        uint8_t *p = stream_slot(q, k, s);
        uint32_t udp = udp0, ip = ip0;
        for (unsigned j = 0; j < nv; j++)
            stream_fe_apply(&fe[j], p, t, &rng, &udp, &ip);
        wrle64(p + t->l4 + AT_SEQ, seq);
        wrle64(p + t->l4 + AT_TSC, b->now);
        uint16_t c = pkt_csum_fold(udp + sq);
        wr16(p + csum_off, c ? c : 0xffff); /* 0 means no checksum, RFC 768 */
        if (ipc_off)
            wr16(p + ipc_off, pkt_csum_fold(ip));
        b->lens[i] = s->len;
        seq++;
        sq = sum_add(sq, sum_swap(1));
    }
    *s->seq = seq;
    *s->rng = rng;
    for (unsigned j = 0; j < nv; j++)
        s->fe[j].cur = fe[j].cur;
}

/* A TCP or ICMP stream's frames, each written as the per-frame path
 * writes it (stream_frame_finish_l4): their sequence fields do not carry
 * as the stamp's does (ICMP's wraps at 2^16, 0 modulo 0xffff, and TCP's
 * at 2^32), so no sum is carried and the UDP loops keep their stores. */
static __attribute__((noinline)) void l4_loop(const struct stream_fast *s,
                                              const struct stream_slots *q,
                                              const struct stream_burst *b, unsigned k, unsigned i,
                                              unsigned frames)
{
    const struct stream_tmpl *t = s->t;
    const unsigned nv = s->nvars;
    const uint32_t sum0 = t->udp_base + pkt_sum_add_le64(0, b->now);
    struct stream_fe fe[STREAM_VARS_MAX];
    uint64_t rng = *s->rng, seq = *s->seq;
    memcpy(fe, s->fe, nv * sizeof(fe[0]));
    for (unsigned f = 0; f < frames; f++, k += b->step, i += b->step) {
        uint8_t *p = stream_slot(q, k, s);
        uint32_t sum = sum0, ip = t->ip_base;
        for (unsigned j = 0; j < nv; j++)
            stream_fe_apply(&fe[j], p, t, &rng, &sum, &ip);
        stream_frame_finish_l4(p, t, s->len, sum, ip, seq++, b->now);
        b->lens[i] = s->len;
    }
    *s->seq = seq;
    *s->rng = rng;
    for (unsigned j = 0; j < nv; j++)
        s->fe[j].cur = fe[j].cur;
}

/* The flow var's frames (the shorthand's flows=): each the next flow of
 * the burst's walk (random a constant of each caller: a loop of its own),
 * its fields and its own sequence number. One size: the flow's IPv4
 * header checksum as it stands, its UDP sum with the template's taken
 * once (stream_flows_init, modulo 0xffff and swapped as the carried
 * sums are), so a frame adds the timestamp's and its sequence number's.
 * Everything the loop reads is a local (the frame's stores alias none
 * of it), the walk's place and draws written back at the end. */
static inline __attribute__((always_inline)) void flow_run(struct stream_fast *s,
                                                           const struct stream_slots *q,
                                                           const struct stream_burst *b, unsigned k,
                                                           unsigned i, unsigned frames, bool random)
{
    const struct stream_tmpl *t = s->t;
    struct stream_flow_walk *w = b->walk;
    struct stream_flow *const flows = s->flows;
    const uint16_t *const order = w->order;
    const unsigned n = w->n, step = b->step;
    const uintptr_t addrs = t->l3 + 12u, ipc = t->l3 + 10u, l4 = t->l4;
    const uint16_t want = s->tag, len = s->len, now_sum = b->now_sum;
    const uint64_t now = b->now;
    const size_t pstep = b->pstep;
    uint8_t *p = q->frame0 + (size_t)k * q->stride;
    const uint16_t *tag = q->tag + k;
    uint16_t *ln = b->lens + i;
    unsigned pos = w->pos;
    uint64_t rng = w->rng;
    for (unsigned f = 0; f < frames; f++, p += pstep, tag += step, ln += step) {
        if (__builtin_expect(*tag != want, 0))
            slot_fill(q, (unsigned)(tag - q->tag), s);
        unsigned fi;
        if (random) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            fi = order[(unsigned)(((rng >> 32) * n) >> 32)];
        } else {
            fi = order[pos];
            pos = pos + 1 == n ? 0 : pos + 1;
        }
        struct stream_flow *fl = &flows[fi];
        uint64_t seq = fl->seq;
        fl->seq = seq + 1;
        __builtin_memcpy(p + addrs, fl->addrs, 8);
        __builtin_memcpy(p + l4, fl->ports, 4);
        wrle16(p + l4 + UDP_HLEN + PL_OFF_STREAM, fl->id);
        wrle64(p + l4 + AT_SEQ, seq);
        wrle64(p + l4 + AT_TSC, now);
        /* Below 3 x 0xffff: its complement is never 0 (RFC 768's -0). */
        wrle16(p + l4 + AT_UDP_CSUM, (uint16_t)~sum_mod((uint32_t)fl->cs + now_sum + seq % 0xffff));
        wr16(p + ipc, fl->ipc);
        *ln = len;
    }
    w->pos = pos;
    w->rng = rng;
    *s->seq += frames; /* the stream's frames: each flow numbers its own */
}

static __attribute__((noinline)) void flow_loop(struct stream_fast *s, const struct stream_slots *q,
                                                const struct stream_burst *b, unsigned k,
                                                unsigned i, unsigned frames)
{
    if (b->walk->random)
        flow_run(s, q, b, k, i, frames, true);
    else
        flow_run(s, q, b, k, i, frames, false);
}

/* Frames whose UDP checksum the device finishes (stream_tmpl_l4_dev):
 * the stamp alone, as gen's uso= builder wrote it. */
static __attribute__((noinline)) void stamp_loop(const struct stream_fast *s,
                                                 const struct stream_slots *q,
                                                 const struct stream_burst *b, unsigned k,
                                                 unsigned i, unsigned frames)
{
    uint64_t seq = *s->seq;
    for (unsigned f = 0; f < frames; f++, k += b->step, i += b->step) {
        uint8_t *p = stream_slot(q, k, s) + s->l4;
        wrle64(p + AT_SEQ, seq++);
        wrle64(p + AT_TSC, b->now);
        b->lens[i] = s->len;
    }
    *s->seq = seq;
}

enum fast_loop {
    FL_NONE,
    FL_INC2,
    FL_DEC2,
    FL_INC4,
    FL_DEC4,
    FL_INC4_IP,
    FL_DEC4_IP,
    FL_ANY,
    FL_L4,
    FL_FLOWS,
    FL_STAMP
};

void stream_fast_init(struct stream_fast *s)
{
    const struct stream_fe *v = s->fe;
    bool walk = s->nvars == 1 && !v->generic && v->v.op != SOP_RANDOM;
    bool dec = walk && v->v.op == SOP_DEC, udp = walk && (v->sums & 1), ip4 = walk && (v->sums & 2);
    s->loop = s->t->l4_dev                ? FL_STAMP
              : s->flows                  ? FL_FLOWS
              : s->t->proto != SPROTO_UDP ? FL_L4
              : s->nvars == 0             ? FL_NONE
              : walk && v->nbytes == 2    ? (dec ? FL_DEC2 : FL_INC2)
              : walk && v->nbytes == 4    ? (dec ? FL_DEC4 : FL_INC4) + (ip4 ? 2 : 0)
                                          : FL_ANY;
    s->l4 = s->t->l4;
    s->voff = (int16_t)(walk ? v->off - s->t->l4 : 0);
    s->var_udp = udp;
    s->udp = sum_swap(sum_mod(s->t->udp_base));
    s->ip = sum_mod(s->t->ip_base);
    /* A frame adds 1 (its sequence number) and the walk's step. */
    s->nd = (uint16_t)~sum_add(1, udp ? v->dstep : 0);
    s->ndw = (uint16_t)~sum_add(1, udp ? v->dwrap : 0);
    s->ipd = (uint16_t)(ip4 ? v->dstep : 0);
    s->ipdw = (uint16_t)(ip4 ? v->dwrap : 0);
    s->last = walk ? v->last : 0;
    s->start = !walk ? 0 : dec ? v->v.hi : v->v.lo;
    s->step = walk ? v->v.step : 0;
    /* The next frame's sums: the template's, the sequence number's, the
     * walk's value's. */
    uint64_t seq = *s->seq, cur = walk ? v->cur : 0;
    uint64_t x = s->udp + seq % 0xffff + (udp ? sum_swap(sum_mod(cur)) : 0);
    uint32_t m = sum_mod(s->ip + (ip4 ? cur : 0));
    s->cseq = seq;
    s->ccur = cur;
    s->cc = (uint16_t)~sum_mod(x);
    s->cips = (uint16_t)sum_swap(m ? m : 0xffff); /* as the fold leaves it: 1 .. 0xffff */
}

void stream_burst_init(struct stream_burst *b, const struct stream_slots *q, uint16_t first,
                       unsigned n, unsigned ns, uint64_t now, uint16_t *lens)
{
    b->first = first;
    b->n = n;
    b->step = ns;
    b->wrap = q->mask + 1u - first;
    b->per = n / ns;
    b->extra = n % ns;
    b->pstep = (size_t)ns * q->stride;
    b->now = now;
    b->now_sum = (uint16_t)sum_mod(now);
    b->lens = lens;
    b->walk = NULL;
}

/* The loop for s over frames slots from k (no wrap on the way), frame i
 * of b on. */
static inline __attribute__((always_inline)) void fast_run(struct stream_fast *s,
                                                           const struct stream_slots *q,
                                                           const struct stream_burst *b, unsigned k,
                                                           unsigned i, unsigned frames)
{
    switch (s->loop) {
    case FL_NONE:
        carry_loop(s, q, b, k, i, frames, 0, SOP_INC, false);
        break;
    case FL_INC2:
        carry_loop(s, q, b, k, i, frames, 2, SOP_INC, false);
        break;
    case FL_DEC2:
        carry_loop(s, q, b, k, i, frames, 2, SOP_DEC, false);
        break;
    case FL_INC4:
        carry_loop(s, q, b, k, i, frames, 4, SOP_INC, false);
        break;
    case FL_DEC4:
        carry_loop(s, q, b, k, i, frames, 4, SOP_DEC, false);
        break;
    case FL_INC4_IP:
        carry_loop(s, q, b, k, i, frames, 4, SOP_INC, true);
        break;
    case FL_DEC4_IP:
        carry_loop(s, q, b, k, i, frames, 4, SOP_DEC, true);
        break;
    case FL_ANY:
        any_loop(s, q, b, k, i, frames);
        break;
    case FL_FLOWS:
        flow_loop(s, q, b, k, i, frames);
        break;
    case FL_STAMP:
        stamp_loop(s, q, b, k, i, frames);
        break;
    default:
        l4_loop(s, q, b, k, i, frames);
        break;
    }
}

unsigned stream_fast_run(struct stream_fast *s, const struct stream_slots *q,
                         const struct stream_burst *b, unsigned k, unsigned i, unsigned frames)
{
    fast_run(s, q, b, k, i, frames);
    return frames;
}

void stream_fast_burst(struct stream_fast *const *ss, unsigned rr, const struct stream_slots *q,
                       const struct stream_burst *b)
{
    const unsigned ns = b->step;
    if (b->wrap < b->n) {
        for (unsigned j = 0, x = rr; j < ns; j++, x = x + 1 == ns ? 0 : x + 1)
            stream_fast_wrapped(ss[x], q, b, j);
        return;
    }
    /* One call for the burst: each stream's loop entered from here, the
     * burst's values read once. */
    const unsigned per = b->per, extra = b->extra, first = b->first;
    for (unsigned j = 0, x = rr; j < ns; j++, x = x + 1 == ns ? 0 : x + 1) {
        unsigned frames = per + (j < extra);
        if (frames)
            fast_run(ss[x], q, b, first + j, j, frames);
    }
}

unsigned stream_fast_wrapped(struct stream_fast *s, const struct stream_slots *q,
                             const struct stream_burst *b, unsigned j)
{
    unsigned frames = b->per + (j < b->extra);
    unsigned before = j < b->wrap ? (b->wrap - j + b->step - 1) / b->step : 0;
    unsigned i = j + before * b->step;
    if (before)
        stream_fast_run(s, q, b, b->first + j, j, before);
    if (frames > before)
        stream_fast_run(s, q, b, i - b->wrap, i, frames - before);
    return frames;
}
