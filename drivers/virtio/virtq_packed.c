/* Packed virtqueue (virtio 1.2 s2.8), driver side: one descriptor ring
 * both sides write, and the two event suppression structures.
 *
 * Indices are free-running over ring positions (num divides 2^16): index
 * i is position i & mask, and its wrap counter is 1 on even laps, i.e.
 * !(i & num) (s2.8.1: both counters start at 1). A descriptor the driver
 * made available at i carries AVAIL = wrap(i), USED = !wrap(i); the
 * device marks it used with both equal to wrap(i) (s2.8.1).
 *
 * Buffer ids: from a free list, or the position of the buffer's first
 * descriptor with IN_ORDER (so a batch's length follows from its last
 * id, s2.8.8) and on a bound queue (slot i is position i). */
#include "drivers/virtio/virtq_priv.h"

#define VRING_PACKED_F_BOTH (VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED)

size_t virtq_packed_bytes(uint16_t num)
{
    /* s2.8.10.1: ring 16-aligned, each event structure 4-aligned */
    return 16u * num + 2 * sizeof(struct vring_packed_event);
}

void virtq_packed_init(struct virtq *vq)
{
    uint8_t *base = vq->ring;
    vq->p.desc = (struct vring_packed_desc *)base;
    vq->p.driver = (struct vring_packed_event *)(base + 16u * vq->num);
    vq->p.device = vq->p.driver + 1;
    virtq_packed_disable_cb(vq);
}

/* The flags that make index i available (s2.8.21.1 step 6). */
static inline uint16_t virtq_packed_avail_bits(const struct virtq *vq, uint16_t i)
{
    return (i & vq->num) ? VRING_PACKED_DESC_F_USED : VRING_PACKED_DESC_F_AVAIL;
}

/* The flags of a descriptor the device used at index i. */
static inline uint16_t virtq_packed_used_bits(const struct virtq *vq, uint16_t i)
{
    return (i & vq->num) ? 0 : VRING_PACKED_F_BOTH;
}

/* An event structure's off_wrap for index i (s2.8.14). */
static inline uint16_t virtq_packed_off_wrap(const struct virtq *vq, uint16_t i)
{
    return (uint16_t)((i & vq->mask) | (!(i & vq->num) << VRING_PACKED_EVENT_WRAP));
}

/* Buffer ids by position (IN_ORDER, bound) or from the free list. */
static inline bool virtq_packed_ids_by_pos(const struct virtq *vq)
{
    return vq->in_order || vq->bound;
}

/* The first descriptor's flags go last, after a write barrier: the device
 * reads descriptors in ring order and sees none of the batch before it
 * (s2.8.21.1: "defers updating the descriptor flags for the first"). */
static inline void virtq_packed_publish(struct virtq *vq, uint16_t head, uint16_t flags,
                                        uint16_t idx)
{
    barrier_wmb();
    VN_WRITE_ONCE(vq->p.desc[head].flags, flags);
    vq->avail_idx = idx;
}

int virtq_packed_add_bufs(struct virtq *vq, const struct virtq_buf *b, int n, bool writes)
{
    struct vring_packed_desc *const desc = vq->p.desc;
    struct virtq_state *const st = vq->st;
    const uint16_t mask = vq->mask, w = writes ? VRING_DESC_F_WRITE : 0;
    const uint16_t sf = VIRTQ_ST_INFLIGHT | (writes ? VIRTQ_ST_WRITE : 0);
    const bool by_pos = virtq_packed_ids_by_pos(vq);
    uint16_t idx = vq->avail_idx, free_head = vq->free_head, head_flags = 0;
    for (int i = 0; i < n; i++, idx++) {
        uint16_t pos = idx & mask, id = pos;
        if (!by_pos) {
            id = free_head;
            free_head = vq->next[id];
        }
        desc[pos].addr = b[i].addr;
        desc[pos].len = b[i].len;
        desc[pos].id = id;
        uint16_t f = w | virtq_packed_avail_bits(vq, idx);
        if (i)
            desc[pos].flags = f;
        else
            head_flags = f;
        st[id] = (struct virtq_state){b[i].token, writes ? b[i].len : 0, sf, 1};
    }
    vq->free_head = free_head;
    vq->nfree -= (uint16_t)n;
    vq->nbufs += (uint16_t)n;
    virtq_packed_publish(vq, vq->avail_idx & mask, head_flags, idx);
    return n;
}

