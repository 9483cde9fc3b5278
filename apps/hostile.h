/* app=hostile: a guest that breaks one virtio rule per case, so that a
 * backend's handling of it can be watched (docs/hostile.md). Each case
 * names the rule (a virtio 1.2 section), what the spec lets a device do
 * about it, and the one violation its layout holds: the host unit tests
 * build every layout against the simulated device, whose checker must
 * find exactly that one (tests/unit/test_hostile.c). */
#ifndef VN_HOSTILE_H
#define VN_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/virtq_raw.h"

/* What a layout breaks, as the simulated device's checker names it. */
enum hostile_viol {
    HV_NONE = 0, /* the layout is valid: the case's violation is in what the app does */
    HV_CHAIN_LOOP,
    HV_CHAIN_LONG,
    HV_HEAD_RANGE,
    HV_HEAD_TWICE,
    HV_AVAIL_AHEAD,
    HV_AVAIL_BACK,
    HV_EVENT_FAR,
    HV_DEV_AREA,
    HV_ADDR_RAM,
    HV_ADDR_MMIO,
    HV_ADDR_WRAP,
    HV_LEN_ZERO,
    HV_LEN_MAX,
    HV_WRITE_ON_TX,
    HV_READ_ON_RX,
    HV_IND_NEXT,
    HV_IND_NESTED,
    HV_IND_LEN16,
    HV_IND_LEN0,
    HV_HDR_GSO_HDRLEN,
    HV_HDR_GSO_SIZE0,
    HV_HDR_CSUM_PAST,
    HV_HDR_NUMBUF_TX,
    HV_FRAME_RUNT,
    HV_FRAME_MTU,
    HV_FRAME_GSO_BIG,
    /* the packed ring (s2.8) */
    HV_P_WRAP,        /* a descriptor with the other lap's AVAIL/USED bits (s2.8.1) */
    HV_P_FLAGS_USED,  /* the driver wrote AVAIL == USED: a used descriptor (s2.8.1) */
    HV_P_CHAIN_WRAP,  /* a chain whose later element is not available (s2.8.6) */
    HV_P_ID_TWICE,    /* one buffer id in two buffers at once (s2.8.21.1) */
    HV_P_IND_CHAIN,   /* an indirect descriptor inside a NEXT list (s2.8.19) */
    HV_P_TAB_FLAGS,   /* a flag other than WRITE inside a packed table (s2.8.19) */
    HV_P_EVENT_FLAGS, /* the driver's event flags the reserved 0x3 (s2.8.10) */
    HV_P_EVENT_OFF,   /* the driver's event offset past the ring (s2.8.10) */
    HV_COUNT
};
_Static_assert(HV_COUNT <= 64, "a checker reports a set as a 64-bit mask");

/* What a control command (HK_CTRL, virtio 1.2 s5.1.6.5) or a notification
 * (HK_NOTIF, s2.9; HK_DISQ, s4.1.4.3) breaks, as the simulated device's
 * checkers name it: the viol of those kinds. */
enum hostile_cviol {
    HC_NONE = 0,
    HC_CLASS,        /* a class the device does not have */
    HC_CMD,          /* a command its class does not have */
    HC_SHORT,        /* less command-specific data than the command has */
    HC_NO_ACK,       /* no device-writable element for the ack */
    HC_ACK_RO,       /* the ack's byte device-readable */
    HC_MQ_PAIRS,     /* VQ_PAIRS_SET outside 1..max_virtqueue_pairs */
    HC_RSS_QUEUE,    /* an indirection table entry naming no receive queue */
    HC_RSS_LEN,      /* an indirection table length not a power of two */
    HC_NOTIF_AHEAD,  /* notification data past avail->idx */
    HC_NOTIF_BEHIND, /* notification data before avail->idx */
    HC_NOTIF_OFF,    /* a notification for a queue the driver did not enable */
    HC_COUNT
};
_Static_assert(HC_COUNT <= 32, "a checker reports a set as a 32-bit mask");

/* Addresses no buffer may have: above any guest RAM here (256 GiB), the
 * local APIC's MMIO page, and one whose buffer wraps past 2^64. */
#define HOSTILE_ADDR_FAR  0x4000000000ull
#define HOSTILE_ADDR_MMIO 0xfee00000ull
#define HOSTILE_ADDR_WRAP 0xfffffffffffff000ull

#define HOSTILE_HDR      12u    /* virtio-net header, VERSION_1 (s5.1.6) */
#define HOSTILE_FRAME    64u    /* the valid frame every layout starts from */
#define HOSTILE_BUF      72000u /* header and the largest frame a case sends */
#define HOSTILE_BIG_MTU  9000u  /* over_mtu: a jumbo frame without GSO */
#define HOSTILE_BIG_GSO  70000u /* gso_64k: past the 64 KiB a GSO frame may have */
#define HOSTILE_TAB_ENTS 2048u  /* indirect table room: a chain past the queue size */

