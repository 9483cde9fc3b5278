#include "apps/pcap_sched.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define PCAP_FRAC_DIGITS 6
#define PCAP_MAX_CYCLES  (1ull << 62)

_Static_assert(PCAP_SPEED_MAX < UINT64_MAX / 10, "speed= parses without wrapping");

int pcap_speed_parse(const char *s, uint64_t *micro, char *why, size_t whylen)
{
    uint64_t v = 0;
    unsigned digits = 0;
    const char *p = s;
    *micro = 0;
    if (strcasecmp(s, "max") == 0)
        return 0;
    for (; *p >= '0' && *p <= '9' && v <= PCAP_SPEED_MAX; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (p == s)
        goto bad;
    if (*p >= '0' && *p <= '9')
        goto range;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9' && digits < PCAP_FRAC_DIGITS; p++, digits++)
            v = v * 10 + (uint64_t)(*p - '0');
        if (!digits)
            goto bad;
    }
    if (*p)
        goto bad;
    for (; digits < PCAP_FRAC_DIGITS; digits++)
        v *= 10;
    if (v == 0 || v > PCAP_SPEED_MAX) {
    range:
        snprintf(why, whylen, "speed %s: the multiplier must be 0.000001 .. 10000", s);
        return -EINVAL;
    }
    *micro = v;
    return 0;
bad:
    snprintf(why, whylen,
             "speed %s: expected max or a decimal multiplier with at most 6 fraction digits, "
             "e.g. 1, 2.5, 0.01",
             s);
    return -EINVAL;
}

int pcap_speed_check(const char *val, char *why, size_t whylen)
{
    uint64_t micro;
    return pcap_speed_parse(val, &micro, why, whylen);
}

static uint64_t pcap_cycles(const struct pcap_sched *s, uint64_t ns)
{
    return (uint64_t)(((unsigned __int128)ns * s->k_fp) >> 32);
}

int pcap_sched_init(struct pcap_sched *s, const struct rate *r, uint64_t micro, uint64_t span_ns,
                    uint64_t tsc_hz, uint64_t now)
{
    memset(s, 0, sizeof(*s));
    s->base = s->due = now;
    if (r->unit != RATE_UNLIMITED) {
        s->mode = PCAP_RATE;
        return pacer_init(&s->pc, r, tsc_hz, now);
    }
    if (micro == 0) {
        s->mode = PCAP_TOP;
        return 0;
    }
    if (tsc_hz == 0 || micro > PCAP_SPEED_MAX)
        return -EINVAL;
    /* cycles per ns = tsc_hz / 1e9 / speed = tsc_hz / (micro * 1000) */
    unsigned __int128 k = ((unsigned __int128)tsc_hz << 32) / ((unsigned __int128)micro * 1000u);
    if (k == 0 || k > UINT64_MAX)
        return -ERANGE;
    s->mode = PCAP_TIMED;
    s->k_fp = (uint64_t)k;
    if ((((unsigned __int128)span_ns * s->k_fp) >> 32) > PCAP_MAX_CYCLES)
        return -ERANGE;
    return 0;
}

void pcap_sched_sent(struct pcap_sched *s, uint32_t len, uint64_t gap_ns, bool wrapped)
{
    if (s->mode == PCAP_RATE) {
        pacer_sent(&s->pc, len);
        return;
    }
    if (s->mode == PCAP_TOP)
        return;
    if (wrapped) {
        s->base = s->due;
        s->cum = 0;
    }
    s->cum += gap_ns;
    s->due = s->base + pcap_cycles(s, s->cum);
}