int virtq_packed_add_chain(struct virtq *vq, const struct virtq_seg *seg, unsigned nr, unsigned nw,
                           uintptr_t token, uint32_t wlen)
{
    struct vring_packed_desc *const desc = vq->p.desc;
    const unsigned n = nr + nw;
    const uint16_t first = vq->avail_idx;
    uint16_t id = first & vq->mask, head_flags = 0;
    if (!virtq_packed_ids_by_pos(vq)) {
        id = vq->free_head;
        vq->free_head = vq->next[id];
    }
    /* s2.8.6: the id in every element (it must be in the last), NEXT on
     * all but the last, readable elements first (s2.8.17). */
    for (unsigned i = 0; i < n; i++) {
        uint16_t idx = (uint16_t)(first + i), pos = idx & vq->mask;
        desc[pos].addr = seg[i].addr;
        desc[pos].len = seg[i].len;
        desc[pos].id = id;
        uint16_t f = virtq_packed_avail_bits(vq, idx) | (i >= nr ? VRING_DESC_F_WRITE : 0) |
                     (i + 1 < n ? VRING_DESC_F_NEXT : 0);
        if (i)
            desc[pos].flags = f;
        else
            head_flags = f;
    }
    uint16_t sf = VIRTQ_ST_INFLIGHT | (nw ? VIRTQ_ST_WRITE : 0);
    vq->st[id] = (struct virtq_state){token, wlen, sf, (uint16_t)n};
    vq->nfree -= (uint16_t)n;
    vq->nbufs++;
    virtq_packed_publish(vq, first & vq->mask, head_flags, (uint16_t)(first + n));
    return 0;
}

/* s2.8.19: the elements side by side in the buffer id's table, how many
 * said by the ring descriptor's len (16 bytes each), readable first, no
 * NEXT or INDIRECT inside, ids unused; the ring descriptor says INDIRECT
 * without NEXT and carries the buffer id. */
int virtq_packed_add_indirect(struct virtq *vq, const struct virtq_seg *seg, unsigned nr,
                              unsigned nw, uintptr_t token, uint32_t wlen)
{
    const unsigned n = nr + nw;
    const uint16_t first = vq->avail_idx, pos = first & vq->mask;
    uint16_t id = pos;
    if (!virtq_packed_ids_by_pos(vq)) {
        id = vq->free_head;
        vq->free_head = vq->next[id];
    }
    struct vring_packed_desc *t = virtq_ind_table(vq, id);
    for (unsigned i = 0; i < n; i++)
        t[i] = (struct vring_packed_desc){seg[i].addr, seg[i].len, 0,
                                          i >= nr ? VRING_DESC_F_WRITE : 0};
    struct vring_packed_desc *d = &vq->p.desc[pos];
    d->addr = (uintptr_t)t;
    d->len = n * (uint32_t)sizeof(*t);
    d->id = id;
    uint16_t sf = VIRTQ_ST_INFLIGHT | (nw ? VIRTQ_ST_WRITE : 0);
    vq->st[id] = (struct virtq_state){token, wlen, sf, 1};
    vq->nfree--;
    vq->nbufs++;
    vq->stats.indirect++;
    virtq_packed_publish(vq, pos, virtq_packed_avail_bits(vq, first) | VRING_DESC_F_INDIRECT,
                         (uint16_t)(first + 1));
    return 0;
}

int virtq_packed_add_slots(struct virtq *vq, int n, const uint16_t *len, uint32_t extra)
{
    struct vring_packed_desc *const desc = vq->p.desc;
    struct virtq_state *const st = vq->st;
    const uint16_t mask = vq->mask, num = vq->num, first = vq->avail_idx;
    uint16_t head_flags = 0;
    int i;
    for (i = 0; i < n; i++) {
        uint16_t idx = (uint16_t)(first + i), pos = idx & mask;
        if (st[pos].flags & VIRTQ_ST_INFLIGHT)
            break;
        /* The device wrote its used descriptor over this one: every
         * field is written again (the address it may have clobbered). */
        desc[pos].addr = st[pos].token;
        desc[pos].len = len[i] + extra;
        desc[pos].id = pos;
        uint16_t f = (idx & num) ? VRING_PACKED_DESC_F_USED : VRING_PACKED_DESC_F_AVAIL;
        if (i)
            desc[pos].flags = f;
        else
            head_flags = f;
        st[pos].flags = VIRTQ_ST_INFLIGHT;
    }
    if (!i)
        return 0;
    vq->nfree -= (uint16_t)i;
    vq->nbufs += (uint16_t)i;
    virtq_packed_publish(vq, first & mask, head_flags, (uint16_t)(first + i));
    return i;
}

/* s2.8.21.2 / s2.8.10: does the device want a notification for the
 * descriptors made available since kick_old? */
