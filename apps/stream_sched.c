#include "apps/stream_sched.h"

#include <errno.h>
#include <string.h>

/* -ln(u), u uniform in (0, 1]: the exponential draw of a Poisson
 * process's gaps. ln by its atanh series (ln x = 2 atanh((x-1)/(x+1)))
 * on the mantissa in [1, 2) plus the exponent: no libm on this path. */
static double exp_draw(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    double u = (double)((x >> 11) + 1) * 0x1p-53; /* (0, 1] */
    int e = 0;
    while (u < 1.0) {
        u *= 2.0;
        e--;
    }
    double z = (u - 1.0) / (u + 1.0), z2 = z * z, term = z, sum = 0;
    for (int k = 1; k < 40; k += 2) {
        sum += term / k;
        term *= z2;
    }
    return -(2.0 * sum + e * 0.69314718055994530942);
}

int sched_init(struct sched *sc, const struct stream_spec *specs, unsigned n, uint64_t tsc_hz,
               uint64_t now, uint64_t seed)
{
    memset(sc, 0, sizeof(*sc));
    if (n == 0 || n > STREAMS_MAX || tsc_hz == 0)
        return -EINVAL;
    sched_fp hz = (sched_fp)tsc_hz << SCHED_FRAC;
    /* Up to 250 ms of backlog is caught up, as the gen's pacer does. */
    sc->max_lag = (uint64_t)(hz / 4);
    sc->n = n;
    sc->free_run = true;
    for (unsigned i = 0; i < n; i++) {
        const struct stream_spec *p = &specs[i];
        struct sched_stream *s = &sc->s[i];
        s->mode = p->mode;
        s->unit = (uint8_t)p->rate.unit;
        s->next = (sched_fp)now << SCHED_FRAC;
        s->frames = p->frames;
        s->bursts = p->bursts;
        s->rng = (seed + i) * 0x9e3779b97f4a7c15ull + 1;
        sched_fp gap = (sched_fp)p->gap_ns * hz / 1000000000u;
        sched_fp cost = p->rate.unit == RATE_PPS   ? hz / p->rate.per_s
                        : p->rate.unit == RATE_BPS ? hz * 8 / p->rate.per_s
                                                   : 0;
        if (gap > UINT64_MAX || cost > UINT64_MAX || (p->rate.unit != RATE_UNLIMITED && !cost))
            return -EINVAL;
        s->gap = (uint64_t)gap;
        s->cost = (uint64_t)cost;
        sc->free_run = sc->free_run && !cost && p->mode == SMODE_CONTINUOUS;
    }
    return 0;
}

/* A paced stream's deadline no further back than the lag allows. */
static inline bool due(struct sched *sc, struct sched_stream *s, sched_fp now)
{
    if (s->unit != RATE_UNLIMITED && now >= s->next + sc->max_lag)
        s->next = now - sc->max_lag;
    return !s->done && s->next <= now;
}

int sched_pick_clock(struct sched *sc, uint64_t now)
{
    sched_fp t = (sched_fp)now << SCHED_FRAC, best_at = 0;
    int best = -1;
    for (unsigned i = 0; i < sc->n; i++) {
        struct sched_stream *s = &sc->s[i];
        if (s->unit != RATE_UNLIMITED && due(sc, s, t) && (best < 0 || s->next < best_at)) {
            best = (int)i;
            best_at = s->next;
        }
    }
    if (best >= 0)
        return best;
    for (unsigned k = 0, i = sc->rr; k < sc->n; k++, i = i + 1 == sc->n ? 0 : i + 1) {
        if (sc->s[i].unit == RATE_UNLIMITED && due(sc, &sc->s[i], t)) {
            sc->rr = i + 1 == sc->n ? 0 : i + 1;
            return (int)i;
        }
    }
    return -1;
}

void sched_sent_clock(struct sched *sc, unsigned i, uint32_t len, uint64_t now)
{
    struct sched_stream *s = &sc->s[i];
    sched_fp cost = s->unit == RATE_BPS ? (sched_fp)s->cost * len : s->cost;
    if (s->mode == SMODE_POISSON)
        cost = (sched_fp)((double)cost * exp_draw(&s->rng));
    s->next += cost;
    if (s->mode != SMODE_BURST && s->mode != SMODE_MULTI_BURST)
        return;
    if (++s->in_burst < s->frames)
        return;
    s->in_burst = 0;
    if (s->mode == SMODE_BURST || ++s->burst_no == s->bursts) {
        s->done = true;
        return;
    }
    /* The gap from the end of the burst: an unpaced one's end is now. */
    sched_fp from = (sched_fp)now << SCHED_FRAC;
    s->next = (s->unit == RATE_UNLIMITED || s->next < from ? from : s->next) + s->gap;
}

uint64_t sched_next(const struct sched *sc)
{
    /* In the free run no deadline moves from the start, none is done. */
    if (sc->free_run)
        return (uint64_t)(sc->s[0].next >> SCHED_FRAC);
    sched_fp best = ~(sched_fp)0;
    for (unsigned i = 0; i < sc->n; i++)
        if (!sc->s[i].done && sc->s[i].next < best)
            best = sc->s[i].next;
    return best == ~(sched_fp)0 ? UINT64_MAX : (uint64_t)(best >> SCHED_FRAC);
}

bool sched_done(const struct sched *sc)
{
    if (sc->free_run)
        return false; /* continuous streams only */
    for (unsigned i = 0; i < sc->n; i++)
        if (!sc->s[i].done)
            return false;
    return true;
}
