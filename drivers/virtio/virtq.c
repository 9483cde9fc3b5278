/* Virtqueue: setup, state, notifications and the calls that pick the ring
 * format. The formats themselves are virtq_split.c and virtq_packed.c. */
#include <string.h>

#include "drivers/virtio/dma_pool.h"
#include "drivers/virtio/virtq_priv.h"

/* The free list: descriptors (split) or buffer ids (packed), 0 first. */
static void virtq_free_all(struct virtq *vq)
{
    for (uint16_t i = 0; i < vq->num; i++)
        vq->next[i] = i + 1 < vq->num ? (uint16_t)(i + 1) : VIRTQ_NONE;
    vq->free_head = 0;
    vq->nfree = vq->num;
}

int virtq_create_in(struct dma_pool *pool, struct virtq **out, uint16_t index, uint16_t num,
                    unsigned flags)
{
    if (num == 0 || num > VIRTQ_MAX || (num & (num - 1)))
        return -EINVAL;
    struct virtq *vq = dma_pool_alloc(pool, sizeof(*vq), 64);
    vq->num = num;
    vq->mask = num - 1;
    vq->packed = flags & VIRTQ_F_PACKED;
    vq->event_idx = flags & VIRTQ_F_EVENT_IDX;
    vq->in_order = flags & VIRTQ_F_IN_ORDER;
    vq->indirect = flags & VIRTQ_F_INDIRECT;
    vq->notif_data = flags & VIRTQ_F_NOTIF_DATA;
    if (vq->indirect)
        vq->ind = dma_pool_alloc(pool, (size_t)num * VIRTQ_INDIRECT_MAX * 16u, 64);
    vq->db.index = index;
    vq->st = dma_pool_alloc(pool, sizeof(*vq->st) * num, 64);
    vq->next = dma_pool_alloc(pool, sizeof(*vq->next) * num, 64);
    virtq_free_all(vq);
    if (vq->packed) {
        vq->ring = dma_pool_alloc(pool, virtq_packed_bytes(num), VIRTQ_ALIGN);
        virtq_packed_init(vq);
    } else {
        vq->ring = dma_pool_alloc(pool, virtq_split_bytes(num), VIRTQ_ALIGN);
        virtq_split_init(vq);
    }
    *out = vq;
    return 0;
}

int virtq_create(struct virtq **out, uint16_t index, uint16_t num, unsigned flags)
{
    return virtq_create_in(NULL, out, index, num, flags);
}

int virtq_reset(struct virtq *vq)
{
    if (vq->broken)
        return -EIO;
    /* Every buffer is the driver's again (s2.6.1.2: the device keeps no
     * state): per-buffer marks go, a bound slot keeps its address. */
    for (uint16_t i = 0; i < vq->num; i++) {
        vq->st[i].flags = 0;
        vq->st[i].len = 0;
        if (!vq->bound) {
            vq->st[i].token = 0;
            vq->st[i].ndesc = 0;
        }
    }
    virtq_free_all(vq);
    vq->nbufs = 0;
    vq->avail_idx = vq->used_idx = vq->kick_old = 0;
    vq->batch = false;
    vq->cb = vq->cb_delayed = false;
    vq->cb_after = 0;
    vq->stats.resets++;
    if (vq->packed) {
        memset(vq->ring, 0, virtq_packed_bytes(vq->num));
        virtq_packed_init(vq);
    } else {
        virtq_split_reset(vq);
    }
    return 0;
}

uint64_t virtq_desc_addr(const struct virtq *vq)
{
    return vq->packed ? (uintptr_t)vq->p.desc : (uintptr_t)vq->s.desc;
}
uint64_t virtq_driver_addr(const struct virtq *vq)
{
    return vq->packed ? (uintptr_t)vq->p.driver : (uintptr_t)vq->s.avail;
}
uint64_t virtq_device_addr(const struct virtq *vq)
{
    return vq->packed ? (uintptr_t)vq->p.device : (uintptr_t)vq->s.used;
}

void virtq_set_doorbell(struct virtq *vq, const struct virtq_doorbell *db)
{
    vq->db = *db;
    vq->db.data = vq->notif_data;
}

