/* How long the vCPU did not run the app's busy-poll loop: the gap between
 * consecutive loop rounds on the TSC. Under KVM and TCG the guest TSC
 * follows host time, so a gap far above a round's work is time the host
 * gave the vCPU's thread to something else (or QEMU spent outside guest
 * code): the rings filled meanwhile. Halts the app asked for (net_idle)
 * are taken out with stall_skip, and its own pauses (a sample line on
 * the console, 1-2 ms under TCG) are kept apart with stall_pause, so only
 * involuntary gaps count as stalls.
 *
 * One subtraction and one compare per round: rounds at or below the bar
 * (the longest gap so far, capped at the threshold) take no other path. */
#ifndef VN_STALL_H
#define VN_STALL_H

#include <stdint.h>

#define STALL_THRESHOLD_US 1000 /* "over_1ms" */

struct json;

struct stall {
    uint64_t t0, last;    /* cycles: the start, the last round */
    uint64_t bar;         /* gaps above it go to stall_record */
    uint64_t threshold;   /* cycles */
    uint64_t max, max_at; /* the longest gap, and when it ended */
    uint64_t over;        /* gaps above the threshold */
    uint64_t stalled;     /* their cycles together */
    uint64_t pause_max;   /* the app's own longest pause */
    uint64_t paused;      /* its pauses' cycles together */
};

void stall_start(struct stall *s, uint64_t now, uint64_t threshold);

/* The slow path of stall_round: a gap above the bar. */
void stall_record(struct stall *s, uint64_t gap, uint64_t now);

/* Once per loop round, with the round's TSC reading. A TSC that went back
 * (a wrapped gap) is no stall. */
static inline void stall_round(struct stall *s, uint64_t now)
{
    uint64_t gap = now - s->last;
    s->last = now;
    if (gap > s->bar)
        stall_record(s, gap, now);
}

/* cycles of the round were a wait the app asked for (net_idle's halt):
 * not the host's. */
static inline void stall_skip(struct stall *s, uint64_t cycles)
{
    s->last += cycles;
}

/* The app paused on its own from t0 to t1 (TSC): not a stall, but
 * counted apart, as its rings filled meanwhile all the same. */
void stall_pause(struct stall *s, uint64_t t0, uint64_t t1);

/* Adds "stalls": threshold_us, max_us, max_at_s (since stall_start),
 * over_1ms, stalled_ms, pause_max_us, paused_ms. tsc_hz: cycles per
 * second (not 0). */
void stall_json(struct json *j, const struct stall *s, uint64_t tsc_hz);

#endif
