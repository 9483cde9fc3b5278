/* Virtqueue, driver side: one interface over the split ring (virtio 1.2
 * s2.7, virtq_split.c) and the packed ring (s2.8, virtq_packed.c).
 *
 * The layout is private to virtq_*.c: device code (vnet_*.c) and the
 * transports use only the operations below. Work is handed over in
 * batches (add n buffers, add n bound slots, take up to n used buffers)
 * so that a call, not inlined, costs per batch rather than per frame.
 *
 * Buffers are made visible to the device at the end of each add call
 * (one avail.idx store on the split ring, one head-descriptor flags
 * store on the packed ring); virtq_kick then decides whether the device
 * wants a notification and sends it.
 *
 * All bookkeeping (free lists, tokens, posted lengths, in-flight marks) is
 * in driver-private memory: nothing the device writes is trusted before it
 * is validated, and nothing the driver wrote into shared memory is read
 * back. A device that breaks a rule breaks the queue: every later call
 * answers -EIO, and virtq_violation says what it did. */
#ifndef VN_VIRTQ_H
#define VN_VIRTQ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dma_pool;

#define VIRTQ_ALIGN 4096u /* split ring: used ring alignment of the legacy layout, s2.7.2 */
#define VIRTQ_MAX   32768u

/* virtq_create flags */
#define VIRTQ_F_PACKED     1u  /* VIRTIO_F_RING_PACKED negotiated */
#define VIRTQ_F_EVENT_IDX  2u  /* VIRTIO_F_EVENT_IDX negotiated */
#define VIRTQ_F_IN_ORDER   4u  /* VIRTIO_F_IN_ORDER negotiated */
#define VIRTQ_F_INDIRECT   8u  /* VIRTIO_F_INDIRECT_DESC negotiated: chains go indirect */
#define VIRTQ_F_NOTIF_DATA 16u /* VIRTIO_F_NOTIFICATION_DATA: kicks carry the next index */

/* Elements an indirect table holds: a TX frame's header piece and 16
 * fragments (VNET_TX_MAX_FRAGS). A longer chain goes out direct. */
#define VIRTQ_INDIRECT_MAX 17u

struct virtq;

/* One single-descriptor buffer for virtq_add_bufs. */
struct virtq_buf {
    uint64_t addr; /* device address */
    uint32_t len;
    uintptr_t token; /* the caller's: a TX cookie, an RX slot */
};

/* One element of a chain for virtq_add_chain. */
struct virtq_seg {
    uint64_t addr;
    uint32_t len;
};

/* A buffer the device is done with. */
struct virtq_used_buf {
    uintptr_t token;
    uint32_t len; /* bytes the device wrote (0 for device-readable buffers) */
};

/* The kinds of device violation a queue counts (vnperf conform's
 * checks, docs/conform.md), each with the spec rule it breaks. */
enum virtq_bad {
    VIRTQ_BAD_UNAVAIL,  /* a used entry for a buffer not made available (s2.7.8, s2.8.22) */
    VIRTQ_BAD_USED_LEN, /* a used length past what was offered (s2.7.8.2, s2.8.4, s5.1.6.4) */
    VIRTQ_BAD_IN_ORDER, /* IN_ORDER: a batch used.idx does not cover (s2.7.9, s2.8.8) */
    VIRTQ_BAD_DEVICE,   /* status FAILED/NEEDS_RESET, a config value out of range (s2.1, s4.1.4) */
    VIRTQ_BAD_N
};

/* What the device did wrong, with the values it used. */
struct virtq_violation {
    const char *what;
    uint32_t id;
    uint32_t len;
    uint32_t limit;
    uint16_t dev_used_idx; /* split: used.idx as read; packed: the descriptor's flags */
    uint16_t used_idx;     /* where the driver was */
};

struct virtq_stats {
    uint64_t kicks;
    uint64_t kick_cycles;  /* TSC cycles spent ringing the doorbell */
    uint64_t forced_kicks; /* sent by a stall watchdog, against suppression */
    uint64_t kicks_suppressed;
    uint64_t len_mismatch;     /* device-readable buffers the device claims to have written */
    uint64_t indirect;         /* chains made available through an indirect table */
    uint32_t bad[VIRTQ_BAD_N]; /* violations by kind, counted on the error branch only */
    uint64_t resets;           /* virtq_reset calls */
};