bool virtq_packed_kick_prepare(struct virtq *vq)
{
    /* The flags store must be visible before the device's structure is
     * read (store->load, the one order x86 does not keep). */
    barrier_mb();
    /* One read: flags and off_wrap from the same moment. */
    uint32_t ev = VN_READ_ONCE(*(const uint32_t *)vq->p.device);
    uint16_t flags = (uint16_t)(ev >> 16) & 3, off_wrap = (uint16_t)ev;
    if (flags == VRING_PACKED_EVENT_DISABLE)
        return false;
    if (flags != VRING_PACKED_EVENT_DESC || !vq->event_idx)
        return true; /* enabled, or a value we may not rely on: notify */
    uint16_t new_idx = vq->avail_idx, old_idx = vq->kick_old;
    uint16_t off = off_wrap & 0x7fff;
    if ((uint16_t)(new_idx - old_idx) > vq->num || off >= vq->num)
        return true;
    /* The event as a free-running index: its position on the lap its
     * wrap counter names, at most two laps behind new_idx. */
    uint16_t e0 = off | ((off_wrap >> VRING_PACKED_EVENT_WRAP) ? 0 : vq->num);
    uint16_t e = (uint16_t)(new_idx - ((uint16_t)(new_idx - e0) & (uint16_t)(2u * vq->num - 1)));
    return vring_need_event(e, new_idx, old_idx);
}

/* What the descriptor at index u says: 1 used, 0 not yet, -1 a lie. */
static inline int virtq_packed_state(const struct virtq *vq, uint16_t u, uint16_t *flags)
{
    uint16_t f = VN_READ_ONCE(vq->p.desc[u & vq->mask].flags);
    *flags = f;
    f &= VRING_PACKED_F_BOTH;
    bool used = f == virtq_packed_used_bits(vq, u);
    /* Nothing in flight from u on: the position still holds the previous
     * lap's descriptor, so one marked used on this lap is a lie. */
    if (u == vq->avail_idx)
        return used ? -1 : 0;
    if (used)
        return 1;
    /* Ours, still available; any other bits neither side writes. */
    return f == virtq_packed_avail_bits(vq, u) ? 0 : -1;
}

/* Breaks the queue for a descriptor whose flags lie; 0. */
static int virtq_packed_lie(struct virtq *vq, uint16_t used_idx, uint16_t flags)
{
    const char *what = used_idx == vq->avail_idx ? "used descriptor ahead of the buffers in flight"
                                                 : "descriptor flags do not match the wrap counter";
    virtq_break(vq, VIRTQ_BAD_UNAVAIL, what, used_idx & vq->mask, 0, vq->nbufs, flags);
    return 0;
}

/* One used descriptor at used_idx, flags already read: the buffer it
 * names, checked. NULL after breaking the queue. */
static struct virtq_state *virtq_packed_read_used(struct virtq *vq, uint16_t flags, uint32_t *id,
                                                  uint32_t *len)
{
    const struct vring_packed_desc *d = &vq->p.desc[vq->used_idx & vq->mask];
    /* s2.8.22: id and len only after the flags said used. */
    barrier_rmb();
    *id = VN_READ_ONCE(d->id);
    /* s2.8.4: the length means something only with WRITE. QEMU 7.2 never
     * sets WRITE in a used descriptor (Linux ignores the flag too), so a
     * buffer we offered for writing takes the length anyway, checked;
     * for a device-readable one it counts only with WRITE. */
    bool ours = *id < vq->num && (vq->st[*id].flags & VIRTQ_ST_WRITE);
    *len = ours || (flags & VRING_DESC_F_WRITE) ? VN_READ_ONCE(d->len) : 0;
    return virtq_check_used(vq, *id, len, flags);
}

/* IN_ORDER (s2.8.8): one used descriptor, where the batch's first buffer
 * was, names the last one; the next comes after the batch's last
 * descriptor. The buffers are handed out from the oldest. */
static int virtq_packed_get_in_order(struct virtq *vq, struct virtq_used_buf *out, int max)
{
    int n = 0;
    while (n < max) {
        if (vq->batch) {
            virtq_batch_take(vq, virtq_oldest(vq, vq->avail_idx), out ? &out[n] : NULL);
            vq->nbufs--;
            n++;
            continue;
        }
        uint16_t flags;
        int state = virtq_packed_state(vq, vq->used_idx, &flags);
        if (state <= 0)
            return n + (state < 0 ? virtq_packed_lie(vq, vq->used_idx, flags) : 0);
        uint32_t id, len;
        struct virtq_state *s = virtq_packed_read_used(vq, flags, &id, &len);
        if (!s)
            break;
        vq->batch = true;
        vq->batch_last = (uint16_t)id;
        vq->batch_len = len;
        vq->used_idx += (uint16_t)(((uint16_t)id - vq->used_idx) & vq->mask) + s->ndesc;
    }
    return n;
}

