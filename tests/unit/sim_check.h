/* The simulated device's rule checker for app=hostile's layouts: it
 * reads a split or a packed queue as a device would (avail ring or the
 * descriptors' wrap bits, chains, indirect tables, the virtio-net header,
 * the event fields) and names every driver rule broken, as a mask of
 * 1ull << enum hostile_viol (apps/hostile.h). */
#ifndef VN_SIM_CHECK_H
#define VN_SIM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_virtio.h"

struct simchk_mem {
    uint64_t lo, hi; /* [lo, hi): memory a buffer may lie in */
};

struct simchk_env {
    const struct simchk_mem *mem;
    unsigned nmem;
    bool rx;               /* a receiveq: every element device-writable */
    uint32_t mtu;          /* frames without GSO at most mtu + 14 bytes */
    uint16_t avail_event0; /* split: the device's avail_event before the case */
    uint32_t dev_event0;   /* packed: the device's event structure before it */
};

uint64_t simchk_split(const struct sim_queue *sq, const struct simchk_env *env);

/* From the device's position (last_avail, its wrap counter that of the
 * index, s2.8.1) up to the first descriptor not available. */
uint64_t simchk_packed(const struct sim_queue *sq, const struct simchk_env *env);

/* The control queue's first pending command as a device reads it
 * (virtio 1.2 s5.1.6.5) against a device of max_pairs queue pairs: a
 * mask of 1u << enum hostile_cviol. */
uint32_t simchk_ctrl(const struct sim_queue *sq, uint16_t max_pairs);

/* A notification's value (s2.9, split: the queue's index, then the next
 * avail index) against the queue's avail->idx: a mask of 1u << enum
 * hostile_cviol. */
uint32_t simchk_notify(const struct sim_queue *sq, uint32_t val);

/* Every queue of the device: a notification for one the driver had not
 * enabled (s4.1.4.3, s4.2.2), as a mask of 1u << enum hostile_cviol. */
uint32_t simchk_notify_off(const struct sim_dev *s);

#endif
