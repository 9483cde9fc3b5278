/* virtio-net driver internals, shared by the device code (vnet_dev.c,
 * vnet_rx.c, vnet_tx.c, vnet_stats.c) and the host unit tests. Nothing
 * here touches a transport directly: struct virtio_dev's ops do. */
#ifndef VN_VNET_PRIV_H
#define VN_VNET_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/dma_pool.h"
#include "drivers/virtio/virtio.h"
#include "drivers/virtio/virtq.h"
#include "drivers/virtio/vnet.h"
#include "drivers/virtio/vnet_hash.h"
#include "drivers/virtio/vnet_hdr.h"
#include "kernel/io.h"

/* Virtqueue indices, virtio 1.2 s5.1.2: receiveq(i) is 2i, transmitq(i)
 * 2i+1; the control queue follows the last pair the device has. */
#define VNET_RXQ(i) (2u * (i))
#define VNET_TXQ(i) (2u * (i) + 1u)

#define VNET_RING_DEFAULT_MAX 1024        /* ring=0: the device's size, at most this */
#define VNET_MTU_MIN          68          /* virtio 1.2 s5.1.4.1 */
#define VNET_MTU_MAX          9000        /* larger offers are not negotiated */
#define VNET_SPEED_MAX        0x7fffffffu /* virtio 1.2 s5.1.4: speed in Mbit/s */
#define VNET_SPEED_UNKNOWN    0xffffffffu
#define VNET_DUPLEX_HALF      0x00
#define VNET_DUPLEX_FULL      0x01
#define VNET_DUPLEX_UNKNOWN   0xff
#define VNET_ETH_HLEN         14
#define VNET_FRAME_EXTRA      18         /* Ethernet header + one VLAN tag */
#define VNET_SVLAN_HLEN       4          /* qinq: the 802.1ad tag outside it */
#define VNET_RX_IDLE_CHECK    (1u << 20) /* empty RX polls between status reads */
#define VNET_RX_STALL_POLLS   (1u << 14) /* empty RX polls before a forced kick */
#define VNET_TX_STALL_US      50000      /* TX buffers out, none used: forced kick */

_Static_assert(VNET_RING_DEFAULT_MAX <= VIRTQ_MAX, "ring=0's cap is a queue size");
_Static_assert(VNET_MAX_PAIRS >= 1 && VNET_MAX_PAIRS <= 0x8000,
               "queue pairs: 1..max_virtqueue_pairs' limit (virtio 1.2 s5.1.4)");
_Static_assert((VNET_RX_IDLE_CHECK & (VNET_RX_IDLE_CHECK - 1)) == 0,
               "VNET_RX_IDLE_CHECK is used as a mask");

/* Who owns an RX slot right now (HELD: the driver, while the rest of
 * its frame is still to come). */
enum { VNET_RX_DEVICE = 0, VNET_RX_APP = 1, VNET_RX_PENDING = 2, VNET_RX_HELD = 3 };

/* With GUEST_TSO, RX slots are this large: a 64 KiB frame takes 5. */
#define VNET_RX_TSO_SLOT 16384u
_Static_assert((VNET_GSO_FRAME_MAX + VNET_HDR_HASH + VNET_RX_TSO_SLOT - VNET_HDR_ROOM - 1) /
                       (VNET_RX_TSO_SLOT - VNET_HDR_ROOM) <=
                   VNET_RX_MAX_BUFS,
               "the largest frame fits VNET_RX_MAX_BUFS slots");

struct vnet_rx_piece {
    uint32_t slot, len;
};

struct vnet_txq_stats {
    uint64_t packets, bytes, bursts;
    uint64_t reclaim_calls, reclaimed;
    uint64_t ring_full, full_wait_cycles, wait_timeouts, dropped;
    uint64_t csum, gso_frames, gso_bytes, chains;
    uint64_t offload_refused; /* frames whose offload request could not be met: dropped */
};

/* Used-buffer notifications of one queue (vnet_notify.c). */
struct vnet_qnote {
    uint8_t want; /* enum vnet_notify, as asked */
    uint8_t mode; /* what runs: poll when the device gave no interrupt path */
    uint8_t cpu;  /* the CPU that polls the queue (vnet_queue_cpu), 0 until then */
    int vector;   /* -1: none */
    /* the vector's count when this bring-up took it: a reset starts the
     * queue's interrupts anew with its halts (vnet_dev_renegotiate keeps
     * the vector, whose count runs since boot) */
    uint64_t irq_base;
    uint64_t halts; /* halts this queue was armed for */
    uint64_t halt_cycles;
    uint64_t spurious;      /* wakes by its interrupt with nothing new on it */
    uint64_t used_while_on; /* buffers taken while notifications were on */
};

