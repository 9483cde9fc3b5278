/* app=hostile's per-case steps (hostile_run.c): the violation, the
 * watch, the reset and bring-up, the traffic check, the case's line. */
#ifndef VN_HOSTILE_RUN_H
#define VN_HOSTILE_RUN_H

#include <stdint.h>

#include "apps/hostile.h"
#include "drivers/virtio/vnet.h"

#define HOSTILE_RING     256u /* ring= unless given */
#define HOSTILE_WATCH_MS 300u /* after the violation, before the reset */
#define HOSTILE_CHECK    32u  /* frames after the reset; all must come back */
#define HOSTILE_CHECK_MS 1000u
#define HOSTILE_SLOT     128u /* per check frame: headroom and a 64-byte frame */
_Static_assert(HOSTILE_CHECK <= HOSTILE_RING / 2, "the check fits any ring the app takes");
_Static_assert(VNET_HDR_ROOM + HOSTILE_FRAME <= HOSTILE_SLOT, "a check frame fits its slot");

struct app_config;

struct hostile_run {
    const struct app_config *cfg; /* addresses of the check frames */
    struct vnet_dev *d;
    struct hostile_env env;
    uint8_t *slots;   /* HOSTILE_CHECK frames of the traffic check */
    uint16_t *pflags; /* packed: the ring's flags before the case (VIRTQ_MAX) */
    uint32_t done;    /* check frames given back by tx_done */
    uint64_t t0;
    uint64_t cases, sent, completed, restarts_failed;
};

void hostile_run_init(struct hostile_run *r, const struct app_config *c, struct vnet_dev *d);
void hostile_run_case(struct hostile_run *r, const struct hostile_case *c);
/* The app's result line: cases run, check frames sent and back. */
void hostile_run_result(struct hostile_run *r);

#endif
