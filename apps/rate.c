#include "apps/rate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define RATE_MAX_PPS 1000000000ull    /* 1 Gpps */
#define RATE_MAX_BPS 1000000000000ull /* 1 Tbit/s */

/* A decimal number: whole part (no more than RATE_MAX_BPS, so nothing
 * after it wraps) and up to 9 fraction digits as frac / frac_div. */
struct rate_num {
    uint64_t whole, frac, frac_div;
    bool inexact; /* a non-zero digit past the ninth fraction digit */
};

static int parse_num(const char **pp, struct rate_num *n)
{
    const char *p = *pp;
    *n = (struct rate_num){.frac_div = 1};
    if (*p < '0' || *p > '9')
        return -EINVAL;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n->whole > RATE_MAX_BPS)
            return -ERANGE;
        n->whole = n->whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (n->frac_div < 1000000000ull) {
                n->frac = n->frac * 10 + (uint64_t)(*p - '0');
                n->frac_div *= 10;
            } else if (*p != '0') {
                n->inexact = true;
            }
        }
    }
    if (n->whole > RATE_MAX_BPS)
        return -ERANGE;
    *pp = p;
    return 0;
}

static uint64_t parse_mult(const char **pp)
{
    switch (**pp) {
    case 'k':
    case 'K':
        (*pp)++;
        return 1000;
    case 'm':
    case 'M':
        (*pp)++;
        return 1000000;
    case 'g':
    case 'G':
        (*pp)++;
        return 1000000000;
    default:
        return 1;
    }
}

int rate_parse(const char *s, struct rate *r, char *why, size_t whylen)
{
    struct rate_num n;
    r->unit = RATE_UNLIMITED;
    r->per_s = 0;
    if (s[0] == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "max") == 0)
        return 0;
    const char *p = s;
    int rc = parse_num(&p, &n);
    if (rc == -ERANGE)
        goto big;
    if (rc < 0)
        goto bad;
    uint64_t mult = parse_mult(&p);
    if (*p == 0 || strcasecmp(p, "pps") == 0)
        r->unit = RATE_PPS;
    else if (strcasecmp(p, "bps") == 0 || strcasecmp(p, "bit") == 0 || strcasecmp(p, "bit/s") == 0)
        r->unit = RATE_BPS;
    else
        goto bad;
    uint64_t limit = r->unit == RATE_PPS ? RATE_MAX_PPS : RATE_MAX_BPS;
    /* Checked before multiplying: 18446744074g wrapped to 290448384. */
    if (n.whole > limit / mult)
        goto big;
    /* frac < 10^9 and mult <= 10^9: the product fits in 64 bits. */
    uint64_t frac = n.frac * mult;
    if (frac % n.frac_div != 0 || n.inexact) {
        snprintf(why, whylen, "rate %s is not a whole number of %s per second", s,
                 r->unit == RATE_PPS ? "packets" : "bits");
        return -EINVAL;
    }
    r->per_s = n.whole * mult + frac / n.frac_div;
    if (r->per_s == 0) {
        snprintf(why, whylen, "rate %s is 0; use 0 or max for no limit", s);
        return -EINVAL;
    }
    if (r->per_s > limit)
        goto big;
    return 0;
bad:
    snprintf(why, whylen,
             "rate %s: expected <number>[k|m|g][pps|bps|bit], e.g. 100000, 1.5mpps, 10gbps, or max",
             s);
    return -EINVAL;
big:
    snprintf(why, whylen, "rate %s is above 1gpps / 1tbps", s);
    return -EINVAL;
}

int rate_check(const char *val, char *why, size_t whylen)
{
    struct rate r;
    return rate_parse(val, &r, why, whylen);
}

int pacer_init(struct pacer *p, const struct rate *r, uint64_t tsc_hz, uint64_t now)
{
    memset(p, 0, sizeof(*p));
    p->unit = r->unit;
    p->next_fp = (pacer_fp)now << PACER_FRAC;
    if (r->unit == RATE_UNLIMITED)
        return 0;
    if (tsc_hz == 0 || r->per_s == 0)
        return -EINVAL;
    pacer_fp hz_fp = (pacer_fp)tsc_hz << PACER_FRAC;
    pacer_fp cost = r->unit == RATE_PPS ? hz_fp / r->per_s : hz_fp * 8 / r->per_s;
    if (cost == 0 || cost > UINT64_MAX || hz_fp / 4 > UINT64_MAX)
        return -EINVAL;
    if (r->unit == RATE_PPS)
        p->cost_fp = (uint64_t)cost;
    else
        p->byte_fp = (uint64_t)cost;
    /* Up to 250 ms of backlog is caught up: under TCG on a busy host the
     * vCPU is descheduled for tens of milliseconds while the TSC runs on,
     * and the average rate must still hold. A longer stall is not turned
     * into a burst. */
    p->max_lag_fp = (uint64_t)(hz_fp / 4);
    return 0;
}