struct vnet_rxq_stats {
    uint64_t packets, bytes, polls;
    uint64_t refills, refilled;
    uint64_t len_errors, merged;
    uint64_t bad_release;   /* vnet_rx_release of a handle not held by the app */
    uint64_t reset_dropped; /* buffers filled but not taken when the queue reset */
    uint64_t csum_ok, gso_frames, gso_bytes;
    uint64_t bad_hdr[VNET_HDR_NBAD]; /* frames dropped for their header, by reason */
    /* HASH_REPORT: each frame's report against the hash we compute
     * (vnet_hash.h), by verdict; the frame is kept either way */
    uint64_t hash[VNET_HASH_NVERDICT];
};

/* One TX queue (Linux's send_queue, FreeBSD's vtnet_txq): its ring,
 * its buffers and its counters, touched only by the vCPU that owns it. */
struct vnet_txq {
    struct virtq *vq;
    uint16_t size;
    uint16_t reserved;              /* from the last vnet_tx_reserve */
    struct virtq_used_buf *used;    /* size entries */
    uint64_t progress;              /* TSC of the last TX completion */
    struct vnet_txslots slots;      /* once the queue is bound */
    uint8_t *hdr0;                  /* slot 0's virtio-net header */
    struct virtio_net_hdr slot_hdr; /* vnet_txslots_offload_q's, written per frame sent */
    bool slot_off;                  /* slot_hdr is set (else every slot header is zero) */
    struct virtq_buf *bufs;         /* size entries: frames by reference */
    uint16_t *lens;                 /* size entries: frames copied into slots */
    struct vnet_txchain *chains;    /* VNET_TX_CHAINS entries: frames with fragments */
    struct vnet_txq_stats st;
    struct vnet_qnote note;
};

/* One RX queue (Linux's receive_queue, FreeBSD's vtnet_rxq). */
struct vnet_rxq {
    struct virtq *vq;
    uint16_t size;
    uint16_t npending;
    uint8_t *mem; /* size slots of stride bytes */
    uint32_t stride;
    uint32_t *pending;           /* released slots waiting for the next refill */
    uint8_t *owner;              /* per slot, VNET_RX_* */
    struct virtq_used_buf *used; /* size entries */
    uint16_t mrg_left;           /* buffers still to come for the frame being taken */
    uint16_t mrg_n;              /* its buffers so far */
    uint32_t mrg_len;            /* its bytes so far, without the header */
    bool mrg_drop;
    struct virtio_net_hdr_hash mrg_hdr; /* its header (hdr_len bytes), copied once */
    struct vnet_rx_piece mrg_piece[VNET_RX_MAX_BUFS];
    uint32_t idle_polls;      /* empty RX polls in a row */
    uint64_t suppressed_seen; /* kicks_suppressed when a frame last came */
    struct vnet_rxq_stats st;
    struct vnet_qnote note;
    uint32_t buf_tag; /* the pair in the handles vnet_rx_burst gives out (0 on pair 0) */
};

/* A handle is the slot with its pair above VNET_RX_PAIR_SHIFT, so one
 * vnet_rx_release serves every pair (slots are below 0x8000, s2.7). */
#define VNET_RX_PAIR_SHIFT 16

struct vnet_ctrl; /* vnet_ctrl.h */
struct vnet_rss;  /* vnet_rss.h */

struct vnet_dev {
    /* what every queue reads */
    uint16_t hdr_len;
    uint16_t kick_batch;
    uint8_t txfull;
    bool mrg;
    bool rx_chains; /* frames of several buffers go out as such (GUEST_TSO) */
    vnet_tx_done_fn tx_done;
    void *tx_ctx;
    uint64_t tx_stall_cycles;
    uint32_t rx_post_len; /* header + largest frame */
    uint32_t max_frame;
    uint16_t rx_refill;
    uint16_t rx_coalesce; /* >= 1: frames per halt's interrupt */
    uint16_t npairs;      /* queue pairs in use (MQ: VQ_PAIRS_SET); 1 without MQ */
    uint16_t max_pairs;   /* the device's max_virtqueue_pairs; 1 without MQ */
    uint16_t rx_next;     /* the pair vnet_rx_burst polls first (round-robin) */

    /* queue pair i: rxq[i] is virtqueue 2i, txq[i] 2i+1 (virtio 1.2 s5.1.2) */
    struct vnet_txq txq[VNET_MAX_PAIRS];
    struct vnet_rxq rxq[VNET_MAX_PAIRS];

