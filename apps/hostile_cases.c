/* The catalogue of app=hostile (docs/hostile.md): per case the rule it
 * breaks (virtio 1.2) and what the spec lets a device do about it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"

#define NEEDS_RESET "set DEVICE_NEEDS_RESET (s2.1.2) or ignore the buffer"
#define ANY         "nothing forbids it: the device must keep working"

const struct hostile_case hostile_cases[] = {
    /* split ring (s2.7) */
    {"chain_loop", "s2.7.5.2 (no loops in a chain)", NEEDS_RESET, HK_RING, HV_CHAIN_LOOP,
     hostile_chain_loop},
    {"chain_long", "s2.7.5.3.1 (no chain longer than the queue size)", NEEDS_RESET, HK_RING,
     HV_CHAIN_LONG, hostile_chain_long},
    {"head_range", "s2.7.6 (ring entries name a descriptor of the table)", NEEDS_RESET, HK_RING,
     HV_HEAD_RANGE, hostile_head_range},
    {"head_twice", "s2.7.13.2 (only free chains are made available)", NEEDS_RESET, HK_RING,
     HV_HEAD_TWICE, hostile_head_twice},
    {"avail_ahead", "s2.7.6 (at most queue size entries available)", NEEDS_RESET, HK_RING,
     HV_AVAIL_AHEAD, hostile_avail_ahead},
    {"avail_back", "s2.7.6.1 (the driver MUST NOT decrement avail idx)", NEEDS_RESET, HK_RING,
     HV_AVAIL_BACK, hostile_avail_back},
    {"used_event_far", "s2.7.10 (used_event: any 16-bit value)", ANY, HK_RING, HV_EVENT_FAR,
     hostile_event_far},
    {"avail_event_write", "s2.7.10 (avail_event is the device's to write)", ANY, HK_RING,
     HV_DEV_AREA, hostile_dev_area},
    /* descriptors (s2.7.5) */
    {"addr_beyond_ram", "s2.7.5 (addr: guest memory)", NEEDS_RESET, HK_RING, HV_ADDR_RAM,
     hostile_addr_ram},
    {"addr_mmio", "s2.7.5 (addr: guest memory, not a device's MMIO)", NEEDS_RESET, HK_RING,
     HV_ADDR_MMIO, hostile_addr_mmio},
    {"addr_wrap", "s2.7.5 (a buffer inside the address space)", NEEDS_RESET, HK_RING, HV_ADDR_WRAP,
     hostile_addr_wrap},
    {"len_zero", "s2.7.5 (an element of 0 bytes)", ANY, HK_RING, HV_LEN_ZERO, hostile_len_zero},
    {"len_max", "s2.7.5.2 (len 2^32-1: past the buffer and guest memory)", NEEDS_RESET, HK_RING,
     HV_LEN_MAX, hostile_len_max},
    {"write_on_tx", "s5.1.6.2 (transmit buffers are device-readable)", NEEDS_RESET, HK_RING,
     HV_WRITE_ON_TX, hostile_write_on_tx},
    {"read_on_rx", "s5.1.6.3 (receive buffers are device-writable)", NEEDS_RESET, HK_RX,
     HV_READ_ON_RX, hostile_read_on_rx},
    {"ind_next", "s2.7.5.3.1 (not both INDIRECT and NEXT)", NEEDS_RESET, HK_RING, HV_IND_NEXT,
     hostile_ind_next},
    {"ind_nested", "s2.7.5.3.1 (no INDIRECT inside a table)", NEEDS_RESET, HK_RING, HV_IND_NESTED,
     hostile_ind_nested},
    {"ind_len16", "s2.7.5.3 (a table of len/16 descriptors)", NEEDS_RESET, HK_RING, HV_IND_LEN16,
     hostile_ind_len16},
    {"ind_len0", "s2.7.5.3 (a table of len/16 descriptors)", NEEDS_RESET, HK_RING, HV_IND_LEN0,
     hostile_ind_len0},
    /* virtio-net header and frame (s5.1.6.2) */
    {"gso_hdrlen", "s5.1.6.2.1 (hdr_len: the headers' length)", "drop the frame", HK_RING,
     HV_HDR_GSO_HDRLEN, hostile_gso_hdrlen},
    {"gso_size0", "s5.1.6.2.1 (gso_size: the MSS)", "drop the frame", HK_RING, HV_HDR_GSO_SIZE0,
     hostile_gso_size0},
    {"csum_past", "s5.1.6.2.1 (csum_start, csum_offset inside the frame)", "drop the frame",
     HK_RING, HV_HDR_CSUM_PAST, hostile_csum_past},
    {"num_buffers_tx", "s5.1.6.2.1 (num_buffers is 0 on transmit)", "ignore it", HK_RING,
     HV_HDR_NUMBUF_TX, hostile_numbuf_tx},
    {"runt", "s5.1.6.2 (a frame of 10 bytes: no Ethernet header)", "drop the frame", HK_RING,
     HV_FRAME_RUNT, hostile_runt},
    {"over_mtu", "s5.1.4.1 (no frame past the MTU without GSO)", "drop the frame", HK_RING,
     HV_FRAME_MTU, hostile_over_mtu},
    {"gso_64k", "s5.1.6.2 (a GSO frame past 64 KiB)", "drop the frame", HK_RING, HV_FRAME_GSO_BIG,
     hostile_gso_64k},
    /* notifications (s2.7.13.4, s4.2.3.3) */
    {"notify_storm", "s2.7.13.4 (10^6 notifications in a second: allowed, a load)", ANY, HK_STORM,
     HV_NONE, hostile_valid},
    {"notify_bad_queue", "s4.2.2 (QueueNotify: a queue the device has)", "ignore it", HK_BADQ,
     HV_NONE, hostile_valid},
    /* device setup (s3.1.1, s2.2, s2.4) */
    {"features_unoffered", "s2.2.1 (only offered features are accepted)",
     "clear FEATURES_OK (s3.1.1 step 6)", HK_SETUP, HV_NONE, hostile_features_unoffered},
    {"features_after_ok", "s3.1.1 (features are set before FEATURES_OK)", "ignore the write",
     HK_SETUP, HV_NONE, hostile_features_after_ok},
    {"reset_inflight", "s2.4 (a reset may come with buffers in flight)", ANY, HK_SETUP, HV_NONE,
     hostile_reset_inflight},
    {"queue_size_bad", "s4.2.2.2 (QueueNum at most QueueNumMax)", "fail the queue (FAILED)",
     HK_SETUP, HV_NONE, hostile_queue_size},
};

const unsigned hostile_ncases = sizeof(hostile_cases) / sizeof(hostile_cases[0]);

const struct hostile_case *hostile_find(const char *name, unsigned len)
{
    for (unsigned i = 0; i < hostile_ncases; i++)
        if (strlen(hostile_cases[i].name) == len && !strncmp(hostile_cases[i].name, name, len))
            return &hostile_cases[i];
    return NULL;
}

int hostile_check(const char *list, char *why, unsigned whylen)
{
    if (!strcmp(list, "all"))
        return 0;
    const char *p = list;
    for (;;) {
        unsigned n = (unsigned)strcspn(p, ",");
        if (!hostile_find(p, n)) {
            snprintf(why, whylen, "no case '%.*s' (docs/hostile.md lists them; or all)",
                     n > 40u ? 40 : (int)n, p);
            return -EINVAL;
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}
