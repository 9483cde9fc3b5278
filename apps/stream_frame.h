/* A stream's frame: the template built once (Ethernet, 802.1Q / QinQ
 * tags, IPv4 or IPv6, UDP, TCP or an ICMP echo request, the payload stamp
 * of net/pkt.h), the field
 * engine's values written per frame, and both checksums fixed per frame
 * from sums taken once with every varying field at zero (RFC 1071: a
 * field's words add to the sum on their own). Pure functions on byte
 * buffers (tests/unit/test_stream_frame.c). */
#ifndef VN_STREAM_FRAME_H
#define VN_STREAM_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/stream_spec.h"
#include "net/pkt.h"

/* The addresses a stream takes from the config line where its file gave
 * none (host order). */
struct stream_addrs {
    uint8_t smac[6], dmac[6];
    uint32_t sip, dip;
    uint16_t sport, dport;
};

struct stream_tmpl {
    uint16_t len;        /* the template's length: the stream's largest frame */
    uint16_t l3, l4, pl; /* IP header, L4 header (UDP, TCP, ICMP), payload */
    uint16_t copy;       /* bytes that are not zero: the headers and the stamp */
    uint8_t ip;          /* 4 or 6 */
    uint8_t proto;       /* enum stream_proto */
    uint8_t nvlan;
    bool size_varies;   /* lengths written per frame */
    bool finish_more;   /* the lengths vary or the frame is not UDP: more than UDP's
                         * stamp and checksum per frame */
    bool pseudo;        /* the L4 sum has the pseudo header's addresses (all but ICMPv4) */
    bool ip_fixed;      /* IPv4 header and its checksum as the template has them */
    bool l4_dev;        /* the device finishes the UDP checksum (gen's uso=, the
                         * template's field seeded): per frame the stamp only */
    uint32_t varies;    /* a bit per enum stream_field the field engine writes */
    uint32_t udp_base;  /* the L4 sum (pseudo header too), varying parts at zero */
    uint32_t ip_base;   /* IPv4 header sum, likewise */
    uint32_t magic_sum; /* the stamp's magic, added when the sizes vary */
};

/* Writes the template of stream id (frame length len, the spec's largest)
 * into f (len bytes) and fills t; varies: the fields the field engine
 * writes. 0, or -EINVAL when the headers and the stamp do not fit. */
int stream_tmpl_build(uint8_t *f, uint16_t len, const struct stream_spec *s,
                      const struct stream_addrs *d, uint32_t id, uint32_t varies,
                      struct stream_tmpl *t);

/* Has the device finish t's frames' UDP checksum (virtio 1.2 s5.1.6.2,
 * NEEDS_CSUM; gen's uso=, one size, no var): the caller has the driver
 * seed the template's field with the pseudo header's sum. */
void stream_tmpl_l4_dev(struct stream_tmpl *t);

/* Writes field fld's value v into a frame built from t. */
void stream_field_set(uint8_t *f, const struct stream_tmpl *t, enum stream_field fld, uint64_t v);

/* What v in field fld adds to the L4 sum (*udp) and to the IPv4 header
 * sum (*ip). */
void stream_field_sums(const struct stream_tmpl *t, enum stream_field fld, uint64_t v,
                       uint32_t *udp, uint32_t *ip);

/* stream_frame_finish_sum for a TCP or ICMP frame: its sequence field
 * (TCP's sequence number, ICMP's echo sequence: the stamp's, one per
 * frame, truncated) besides, its checksum over its own pseudo header
 * (RFC 9293 s3.1, RFC 4443 s2.3) or none (ICMPv4, RFC 792). */
void stream_frame_finish_l4(uint8_t *f, const struct stream_tmpl *t, uint16_t len, uint32_t sum,
                            uint32_t ip, uint64_t seq, uint64_t tsc);

/* The per-frame part once the vars are written (their sums in udp and
 * ip, and in udp the timestamp's: the same for a burst): lengths for len
 * when the sizes vary, the stamp's sequence number and timestamp, the
 * IPv4 header checksum (unless it is the template's) and the UDP one. */
