/* The TSC's rate against a reference counter, in two steps
 * (kernel/tsc_cal.h). */
#include "kernel/tsc_cal.h"

#include <errno.h>

static uint64_t counted(const struct tsc_cal_ref *r, uint32_t from, uint32_t to)
{
    return (r->down ? from - to : to - from) & r->mask;
}

/* The next change of the counter. The value v first read between TSC a
 * and b, after a read that still gave the old one (begun at a_prev):
 * the edge into v lies in [a_prev, b], however many ticks it moved. */
static int next_edge(const struct tsc_cal_ref *r, struct tsc_cal_edge *e)
{
    uint64_t a_prev = r->tsc();
    uint32_t prev = r->read() & r->mask;

    for (uint32_t i = 0; i < TSC_CAL_STUCK; i++) {
        uint64_t a = r->tsc();
        uint32_t v = r->read() & r->mask;
        uint64_t b = r->tsc();
        if (v != prev) {
            e->tsc = a_prev + (b - a_prev) / 2;
            e->half = (b - a_prev + 1) / 2;
            e->count = v;
            return 0;
        }
        a_prev = a;
    }
    return -ENODEV;
}

int tsc_cal_edge(const struct tsc_cal_ref *r, struct tsc_cal_edge *e)
{
    struct tsc_cal_edge t;

    for (unsigned i = 0; i < TSC_CAL_TRIES; i++) {
        if (next_edge(r, &t) < 0)
            return -ENODEV;
        if (i == 0 || t.half < e->half)
            *e = t;
    }
    return 0;
}

struct tsc_cal_rate tsc_cal_rate(const struct tsc_cal_edge *e0, const struct tsc_cal_edge *e1,
                                 uint64_t ticks, uint32_t ref_hz)
{
    struct tsc_cal_rate out = {0, UINT32_MAX, ticks};
    uint64_t cyc = e1->tsc - e0->tsc;
    uint64_t err = e0->half + e1->half;

    if (!ticks || e1->tsc <= e0->tsc)
        return out;
    out.hz = (uint64_t)((unsigned __int128)cyc * ref_hz / ticks);
    /* The true cycles lie in cyc +- err: relative to them, err / (cyc - err). */
    if (err < cyc) {
        unsigned __int128 ppm = ((unsigned __int128)err * 1000000u + (cyc - err) - 1) / (cyc - err);
        out.ppm = ppm < UINT32_MAX ? (uint32_t)ppm : UINT32_MAX;
    }
    return out;
}

uint64_t tsc_cal_unwrap(const struct tsc_cal_ref *r, uint32_t c0, uint32_t c1, uint64_t cycles,
                        uint64_t est_hz)
{
    uint64_t d = counted(r, c0, c1);
    uint64_t period = (uint64_t)r->mask + 1;
    uint64_t expect = est_hz ? (uint64_t)((unsigned __int128)cycles * r->hz / est_hz) : 0;

    if (expect <= d)
        return d;
    return d + (expect - d + period / 2) / period * period;
}

int tsc_cal_start(struct tsc_cal *c, const struct tsc_cal_ref *r, uint64_t *coarse_hz)
{
    struct tsc_cal_edge e;
    uint64_t ticks;

    c->ref = r;
    if (tsc_cal_edge(r, &c->e0) < 0)
        return -ENODEV;
    /* Longer while stalls keep it coarser than TSC_CAL_COARSE_PPM, but
     * within half a period: its ticks must stay unambiguous. */
    do {
        if (tsc_cal_edge(r, &e) < 0)
            return -ENODEV;
        ticks = counted(r, c->e0.count, e.count);
        c->coarse = tsc_cal_rate(&c->e0, &e, ticks, r->hz);
    } while ((ticks < TSC_CAL_COARSE_TICKS || c->coarse.ppm > TSC_CAL_COARSE_PPM) &&
             ticks < r->mask / 2);
    *coarse_hz = c->coarse.hz;
    return 0;
}

/* Both rates within their bounds of each other: else the counter wrapped
 * more than the coarse rate could tell (a host that stopped the guest for
 * longer than a period). */
static bool rates_agree(const struct tsc_cal_rate *a, const struct tsc_cal_rate *b)
{
    uint64_t d = a->hz > b->hz ? a->hz - b->hz : b->hz - a->hz;
    return (unsigned __int128)d * 1000000u <=
           (unsigned __int128)a->hz * ((uint64_t)a->ppm + b->ppm + 1);
}

int tsc_cal_finish(struct tsc_cal *c, uint32_t want_ppm, uint64_t max_ticks,
                   struct tsc_cal_rate *out)
{
    const struct tsc_cal_ref *r = c->ref;
    struct tsc_cal_edge e;

    do {
        if (tsc_cal_edge(r, &e) < 0)
            return -ENODEV;
        uint64_t ticks = tsc_cal_unwrap(r, c->e0.count, e.count, e.tsc - c->e0.tsc, c->coarse.hz);
        *out = tsc_cal_rate(&c->e0, &e, ticks, r->hz);
    } while (out->ppm > want_ppm && out->ticks < max_ticks);
    return rates_agree(out, &c->coarse) ? 0 : -EAGAIN;
}
