/* The device side of one simulated virtqueue (see sim_virtio.h), split
 * or packed. It plays the device by the spec: split, it reads avail.idx,
 * then the entries, then the descriptors, and writes used elements, then
 * used.idx; packed, it reads descriptors in ring order while their flags
 * say available on its wrap counter, and writes a used descriptor's id and
 * len before its flags. Then it decides on a used buffer notification
 * from the driver's suppression fields. */
#include <errno.h>
#include <string.h>

#include "kernel/mem.h"
#include "sim_virtio.h"

#define BOTH (VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED)

void simq_attach(struct sim_queue *sq, uint16_t num, uint64_t desc, uint64_t driver,
                 uint64_t device, unsigned flags)
{
    uint16_t max = sq->max;
    int vector = sq->vector; /* set before the queue (s4.1.5.1.3) */
    memset(sq, 0, sizeof(*sq));
    sq->max = max;
    sq->vector = vector;
    sq->num = num;
    sq->packed = flags & VIRTQ_F_PACKED;
    sq->event_idx = flags & VIRTQ_F_EVENT_IDX;
    sq->indirect = flags & VIRTQ_F_INDIRECT;
    if (sq->packed) {
        sq->pdesc = (struct vring_packed_desc *)(uintptr_t)desc;
        sq->driver_ev = (struct vring_packed_event *)(uintptr_t)driver;
        sq->device_ev = (struct vring_packed_event *)(uintptr_t)device;
    } else {
        sq->desc = (struct vring_desc *)(uintptr_t)desc;
        sq->avail = (struct vring_avail *)(uintptr_t)driver;
        sq->used = (struct vring_used *)(uintptr_t)device;
    }
    sq->ndesc_of = sim_zalloc(sizeof(*sq->ndesc_of) * num, 64);
    sq->held = sim_zalloc(sizeof(*sq->held) * num, 64);
    sq->ready = true;
}

/* Packed: the flags of index i made available, and used (s2.8.1). */
static uint16_t avail_bits(const struct sim_queue *sq, uint16_t i)
{
    return (i & sq->num) ? VRING_PACKED_DESC_F_USED : VRING_PACKED_DESC_F_AVAIL;
}
static uint16_t used_bits(const struct sim_queue *sq, uint16_t i)
{
    return (i & sq->num) ? 0 : BOTH;
}

static bool packed_avail(const struct sim_queue *sq, uint16_t i)
{
    uint16_t f = __atomic_load_n(&sq->pdesc[i & (sq->num - 1)].flags, __ATOMIC_ACQUIRE);
    return (f & BOTH) == avail_bits(sq, i);
}

/* Adds one element to a chain being read. */
static void chain_add(struct sim_held *h, uint64_t addr, uint32_t len, bool w)
{
    struct sim_chain *c = &h->chain;
    if (c->n == SIM_SEG_MAX || (!w && c->n > c->nr)) {
        h->bad = true; /* too long, or readable after writable (s2.7.4.2) */
        return;
    }
    c->addr[c->n] = addr;
    c->len[c->n] = len;
    c->n++;
    if (!w)
        c->nr++;
}

/* An indirect descriptor (addr, len, its flags) as the device reads it:
 * the table's elements into h, or h->bad for a driver rule broken
 * (s2.7.5.3.1, s2.8.19). The WRITE flag of the indirect descriptor itself
 * means nothing (the device ignores it). */
static void read_indirect(const struct sim_queue *sq, struct sim_held *h, uint64_t addr,
                          uint32_t len, uint16_t flags)
{
    uint32_t n = len / 16u;
    h->indirect = true;
    if (!sq->indirect || (flags & VRING_DESC_F_NEXT) || !len || len % 16u || n > sq->num) {
        h->bad = true;
        return;
    }
    if (sq->packed) {
        /* s2.8.19: the table's elements side by side, len says how many */
        const struct vring_packed_desc *t = (const void *)(uintptr_t)addr;
        for (uint32_t i = 0; i < n && !h->bad; i++) {
            if (t[i].flags & (VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT))
                h->bad = true;
            else
                chain_add(h, t[i].addr, t[i].len, t[i].flags & VRING_DESC_F_WRITE);
        }
        return;
    }
    /* s2.7.5.3: a chain of its own from entry 0, linked by table index */
    const struct vring_desc *t = (const void *)(uintptr_t)addr;
    uint32_t i = 0;
    for (uint32_t k = 0; !h->bad; k++) {
        if (i >= n || k == n || (t[i].flags & VRING_DESC_F_INDIRECT)) {
            h->bad = true;
            return;
        }
        chain_add(h, t[i].addr, t[i].len, t[i].flags & VRING_DESC_F_WRITE);
        if (!(t[i].flags & VRING_DESC_F_NEXT))
            return;
        i = t[i].next;
    }
}

