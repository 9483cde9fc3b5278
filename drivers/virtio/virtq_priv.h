/* The virtqueue's layout and the bookkeeping both ring formats share.
 * Included only by virtq.c, virtq_split.c and virtq_packed.c: nothing
 * else sees inside struct virtq. */
#ifndef VN_VIRTQ_PRIV_H
#define VN_VIRTQ_PRIV_H

#include "drivers/virtio/virtio_ring.h"
#include "drivers/virtio/virtq.h"
#include "kernel/io.h"

/* Per buffer, driver-private: the split ring keeps it at the buffer's
 * head descriptor, the packed ring at its buffer id. */
#define VIRTQ_ST_INFLIGHT 1
#define VIRTQ_ST_WRITE    2 /* has device-writable elements */
struct virtq_state {
    uintptr_t token; /* the caller's; a bound slot's device address */
    uint32_t len;    /* device-writable bytes posted */
    uint16_t flags;
    uint16_t ndesc; /* descriptors the buffer takes */
};

#define VIRTQ_NONE 0xffffu /* end of the free list */

/* The encodings a queue size must fit (virtio 1.2 s2.7, s2.8): indices
 * run free in 16 bits, so num divides 2^16 and a packed ring's wrap
 * counter is bit log2(num) of an index; off_wrap holds an offset in 15
 * bits under the wrap bit; no index reads as the free list's end. */
_Static_assert((VIRTQ_MAX & (VIRTQ_MAX - 1)) == 0, "VIRTQ_MAX: a power of two");
_Static_assert(VIRTQ_MAX <= 1u << VRING_PACKED_EVENT_WRAP, "an offset fits off_wrap");
_Static_assert(VIRTQ_MAX < VIRTQ_NONE, "VIRTQ_NONE is no descriptor index");

struct virtq_split {
    struct vring_desc *desc;
    struct vring_avail *avail;
    struct vring_used *used;
    uint16_t *used_event;  /* &avail->ring[num] */
    uint16_t *avail_event; /* &used->ring[num] */
    uint16_t desc_idx;     /* IN_ORDER: the next descriptor in ring order */
    uint16_t parked_at;    /* used_idx when used_event was last parked */
    uint16_t park_every;   /* consumed entries between parks */
};

struct virtq_packed {
    struct vring_packed_desc *desc;
    struct vring_packed_event *driver; /* ours: used buffer notifications */
    struct vring_packed_event *device; /* the device's: available buffer notifications */
};

struct virtq {
    /* hot, both formats */
    struct virtq_state *st;
    uint16_t *next; /* free list links; split: also a chain's descriptors */
    uint16_t num;
    uint16_t mask;
    uint16_t nfree;     /* free descriptors */
    uint16_t nbufs;     /* buffers in flight, not yet handed back */
    uint16_t free_head; /* split: a free descriptor; packed: a free buffer id */
    /* Free-running 16-bit indices (num divides 2^16, so a position is
     * idx & mask and, packed, the wrap counter is !(idx & num)). Split:
     * avail ring entries and used ring entries; packed: ring positions. */
    uint16_t avail_idx; /* next entry or position made available */
    uint16_t used_idx;  /* next used entry or position consumed */
    uint16_t kick_old;  /* avail_idx at the last kick decision */
    /* IN_ORDER: a used element completed every buffer up to batch_last */
    bool batch;
    uint16_t batch_last;
    uint32_t batch_len;
    bool packed;
    bool event_idx;
    bool in_order;
    bool indirect;   /* chains through ind: VIRTQ_F_INDIRECT */
    bool notif_data; /* VIRTQ_F_NOTIF_DATA */
    bool bound;      /* buffer i is slot i for good: virtq_bind_slots */
    bool broken;
    bool cb;           /* used buffer notifications wanted (virtq_enable_cb) */
    bool cb_delayed;   /* ... after 3/4 of what is out (virtq_enable_cb_delayed) */
    uint16_t cb_after; /* ... else after this many more (virtq_enable_cb_after) */
    union {
        struct virtq_split s;
        struct virtq_packed p;
    };
    struct virtq_doorbell db;
    struct virtq_stats stats;
    struct virtq_violation bad;
    void *ring; /* the ring memory */
    /* VIRTQ_F_INDIRECT: VIRTQ_INDIRECT_MAX descriptors per buffer (split:
     * per head descriptor; packed: per buffer id), allocated with the
     * queue, so the packet path allocates nothing; the buffer's one ring
     * descriptor owns its table, and freeing it frees the table. */
    void *ind;
};