static inline void stream_frame_finish_sum(uint8_t *f, const struct stream_tmpl *t, uint16_t len,
                                           uint32_t udp, uint32_t ip, uint64_t seq, uint64_t tsc)
{
    uint8_t *l3 = f + t->l3;
    /* One test for UDP of one size, as before TCP and ICMP. */
    if (t->finish_more) {
        if (t->l4_dev) {
            wrle64(f + t->pl + PL_OFF_SEQ, seq);
            wrle64(f + t->pl + PL_OFF_TSC, tsc);
            return;
        }
        if (t->proto != SPROTO_UDP) {
            stream_frame_finish_l4(f, t, len, udp, ip, seq, tsc);
            return;
        }
        uint16_t ulen = (uint16_t)(len - t->l4);
        wr16(f + t->l4 + 4, ulen);
        udp += 2u * ulen; /* the pseudo header's length and the UDP header's */
        /* A frame shorter than the full stamp carries none of the magic. */
        wrle32(f + t->pl + PL_OFF_MAGIC, len >= t->copy ? PL_MAGIC : 0);
        if (len >= t->copy)
            udp += t->magic_sum;
        if (t->ip == 6) {
            wr16(l3 + 4, ulen);
        } else {
            wr16(l3 + 2, (uint16_t)(len - t->l3));
            ip += (uint32_t)(len - t->l3);
        }
    }
    wrle64(f + t->pl + PL_OFF_SEQ, seq);
    wrle64(f + t->pl + PL_OFF_TSC, tsc);
    uint16_t c = pkt_csum_fold(pkt_sum_add_le64(udp, seq));
    wr16(f + t->l4 + 6, c ? c : 0xffff); /* 0 means no checksum, RFC 768 */
    if (t->ip == 4 && !t->ip_fixed)
        wr16(l3 + 10, pkt_csum_fold(ip));
}

/* The same with the timestamp's sum added here. */
static inline void stream_frame_finish(uint8_t *f, const struct stream_tmpl *t, uint16_t len,
                                       uint32_t udp, uint32_t ip, uint64_t seq, uint64_t tsc)
{
    stream_frame_finish_sum(f, t, len, pkt_sum_add_le64(udp, tsc), ip, seq, tsc);
}

/* The field engine: one var's walk over its range. */
struct stream_fe {
    struct stream_var v;
    uint64_t cur;
    uint16_t off;   /* the field's first byte in frames of the template */
    uint8_t nbytes; /* its bytes, big endian */
    uint8_t sums;   /* bit 0: in the L4 sum, bit 1: in the IPv4 header's */
    bool generic;   /* not whole bytes (the flow label, IPv6's traffic class: in no
                     * checksum): stream_field_set */
    /* inc and dec: the value the walk wraps after, and what a step and
     * the wrap add to a swapped sum the field is in (apps/stream_sum.h) */
    uint64_t last;
    uint32_t dstep, dwrap;
};

/* The var's walk over its range, in frames of template t. */
void stream_fe_init(struct stream_fe *fe, const struct stream_var *v, const struct stream_tmpl *t);

/* The value for this frame; inc and dec step and wrap at the range's
 * end to its other end, random draws from rng (xorshift64 state). */
static inline __attribute__((always_inline)) uint64_t stream_fe_next(struct stream_fe *fe,
                                                                     uint64_t *rng)
{
    uint64_t v = fe->cur, span = fe->v.hi - fe->v.lo;
    if (fe->v.op == SOP_RANDOM) {
        uint64_t x = *rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *rng = x;
        /* span < 2^32: (span + 1) * (x >> 32) >> 32 is below span + 1. */
        return fe->v.lo + (((span + 1) * (x >> 32)) >> 32);
    }
    if (fe->v.op == SOP_INC)
        fe->cur = fe->v.hi - v < fe->v.step ? fe->v.lo : v + fe->v.step;
    else
        fe->cur = v - fe->v.lo < fe->v.step ? fe->v.hi : v - fe->v.step;
    return v;
}

/* The field engine's next value for this frame written into f, its sums
 * added to udp and ip. */
static inline __attribute__((always_inline)) void stream_fe_apply(struct stream_fe *fe, uint8_t *f,
                                                                  const struct stream_tmpl *t,
                                                                  uint64_t *rng, uint32_t *udp,
                                                                  uint32_t *ip)
{
    uint64_t v = stream_fe_next(fe, rng);
    if (fe->generic) {
        /* The flow label and IPv6's traffic class: in no checksum. */
        stream_field_set(f, t, (enum stream_field)fe->v.field, v);
        return;
    }
    uint8_t *p = f + fe->off;
    uint32_t s = (uint32_t)v;
    if (fe->nbytes == 2) {
        wr16(p, (uint16_t)v);
    } else if (fe->nbytes == 4) {
        wr32(p, (uint32_t)v);
        s = (s >> 16) + (s & 0xffff);
    } else if (fe->nbytes == 6) {
        wr16(p, (uint16_t)(v >> 32));
        wr32(p + 2, (uint32_t)v);
    } else {
        *p = (uint8_t)v; /* IPv4 TOS: the low byte of its header word */
    }
    if (fe->sums & 1)
        *udp += s;
    if (fe->sums & 2)
        *ip += s;
}

#endif
