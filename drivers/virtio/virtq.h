/* Split virtqueue (virtio 1.2 s2.7), driver side, polled.
 *
 * Every buffer is one descriptor (the network code never needs a chain:
 * header and frame are contiguous), so a "chain head" is a descriptor.
 * All bookkeeping (free list, tokens, posted lengths, in-flight marks) is
 * in driver-private memory: nothing the device writes is read back except
 * used.idx and the used elements, and those are validated before use.
 *
 * The interface (add / publish / kick / get_used) says nothing about the
 * ring format, so a packed ring can slot in behind it later. The hot
 * functions are inline: they run once per packet. */
#ifndef VN_VIRTQ_H
#define VN_VIRTQ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/io.h"

#define VRING_DESC_F_NEXT          1
#define VRING_DESC_F_WRITE         2
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY     1

#define VIRTQ_ALIGN 4096u /* used ring alignment of the legacy layout, virtio 1.2 s2.7.2 */
#define VIRTQ_MAX   32768u

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
struct vring_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[]; /* then used_event */
};
struct vring_used_elem {
    uint32_t id;
    uint32_t len;
};
struct vring_used {
    uint16_t flags;
    uint16_t idx;
    struct vring_used_elem ring[]; /* then avail_event */
};

/* Per-descriptor bookkeeping (driver-private). */
#define VIRTQ_ST_INFLIGHT 1
#define VIRTQ_ST_WRITE    2
struct virtq_state {
    uintptr_t token; /* the caller's: a TX cookie, an RX slot */
    uint32_t len;    /* posted length */
    uint16_t flags;
};

/* What the device did wrong, with the values it used. */
struct virtq_violation {
    const char *what;
    uint32_t id;
    uint32_t len;
    uint32_t limit;
    uint16_t dev_used_idx; /* used.idx as read */
    uint16_t used_idx;     /* where the driver was */
};

struct virtq_used_buf {
    uintptr_t token;
    uint32_t len;
};

struct virtq;
typedef void (*virtq_notify_fn)(struct virtq *vq);

struct virtq {
    struct vring_desc *desc;
    struct vring_avail *avail;
    struct vring_used *used;
    uint16_t *used_event;  /* &avail->ring[num] */
    uint16_t *avail_event; /* &used->ring[num] */
    struct virtq_state *st;
    uint16_t *free; /* stack of free descriptor ids (not IN_ORDER) */
    uint16_t num;
    uint16_t mask;
    uint16_t nfree;
    uint16_t avail_idx;  /* shadow of avail->idx: the next entry we fill */
    uint16_t kick_old;   /* avail_idx at the last kick decision */
    uint16_t used_idx;   /* the next used entry we consume */
    uint16_t next_desc;  /* IN_ORDER: descriptors go out in ring order */
    uint16_t batch_rest; /* IN_ORDER: buffers left in the current used entry */
    uint16_t parked_at;  /* used_idx when used_event was last parked */
    uint16_t park_every; /* consumed entries between parks */
    uint32_t batch_len;
    bool event_idx;
    bool in_order;
    bool bound; /* descriptor i is avail slot i for good: virtq_bind_slots */
    bool broken;
    uint16_t index;
    /* Kick: transport-specific, set by the transport's queue_notifier. */
    virtq_notify_fn notify;
    uintptr_t notify_addr;
    void *notify_ctx;
    /* Counters */
    uint64_t kicks;
    uint64_t kick_cycles;  /* TSC cycles spent in notify */
    uint64_t forced_kicks; /* sent by a stall watchdog, against suppression */
    uint64_t kicks_suppressed;
    uint64_t len_mismatch; /* device-readable buffers the device claims to have written */
    struct virtq_violation bad;
};

/* Bytes of ring memory for num entries in the legacy layout (which every
 * transport accepts): descriptors, avail ring, then the used ring on the
 * next VIRTQ_ALIGN boundary, virtio 1.2 s2.7.2. */
static inline size_t virtq_ring_bytes(uint16_t num)
{
    size_t a = 16u * num + 6u + 2u * num;
    a = (a + VIRTQ_ALIGN - 1) & ~(size_t)(VIRTQ_ALIGN - 1);
    return a + 6u + 8u * num;
}

/* mem: virtq_ring_bytes(num) zeroed bytes, VIRTQ_ALIGN aligned. num must be
 * a power of two (split ring, virtio 1.2 s2.7). Returns 0 or -EINVAL. */
int virtq_init(struct virtq *vq, uint16_t index, uint16_t num, void *mem, bool event_idx,
               bool in_order);

static inline uint64_t virtq_desc_addr(const struct virtq *vq)
{
    return (uintptr_t)vq->desc;
}
static inline uint64_t virtq_avail_addr(const struct virtq *vq)
{
    return (uintptr_t)vq->avail;
}
static inline uint64_t virtq_used_addr(const struct virtq *vq)
{
    return (uintptr_t)vq->used;
}

/* Records a violation and kills the queue. */
void virtq_set_broken(struct virtq *vq, const char *what, uint32_t id, uint32_t len, uint32_t limit,
                      uint16_t dev_used_idx);

static inline uint16_t virtq_in_flight(const struct virtq *vq)
{
    return vq->num - vq->nfree;
}

/* virtio 1.2 s2.7.10: kick/interrupt only when the other side's event
 * index lies in (old, new]. */
