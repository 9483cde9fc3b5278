/* Split virtqueue (virtio 1.2 s2.7), driver side: descriptor table, avail
 * ring and used ring in the legacy contiguous layout, which every
 * transport accepts. Descriptors come from a free list (a chain takes
 * several), or in ring order with IN_ORDER and on a bound queue. */
#include <string.h>

#include "drivers/virtio/virtq_priv.h"

/* Bytes of ring memory: descriptors, avail ring (with used_event), then
 * the used ring (with avail_event) on the next VIRTQ_ALIGN boundary,
 * s2.7.2. */
static size_t virtq_split_used_off(uint16_t num)
{
    size_t a = 16u * num + 6u + 2u * num;
    return (a + VIRTQ_ALIGN - 1) & ~(size_t)(VIRTQ_ALIGN - 1);
}

size_t virtq_split_bytes(uint16_t num)
{
    return virtq_split_used_off(num) + 6u + 8u * num;
}

/* Used buffer notifications off (polling). With EVENT_IDX the device
 * notifies when its used index passes used_event (s2.7.7.2), so
 * used_event is parked half the index space ahead of us. The device is at
 * most num entries ahead, so the park holds until we have consumed
 * 0x7fff - num entries; it is renewed halfway there, not on every poll:
 * the device reads used_event on every used entry it adds, and each store
 * takes that cache line away from it. */
static inline void virtq_split_park(struct virtq *vq)
{
    vq->s.parked_at = vq->used_idx;
    VN_WRITE_ONCE(*vq->s.used_event, (uint16_t)(vq->used_idx + 0x7fff));
}

void virtq_split_init(struct virtq *vq)
{
    struct virtq_split *s = &vq->s;
    uint8_t *base = vq->ring;
    uint16_t num = vq->num;
    s->desc = (struct vring_desc *)base;
    s->avail = (struct vring_avail *)(base + 16u * num);
    s->used = (struct vring_used *)(base + virtq_split_used_off(num));
    s->used_event = &s->avail->ring[num];
    s->avail_event = (uint16_t *)&s->used->ring[num];
    s->park_every = num < 0x7fff ? (uint16_t)((0x7fff - num) / 2) : 0;
    virtq_split_disable_cb(vq);
}

void virtq_split_bind(struct virtq *vq, uint64_t (*addr)(void *ctx, uint16_t i), void *ctx,
                      uint32_t len)
{
    struct virtq_split *s = &vq->s;
    /* The device reads avail entries only below avail->idx, all of them
     * used already, so rewriting the tables cannot race with it. */
    for (uint16_t i = 0; i < vq->num; i++) {
        s->desc[i].addr = addr(ctx, i);
        s->desc[i].len = len;
        s->desc[i].flags = 0;
        s->avail->ring[i] = i;
    }
    /* IN_ORDER hands out descriptors in ring order, which must stay in
     * step with the avail index for slot i to be descriptor i (it is:
     * the queue only ever had single-descriptor buffers). */
    s->desc_idx = vq->avail_idx;
}

void virtq_split_reset(struct virtq *vq)
{
    struct virtq_split *s = &vq->s;
    uint8_t *avail = (uint8_t *)s->avail;
    /* The descriptor table stays: a bound queue's is written once, and
     * the device reads no descriptor no avail entry names. */
    memset(avail, 0, virtq_split_bytes(vq->num) - (size_t)(avail - (uint8_t *)vq->ring));
    if (vq->bound)
        for (uint16_t i = 0; i < vq->num; i++)
            s->avail->ring[i] = i;
    s->desc_idx = 0;
    s->parked_at = 0;
    virtq_split_disable_cb(vq);
}

/* Makes the entries up to idx visible: s2.7.13.3, descriptors and ring
 * entries before idx; x86 keeps stores in order, so only the compiler
 * must not reorder. */
static inline void virtq_split_publish(struct virtq *vq, uint16_t idx)
{
    barrier_wmb();
    VN_WRITE_ONCE(vq->s.avail->idx, idx);
    vq->avail_idx = idx;
}

/* The first descriptor of the next buffer. */
static inline uint16_t virtq_split_head(const struct virtq *vq)
{
    return vq->in_order ? vq->s.desc_idx & vq->mask : vq->free_head;
}

/* The descriptor after d: in ring order (IN_ORDER), else the free list's
 * next, which a chain keeps as its links. */