/* Whether a chain of n elements goes through an indirect table: one
 * element gains nothing from it. */
static inline bool virtq_chain_indirect(const struct virtq *vq, unsigned n)
{
    return vq->indirect && n > 1 && n <= VIRTQ_INDIRECT_MAX;
}

/* The table of buffer (split: head descriptor) id; 16-byte descriptors
 * in both formats. */
static inline void *virtq_ind_table(const struct virtq *vq, uint16_t id)
{
    return (uint8_t *)vq->ind + (size_t)id * VIRTQ_INDIRECT_MAX * 16u;
}

/* How far past the driver's used position the device's notification is
 * wanted, in used entries (split) or ring positions (packed): 0, the next
 * one; delayed, three quarters of what is out, as Linux's
 * virtqueue_enable_cb_delayed (TX completions need no prompt reclaim);
 * after n, n more but at most half of what is out, so the notification
 * still comes while the device has buffers left (RX coalescing).
 * Only EVENT_IDX can say it (s2.7.10, s2.8.10); without, every one. */
static inline uint16_t virtq_cb_delay(const struct virtq *vq)
{
    if ((!vq->cb_delayed && !vq->cb_after) || !vq->event_idx)
        return 0;
    uint32_t out = vq->packed ? (uint32_t)(vq->num - vq->nfree) : vq->nbufs;
    if (vq->cb_delayed)
        return (uint16_t)(out * 3u / 4u);
    return (uint16_t)(vq->cb_after < out / 2u ? vq->cb_after : out / 2u);
}

/* Records a violation with the device-side value it was read with. */
void virtq_break(struct virtq *vq, enum virtq_bad kind, const char *what, uint32_t id, uint32_t len,
                 uint32_t limit, uint16_t dev);

/* virtio 1.2 s2.7.10 (and s2.8.10 with positions made free-running):
 * notify only when the other side's event index lies in [old, new). */
