/* When app=replay sends each frame of a capture: at the recorded gaps
 * divided by speed= (tcpreplay's --multiplier; 1 is the recorded timing),
 * at rate= (apps/rate.h's pacer: tcpreplay's --pps), or as fast as the
 * ring takes them (speed=max: --topspeed). Deadlines are TSC cycles from
 * the cumulative recorded time of the loop, so rounding never adds up
 * over a capture; each loop starts where the last frame of the previous
 * one was due. Pure: unit tested on a simulated clock. */
#ifndef VN_PCAP_SCHED_H
#define VN_PCAP_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps/rate.h"

enum pcap_mode { PCAP_TIMED, PCAP_RATE, PCAP_TOP };

#define PCAP_SPEED_UNIT 1000000ull                /* speed= in millionths */
#define PCAP_SPEED_MAX  (10000 * PCAP_SPEED_UNIT) /* 10000x */

/* speed=: "max", or a decimal multiplier 0.000001 .. 10000 with at most
 * six fraction digits. *micro: the multiplier in millionths, 0 for max.
 * 0, or -EINVAL with why. */
int pcap_speed_parse(const char *s, uint64_t *micro, char *why, size_t whylen);

/* Config-table check hook for speed=. */
int pcap_speed_check(const char *val, char *why, size_t whylen);

struct pcap_sched {
    enum pcap_mode mode;
    uint64_t k_fp; /* PCAP_TIMED: cycles per recorded ns, 32.32 fixed point */
    uint64_t base; /* the loop's start, cycles */
    uint64_t cum;  /* recorded ns from the loop's start to the next frame */
    uint64_t due;  /* the next frame's deadline, cycles */
    struct pacer pc;
};

/* The mode: rate= when it is not unlimited, else speed= (micro 0: max).
 * span_ns: one loop at recorded timing; a loop whose deadlines pass 2^62
 * cycles at this speed is -ERANGE, a rate the pacer cannot hold -EINVAL.
 * The first frame is due at now. */
int pcap_sched_init(struct pcap_sched *s, const struct rate *r, uint64_t micro, uint64_t span_ns,
                    uint64_t tsc_hz, uint64_t now);

/* Whether the next frame may go at now. */
static inline bool pcap_sched_ready(struct pcap_sched *s, uint64_t now)
{
    if (s->mode == PCAP_RATE)
        return pacer_due(&s->pc, now);
    return s->mode == PCAP_TOP || now >= s->due;
}

/* The cycle the next frame is due at (0 at top speed). */
static inline uint64_t pcap_sched_when(const struct pcap_sched *s)
{
    if (s->mode == PCAP_RATE)
        return pacer_next(&s->pc);
    return s->mode == PCAP_TOP ? 0 : s->due;
}

/* A frame of len bytes went; the next one's recorded gap is gap_ns, and
 * wrapped says it starts a new loop. */
void pcap_sched_sent(struct pcap_sched *s, uint32_t len, uint64_t gap_ns, bool wrapped);

#endif
