/* imix=: a frame size mix such as "64:7,594:4,1518:1" (size:weight).
 * Sizes are Ethernet frame sizes on the wire including the 4-byte FCS, as
 * IMIX profiles are written; the frame the guest sends is 4 bytes shorter.
 * "simple" is 64:7,594:4,1518:1. */
#ifndef VN_IMIX_H
#define VN_IMIX_H

#include <stddef.h>
#include <stdint.h>

#define IMIX_MAX_SIZES  8
#define IMIX_MAX_WEIGHT 4096 /* sum of weights: the length of one cycle */
#define IMIX_FCS        4

struct imix {
    unsigned n;
    uint16_t size[IMIX_MAX_SIZES]; /* frame length sent (without FCS) */
    uint16_t weight[IMIX_MAX_SIZES];
    unsigned cycle; /* sum of weights */
};

/* max_frame: the largest frame the device takes (MTU + 14). Returns 0 or
 * -EINVAL with a reason. */
int imix_parse(const char *s, uint32_t max_frame, struct imix *m, char *why, size_t whylen);

/* Config-table check hook for imix= (checks against the 1500-byte MTU's
 * 1518-byte frame; the app re-checks against the negotiated MTU). */
int imix_check(const char *val, char *why, size_t whylen);

/* Fills seq[0..cycle) with size indices spread as evenly as the weights
 * allow (smooth weighted round robin): over any whole cycle each size
 * appears exactly weight times. */
void imix_sequence(const struct imix *m, uint8_t *seq);

#endif