static inline bool vring_need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx)
{
    return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

/* Fills one avail entry (not yet visible to the device: see
 * virtq_publish). The caller checks nfree first. */
static inline void virtq_add(struct virtq *vq, uint64_t addr, uint32_t len, bool device_writes,
                             uintptr_t token)
{
    uint16_t id;
    if (vq->in_order)
        id = vq->next_desc++ & vq->mask; /* virtio 1.2 s2.7.9: ring order */
    else
        id = vq->free[vq->nfree - 1];
    vq->nfree--;
    struct vring_desc *d = &vq->desc[id];
    d->addr = addr;
    d->len = len;
    d->flags = device_writes ? VRING_DESC_F_WRITE : 0;
    struct virtq_state *s = &vq->st[id];
    s->token = token;
    s->len = len;
    s->flags = VIRTQ_ST_INFLIGHT | (device_writes ? VIRTQ_ST_WRITE : 0);
    vq->avail->ring[vq->avail_idx & vq->mask] = id;
    vq->avail_idx++;
}

/* Makes the added entries visible. virtio 1.2 s2.7.13.3: descriptors and
 * ring entries before idx; x86 keeps stores in order, so only the
 * compiler must not reorder. */
static inline void virtq_publish(struct virtq *vq)
{
    barrier_wmb();
    VN_WRITE_ONCE(vq->avail->idx, vq->avail_idx);
}

/* Whether the device wants a notification for what was published since
 * the last decision (virtio 1.2 s2.7.13.4 / s2.7.10). */
static inline bool virtq_kick_prepare(struct virtq *vq)
{
    uint16_t new_idx = vq->avail_idx, old_idx = vq->kick_old;
    if (new_idx == old_idx)
        return false;
    /* The idx store must be globally visible before we read the device's
     * suppression state, or both sides can decide the other will act:
     * store->load is the one order x86 does not keep. */
    barrier_mb();
    vq->kick_old = new_idx;
    if (vq->event_idx)
        return vring_need_event(VN_READ_ONCE(*vq->avail_event), new_idx, old_idx);
    return !(VN_READ_ONCE(vq->used->flags) & VRING_USED_F_NO_NOTIFY);
}

/* The doorbell is a trap into the hypervisor (under TCG it also waits
 * for QEMU's global lock), so the time it takes is counted. */
static inline void virtq_notify(struct virtq *vq)
{
    uint64_t t0 = rdtsc();
    vq->notify(vq);
    vq->kick_cycles += rdtsc() - t0;
    vq->kicks++;
}

/* Bound slots: descriptor i always carries slot i's buffer and avail
 * entry i always names descriptor i, so both tables are written once and
 * buffers go out in ring order. addr(i) gives slot i's device address and
 * len the device-readable length. Only on an idle queue: -EBUSY otherwise. */
int virtq_bind_slots(struct virtq *vq, uint64_t (*addr)(void *ctx, uint16_t i), void *ctx,
                     uint32_t len);

/* Bound: the slot the next buffer goes out in. */
static inline uint16_t virtq_next_slot(const struct virtq *vq)
{
    return vq->avail_idx & vq->mask;
}

/* Bound: how many slots from the next one on, up to max, are free. A
 * device that completes out of order can leave an older slot out while
 * newer ones are back; ring order waits for it. The run is never longer
 * than the free count, so a nearly full ring costs no scan (waiters poll
 * this). */
static inline int virtq_free_run(const struct virtq *vq, int max)
{
    if (max > vq->nfree)
        max = vq->nfree;
    int k = 0;
    while (k < max && !(vq->st[(uint16_t)(vq->avail_idx + k) & vq->mask].flags & VIRTQ_ST_INFLIGHT))
        k++;
    return k;
}

/* Bound: makes the next slot available with len device-readable bytes
 * (the caller checked virtq_free_run). Only its length can change. */
static inline void virtq_add_slot(struct virtq *vq, uint32_t len)
{
    uint16_t id = vq->avail_idx & vq->mask;
    /* The device reads the descriptor table, so a store pulls the line
     * away from it; the length rarely changes between rounds. */
    if (vq->desc[id].len != len)
        vq->desc[id].len = len;
    vq->st[id].flags = VIRTQ_ST_INFLIGHT;
    vq->avail_idx++;
    if (vq->in_order)
        vq->next_desc++;
    vq->nfree--;
}

/* Publish, decide, notify. Returns true when a notification was sent. */
static inline bool virtq_kick(struct virtq *vq)
{
    /* Nothing added since the last decision: avail->idx already holds
     * avail_idx, so not even the (shared) index is written again. */
    if (vq->avail_idx == vq->kick_old)
        return false;
    virtq_publish(vq);
    if (virtq_kick_prepare(vq)) {
        virtq_notify(vq);
        return true;
    }
    vq->kicks_suppressed++;
    return false;
}

/* Takes up to max used buffers, validating each used element; out may be
 * NULL when the tokens are not wanted (bound slots). Returns the count,
 * or -EIO when the queue is broken (a violation found in this call after
 * some good buffers returns those first; the next call says -EIO). */
int virtq_get_used(struct virtq *vq, struct virtq_used_buf *out, int max);

/* True when the device has used something we have not consumed. */
static inline bool virtq_has_used(const struct virtq *vq)
{
    return VN_READ_ONCE(vq->used->idx) != vq->used_idx || vq->batch_rest;
}

#endif