    /* cold */
    struct vnet_ctrl *ctrl; /* NULL without CTRL_VQ */
    struct vnet_rss *rss;   /* what RSS_CONFIG set; NULL without RSS in use */
    uint16_t rss_max_table; /* rss_max_indirection_table_length, validated */
    uint32_t rss_types;     /* supported_hash_types */
    uint32_t hash_types;    /* HASH_REPORT: the types configured; 0 until the device has them */
    struct virtio_dev *vdev;
    struct vnet_params params; /* as asked for */
    uint64_t offered, features;
    uint8_t mac[6];
    uint64_t announces; /* GUEST_ANNOUNCE requests acknowledged (vnet_announce_poll) */
    uint32_t mtu;
    uint32_t speed;         /* Mbit/s (SPEED_DUPLEX), validated; VNET_SPEED_UNKNOWN otherwise */
    uint8_t duplex;         /* VNET_DUPLEX_*, validated */
    uint8_t dev_status;     /* last read, for reports */
    uint32_t config_bad;    /* config fields outside the spec's range (s5.1.4.1), not taken */
    const char *fail_queue; /* "rx", "tx", "ctrl" or "device" once broken */
    unsigned generation;    /* bring-ups since vnet_dev_init: vnet_dev_renegotiate's */
    struct dma_pool pool;   /* every queue's memory, reused by the next bring-up */
};

/* Queue pair q's halves; q < d->npairs (queue 0 is the single-queue
 * path every caller without a queue argument uses). */
static inline struct vnet_txq *vnet_txq(struct vnet_dev *d, unsigned q)
{
    return &d->txq[q];
}
static inline struct vnet_rxq *vnet_rxq(struct vnet_dev *d, unsigned q)
{
    return &d->rxq[q];
}

/* Brings one device from reset to DRIVER_OK (virtio 1.2 s3.1.1) with
 * both queues live and the RX ring full. Returns 0 or -errno (after
 * printing why). */
int vnet_dev_init(struct vnet_dev *d, struct virtio_dev *vdev, const struct vnet_params *p);

/* Creates virtqueue q of num entries, on its vector when note asks for
 * one (NULL: polled), and makes it live. 0 or -errno (said why). */
int vnet_virtq_init(struct vnet_dev *d, unsigned q, uint16_t num, struct vnet_qnote *note,
                    struct virtq **out);

/* Multiqueue (vnet_mq.c). offer: before FEATURES_OK, want less MQ and
 * RSS where the device's config says they cannot be used (CTRL_VQ
 * missing, max_virtqueue_pairs outside 1..0x8000, RSS limits too small);
 * pairs: after it, max_pairs and npairs (queues=), -ERANGE when more are
 * asked for than the device has; start: after DRIVER_OK, VQ_PAIRS_SET
 * and RSS_CONFIG when more than one pair is used. */
uint64_t vnet_mq_offer(struct vnet_dev *d, uint64_t want);
int vnet_mq_pairs(struct vnet_dev *d);
int vnet_mq_start(struct vnet_dev *d);
/* VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET (s5.1.6.5.5): n outside
 * 1..max_pairs is -EINVAL, not sent. */
int vnet_mq_set_pairs(struct vnet_dev *d, uint16_t n);
/* HASH_REPORT without RSS in use: VIRTIO_NET_CTRL_MQ_HASH_CONFIG
 * (s5.1.6.5.6.4) with our types and key, so every frame is hashed. */
int vnet_mq_hash_set(struct vnet_dev *d);

/* Per queue pair: the paths the single-queue API takes on pair 0. */
int vnet_txq_burst(struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_tx *tx, int n);
int vnet_txq_reclaim(struct vnet_dev *d, struct vnet_txq *tq);
/* Reclaims until no frame is in flight: 0, -EBUSY after ms, or the
 * reclaim's error. */
int vnet_txq_drain(struct vnet_dev *d, struct vnet_txq *tq, unsigned ms);
int vnet_rxq_burst(struct vnet_dev *d, struct vnet_rxq *rq, struct vnet_rx *rx, int max);
void vnet_rxq_release(struct vnet_dev *d, struct vnet_rxq *rq, uint32_t buf);

/* Reads the device status; DEVICE_NEEDS_RESET (virtio 1.2 s2.1.2) breaks
 * the device. Returns -EIO then, else 0. */
int vnet_check_status(struct vnet_dev *d);

/* Adds the released RX slots to the ring; the device sees them at the
 * next virtq_kick (refill's, or the first one after DRIVER_OK, virtio 1.2
 * s3.1.1), which publishes and decides in one step. */