/* How a queue is kicked, filled in by the transport (queue_notifier).
 * ring gets the value to write: the queue's index, or with data the
 * 32-bit notification of virtio 1.2 s2.9 (index, then the next avail
 * index; packed: its ring offset in 15 bits and its wrap counter). */
struct virtq_doorbell {
    void (*ring)(const struct virtq_doorbell *db, uint32_t val);
    uintptr_t addr; /* port or mapped address */
    void *ctx;
    uint16_t index; /* the queue's index */
    bool data;      /* set by virtq_set_doorbell: VIRTQ_F_NOTIF_DATA, val is 32 bits */
};

/* --- setup --- */

/* A queue of num entries (a power of two up to VIRTQ_MAX) with its ring
 * memory, zeroed and aligned for every transport: the split ring in the
 * legacy contiguous layout (s2.7.2). flags: VIRTQ_F_*. Used-buffer
 * notifications start disabled (polling). 0 or -EINVAL. */
int virtq_create(struct virtq **out, uint16_t index, uint16_t num, unsigned flags);
/* The same with its memory from pool (dma_pool.h): a device that is reset
 * and brought up again reuses it. */
int virtq_create_in(struct dma_pool *pool, struct virtq **out, uint16_t index, uint16_t num,
                    unsigned flags);

/* The three areas the transport tells the device about (s2.6): the
 * descriptor table or ring, the driver area (avail ring, or the driver
 * event suppression structure) and the device area (used ring, or the
 * device event suppression structure). */
uint64_t virtq_desc_addr(const struct virtq *vq);
uint64_t virtq_driver_addr(const struct virtq *vq);
uint64_t virtq_device_addr(const struct virtq *vq);

void virtq_set_doorbell(struct virtq *vq, const struct virtq_doorbell *db);

/* VIRTIO_F_RING_RESET (virtio 1.2 s2.6.1): after the transport reset the
 * queue, back to its state at virtq_create (indices 0, every descriptor
 * free, notifications off, a bound queue still bound) at the same
 * addresses, for the transport to re-enable. Buffers in flight are
 * forgotten: their owner takes them back. 0, -EIO when broken. */
int virtq_reset(struct virtq *vq);

/* --- state --- */
uint16_t virtq_size(const struct virtq *vq);
uint16_t virtq_nfree(const struct virtq *vq);     /* free descriptors */
uint16_t virtq_in_flight(const struct virtq *vq); /* descriptors the device holds */
bool virtq_packed(const struct virtq *vq);
bool virtq_indirect(const struct virtq *vq);   /* VIRTQ_F_INDIRECT */
bool virtq_notif_data(const struct virtq *vq); /* VIRTQ_F_NOTIF_DATA */
bool virtq_broken(const struct virtq *vq);
/* NULL unless the device broke a rule (or virtq_set_broken named one). */
const struct virtq_violation *virtq_violation(const struct virtq *vq);
const struct virtq_stats *virtq_stats(const struct virtq *vq);

/* Records a violation found outside the queue (a transport, the device
 * code), counts it by kind and kills the queue; the first one sticks. */
void virtq_set_broken(struct virtq *vq, enum virtq_bad kind, const char *what, uint32_t id,
                      uint32_t len, uint32_t limit);

/* --- adding buffers --- */

/* Adds up to n single-descriptor buffers, all device-readable or all
 * device-writable, and makes them visible. Returns how many (fewer when
 * fewer descriptors are free), 0 on a bound or broken queue. */
int virtq_add_bufs(struct virtq *vq, const struct virtq_buf *b, int n, bool device_writes);

/* Adds one buffer of nr device-readable elements followed by nw
 * device-writable ones (s2.7.13.1, s2.8.6), completed as one used buffer
 * whose length may be at most the writable total. With VIRTQ_F_INDIRECT
 * a chain of 2..VIRTQ_INDIRECT_MAX elements goes into the buffer's own
 * preallocated indirect table and takes one ring descriptor (s2.7.5.3,
 * s2.8.19). 0, -ENOSPC when fewer than the descriptors it takes are free, -EINVAL for an empty
 * chain, one longer than the queue, a writable total past 32 bits or a bound queue, -EIO when
 * broken. */