static inline bool vring_need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx)
{
    return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

/* One used buffer, checked (s2.7.8, s2.8.4 and the Linux/TDX hardening
 * rules): id is a buffer we made available and have not had back; len,
 * what the device wrote, at most what we offered to be written. NULL when
 * it is good, else what is wrong with limit and kind set. Loops keep the
 * queue's fields in locals, so they pass them in. */
static inline const char *virtq_used_fault(const struct virtq_state *st, uint16_t num, uint32_t id,
                                           uint32_t len, uint32_t *limit, enum virtq_bad *kind)
{
    if (id >= num) {
        *limit = num - 1u;
        *kind = VIRTQ_BAD_UNAVAIL;
        return "used id out of range";
    }
    const struct virtq_state *s = &st[id];
    if (!(s->flags & VIRTQ_ST_INFLIGHT)) {
        *limit = num - 1u;
        *kind = VIRTQ_BAD_UNAVAIL;
        return "used id not in flight";
    }
    if ((s->flags & VIRTQ_ST_WRITE) && len > s->len) {
        *limit = s->len;
        *kind = VIRTQ_BAD_USED_LEN;
        return "used len larger than the buffer";
    }
    return NULL;
}

/* The same for one element outside a loop: the state, or NULL after
 * breaking the queue. A device-readable buffer with a length is counted
 * and its length dropped: the device wrote nothing into it. dev: the
 * device-side value for the report. */
static inline struct virtq_state *virtq_check_used(struct virtq *vq, uint32_t id, uint32_t *len,
                                                   uint16_t dev)
{
    uint32_t limit;
    enum virtq_bad kind;
    const char *what = virtq_used_fault(vq->st, vq->num, id, *len, &limit, &kind);
    if (what) {
        virtq_break(vq, kind, what, id, *len, limit, dev);
        return NULL;
    }
    struct virtq_state *s = &vq->st[id];
    if (!(s->flags & VIRTQ_ST_WRITE) && *len) {
        vq->stats.len_mismatch++;
        *len = 0;
    }
    return s;
}

/* The buffer at the head of what is in flight, in ring order (IN_ORDER
 * and bound queues): next is the next descriptor or position. */
static inline uint16_t virtq_oldest(const struct virtq *vq, uint16_t next)
{
    return (uint16_t)(next - (vq->num - vq->nfree)) & vq->mask;
}

/* IN_ORDER (s2.7.9, s2.8.8): one used element stands for every buffer up
 * to and including batch_last; they are handed out one by one from the
 * oldest, and only the last carries the length. */
static inline void virtq_batch_take(struct virtq *vq, uint16_t head, struct virtq_used_buf *o)
{
    struct virtq_state *s = &vq->st[head];
    if (o) {
        o->token = s->token;
        o->len = head == vq->batch_last ? vq->batch_len : 0;
    }
    if (head == vq->batch_last)
        vq->batch = false;
    s->flags = 0;
    vq->nfree += s->ndesc;
}

/* Split ring (virtq_split.c) */
void virtq_split_init(struct virtq *vq);
size_t virtq_split_bytes(uint16_t num);
void virtq_split_reset(struct virtq *vq);
void virtq_split_bind(struct virtq *vq, uint64_t (*addr)(void *ctx, uint16_t i), void *ctx,
                      uint32_t len);
int virtq_split_add_bufs(struct virtq *vq, const struct virtq_buf *b, int n, bool writes);
int virtq_split_add_chain(struct virtq *vq, const struct virtq_seg *seg, unsigned nr, unsigned nw,
                          uintptr_t token, uint32_t wlen);
int virtq_split_add_indirect(struct virtq *vq, const struct virtq_seg *seg, unsigned nr,
                             unsigned nw, uintptr_t token, uint32_t wlen);
int virtq_split_add_slots(struct virtq *vq, int n, const uint16_t *len, uint32_t extra);
bool virtq_split_kick_prepare(struct virtq *vq);
int virtq_split_get_used(struct virtq *vq, struct virtq_used_buf *out, int max);
bool virtq_split_has_used(const struct virtq *vq);
void virtq_split_disable_cb(struct virtq *vq);
bool virtq_split_enable_cb(struct virtq *vq);

/* Packed ring (virtq_packed.c) */
void virtq_packed_init(struct virtq *vq);
size_t virtq_packed_bytes(uint16_t num);
int virtq_packed_add_bufs(struct virtq *vq, const struct virtq_buf *b, int n, bool writes);
int virtq_packed_add_chain(struct virtq *vq, const struct virtq_seg *seg, unsigned nr, unsigned nw,
                           uintptr_t token, uint32_t wlen);
int virtq_packed_add_indirect(struct virtq *vq, const struct virtq_seg *seg, unsigned nr,
                              unsigned nw, uintptr_t token, uint32_t wlen);
int virtq_packed_add_slots(struct virtq *vq, int n, const uint16_t *len, uint32_t extra);
bool virtq_packed_kick_prepare(struct virtq *vq);
int virtq_packed_get_used(struct virtq *vq, struct virtq_used_buf *out, int max);
bool virtq_packed_has_used(const struct virtq *vq);
void virtq_packed_disable_cb(struct virtq *vq);
bool virtq_packed_enable_cb(struct virtq *vq);

#endif
