#include "apps/rate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define RATE_MAX_PPS 1000000000ull    /* 1 Gpps */
#define RATE_MAX_BPS 1000000000000ull /* 1 Tbit/s */

#define RATE_FRAC_DIGITS 12 /* 1e-12: the finest step a t multiplier makes whole */

/* A decimal number: whole part (no more than RATE_MAX_BPS, so nothing
 * after it wraps) and up to RATE_FRAC_DIGITS fraction digits. */
struct rate_num {
    uint64_t whole, frac;
    unsigned frac_digits;
    bool inexact; /* a non-zero digit past the last one kept */
};

static uint64_t pow10u(unsigned e)
{
    uint64_t v = 1;
    for (unsigned i = 0; i < e; i++)
        v *= 10;
    return v;
}

static int parse_num(const char **pp, struct rate_num *n)
{
    const char *p = *pp;
    *n = (struct rate_num){0};
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
            if (n->frac_digits < RATE_FRAC_DIGITS) {
                n->frac = n->frac * 10 + (uint64_t)(*p - '0');
                n->frac_digits++;
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

/* k, m, g, t (decimal) as a power of ten. */
static unsigned parse_exp(const char **pp)
{
    static const char units[] = "kmgt";
    const char *u = **pp ? strchr(units, **pp | 0x20) : NULL;
    if (!u)
        return 0;
    (*pp)++;
    return 3 * (unsigned)(u - units + 1);
}

/* The fraction times 10^exp, if that is whole: both are powers of ten,
 * so no product passes 10^12. */
static bool frac_scaled(const struct rate_num *n, unsigned exp, uint64_t *out)
{
    if (n->inexact)
        return false;
    if (exp >= n->frac_digits) {
        *out = n->frac * pow10u(exp - n->frac_digits);
        return true;
    }
    uint64_t div = pow10u(n->frac_digits - exp);
    *out = n->frac / div;
    return n->frac % div == 0;
}

int rate_parse(const char *s, struct rate *r, char *why, size_t whylen)
{
    struct rate_num n;
    uint64_t frac;
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
    unsigned exp = parse_exp(&p);
    uint64_t mult = pow10u(exp);
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
    if (!frac_scaled(&n, exp, &frac)) {
        snprintf(why, whylen, "rate %s is not a whole number of %s per second", s,
                 r->unit == RATE_PPS ? "packets" : "bits");
        return -EINVAL;
    }
    r->per_s = n.whole * mult + frac;
    if (r->per_s == 0) {
        snprintf(why, whylen, "rate %s is 0; use 0 or max for no limit", s);
        return -EINVAL;
    }
    if (r->per_s > limit)
        goto big;
    return 0;
bad:
    snprintf(why, whylen,
             "rate %s: expected <number>[k|m|g|t][pps|bps|bit], e.g. 100000, 1.5mpps, 10gbps, or "
             "max",
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

int rate_share(const struct rate *r, unsigned n, unsigned k, struct rate *out)
{
    *out = *r;
    if (r->unit == RATE_UNLIMITED)
        return 0;
    if (!n || k >= n)
        return -EINVAL;
    out->per_s = r->per_s / n + (k < r->per_s % n ? 1 : 0);
    return out->per_s ? 0 : -EINVAL;
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