static inline uint16_t virtq_split_after(const struct virtq *vq, uint16_t d)
{
    return vq->in_order ? (uint16_t)(d + 1) & vq->mask : vq->next[d];
}

int virtq_split_add_bufs(struct virtq *vq, const struct virtq_buf *b, int n, bool writes)
{
    /* Locals: the stores into the rings would otherwise make the
     * compiler reload every field (the kernel builds without strict
     * aliasing). */
    struct vring_desc *const desc = vq->s.desc;
    uint16_t *const ring = vq->s.avail->ring;
    struct virtq_state *const st = vq->st;
    const uint16_t mask = vq->mask;
    const uint16_t f = writes ? VRING_DESC_F_WRITE : 0;
    const uint16_t sf = VIRTQ_ST_INFLIGHT | (writes ? VIRTQ_ST_WRITE : 0);
    uint16_t idx = vq->avail_idx, next_desc = vq->s.desc_idx, free_head = vq->free_head;
    for (int i = 0; i < n; i++) {
        uint16_t id;
        if (vq->in_order) {
            id = next_desc & mask;
        } else {
            id = free_head;
            free_head = vq->next[id];
        }
        next_desc++;
        desc[id].addr = b[i].addr;
        desc[id].len = b[i].len;
        desc[id].flags = f;
        st[id] = (struct virtq_state){b[i].token, writes ? b[i].len : 0, sf, 1};
        ring[idx++ & mask] = id;
    }
    vq->s.desc_idx = next_desc;
    vq->free_head = free_head;
    vq->nfree -= (uint16_t)n;
    vq->nbufs += (uint16_t)n;
    virtq_split_publish(vq, idx);
    return n;
}

int virtq_split_add_chain(struct virtq *vq, const struct virtq_seg *seg, unsigned nr, unsigned nw,
                          uintptr_t token, uint32_t wlen)
{
    struct virtq_split *s = &vq->s;
    const unsigned n = nr + nw;
    const uint16_t head = virtq_split_head(vq);
    uint16_t id = head;
    /* s2.7.13.1: readable elements first, each but the last linked. */
    for (unsigned i = 0;; i++) {
        struct vring_desc *d = &s->desc[id];
        uint16_t after = virtq_split_after(vq, id);
        d->addr = seg[i].addr;
        d->len = seg[i].len;
        if (i + 1 == n) {
            d->flags = i >= nr ? VRING_DESC_F_WRITE : 0;
            vq->free_head = after; /* unused with IN_ORDER */
            break;
        }
        d->next = after;
        d->flags = VRING_DESC_F_NEXT | (i >= nr ? VRING_DESC_F_WRITE : 0);
        id = after;
    }
    uint16_t sf = VIRTQ_ST_INFLIGHT | (nw ? VIRTQ_ST_WRITE : 0);
    vq->st[head] = (struct virtq_state){token, wlen, sf, (uint16_t)n};
    s->avail->ring[vq->avail_idx & vq->mask] = head;
    s->desc_idx += (uint16_t)n;
    vq->nfree -= (uint16_t)n;
    vq->nbufs++;
    virtq_split_publish(vq, vq->avail_idx + 1);
    return 0;
}

/* s2.7.5.3: the chain in the head descriptor's table, linked by table
 * index with NEXT, readable elements first, none INDIRECT; the ring
 * descriptor says INDIRECT alone (never with NEXT, s2.7.5.3.1) and its
 * len is the table's bytes, a multiple of 16. */
int virtq_split_add_indirect(struct virtq *vq, const struct virtq_seg *seg, unsigned nr,
                             unsigned nw, uintptr_t token, uint32_t wlen)
{
    struct virtq_split *s = &vq->s;
    const unsigned n = nr + nw;
    const uint16_t head = virtq_split_head(vq);
    struct vring_desc *t = virtq_ind_table(vq, head);
    for (unsigned i = 0; i < n; i++) {
        bool last = i + 1 == n;
        t[i].addr = seg[i].addr;
        t[i].len = seg[i].len;
        t[i].flags =
            (uint16_t)((i >= nr ? VRING_DESC_F_WRITE : 0) | (last ? 0 : VRING_DESC_F_NEXT));
        t[i].next = last ? 0 : (uint16_t)(i + 1);
    }
    struct vring_desc *d = &s->desc[head];
    d->addr = (uintptr_t)t;
    d->len = n * (uint32_t)sizeof(*t);
    d->flags = VRING_DESC_F_INDIRECT;
    vq->free_head = virtq_split_after(vq, head); /* unused with IN_ORDER */
    uint16_t sf = VIRTQ_ST_INFLIGHT | (nw ? VIRTQ_ST_WRITE : 0);
    vq->st[head] = (struct virtq_state){token, wlen, sf, 1};
    s->avail->ring[vq->avail_idx & vq->mask] = head;
    s->desc_idx++;
    vq->nfree--;
    vq->nbufs++;
    vq->stats.indirect++;
    virtq_split_publish(vq, vq->avail_idx + 1);
    return 0;
}

