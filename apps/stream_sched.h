/* The stream scheduler: which stream's frame goes next, on the TSC
 * clock. Paced streams (pps or bit/s) each hold their own deadline, as
 * the gen's pacer (apps/rate.h) does, and the due one with the earliest
 * deadline goes first; unpaced streams take the time left in turn. Modes
 * on top: a burst of N frames, multi-burst (N frames, a gap, so many
 * times), Poisson arrivals (exponential gaps with the rate as the mean).
 * Pure: the clock is the caller's (tests/unit/test_stream_sched.c). */
#ifndef VN_STREAM_SCHED_H
#define VN_STREAM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/stream_spec.h"

typedef unsigned __int128 sched_fp; /* cycles << SCHED_FRAC: see apps/rate.h's pacer */
#define SCHED_FRAC 16

struct sched_stream {
    uint8_t mode; /* enum stream_mode */
    uint8_t unit; /* enum rate_unit */
    bool done;
    sched_fp next; /* not before this */
    uint64_t cost; /* RATE_PPS: cycles per frame; RATE_BPS: per frame byte (<< SCHED_FRAC) */
    uint64_t gap;  /* multi-burst: cycles between bursts (<< SCHED_FRAC) */
    uint64_t frames, bursts, in_burst, burst_no;
    uint64_t rng; /* Poisson's draws */
};

struct sched {
    unsigned n, rr;
    bool free_run;    /* every stream unpaced and continuous: in turn, no clock */
    uint64_t max_lag; /* << SCHED_FRAC: catch-up after a stall is bounded by this */
    struct sched_stream s[STREAMS_MAX];
};

/* 0, or -EINVAL when a rate cannot be paced at tsc_hz. */
int sched_init(struct sched *sc, const struct stream_spec *specs, unsigned n, uint64_t tsc_hz,
               uint64_t now, uint64_t seed);

int sched_pick_clock(struct sched *sc, uint64_t now);
void sched_sent_clock(struct sched *sc, unsigned i, uint32_t len, uint64_t now);

/* The stream whose frame goes now, or -1 when none is due. */
static inline int sched_pick(struct sched *sc, uint64_t now)
{
    if (!sc->free_run)
        return sched_pick_clock(sc, now);
    unsigned i = sc->rr;
    sc->rr = i + 1 == sc->n ? 0 : i + 1;
    return (int)i;
}

/* Stream i sent a frame of len bytes at now. */
static inline void sched_sent(struct sched *sc, unsigned i, uint32_t len, uint64_t now)
{
    if (!sc->free_run)
        sched_sent_clock(sc, i, len, now);
}

/* The cycle the next frame is due (UINT64_MAX when every stream is done). */
uint64_t sched_next(const struct sched *sc);

/* Every stream done: only bursts end. */
bool sched_done(const struct sched *sc);

#endif
