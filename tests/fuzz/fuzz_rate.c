/* apps/rate.c: rate= against an exact model (decimal digits in 128-bit
 * arithmetic), then the pacer built from it at a TSC rate from the input,
 * checked for wrap-around of its fixed-point deadlines. */
#include <errno.h>
#include <strings.h>

#include "apps/rate.h"
#include "tests/fuzz/fuzz.h"

typedef unsigned __int128 u128;

/* 1: accepted with *v per second; 0: refused. */
static int model(const char *s, enum rate_unit *unit, uint64_t *v)
{
    if (s[0] == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "max") == 0) {
        *unit = RATE_UNLIMITED;
        *v = 0;
        return 1;
    }
    const char *w = s, *f = NULL;
    size_t nw = strspn(w, "0123456789"), nf = 0;
    if (nw == 0)
        return 0;
    const char *p = w + nw;
    if (*p == '.') {
        f = p + 1;
        nf = strspn(f, "0123456789");
        if (nf == 0)
            return 0;
        p = f + nf;
    }
    u128 mult = 1;
    if (*p == 'k' || *p == 'K')
        mult = 1000, p++;
    else if (*p == 'm' || *p == 'M')
        mult = 1000000, p++;
    else if (*p == 'g' || *p == 'G')
        mult = 1000000000, p++;
    else if (*p == 't' || *p == 'T')
        mult = 1000000000000ull, p++;
    if (*p == 0 || strcasecmp(p, "pps") == 0)
        *unit = RATE_PPS;
    else if (!strcasecmp(p, "bps") || !strcasecmp(p, "bit") || !strcasecmp(p, "bit/s"))
        *unit = RATE_BPS;
    else
        return 0;
    while (nw > 1 && *w == '0')
        w++, nw--;
    while (nf > 0 && f[nf - 1] == '0')
        nf--;
    if (nw > 13 || nf > 12) /* above 1 Tbit/s, or a fraction finer than 1e-12 */
        return 0;
    u128 num = 0, den = 1;
    for (size_t i = 0; i < nw; i++)
        num = num * 10 + (u128)(w[i] - '0');
    for (size_t i = 0; i < nf; i++)
        num = num * 10 + (u128)(f[i] - '0'), den *= 10;
    num *= mult;
    if (num % den)
        return 0;
    num /= den;
    if (num == 0 || num > (*unit == RATE_PPS ? 1000000000u : 1000000000000ull))
        return 0;
    *v = (uint64_t)num;
    return 1;
}

static void pace(const struct rate *r, const uint8_t *data, size_t n)
{
    uint64_t hz = 1000000, now = 0;
    uint32_t len = 60;
    if (n >= 16) {
        memcpy(&hz, data + n - 8, 8);
        hz = 1000000 + hz % 10000000000ull; /* 1 MHz .. 10 GHz */
        memcpy(&now, data + n - 16, 8);     /* any TSC: UEFI machines count from power-on */
        len = 60 + (uint32_t)(data[0] | data[1] << 8) % (9014 - 60 + 1);
    }
    struct pacer p;
    if (pacer_init(&p, r, hz, now) < 0)
        return;
    /* The deadline moves forward by exactly one packet's cost each time,
     * from wherever the clock stands, and never wraps. */
    for (int i = 0; i < 64; i++) {
        pacer_fp before = p.next_fp;
        pacer_fp cost = r->unit == RATE_BPS ? (pacer_fp)p.byte_fp * len : p.cost_fp;
        bool due = pacer_due(&p, now);
        pacer_fp base = p.next_fp;
        FUZZ_CHECK(base >= before);
        FUZZ_CHECK(due == (base <= (pacer_fp)now << PACER_FRAC));
        pacer_sent(&p, len);
        FUZZ_CHECK(p.next_fp == base + cost);
        FUZZ_CHECK(pacer_next(&p) == (uint64_t)(p.next_fp >> PACER_FRAC) ||
                   p.next_fp >> PACER_FRAC > UINT64_MAX);
        uint64_t step = (uint64_t)(cost >> PACER_FRAC);
        now = now > UINT64_MAX - step ? UINT64_MAX : now + step;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 512)
        return 0;
    char *s = fuzz_cstr(data, n);
    char why[160];
    struct rate r;
    enum rate_unit mu = RATE_UNLIMITED;
    uint64_t mv = 0;
    int rc = rate_parse(s, &r, why, sizeof(why));
    int ok = model(s, &mu, &mv);
    FUZZ_CHECK((rc == 0) == ok);
    if (rc == 0) {
        FUZZ_CHECK(r.unit == mu && r.per_s == mv);
        pace(&r, data, n);
    } else {
        FUZZ_CHECK(rc == -EINVAL && fuzz_terminated(why, sizeof(why)) && why[0]);
    }
    free(s);
    return 0;
}