int virtq_split_add_slots(struct virtq *vq, int n, const uint16_t *len, uint32_t extra)
{
    struct vring_desc *const desc = vq->s.desc;
    struct virtq_state *const st = vq->st;
    const uint16_t mask = vq->mask, idx = vq->avail_idx;
    int i;
    for (i = 0; i < n; i++) {
        uint16_t id = (uint16_t)(idx + i) & mask;
        if (st[id].flags & VIRTQ_ST_INFLIGHT)
            break;
        /* The device reads the descriptor table, so a store pulls the
         * line away from it; the length rarely changes between rounds. */
        uint32_t l = len[i] + extra;
        if (desc[id].len != l)
            desc[id].len = l;
        st[id].flags = VIRTQ_ST_INFLIGHT;
    }
    vq->s.desc_idx += (uint16_t)i;
    vq->nfree -= (uint16_t)i;
    vq->nbufs += (uint16_t)i;
    virtq_split_publish(vq, (uint16_t)(idx + i));
    return i;
}

/* s2.7.13.4 / s2.7.10: does the device want a notification for the
 * entries published since kick_old? */
bool virtq_split_kick_prepare(struct virtq *vq)
{
    /* The idx store must be globally visible before we read the device's
     * suppression state, or both sides can decide the other will act:
     * store->load is the one order x86 does not keep. */
    barrier_mb();
    if (vq->event_idx)
        return vring_need_event(VN_READ_ONCE(*vq->s.avail_event), vq->avail_idx, vq->kick_old);
    return !(VN_READ_ONCE(vq->s.used->flags) & VRING_USED_F_NO_NOTIFY);
}

/* The used entries from used_idx on, todo of them, in any order. links:
 * the queue keeps a free list (not bound). links and whether out is NULL
 * are constants at each call, so the compiler makes one loop per case
 * from this one: a bound queue's (TX slots) has no links to walk and one
 * descriptor a buffer, and its loop stays within the registers. */
static inline __attribute__((always_inline)) int virtq_split_take(struct virtq *vq,
                                                                  struct virtq_used_buf *out,
                                                                  int todo, uint16_t end,
                                                                  const bool links)
{
    const struct vring_used_elem *const ring = vq->s.used->ring;
    struct virtq_state *const st = vq->st;
    uint16_t *const next = vq->next;
    const uint16_t mask = vq->mask, start = vq->used_idx;
    uint16_t free_head = vq->free_head, freed = 0;
    int n;
    for (n = 0; n < todo; n++) {
        const struct vring_used_elem *e = &ring[(uint16_t)(start + n) & mask];
        uint32_t id = VN_READ_ONCE(e->id), len = VN_READ_ONCE(e->len), limit;
        enum virtq_bad kind;
        const char *bad = virtq_used_fault(st, mask + 1u, id, len, &limit, &kind);
        if (bad) {
            vq->used_idx = (uint16_t)(start + n);
            virtq_break(vq, kind, bad, id, len, limit, end);
            break;
        }
        struct virtq_state *s = &st[id];
        if (!(s->flags & VIRTQ_ST_WRITE) && len) {
            vq->stats.len_mismatch++; /* device-readable: counted, not passed on */
            len = 0;
        }
        if (out)
            out[n] = (struct virtq_used_buf){s->token, len};
        s->flags = 0;
        if (links) {
            /* The chain kept the free list's links: put it back whole. */
            uint16_t last = (uint16_t)id;
            for (uint16_t k = 1; k < s->ndesc; k++)
                last = next[last];
            next[last] = free_head;
            free_head = (uint16_t)id;
            freed += s->ndesc;
        }
    }
    vq->used_idx = (uint16_t)(start + n);
    vq->free_head = free_head;
    vq->nfree += links ? freed : (uint16_t)n; /* bound: one descriptor each */
    vq->nbufs -= (uint16_t)n;
    return n;
}