uint16_t virtq_size(const struct virtq *vq)
{
    return vq->num;
}
uint16_t virtq_nfree(const struct virtq *vq)
{
    return vq->nfree;
}
uint16_t virtq_in_flight(const struct virtq *vq)
{
    return vq->num - vq->nfree;
}
bool virtq_packed(const struct virtq *vq)
{
    return vq->packed;
}
bool virtq_indirect(const struct virtq *vq)
{
    return vq->indirect;
}
bool virtq_notif_data(const struct virtq *vq)
{
    return vq->notif_data;
}
bool virtq_broken(const struct virtq *vq)
{
    return vq->broken;
}
bool virtq_bound(const struct virtq *vq)
{
    return vq->bound;
}
bool virtq_cb_enabled(const struct virtq *vq)
{
    return vq->cb;
}
const struct virtq_violation *virtq_violation(const struct virtq *vq)
{
    return vq->broken && vq->bad.what ? &vq->bad : NULL;
}
const struct virtq_stats *virtq_stats(const struct virtq *vq)
{
    return &vq->stats;
}

void virtq_break(struct virtq *vq, enum virtq_bad kind, const char *what, uint32_t id, uint32_t len,
                 uint32_t limit, uint16_t dev)
{
    if (kind < VIRTQ_BAD_N && vq->stats.bad[kind] < UINT32_MAX)
        vq->stats.bad[kind]++;
    if (vq->broken)
        return;
    vq->broken = true;
    vq->bad = (struct virtq_violation){what, id, len, limit, dev, vq->used_idx};
}

void virtq_set_broken(struct virtq *vq, enum virtq_bad kind, const char *what, uint32_t id,
                      uint32_t len, uint32_t limit)
{
    virtq_break(vq, kind, what, id, len, limit, 0);
}

int virtq_add_bufs(struct virtq *vq, const struct virtq_buf *b, int n, bool device_writes)
{
    if (vq->bound || vq->broken || n <= 0)
        return 0;
    if (n > vq->nfree)
        n = vq->nfree;
    /* A full ring: nothing to publish (the packed ring would store an
     * empty batch's head flags over the oldest buffer in flight). */
    if (!n)
        return 0;
    return vq->packed ? virtq_packed_add_bufs(vq, b, n, device_writes)
                      : virtq_split_add_bufs(vq, b, n, device_writes);
}

int virtq_add_chain(struct virtq *vq, const struct virtq_seg *seg, unsigned nr, unsigned nw,
                    uintptr_t token)
{
    if (vq->broken)
        return -EIO;
    unsigned n = nr + nw;
    if (vq->bound || n == 0 || n > vq->num)
        return -EINVAL;
    /* The writable total is what a used length is checked against. */
    uint64_t wlen = 0;
    for (unsigned i = nr; i < n; i++)
        wlen += seg[i].len;
    if (wlen > UINT32_MAX)
        return -EINVAL;
    if (virtq_chain_indirect(vq, n)) {
        if (!vq->nfree)
            return -ENOSPC;
        return vq->packed ? virtq_packed_add_indirect(vq, seg, nr, nw, token, (uint32_t)wlen)
                          : virtq_split_add_indirect(vq, seg, nr, nw, token, (uint32_t)wlen);
    }
    if (n > vq->nfree)
        return -ENOSPC;
    return vq->packed ? virtq_packed_add_chain(vq, seg, nr, nw, token, (uint32_t)wlen)
                      : virtq_split_add_chain(vq, seg, nr, nw, token, (uint32_t)wlen);
}

int virtq_bind_slots(struct virtq *vq, uint64_t (*addr)(void *ctx, uint16_t i), void *ctx,
                     uint32_t len)
{
    if (vq->broken)
        return -EIO;
    if (virtq_in_flight(vq))
        return -EBUSY;
    for (uint16_t i = 0; i < vq->num; i++) {
        vq->st[i].token = (uintptr_t)addr(ctx, i);
        vq->st[i].ndesc = 1;
    }
    if (!vq->packed)
        virtq_split_bind(vq, addr, ctx, len);
    vq->bound = true;
    return 0;
}