/* Reads the buffer starting at avail entry or position i (not taken). */
static void read_split(const struct sim_queue *sq, uint16_t i, struct sim_held *h)
{
    uint16_t d = sq->avail->ring[i & (sq->num - 1)];
    *h = (struct sim_held){.id = d};
    for (;;) {
        if (d >= sq->num || h->ndesc == sq->num) {
            h->bad = true;
            return;
        }
        const struct vring_desc *e = &sq->desc[d];
        h->ndesc++;
        if (e->flags & VRING_DESC_F_INDIRECT) {
            /* s2.7.5.3.2: direct descriptors, then one indirect, last */
            read_indirect(sq, h, e->addr, e->len, e->flags);
            return;
        }
        chain_add(h, e->addr, e->len, e->flags & VRING_DESC_F_WRITE);
        if (!(e->flags & VRING_DESC_F_NEXT))
            return;
        d = e->next;
    }
}

/* Packed: false when the buffer is not all available yet. */
static bool read_packed(const struct sim_queue *sq, uint16_t i, struct sim_held *h)
{
    *h = (struct sim_held){0};
    for (;;) {
        uint16_t at = (uint16_t)(i + h->ndesc);
        if (h->ndesc == sq->num || !packed_avail(sq, at))
            return false;
        const struct vring_packed_desc *e = &sq->pdesc[at & (sq->num - 1)];
        h->ndesc++;
        h->id = e->id; /* s2.8.6: the last element's id counts */
        if (e->flags & VRING_DESC_F_INDIRECT) {
            /* s2.8.19: a buffer is one indirect descriptor, or direct ones */
            if (h->ndesc > 1)
                h->bad = true;
            read_indirect(sq, h, e->addr, e->len, e->flags);
            return true;
        }
        chain_add(h, e->addr, e->len, e->flags & VRING_DESC_F_WRITE);
        if (!(e->flags & VRING_DESC_F_NEXT))
            return true;
    }
}

/* The k-th buffer from the device's position; false when there is none. */
static bool read_nth(const struct sim_queue *sq, uint32_t k, struct sim_held *h)
{
    if (!sq->packed) {
        uint16_t end = __atomic_load_n(&sq->avail->idx, __ATOMIC_ACQUIRE);
        if (k >= (uint16_t)(end - sq->last_avail))
            return false;
        read_split(sq, (uint16_t)(sq->last_avail + k), h);
        return true;
    }
    uint16_t i = sq->last_avail;
    for (uint32_t b = 0;; b++) {
        if (!read_packed(sq, i, h))
            return false;
        if (b == k)
            return true;
        i += h->ndesc;
    }
}

uint32_t simq_pending(const struct sim_queue *sq)
{
    if (!sq->ready)
        return 0; /* never set up, or reset */
    if (!sq->packed)
        return (uint16_t)(__atomic_load_n(&sq->avail->idx, __ATOMIC_ACQUIRE) - sq->last_avail);
    struct sim_held h;
    uint32_t n = 0;
    for (uint16_t i = sq->last_avail; n < sq->num && read_packed(sq, i, &h); i += h.ndesc)
        n++;
    return n;
}

int simq_peek(const struct sim_queue *sq, uint32_t k, struct sim_chain *c)
{
    struct sim_held h;
    if (!read_nth(sq, k, &h))
        return -ENOENT;
    *c = h.chain;
    return h.bad ? -EINVAL : 0;
}

uint32_t simq_take(struct sim_queue *sq, uint32_t n)
{
    uint32_t i;
    for (i = 0; (n == 0 || i < n) && sq->nheld < sq->num; i++) {
        struct sim_held *h = &sq->held[sq->nheld];
        if (!read_nth(sq, 0, h))
            break;
        sq->nheld++;
        sq->indirect_bufs += h->indirect;
        if (!sq->packed) {
            sq->last_avail++;
            continue;
        }
        sq->last_avail += h->ndesc;
        if (h->id < sq->num)
            sq->ndesc_of[h->id] = h->ndesc;
    }
    return i;
}

int simq_chain(const struct sim_queue *sq, const struct sim_held *h, struct sim_chain *c)
{
    (void)sq;
    *c = h->chain;
    return h->bad ? -EINVAL : 0;
}