static int virtq_split_get_any_order(struct virtq *vq, struct virtq_used_buf *out, int max,
                                     uint16_t end)
{
    uint16_t pending = (uint16_t)(end - vq->used_idx);
    int todo = pending < max ? pending : max;
    if (!vq->bound)
        return virtq_split_take(vq, out, todo, end, true);
    /* TX slots want no tokens: a loop without the per-entry test. */
    return out ? virtq_split_take(vq, out, todo, end, false)
               : virtq_split_take(vq, NULL, todo, end, false);
}

/* IN_ORDER (s2.7.9): one used entry, at the offset of the batch's first
 * buffer, names the head of its last buffer; used.idx moves by the
 * number of buffers in the batch. Each buffer handed out takes one index. */
static int virtq_split_get_in_order(struct virtq *vq, struct virtq_used_buf *out, int max,
                                    uint16_t end)
{
    int n = 0;
    while (n < max && vq->used_idx != end) {
        if (!vq->batch) {
            const struct vring_used_elem *e = &vq->s.used->ring[vq->used_idx & vq->mask];
            uint32_t id = VN_READ_ONCE(e->id), len = VN_READ_ONCE(e->len);
            if (!virtq_check_used(vq, id, &len, end))
                break;
            vq->batch = true;
            vq->batch_last = (uint16_t)id;
            vq->batch_len = len;
        }
        virtq_batch_take(vq, virtq_oldest(vq, vq->s.desc_idx), out ? &out[n] : NULL);
        vq->nbufs--;
        n++;
        vq->used_idx++;
    }
    /* The batch's buffers each take an index: used.idx stopping short of
     * them is a device that miscounted. */
    if (vq->batch && vq->used_idx == end && n < max)
        virtq_break(vq, VIRTQ_BAD_IN_ORDER, "in-order batch longer than used idx", vq->batch_last,
                    vq->batch_len, vq->nbufs, end);
    return n;
}

int virtq_split_get_used(struct virtq *vq, struct virtq_used_buf *out, int max)
{
    uint16_t end = VN_READ_ONCE(vq->s.used->idx);
    /* s2.7.14: read the elements only after the index. */
    barrier_rmb();
    uint16_t pending = (uint16_t)(end - vq->used_idx);
    if (!pending)
        return 0;
    /* Every used index stands for a buffer we still have out. */
    if (pending > vq->nbufs) {
        virtq_break(vq, VIRTQ_BAD_UNAVAIL, "used idx ahead of the buffers in flight", 0, 0,
                    vq->nbufs, end);
        return 0;
    }
    int n = vq->in_order ? virtq_split_get_in_order(vq, out, max, end)
                         : virtq_split_get_any_order(vq, out, max, end);
    if (!vq->event_idx || !n)
        return n;
    if (vq->cb) {
        /* Notifications wanted: at the next entry (or the delayed one),
         * and the store seen before the next look at used.idx (s2.7.7.2). */
        VN_WRITE_ONCE(*vq->s.used_event, (uint16_t)(vq->used_idx + virtq_cb_delay(vq)));
        barrier_mb();
    } else if ((uint16_t)(vq->used_idx - vq->s.parked_at) >= vq->s.park_every) {
        virtq_split_park(vq);
    }
    return n;
}

bool virtq_split_has_used(const struct virtq *vq)
{
    return VN_READ_ONCE(vq->s.used->idx) != vq->used_idx;
}

void virtq_split_disable_cb(struct virtq *vq)
{
    if (vq->event_idx)
        virtq_split_park(vq);
    else
        VN_WRITE_ONCE(vq->s.avail->flags, VRING_AVAIL_F_NO_INTERRUPT); /* s2.7.7.1 */
}

bool virtq_split_enable_cb(struct virtq *vq)
{
    /* With EVENT_IDX flags stay 0 (s2.7.7.1) and used_event says "the
     * next entry" (or the delayed one); without it, flags 0 asks for
     * every one. */
    uint16_t delay = virtq_cb_delay(vq);
    if (vq->event_idx)
        VN_WRITE_ONCE(*vq->s.used_event, (uint16_t)(vq->used_idx + delay));
    else
        VN_WRITE_ONCE(vq->s.avail->flags, 0);
    /* The request must be visible before the re-check reads used.idx.
     * The device notifies when used.idx passes used_event: up to it, the
     * notification is still to come (s2.7.7.2). */
    barrier_mb();
    return (uint16_t)(VN_READ_ONCE(vq->s.used->idx) - vq->used_idx) > delay;
}
