/* Split virtqueue: setup and the used-ring consumer with its checks. */
#include "drivers/virtio/virtq.h"

#include <string.h>

#include "kernel/mem.h"

/* Interrupts are never wanted (everything is polled). With EVENT_IDX the
 * device interrupts when its used index passes used_event (virtio 1.2
 * s2.7.7.2), so used_event is parked half the index space ahead of us.
 * The device is at most num entries ahead, so the park holds until we
 * have consumed 0x7fff - num entries; it is renewed halfway there, not on
 * every poll: the device reads used_event on every used entry it adds,
 * and each store takes that cache line away from it. */
static inline void virtq_park_used_event(struct virtq *vq)
{
    vq->parked_at = vq->used_idx;
    VN_WRITE_ONCE(*vq->used_event, (uint16_t)(vq->used_idx + 0x7fff));
}

int virtq_init(struct virtq *vq, uint16_t index, uint16_t num, void *mem, bool event_idx,
               bool in_order)
{
    if (num == 0 || num > VIRTQ_MAX || (num & (num - 1)))
        return -EINVAL;
    memset(vq, 0, sizeof(*vq));
    uint8_t *base = mem;
    size_t used_off = virtq_ring_bytes(num) - (6u + 8u * num);
    vq->desc = (struct vring_desc *)base;
    vq->avail = (struct vring_avail *)(base + 16u * num);
    vq->used = (struct vring_used *)(base + used_off);
    vq->used_event = &vq->avail->ring[num];
    vq->avail_event = (uint16_t *)&vq->used->ring[num];
    vq->num = num;
    vq->mask = num - 1;
    vq->nfree = num;
    vq->index = index;
    vq->event_idx = event_idx;
    vq->in_order = in_order;
    vq->st = mem_alloc_dma(sizeof(*vq->st) * num, 64);
    if (!in_order) {
        vq->free = mem_alloc_dma(sizeof(*vq->free) * num, 64);
        /* Stack order: descriptor 0 is handed out first. */
        for (uint16_t i = 0; i < num; i++)
            vq->free[i] = num - 1 - i;
    }
    vq->park_every = num < 0x7fff ? (uint16_t)((0x7fff - num) / 2) : 0;
    if (event_idx)
        virtq_park_used_event(vq);
    else
        vq->avail->flags = VRING_AVAIL_F_NO_INTERRUPT; /* virtio 1.2 s2.7.7.1 */
    return 0;
}

int virtq_bind_slots(struct virtq *vq, uint64_t (*addr)(void *ctx, uint16_t i), void *ctx,
                     uint32_t len)
{
    if (virtq_in_flight(vq))
        return -EBUSY;
    /* The device reads avail entries only below avail->idx, all of them
     * used already, so rewriting the table cannot race with it. */
    for (uint16_t i = 0; i < vq->num; i++) {
        vq->desc[i].addr = addr(ctx, i);
        vq->desc[i].len = len;
        vq->desc[i].flags = 0;
        vq->avail->ring[i] = i;
    }
    /* IN_ORDER hands out descriptors by next_desc, which must stay in
     * step with the avail index for slot i to be descriptor i. */
    vq->next_desc = vq->avail_idx;
    vq->bound = true;
    return 0;
}

void virtq_set_broken(struct virtq *vq, const char *what, uint32_t id, uint32_t len, uint32_t limit,
                      uint16_t dev_used_idx)
{
    if (vq->broken)
        return;
    vq->broken = true;
    vq->bad.what = what;
    vq->bad.id = id;
    vq->bad.len = len;
    vq->bad.limit = limit;
    vq->bad.dev_used_idx = dev_used_idx;
    vq->bad.used_idx = vq->used_idx;
}

/* One used element, checked: virtio 1.2 s2.7.8 (id is the head of a chain
 * we made available; len is what the device wrote, so at most what we
 * offered to be written). Returns the state or NULL after a violation. */
