/* count --latency: one-way latency of frames stamped with this host's TSC
 * (by a vnperf-peer send on this host, then forwarded back through the
 * device under test), in the guest's histogram (apps/hist.h). The TSC
 * rate is measured against CLOCK_MONOTONIC_RAW over the whole run. */
#ifndef PEER_LAT_H
#define PEER_LAT_H

#include <stdint.h>
#include <stdio.h>

#include "apps/hist.h"

struct peer_lat {
    struct hist h;      /* TSC cycles */
    uint64_t future;    /* stamps later than the arrival: not ours */
    uint64_t tsc0, ns0; /* TSC and CLOCK_MONOTONIC_RAW at the start */
};

void peer_lat_start(struct peer_lat *l, uint64_t tsc, uint64_t ns);

/* A frame stamped at tsc_stamp read at tsc_now. */
static inline void peer_lat_add(struct peer_lat *l, uint64_t tsc_stamp, uint64_t tsc_now)
{
    if (tsc_stamp > tsc_now)
        l->future++;
    else
        hist_add(&l->h, tsc_now - tsc_stamp);
}

/* TSC ticks per second between the start and (tsc, ns); 0 when no time
 * has passed or the TSC went backwards. */
double peer_lat_tsc_hz(const struct peer_lat *l, uint64_t tsc, uint64_t ns);

/* ,"latency":{...} with count, future, tsc_hz and p50_us .. max_us. */
void peer_lat_json(FILE *f, const struct peer_lat *l, uint64_t tsc, uint64_t ns);

#endif
