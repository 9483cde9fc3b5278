/* rate=: a packet or bit rate for the generator, and the TSC pacer that
 * holds it without a division per packet. */
#ifndef VN_RATE_H
#define VN_RATE_H

#include <stddef.h>
#include <stdint.h>

enum rate_unit { RATE_UNLIMITED = 0, RATE_PPS, RATE_BPS };

struct rate {
    enum rate_unit unit;
    uint64_t per_s; /* packets or bits per second */
};

/* "" / "0" / "max": unlimited; "<n>[.<frac>][k|m|g|t][pps|bps|bit]": k,
 * m, g and t are decimal (1e3, 1e6, 1e9, 1e12); no unit means pps. At most
 * 1gpps or 1tbps. Returns 0 or -EINVAL with a reason in why. */
int rate_parse(const char *s, struct rate *r, char *why, size_t whylen);

/* CPU k's share (k < n) of r when n CPUs send at once: per_s / n, the
 * first per_s % n CPUs one more, so the shares add up to r exactly.
 * Unlimited stays unlimited; a share of 0 (a rate below one per CPU) is
 * -EINVAL, else 0. */
int rate_share(const struct rate *r, unsigned n, unsigned k, struct rate *out);

/* Config-table check hook for rate=. */
int rate_check(const char *val, char *why, size_t whylen);

/* TSC pacer. Deadlines in 1/65536 cycle units so a rate that is not a
 * whole number of cycles per packet does not drift; 128 bits wide, since
 * a 64-bit one wraps once the TSC passes 2^48 (26 h at 3 GHz, from power-on
 * on a UEFI machine) or a slow bit rate's frame cost times its length
 * passes 2^64. */
#define PACER_FRAC 16
typedef unsigned __int128 pacer_fp;
struct pacer {
    enum rate_unit unit;
    pacer_fp next_fp;    /* deadline of the next packet */
    uint64_t cost_fp;    /* RATE_PPS: cycles per packet */
    uint64_t byte_fp;    /* RATE_BPS: cycles per frame byte */
    uint64_t max_lag_fp; /* catch-up after a stall is bounded by this */
};

/* Returns 0, or -EINVAL when the rate cannot be paced at this TSC rate. */
int pacer_init(struct pacer *p, const struct rate *r, uint64_t tsc_hz, uint64_t now);

/* 1 when the next packet may go now. */
static inline int pacer_due(struct pacer *p, uint64_t now)
{
    if (p->unit == RATE_UNLIMITED)
        return 1;
    pacer_fp now_fp = (pacer_fp)now << PACER_FRAC;
    if (now_fp >= p->next_fp + p->max_lag_fp)
        p->next_fp = now_fp - p->max_lag_fp;
    return p->next_fp <= now_fp;
}

/* Accounts one packet of len bytes (the frame length). */
static inline void pacer_sent(struct pacer *p, uint32_t len)
{
    p->next_fp += p->unit == RATE_BPS ? (pacer_fp)p->byte_fp * len : p->cost_fp;
}

/* Cycle at which the next packet is due. */
static inline uint64_t pacer_next(const struct pacer *p)
{
    return (uint64_t)(p->next_fp >> PACER_FRAC);
}

#endif