static inline struct virtq_state *virtq_check_elem(struct virtq *vq, uint32_t id, uint32_t len,
                                                   uint16_t end)
{
    if (id >= vq->num) {
        virtq_set_broken(vq, "used id out of range", id, len, vq->num - 1u, end);
        return NULL;
    }
    struct virtq_state *s = &vq->st[id];
    if (!(s->flags & VIRTQ_ST_INFLIGHT)) {
        virtq_set_broken(vq, "used id not in flight", id, len, vq->num - 1u, end);
        return NULL;
    }
    if (s->flags & VIRTQ_ST_WRITE) {
        if (len > s->len) {
            virtq_set_broken(vq, "used len larger than the buffer", id, len, s->len, end);
            return NULL;
        }
    } else if (len) {
        vq->len_mismatch++; /* TX: not trusted, not used */
    }
    return s;
}

static int virtq_get_used_any_order(struct virtq *vq, struct virtq_used_buf *out, int max,
                                    uint16_t end)
{
    int n = 0;
    while (n < max && vq->used_idx != end) {
        const struct vring_used_elem *e = &vq->used->ring[vq->used_idx & vq->mask];
        uint32_t id = VN_READ_ONCE(e->id), len = VN_READ_ONCE(e->len);
        struct virtq_state *s = virtq_check_elem(vq, id, len, end);
        if (!s)
            break;
        s->flags = 0;
        if (vq->bound) {
            vq->nfree++;
        } else {
            vq->free[vq->nfree++] = (uint16_t)id;
            out[n].token = s->token;
            out[n].len = len;
        }
        n++;
        vq->used_idx++;
    }
    return n;
}

/* IN_ORDER: one used element may stand for every buffer up to and
 * including its id (virtio 1.2 s2.7.9); only the last has a length. */
static int virtq_get_used_in_order(struct virtq *vq, struct virtq_used_buf *out, int max,
                                   uint16_t end)
{
    int n = 0;
    while (n < max) {
        uint16_t oldest = (uint16_t)(vq->next_desc - virtq_in_flight(vq)) & vq->mask;
        if (!vq->batch_rest) {
            if (vq->used_idx == end)
                break;
            const struct vring_used_elem *e = &vq->used->ring[vq->used_idx & vq->mask];
            uint32_t id = VN_READ_ONCE(e->id), len = VN_READ_ONCE(e->len);
            if (!virtq_check_elem(vq, id, len, end))
                break;
            /* The in-flight descriptors are the window [oldest, next_desc),
             * so an id in flight is at most in_flight entries ahead. */
            vq->batch_rest = (uint16_t)(((uint16_t)id - oldest) & vq->mask) + 1;
            vq->batch_len = len;
            vq->used_idx++;
        }
        struct virtq_state *s = &vq->st[oldest];
        if (out) {
            out[n].token = s->token;
            out[n].len = vq->batch_rest == 1 ? vq->batch_len : 0;
        }
        s->flags = 0;
        vq->nfree++;
        vq->batch_rest--;
        n++;
    }
    return n;
}

int virtq_get_used(struct virtq *vq, struct virtq_used_buf *out, int max)
{
    if (vq->broken)
        return -EIO;
    uint16_t end = VN_READ_ONCE(vq->used->idx);
    /* virtio 1.2 s2.7.14: read the elements only after the index. */
    barrier_rmb();
    uint16_t pending = (uint16_t)(end - vq->used_idx);
    if (!pending && !vq->batch_rest)
        return 0;
    /* Each used element returns at least one buffer we still have out. */
    uint16_t out_now = (uint16_t)(virtq_in_flight(vq) - vq->batch_rest);
    if (pending > out_now) {
        virtq_set_broken(vq, "used idx ahead of the buffers in flight", 0, 0, out_now, end);
        return -EIO;
    }
    int n = vq->in_order ? virtq_get_used_in_order(vq, out, max, end)
                         : virtq_get_used_any_order(vq, out, max, end);
    if (vq->event_idx && n && (uint16_t)(vq->used_idx - vq->parked_at) >= vq->park_every)
        virtq_park_used_event(vq);
    if (!n && vq->broken)
        return -EIO;
    return n;
}