/* Where a case writes. buf holds the virtio-net header (zero) at 0 and a
 * valid HOSTILE_FRAME-byte frame at HOSTILE_HDR; tab is scratch for
 * indirect tables. Both are device-readable memory (identity mapped). */
struct hostile_env {
    struct virtq *vq; /* the transmitq, or the receiveq for an RX case */
    struct virtio_dev *vdev;
    uint64_t features; /* negotiated */
    unsigned txq;      /* the transmitq's index */
    uint8_t *buf;
    union { /* the same memory, as a split or a packed indirect table */
        struct virtq_raw_desc *tab;
        struct virtq_raw_pdesc *ptab;
    };
    uint16_t bufs;      /* out: buffers made available (frames that may reach the wire) */
    uint16_t used0;     /* the used index the watch counts from; a case that resets
                         * the queue sets it to the new ring's */
    uint16_t pmarked;   /* out, packed: descriptors the case itself wrote as used */
    uint16_t max_pairs; /* max_virtqueue_pairs under MQ, else 1 (s5.1.4) */
    uint32_t rss_types; /* the hash types the device supports, under RSS (s5.1.4) */
    uint16_t pairs;     /* queue pairs the driver enabled: queues 0 .. 2 * pairs - 1 */
    bool ctrl;          /* and the control queue, 2 * max_pairs (s5.1.2) */
    int disq;           /* HK_DISQ: the queue it notifies, or -ENOENT (hostile_disabled_queue) */
};

/* HK_CTRL: the command (class, command, data) at buf + HOSTILE_CTRL_CMD,
 * its ack byte at buf + HOSTILE_CTRL_ACK, HOSTILE_ACK_NONE until the
 * device writes it (a control case sends no frame). */
#define HOSTILE_CTRL_CMD 1024u
#define HOSTILE_CTRL_ACK 2048u
#define HOSTILE_ACK_NONE 0xffu

enum hostile_kind {
    HK_RING,   /* a layout, one kick */
    HK_STORM,  /* a valid buffer, then HOSTILE_STORM kicks in a second */
    HK_BADQ,   /* a valid buffer, kicked as a queue that does not exist */
    HK_SETUP,  /* device setup: setup() does it all */
    HK_RX,     /* a layout on the receiveq, waiting for a frame to come */
    HK_CTRL,   /* a command on the control queue, one kick; its ack read after the watch */
    HK_NOTIF,  /* a valid buffer, kicked by the builder with notification data that lies */
    HK_PACKED, /* a layout on a packed transmitq, one kick (its needs: RING_PACKED) */
    HK_DISQ,   /* a notification for a queue the device has and the driver left disabled,
                * then a valid buffer, one kick (run only where there is such a queue) */
};
#define HOSTILE_STORM     1000000u
#define HOSTILE_BADQ      0x7fffu
#define HOSTILE_STORM_MAX 2000000u /* kicks at most, whatever the clock says */

struct hostile_case {
    const char *name;
    const char *spec;   /* the rule broken */
    const char *allows; /* what the spec lets the device do */
    uint8_t kind;       /* enum hostile_kind */
    uint8_t viol;       /* enum hostile_viol, or hostile_cviol for HK_CTRL and HK_NOTIF */
    int (*build)(struct hostile_env *e);
    uint64_t needs; /* feature bits the case needs negotiated; without them it is not run */
};

extern const struct hostile_case hostile_cases[];
extern const unsigned hostile_ncases;

/* The case of that name, NULL if none. */
const struct hostile_case *hostile_find(const char *name, unsigned len);

/* Whether the case can run with these negotiated features (its needs). */
bool hostile_offered(const struct hostile_case *c, uint64_t features);

/* case=: names separated by commas, or "all". 0, or -EINVAL with the
 * first unknown name in why. */
int hostile_check(const char *list, char *why, unsigned whylen);

/* Layout helpers (hostile_ring.c): descriptor i, the heads made
 * available and published (counted in e->bufs), a clean TX buffer of
 * header and frame at descriptors at, at+1. 0 or -EINVAL. */
int hostile_desc(struct hostile_env *e, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
                 uint16_t next);
int hostile_publish(struct hostile_env *e, const uint16_t *heads, uint16_t n);
int hostile_tx_pair(struct hostile_env *e, uint16_t at, uint32_t frame_len);
int hostile_valid(struct hostile_env *e);

/* hostile_queue.c: the first queue from 2 * pairs on that the device has
 * (a size when selected) and the driver did not enable, or -ENOENT;
 * virtio-net numbers its queues without gaps (s5.1.2), so the first index
 * without a size ends the search. */
int hostile_disabled_queue(const struct hostile_env *e);

/* The packed ring's (hostile_packed.c): the index the next buffer goes
 * at, and a clean TX buffer of header and frame there, id its position. */
uint16_t hostile_pnext(const struct hostile_env *e);
int hostile_pvalid(struct hostile_env *e);

#endif