/* Whether an event index e (free-running, as the driver set it) lies in
 * [old, new): s2.7.7.2 and, with positions, s2.8.10. */
static bool in_window(uint16_t e, uint16_t old, uint16_t new_idx)
{
    return (uint16_t)(new_idx - e - 1) < (uint16_t)(new_idx - old);
}

/* Packed off_wrap as a free-running index at most two laps behind ref. */
static uint16_t packed_event(const struct sim_queue *sq, uint16_t off_wrap, uint16_t ref)
{
    uint16_t e0 = (off_wrap & 0x7fff) | ((off_wrap >> VRING_PACKED_EVENT_WRAP) ? 0 : sq->num);
    return ref - ((uint16_t)(ref - e0) & (uint16_t)(2u * sq->num - 1));
}

static void decide_interrupt(struct sim_queue *sq, uint16_t old, uint16_t new_idx)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    bool need;
    if (sq->packed) {
        uint16_t f = __atomic_load_n(&sq->driver_ev->flags, __ATOMIC_RELAXED);
        uint16_t ow = __atomic_load_n(&sq->driver_ev->off_wrap, __ATOMIC_RELAXED);
        if (f == VRING_PACKED_EVENT_DESC)
            need = in_window(packed_event(sq, ow, new_idx), old, new_idx);
        else
            need = f == VRING_PACKED_EVENT_ENABLE;
    } else if (sq->event_idx) {
        uint16_t ev = __atomic_load_n(&sq->avail->ring[sq->num], __ATOMIC_RELAXED);
        need = in_window(ev, old, new_idx);
    } else {
        need = !(__atomic_load_n(&sq->avail->flags, __ATOMIC_RELAXED) & VRING_AVAIL_F_NO_INTERRUPT);
    }
    if (need) {
        sq->interrupts++;
        if (sq->vector)
            sim_irq_raise(sq->vector);
    }
}

/* Packed: the descriptors count buffers take from the used position on
 * (IN_ORDER batches: ids are positions); one buffer: the id's own. */
static uint16_t packed_skip(const struct sim_queue *sq, uint32_t id, uint16_t count)
{
    const uint16_t mask = sq->num - 1;
    if (count == 1)
        return id < sq->num && sq->ndesc_of[id] ? sq->ndesc_of[id] : 1;
    uint16_t skip = 0;
    for (uint16_t k = 0; k < count; k++)
        skip += sq->ndesc_of[(uint16_t)(sq->used_idx + skip) & mask];
    return skip;
}

void simq_put_used(struct sim_queue *sq, uint32_t id, uint32_t len, uint16_t count)
{
    uint16_t old = sq->used_idx;
    if (sq->packed) {
        uint16_t skip = packed_skip(sq, id, count);
        simq_put_raw(sq, old, (uint16_t)id, len,
                     used_bits(sq, old) | (len ? VRING_DESC_F_WRITE : 0));
        sq->used_idx += skip;
    } else {
        struct vring_used_elem *e = &sq->used->ring[old & (sq->num - 1)];
        e->id = id;
        e->len = len;
        sq->used_idx += count;
        __atomic_store_n(&sq->used->idx, sq->used_idx, __ATOMIC_RELEASE);
    }
    decide_interrupt(sq, old, sq->used_idx);
}

void simq_put_raw(struct sim_queue *sq, uint16_t at, uint16_t id, uint32_t len, uint16_t flags)
{
    struct vring_packed_desc *d = &sq->pdesc[at & (sq->num - 1)];
    d->id = id;
    d->len = len;
    __atomic_store_n(&d->flags, flags, __ATOMIC_RELEASE);
}

void simq_set_used_idx(struct sim_queue *sq, uint16_t idx)
{
    sq->used_idx = idx;
    __atomic_store_n(&sq->used->idx, idx, __ATOMIC_RELEASE);
}

void simq_set_avail_event(struct sim_queue *sq, uint16_t v)
{
    if (!sq->packed) {
        *(uint16_t *)&sq->used->ring[sq->num] = v;
        return;
    }
    sq->device_ev->off_wrap =
        (uint16_t)((v & (sq->num - 1)) | (!(v & sq->num) << VRING_PACKED_EVENT_WRAP));
    sq->device_ev->flags = VRING_PACKED_EVENT_DESC;
}

void simq_set_no_notify(struct sim_queue *sq, bool on)
{
    if (sq->packed)
        sq->device_ev->flags = on ? VRING_PACKED_EVENT_DISABLE : VRING_PACKED_EVENT_ENABLE;
    else
        sq->used->flags = on ? VRING_USED_F_NO_NOTIFY : 0;
}