/* Used descriptors in any order, each naming one buffer; the next is
 * after the buffer's last descriptor (s2.8.6). Fields in locals: the
 * stores into the ring would make the compiler reload them. */
static int virtq_packed_get_any_order(struct virtq *vq, struct virtq_used_buf *out, int max)
{
    const struct vring_packed_desc *const desc = vq->p.desc;
    struct virtq_state *const st = vq->st;
    uint16_t *const next = vq->next;
    const uint16_t mask = vq->mask, num = vq->num, avail = vq->avail_idx;
    const bool links = !vq->bound; /* bound: ids are positions, no free list */
    uint16_t used = vq->used_idx, free_head = vq->free_head, freed = 0;
    int n = 0;
    while (n < max && used != avail) {
        uint16_t f = VN_READ_ONCE(desc[used & mask].flags);
        if ((f & VRING_PACKED_F_BOTH) != ((used & num) ? 0 : VRING_PACKED_F_BOTH))
            break; /* not used yet, or a lie: told apart below */
        /* s2.8.22: id and len only after the flags said used. */
        barrier_rmb();
        uint32_t id = VN_READ_ONCE(desc[used & mask].id), limit;
        uint32_t len = VN_READ_ONCE(desc[used & mask].len);
        enum virtq_bad kind;
        const char *bad = virtq_used_fault(st, num, id, len, &limit, &kind);
        if (bad) {
            vq->used_idx = used;
            virtq_break(vq, kind, bad, id, len, limit, f);
            break;
        }
        struct virtq_state *s = &st[id];
        /* s2.8.4: a length only with WRITE. QEMU 7.2 never sets it, so a
         * buffer offered for writing takes the length anyway (checked);
         * a device-readable one with WRITE and a length is counted, and
         * comes back with none. */
        if (!(s->flags & VIRTQ_ST_WRITE)) {
            if ((f & VRING_DESC_F_WRITE) && len)
                vq->stats.len_mismatch++;
            len = 0;
        }
        if (out)
            out[n] = (struct virtq_used_buf){s->token, len};
        s->flags = 0;
        used += s->ndesc;
        freed += s->ndesc;
        if (links) {
            next[id] = free_head;
            free_head = (uint16_t)id;
        }
        n++;
    }
    vq->used_idx = used;
    vq->free_head = free_head;
    vq->nfree += freed;
    vq->nbufs -= (uint16_t)n;
    uint16_t flags;
    if (n < max && !vq->broken && virtq_packed_state(vq, used, &flags) < 0)
        virtq_packed_lie(vq, used, flags);
    return n;
}

int virtq_packed_get_used(struct virtq *vq, struct virtq_used_buf *out, int max)
{
    int n = vq->in_order ? virtq_packed_get_in_order(vq, out, max)
                         : virtq_packed_get_any_order(vq, out, max);
    if (n && vq->cb && vq->event_idx) {
        /* Notifications wanted: at the next used descriptor (or the
         * delayed one), and the store seen before the next look at the
         * ring. */
        VN_WRITE_ONCE(vq->p.driver->off_wrap,
                      virtq_packed_off_wrap(vq, (uint16_t)(vq->used_idx + virtq_cb_delay(vq))));
        barrier_mb();
    }
    return n;
}

bool virtq_packed_has_used(const struct virtq *vq)
{
    uint16_t flags;
    /* A lie counts: virtq_get_used reports it. */
    return virtq_packed_state(vq, vq->used_idx, &flags) != 0;
}

void virtq_packed_disable_cb(struct virtq *vq)
{
    VN_WRITE_ONCE(vq->p.driver->flags, VRING_PACKED_EVENT_DISABLE); /* s2.8.10 */
}

bool virtq_packed_enable_cb(struct virtq *vq)
{
    struct vring_packed_event *ev = vq->p.driver;
    if (vq->event_idx) {
        /* The next used descriptor, where the driver is (or the delayed
         * one): its offset and wrap counter before the flags that make
         * the device look. */
        VN_WRITE_ONCE(ev->off_wrap,
                      virtq_packed_off_wrap(vq, (uint16_t)(vq->used_idx + virtq_cb_delay(vq))));
        barrier_wmb();
        VN_WRITE_ONCE(ev->flags, VRING_PACKED_EVENT_DESC);
    } else {
        VN_WRITE_ONCE(ev->flags, VRING_PACKED_EVENT_ENABLE);
    }
    /* The request must be visible before the re-check reads the ring.
     * Anything used at our position counts, delayed or not: a chain's
     * used descriptor skips positions, so the one at the delayed
     * position may never be written. */
    barrier_mb();
    return virtq_packed_has_used(vq);
}
