/* The catalogue of app=hostile (docs/hostile.md): per case the rule it
 * breaks (virtio 1.2) and what the spec lets a device do about it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"

#define NEEDS_RESET "set DEVICE_NEEDS_RESET (s2.1.2) or ignore the buffer"
#define ANY         "nothing forbids it: the device must keep working"
#define ANSWER_ERR  "answer VIRTIO_NET_ERR (s5.1.6.5), change nothing"
#define F(b)        VIRTIO_BIT(b)
#define CTRL        F(VIRTIO_NET_F_CTRL_VQ)
#define CTRL_RX     (CTRL | F(VIRTIO_NET_F_CTRL_RX))
#define NOT_AVAIL   "ignore it: the descriptor is not available (s2.8.15)"
#define PACKED      F(VIRTIO_F_RING_PACKED)

const struct hostile_case hostile_cases[] = {
    /* split ring (s2.7) */
    {"chain_loop", "s2.7.5.2 (no loops in a chain)", NEEDS_RESET, HK_RING, HV_CHAIN_LOOP,
     hostile_chain_loop, 0},
    {"chain_long", "s2.7.5.3.1 (no chain longer than the queue size)", NEEDS_RESET, HK_RING,
     HV_CHAIN_LONG, hostile_chain_long, 0},
    {"head_range", "s2.7.6 (ring entries name a descriptor of the table)", NEEDS_RESET, HK_RING,
     HV_HEAD_RANGE, hostile_head_range, 0},
    {"head_twice", "s2.7.13.2 (only free chains are made available)", NEEDS_RESET, HK_RING,
     HV_HEAD_TWICE, hostile_head_twice, 0},
    {"avail_ahead", "s2.7.6 (at most queue size entries available)", NEEDS_RESET, HK_RING,
     HV_AVAIL_AHEAD, hostile_avail_ahead, 0},
    {"avail_back", "s2.7.6.1 (the driver MUST NOT decrement avail idx)", NEEDS_RESET, HK_RING,
     HV_AVAIL_BACK, hostile_avail_back, 0},
    {"used_event_far", "s2.7.10 (used_event: any 16-bit value)", ANY, HK_RING, HV_EVENT_FAR,
     hostile_event_far, 0},
    {"avail_event_write", "s2.7.10 (avail_event is the device's to write)", ANY, HK_RING,
     HV_DEV_AREA, hostile_dev_area, 0},
    /* descriptors (s2.7.5) */
    {"addr_beyond_ram", "s2.7.5 (addr: guest memory)", NEEDS_RESET, HK_RING, HV_ADDR_RAM,
     hostile_addr_ram, 0},
    {"addr_mmio", "s2.7.5 (addr: guest memory, not a device's MMIO)", NEEDS_RESET, HK_RING,
     HV_ADDR_MMIO, hostile_addr_mmio, 0},
    {"addr_wrap", "s2.7.5 (a buffer inside the address space)", NEEDS_RESET, HK_RING, HV_ADDR_WRAP,
     hostile_addr_wrap, 0},
    {"len_zero", "s2.7.5 (an element of 0 bytes)", ANY, HK_RING, HV_LEN_ZERO, hostile_len_zero, 0},
    {"len_max", "s2.7.5.2 (len 2^32-1: past the buffer and guest memory)", NEEDS_RESET, HK_RING,
     HV_LEN_MAX, hostile_len_max, 0},
    {"write_on_tx", "s5.1.6.2 (transmit buffers are device-readable)", NEEDS_RESET, HK_RING,
     HV_WRITE_ON_TX, hostile_write_on_tx, 0},
    {"read_on_rx", "s5.1.6.3 (receive buffers are device-writable)", NEEDS_RESET, HK_RX,
     HV_READ_ON_RX, hostile_read_on_rx, 0},
    {"ind_next", "s2.7.5.3.1 (not both INDIRECT and NEXT)", NEEDS_RESET, HK_RING, HV_IND_NEXT,
     hostile_ind_next, 0},
    {"ind_nested", "s2.7.5.3.1 (no INDIRECT inside a table)", NEEDS_RESET, HK_RING, HV_IND_NESTED,
     hostile_ind_nested, 0},
    {"ind_len16", "s2.7.5.3 (a table of len/16 descriptors)", NEEDS_RESET, HK_RING, HV_IND_LEN16,
     hostile_ind_len16, 0},
    {"ind_len0", "s2.7.5.3 (a table of len/16 descriptors)", NEEDS_RESET, HK_RING, HV_IND_LEN0,
     hostile_ind_len0, 0},
    /* virtio-net header and frame (s5.1.6.2) */
    {"gso_hdrlen", "s5.1.6.2.1 (hdr_len: the headers' length)", "drop the frame", HK_RING,
     HV_HDR_GSO_HDRLEN, hostile_gso_hdrlen, 0},
    {"gso_size0", "s5.1.6.2.1 (gso_size: the MSS)", "drop the frame", HK_RING, HV_HDR_GSO_SIZE0,
     hostile_gso_size0, 0},
    {"csum_past", "s5.1.6.2.1 (csum_start, csum_offset inside the frame)", "drop the frame",
     HK_RING, HV_HDR_CSUM_PAST, hostile_csum_past, 0},
    {"num_buffers_tx", "s5.1.6.2.1 (num_buffers is 0 on transmit)", "ignore it", HK_RING,
     HV_HDR_NUMBUF_TX, hostile_numbuf_tx, 0},
    {"runt", "s5.1.6.2 (a frame of 10 bytes: no Ethernet header)", "drop the frame", HK_RING,
     HV_FRAME_RUNT, hostile_runt, 0},
    {"over_mtu", "s5.1.4.1 (no frame past the MTU without GSO)", "drop the frame", HK_RING,
     HV_FRAME_MTU, hostile_over_mtu, 0},
    {"gso_64k", "s5.1.6.2 (a GSO frame past 64 KiB)", "drop the frame", HK_RING, HV_FRAME_GSO_BIG,
     hostile_gso_64k, 0},
    /* notifications (s2.7.13.4, s4.2.3.3, s4.1.4.3) */
    {"notify_storm", "s2.7.13.4 (10^6 notifications in a second: allowed, a load)", ANY, HK_STORM,
     HV_NONE, hostile_valid, 0},
    {"notify_bad_queue", "s4.2.2 (QueueNotify: a queue the device has)", "ignore it", HK_BADQ,
     HV_NONE, hostile_valid, 0},
    {"notify_disabled_queue", "s4.1.4.3, s4.2.2 (notify only a queue the driver enabled)",
     "ignore it", HK_DISQ, HC_NOTIF_OFF, hostile_notify_disabled, 0},
    /* device setup (s3.1.1, s2.2, s2.4) */
    {"features_unoffered", "s2.2.1 (only offered features are accepted)",
     "clear FEATURES_OK (s3.1.1 step 6)", HK_SETUP, HV_NONE, hostile_features_unoffered, 0},
    {"features_after_ok", "s3.1.1 (features are set before FEATURES_OK)", "ignore the write",
     HK_SETUP, HV_NONE, hostile_features_after_ok, 0},
    {"reset_inflight", "s2.4 (a reset may come with buffers in flight)", ANY, HK_SETUP, HV_NONE,
     hostile_reset_inflight, 0},
    {"queue_size_bad", "s4.2.2.2 (QueueNum at most QueueNumMax)", "fail the queue (FAILED)",
     HK_SETUP, HV_NONE, hostile_queue_size, 0},
    /* control queue (s5.1.6.5) */
    {"ctrl_class_unknown", "s5.1.6.5 (class: one the device has)", ANSWER_ERR, HK_CTRL, HC_CLASS,
     hostile_ctrl_class, CTRL},
    {"ctrl_cmd_unknown", "s5.1.6.5.1 (command: one its class has)", ANSWER_ERR, HK_CTRL, HC_CMD,
     hostile_ctrl_cmd, CTRL_RX},
    {"ctrl_short", "s5.1.6.5.1 (PROMISC carries its one byte)", ANSWER_ERR, HK_CTRL, HC_SHORT,
     hostile_ctrl_short, CTRL_RX},
    {"ctrl_no_ack", "s5.1.6.5 (the ack: a device-writable byte after the data)", NEEDS_RESET,
     HK_CTRL, HC_NO_ACK, hostile_ctrl_no_ack, CTRL_RX},
    {"ctrl_ack_ro", "s2.7.4, s5.1.6.5 (the ack device-writable, not readable)",
     NEEDS_RESET "; never write the readable byte", HK_CTRL, HC_ACK_RO, hostile_ctrl_ack_ro,
     CTRL_RX},
    {"ctrl_mq_pairs0", "s5.1.6.5.5 (VQ_PAIRS_SET: 1..max_virtqueue_pairs)", ANSWER_ERR, HK_CTRL,
     HC_MQ_PAIRS, hostile_ctrl_pairs0, CTRL | F(VIRTIO_NET_F_MQ)},
    {"ctrl_mq_pairs_over", "s5.1.6.5.5 (VQ_PAIRS_SET: 1..max_virtqueue_pairs)", ANSWER_ERR, HK_CTRL,
     HC_MQ_PAIRS, hostile_ctrl_pairs_over, CTRL | F(VIRTIO_NET_F_MQ)},
    {"rss_queue_missing", "s5.1.6.5.7.1 (indirection_table: enabled receive queues)", ANSWER_ERR,
     HK_CTRL, HC_RSS_QUEUE, hostile_rss_queue, CTRL | F(VIRTIO_NET_F_RSS)},
    {"rss_table_len", "s5.1.6.5.7.1 (indirection_table_mask + 1: a power of two)", ANSWER_ERR,
     HK_CTRL, HC_RSS_LEN, hostile_rss_len, CTRL | F(VIRTIO_NET_F_RSS)},
    /* notification data (s2.9) */
    {"notif_data_ahead", "s2.9, s4.1.5.2 (next_idx: the next avail index)",
     "set DEVICE_NEEDS_RESET (s2.1.2) or ignore the buffer that is not there", HK_NOTIF,
     HC_NOTIF_AHEAD, hostile_notif_ahead, F(VIRTIO_F_NOTIFICATION_DATA)},
    {"notif_data_behind", "s2.9, s4.1.5.2 (next_idx: the next avail index)",
     "leave the buffer until a notification says it is there", HK_NOTIF, HC_NOTIF_BEHIND,
     hostile_notif_behind, F(VIRTIO_F_NOTIFICATION_DATA)},
    /* queue reset (s2.6.1) */
    {"qreset_active", "s2.6.1, s4.1.4.3.2 (a queue reset with frames in flight: allowed)",
     "forget the buffers, then work on the re-enabled queue", HK_SETUP, HV_NONE,
     hostile_qreset_active, F(VIRTIO_F_RING_RESET)},
    {"qreset_size_bad", "s2.6.1.2, s4.1.4.3.2 (a re-enabled queue's size at most the maximum)",
     "fail the queue (FAILED)", HK_SETUP, HV_NONE, hostile_qreset_size, F(VIRTIO_F_RING_RESET)},
    /* packed ring (s2.8): run only where VIRTIO_F_RING_PACKED was negotiated */
    {"packed_wrap_wrong", "s2.8.1 (AVAIL is the driver's wrap counter, USED its inverse)",
     NOT_AVAIL, HK_PACKED, HV_P_WRAP, hostile_p_wrap, PACKED},
    {"packed_flags_used", "s2.8.1 (AVAIL and USED differ in an available descriptor)", NOT_AVAIL,
     HK_PACKED, HV_P_FLAGS_USED, hostile_p_flags_used, PACKED},
    {"packed_chain_wrap", "s2.8.6 (every descriptor of a list made available)", NEEDS_RESET,
     HK_PACKED, HV_P_CHAIN_WRAP, hostile_p_chain_wrap, PACKED},
    {"packed_id_twice", "s2.8.21.1 (each buffer gets a free buffer id)", NEEDS_RESET, HK_PACKED,
     HV_P_ID_TWICE, hostile_p_id_twice, PACKED},
    {"packed_chain_loop", "s2.8.17 (no list longer than the queue size)", NEEDS_RESET, HK_PACKED,
     HV_CHAIN_LOOP, hostile_p_chain_loop, PACKED},
    {"packed_ind_next", "s2.8.19 (no INDIRECT in a list linked by NEXT)", NEEDS_RESET, HK_PACKED,
     HV_IND_NEXT, hostile_p_ind_next, PACKED},
    {"packed_ind_chain", "s2.8.19 (no INDIRECT after a direct descriptor)", NEEDS_RESET, HK_PACKED,
     HV_P_IND_CHAIN, hostile_p_ind_chain, PACKED},
    {"packed_ind_nested", "s2.8.19 (only WRITE in a table: no INDIRECT)", NEEDS_RESET, HK_PACKED,
     HV_IND_NESTED, hostile_p_ind_nested, PACKED},
    {"packed_ind_flags", "s2.8.19 (only WRITE in a table: no NEXT)",
     "ignore the flag (s2.8.7: reserved)", HK_PACKED, HV_P_TAB_FLAGS, hostile_p_ind_flags, PACKED},
    {"packed_ind_len16", "s2.8.7 (a table of len/16 descriptors)", NEEDS_RESET, HK_PACKED,
     HV_IND_LEN16, hostile_p_ind_len16, PACKED},
    {"packed_ind_len0", "s2.8.7 (a table of len/16 descriptors)", NEEDS_RESET, HK_PACKED,
     HV_IND_LEN0, hostile_p_ind_len0, PACKED},
    {"packed_event_flags", "s2.8.10 (event flags 0x3 are reserved)", ANY, HK_PACKED,
     HV_P_EVENT_FLAGS, hostile_p_event_flags, PACKED},
    {"packed_event_off", "s2.8.10 (a descriptor event inside the ring)", ANY, HK_PACKED,
     HV_P_EVENT_OFF, hostile_p_event_off, PACKED},
    {"packed_dev_event", "s2.8.10 (the device event suppression structure is the device's)", ANY,
     HK_PACKED, HV_DEV_AREA, hostile_p_dev_event, PACKED},
};

const unsigned hostile_ncases = sizeof(hostile_cases) / sizeof(hostile_cases[0]);

bool hostile_offered(const struct hostile_case *c, uint64_t features)
{
    return (features & c->needs) == c->needs;
}

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