int virtq_add_chain(struct virtq *vq, const struct virtq_seg *seg, unsigned nr, unsigned nw,
                    uintptr_t token);

/* --- bound slots ---
 * Buffer i always lives at addr(ctx, i) and goes out in ring order as
 * the i-th slot, so the split ring's descriptor table and avail ring are
 * written once. Only on an idle queue (-EBUSY), -EIO when broken. */
int virtq_bind_slots(struct virtq *vq, uint64_t (*addr)(void *ctx, uint16_t i), void *ctx,
                     uint32_t len);
bool virtq_bound(const struct virtq *vq);

/* The slot the next buffer goes out in. */
uint16_t virtq_next_slot(const struct virtq *vq);

/* How many descriptors can go out now, up to max (0 for max <= 0): the
 * free ones, or on a bound queue the free slots from the next one on. A
 * device that completes out of order can leave an older slot out while
 * newer ones are back; ring order waits for it. Never scans past the
 * free count. One call for both kinds of queue: TX asks once a burst. */
int virtq_free_run(const struct virtq *vq, int max);

/* Makes the next n slots available with len[i] + extra device-readable
 * bytes each; stops at a slot still in flight. Returns how many. */
int virtq_add_slots(struct virtq *vq, int n, const uint16_t *len, uint32_t extra);

/* --- notifications to the device --- */

/* Whether the device wants a notification for what was added since the
 * last decision (s2.7.10 / s2.8.10), and if so sends it. A decision that
 * needs none is counted as suppressed. True when one was sent. */
bool virtq_kick(struct virtq *vq);

/* Rings the doorbell now (counted, with the cycles it took); the forced
 * one is a stall watchdog's, sent whatever the suppression says. */
void virtq_notify(struct virtq *vq);
void virtq_notify_forced(struct virtq *vq);

/* --- used buffers --- */

/* Takes up to max used buffers, validating each (id in range and in
 * flight, length at most what was offered for writing). out may be NULL
 * when the tokens are not wanted (bound slots). Returns the count, or
 * -EIO when broken (good buffers before a violation come first; the next
 * call says -EIO). */
int virtq_get_used(struct virtq *vq, struct virtq_used_buf *out, int max);

/* True when the device has used something not taken yet (or claims to:
 * virtq_get_used then validates). */
bool virtq_has_used(const struct virtq *vq);

/* --- notifications from the device (used buffer notifications) ---
 * Off from creation: polling. virtq_enable_cb asks for a notification
 * on the next used buffer (with EVENT_IDX: used_event or the packed
 * off_wrap at the driver's position, s2.7.7.2, s2.8.10; without it the
 * flag, s2.7.7.1, s2.8.14), then re-checks after a full fence: true means
 * used buffers arrived meanwhile and the caller must poll again rather
 * than wait, since the device may have decided against notifying before
 * it saw the request (virtio 1.2 s2.7.14, s2.8.22). */
void virtq_disable_cb(struct virtq *vq);
bool virtq_enable_cb(struct virtq *vq);
/* The same, but with EVENT_IDX the notification is wanted only once
 * about three quarters of the buffers out now are used, and each
 * virtq_get_used moves it on the same way (Linux's
 * virtqueue_enable_cb_delayed; virtio 1.2 s2.7.10): one interrupt per
 * ring's worth of TX completions instead of one per reclaim. true means
 * the device may be past that point already (split: used.idx went beyond
 * it; packed: anything used at the driver's position): poll, since the
 * notification may have gone before the request. Without EVENT_IDX it is
 * virtq_enable_cb. */
bool virtq_enable_cb_delayed(struct virtq *vq);
/* The same with the notification wanted n used buffers later, but at most
 * half of what is out now (and each virtq_get_used moves it on the same
 * way): RX interrupt coalescing, one interrupt per n frames while the
 * device still has buffers to fill. n 0 is virtq_enable_cb; without
 * EVENT_IDX it is virtq_enable_cb too. */
bool virtq_enable_cb_after(struct virtq *vq, uint16_t n);
bool virtq_cb_enabled(const struct virtq *vq);

#endif