void vnet_rx_post(struct vnet_dev *d, struct vnet_rxq *rq);
void vnet_rx_refill(struct vnet_dev *d, struct vnet_rxq *rq);

/* Where the device is told where RX slot i starts writing. */
static inline uint8_t *vnet_rx_slot(const struct vnet_rxq *rq, uint32_t slot)
{
    return rq->mem + (uintptr_t)slot * rq->stride;
}

/* The TX pipeline (vnet_tx.c) that vnet_txslots.c and vnet_txburst.c
 * fill: how many of n frames may go now under the full-ring rule (on a
 * bound queue: slots in ring order from virtq_next_slot), 0 when none
 * (txfull=drop, or a wait that timed out), -EIO; then the reserved frames
 * made available with their counts (-EINVAL past the reservation). */
int vnet_tx_reserve(struct vnet_dev *d, struct vnet_txq *tq, int n);
int vnet_tx_commit(struct vnet_dev *d, struct vnet_txq *tq, const uint16_t *len,
                   const struct virtq_buf *buf, int n, uint64_t bytes, int dropped);

/* A frame of several pieces as one descriptor chain (frames by reference
 * with fragments): the reservation counts its descriptors. */
struct vnet_txchain {
    struct virtq_seg seg[1 + VNET_TX_MAX_FRAGS];
    uint16_t nseg;
    uintptr_t token;
};
#define VNET_TX_CHAINS 16 /* chained frames per commit */

/* What a commit adds: one of slot lengths, single buffers, chains. */
struct vnet_txfill {
    const uint16_t *len;
    const struct virtq_buf *buf;
    const struct vnet_txchain *chain;
};

/* vnet_tx_commit for any fill: n frames of descs descriptors in all. */
int vnet_tx_commit_fill(struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_txfill *f, int n,
                        int descs, uint64_t bytes, int dropped);
/* Notification modes (vnet_notify.c). setup: after FEATURES_OK, readies
 * the device's interrupt path when a queue wants one (or falls back to
 * polling with a line saying why); queue: before queue q's setup, its
 * vector; start: after DRIVER_OK, notifications on for notify=irq. */
void vnet_notify_setup(struct vnet_dev *d);
void vnet_notify_queue(struct vnet_dev *d, unsigned q, struct vnet_qnote *n);
void vnet_notify_start(struct vnet_dev *d);

/* got buffers were just taken from vq: counted when they came with
 * notifications on (irq: always; hybrid: around a halt). */
static inline void vnet_notify_used(const struct virtq *vq, struct vnet_qnote *n, int got)
{
    if (got > 0 && n->mode != VNET_NOTIFY_POLL && virtq_cb_enabled(vq))
        n->used_while_on += (uint64_t)got;
}

/* txfull=wait: halts until the TX queue's interrupt or the TSC passes
 * until. false when the queue is polled (the caller spins instead). */
bool vnet_tx_halt(struct vnet_txq *tq, uint64_t until);

/* The CPU that took every interrupt of the queue's vector (-1: none
 * came or it has none, -2: several CPUs did). */
int vnet_note_irq_cpu(const struct vnet_qnote *n);
/* The queue's interrupts since its bring-up (0 without a vector). */
uint64_t vnet_note_irqs(const struct vnet_qnote *n);

/* The counters as members of the queue's open JSON object. */
struct json;
void vnet_notify_json(struct json *j, const struct vnet_dev *d, const struct vnet_qnote *n,
                      uint64_t packets);

/* Spinning on the device: host tests step the simulated device here. */
#ifdef VN_HOST_TEST
void sim_relax(void);
#define vnet_relax() sim_relax()
#else
/* A short wait that stays in guest code. Not pause: under TCG each pause
 * leaves the translated code and takes QEMU's global lock, the lock the
 * device thread holds while it works on our rings; measured, the TX wait
 * loop then slows the device it waits for. */
#define VNET_RELAX_CYCLES 1024
static inline void vnet_relax(void)
{
    uint64_t until = rdtsc() + VNET_RELAX_CYCLES;
    while ((int64_t)(rdtsc() - until) < 0)
        barrier_compiler();
}
#endif

/* Feature names (vnet_features.c) */
const char *vnet_feature_name(unsigned bit); /* NULL for bits we do not know */
void vnet_features_print(const char *what, uint64_t f);
/* The features that give the offloads a caller handles (VNET_OFF_*). */
uint64_t vnet_offload_features(uint8_t offloads);
/* f less the offload features whose dependencies are missing (says why
 * on the console when it matters). */
uint64_t vnet_offload_deps(const char *dev, uint64_t f);

#endif
