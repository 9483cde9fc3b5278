/* The TSC's rate measured against a counter of known rate (ACPI PM timer,
 * PIT) in two steps, as Linux's refined calibration does
 * (arch/x86/kernel/tsc.c): tsc_cal_start takes the first edge of the
 * counter at boot, tsc_cal_finish the second after the boot's own work,
 * so the window costs only what that work did not already take. Each
 * edge is an instant the counter changed, bracketed by the TSC read
 * before the read that saw the old value and after the one that saw the
 * new (Linux's quick_pit_calibrate does the same): the rate's worst-case
 * error is the brackets' half widths over the window, known, not assumed.
 * The hardware is reached through callbacks: the unit tests play a
 * clock. */
#ifndef VN_TSC_CAL_H
#define VN_TSC_CAL_H

#include <stdbool.h>
#include <stdint.h>

#define TSC_CAL_TRIES        4       /* edges looked at for the narrowest bracket */
#define TSC_CAL_STUCK        100000u /* reads without a change: a dead counter */
#define TSC_CAL_COARSE_TICKS 256u    /* the early rate's window, in counter ticks, */
#define TSC_CAL_COARSE_PPM   10000u  /* longer until its error is at most 1% */

struct tsc_cal_ref {
    uint32_t (*read)(void); /* the counter now */
    uint64_t (*tsc)(void);
    uint32_t hz;   /* its rate */
    uint32_t mask; /* its width: 0xffffff (PM timer), 0xffff (PIT) */
    bool down;     /* counts down (PIT) */
};

struct tsc_cal_edge {
    uint64_t tsc;   /* the bracket's middle */
    uint64_t half;  /* its half width, cycles */
    uint32_t count; /* the counter's value from the edge on */
};

struct tsc_cal_rate {
    uint64_t hz;    /* 0: no window */
    uint32_t ppm;   /* worst-case error against the reference, rounded up */
    uint64_t ticks; /* the window, in counter ticks */
};

struct tsc_cal {
    const struct tsc_cal_ref *ref;
    struct tsc_cal_edge e0;
    struct tsc_cal_rate coarse; /* over TSC_CAL_COARSE_TICKS: unwraps the counter */
};

/* The narrowest bracketed edge of TSC_CAL_TRIES; -ENODEV when the counter
 * does not move. */
int tsc_cal_edge(const struct tsc_cal_ref *r, struct tsc_cal_edge *e);

/* The first edge and a coarse rate (TSC_CAL_COARSE_TICKS later, longer
 * while its error is over TSC_CAL_COARSE_PPM, up to half the counter's
 * period), good for waits and timeouts until tsc_cal_finish; 0 or
 * -ENODEV. */
int tsc_cal_start(struct tsc_cal *c, const struct tsc_cal_ref *r, uint64_t *coarse_hz);

/* The rate from the first edge to later ones: takes edges until the
 * worst-case error is at most want_ppm or the window reaches max_ticks
 * (then the rate with its error as it is). 0, -ENODEV, or -EAGAIN when it
 * disagrees with the coarse rate beyond both errors (the counter wrapped
 * more often than the coarse rate could tell: start again). */
int tsc_cal_finish(struct tsc_cal *c, uint32_t want_ppm, uint64_t max_ticks,
                   struct tsc_cal_rate *out);

/* Pure: the rate and its worst-case error between two edges ticks apart. */
struct tsc_cal_rate tsc_cal_rate(const struct tsc_cal_edge *e0, const struct tsc_cal_edge *e1,
                                 uint64_t ticks, uint32_t ref_hz);

/* Pure: the ticks between two counts of a counter that wrapped an unknown
 * number of times, taking the number closest to cycles at est_hz. */
uint64_t tsc_cal_unwrap(const struct tsc_cal_ref *r, uint32_t c0, uint32_t c1, uint64_t cycles,
                        uint64_t est_hz);

#endif