uint16_t virtq_next_slot(const struct virtq *vq)
{
    return vq->avail_idx & vq->mask;
}

int virtq_free_run(const struct virtq *vq, int max)
{
    if (max > vq->nfree)
        max = vq->nfree;
    if (!vq->bound)
        return max > 0 ? max : 0;
    int k = 0;
    while (k < max && !(vq->st[(uint16_t)(vq->avail_idx + k) & vq->mask].flags & VIRTQ_ST_INFLIGHT))
        k++;
    return k;
}

int virtq_add_slots(struct virtq *vq, int n, const uint16_t *len, uint32_t extra)
{
    if (!vq->bound || vq->broken || n <= 0)
        return 0;
    if (n > vq->nfree)
        n = vq->nfree;
    return vq->packed ? virtq_packed_add_slots(vq, n, len, extra)
                      : virtq_split_add_slots(vq, n, len, extra);
}

/* virtio 1.2 s2.9: without NOTIFICATION_DATA the queue's index; with it
 * the index and, above it, where the next buffer will be made available:
 * split, the avail index (all 16 bits); packed, the ring offset in 15
 * bits and the driver's wrap counter in bit 31 (avail_idx runs free, so
 * the counter is its lap's parity, s2.8.1). */
static inline uint32_t virtq_notify_value(const struct virtq *vq)
{
    if (!vq->notif_data)
        return vq->db.index;
    uint32_t next = vq->avail_idx;
    if (vq->packed)
        next = (next & vq->mask) | (uint32_t) !(next & vq->num) << VRING_PACKED_EVENT_WRAP;
    return vq->db.index | next << 16;
}

/* The doorbell is a trap into the hypervisor (under TCG it also waits
 * for QEMU's global lock), so the time it takes is counted. */
void virtq_notify(struct virtq *vq)
{
    uint64_t t0 = rdtsc();
    vq->db.ring(&vq->db, virtq_notify_value(vq));
    vq->stats.kick_cycles += rdtsc() - t0;
    vq->stats.kicks++;
}

void virtq_notify_forced(struct virtq *vq)
{
    virtq_notify(vq);
    vq->stats.forced_kicks++;
}

bool virtq_kick(struct virtq *vq)
{
    /* Nothing added since the last decision: nothing to tell. */
    if (vq->avail_idx == vq->kick_old)
        return false;
    bool want = vq->packed ? virtq_packed_kick_prepare(vq) : virtq_split_kick_prepare(vq);
    vq->kick_old = vq->avail_idx;
    if (want) {
        virtq_notify(vq);
        return true;
    }
    vq->stats.kicks_suppressed++;
    return false;
}

int virtq_get_used(struct virtq *vq, struct virtq_used_buf *out, int max)
{
    if (vq->broken)
        return -EIO;
    if (max <= 0)
        return 0;
    int n = vq->packed ? virtq_packed_get_used(vq, out, max) : virtq_split_get_used(vq, out, max);
    return !n && vq->broken ? -EIO : n;
}

bool virtq_has_used(const struct virtq *vq)
{
    if (vq->batch)
        return true;
    return vq->packed ? virtq_packed_has_used(vq) : virtq_split_has_used(vq);
}

void virtq_disable_cb(struct virtq *vq)
{
    vq->cb = false;
    if (vq->packed)
        virtq_packed_disable_cb(vq);
    else
        virtq_split_disable_cb(vq);
}

static bool virtq_cb_on(struct virtq *vq, bool delayed, uint16_t after)
{
    vq->cb = true;
    vq->cb_delayed = delayed;
    vq->cb_after = after;
    bool pending = vq->packed ? virtq_packed_enable_cb(vq) : virtq_split_enable_cb(vq);
    return pending || vq->batch;
}

bool virtq_enable_cb(struct virtq *vq)
{
    return virtq_cb_on(vq, false, 0);
}

bool virtq_enable_cb_after(struct virtq *vq, uint16_t n)
{
    return virtq_cb_on(vq, false, n);
}

bool virtq_enable_cb_delayed(struct virtq *vq)
{
    return virtq_cb_on(vq, true, 0);
}
