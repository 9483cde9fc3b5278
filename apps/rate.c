#include "apps/rate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int rate_parse(const char *s, struct rate *r, char *why, size_t whylen)
{
    r->unit = RATE_UNLIMITED;
    r->per_s = 0;
    if (s[0] == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "max") == 0)
        return 0;
    const char *p = s;
    uint64_t whole = 0, frac = 0, frac_div = 1;
    if (*p < '0' || *p > '9')
        goto bad;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > 1000000000000ull)
            goto big;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            goto bad;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (frac_div < 1000000000ull) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_div *= 10;
            }
        }
    }
    uint64_t mult = 1;
    switch (*p) {
    case 'k':
    case 'K':
        mult = 1000;
        p++;
        break;
    case 'm':
    case 'M':
        mult = 1000000;
        p++;
        break;
    case 'g':
    case 'G':
        mult = 1000000000;
        p++;
        break;
    default:
        break;
    }
    if (*p == 0 || strcasecmp(p, "pps") == 0)
        r->unit = RATE_PPS;
    else if (strcasecmp(p, "bps") == 0 || strcasecmp(p, "bit") == 0 || strcasecmp(p, "bit/s") == 0)
        r->unit = RATE_BPS;
    else
        goto bad;
    if (whole > 1000000000000ull)
        goto big;
    r->per_s = whole * mult + frac * mult / frac_div;
    if (r->per_s == 0) {
        snprintf(why, whylen, "rate %s rounds to 0; use 0 or max for no limit", s);
        return -EINVAL;
    }
    if (r->unit == RATE_PPS ? r->per_s > 1000000000ull : r->per_s > 1000000000000ull)
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
    p->next_fp = now << PACER_FRAC;
    if (r->unit == RATE_UNLIMITED)
        return 0;
    if (tsc_hz == 0 || r->per_s == 0)
        return -EINVAL;
    unsigned __int128 hz_fp = (unsigned __int128)tsc_hz << PACER_FRAC;
    if (r->unit == RATE_PPS)
        p->cost_fp = (uint64_t)(hz_fp / r->per_s);
    else
        p->byte_fp = (uint64_t)(hz_fp * 8 / r->per_s);
    if (p->cost_fp == 0 && p->byte_fp == 0)
        return -EINVAL;
    /* Up to 250 ms of backlog is caught up: under TCG on a busy host the
     * vCPU is descheduled for tens of milliseconds while the TSC runs on,
     * and the average rate must still hold. A longer stall is not turned
     * into a burst. */
    p->max_lag_fp = (uint64_t)(hz_fp / 4);
    return 0;
}
