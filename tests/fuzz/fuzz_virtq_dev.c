/* The device side of the used-ring harness: tests/unit/sim_queue.c reads
 * what the driver made available and writes used buffers as the spec
 * says; the input decides which, with what length, and when to write
 * anything at all anywhere in the ring memory instead. While the device
 * keeps the rules (not hostile) every step is checked against the model:
 * it sees the driver's buffers whole and in the order they were added,
 * and a used buffer notification the driver asked for is never lost. */
#include "tests/fuzz/fuzz_virtq.h"

/* The model slot behind a buffer the device read: its first element's
 * address is the token (fuzz_virtq.c adds them so). */
static int held_slot(const struct fz *z, const struct sim_held *h)
{
    return h->chain.n ? fz_find(z, (uintptr_t)h->chain.addr[0]) : -1;
}

static uint32_t chain_wlen(const struct sim_chain *c)
{
    uint64_t w = 0;
    for (unsigned i = c->nr; i < c->n; i++)
        w += c->len[i];
    return (uint32_t)w;
}

void dev_take(struct fz *z, uint32_t k)
{
    uint32_t from = z->q.nheld, got = simq_take(&z->q, k);
    if (z->hostile)
        return;
    for (uint32_t i = from; i < from + got; i++) {
        const struct sim_held *h = &z->q.held[i];
        FUZZ_CHECK(!h->bad && z->added.count > 0);
        struct mbuf *b = &z->m[ring16_pop(&z->added)];
        FUZZ_CHECK(held_slot(z, h) == b - z->m && !b->taken);
        FUZZ_CHECK(h->ndesc == b->ndesc && h->chain.n == b->ndesc);
        FUZZ_CHECK(chain_wlen(&h->chain) == b->wlen);
        b->taken = true;
    }
}

/* Whether using held[first..k] with len keeps the rules; the length is
 * the last buffer's (one used element for an IN_ORDER batch). */
static bool honest_use(const struct fz *z, uint32_t first, uint32_t k, uint32_t len)
{
    for (uint32_t i = first; i <= k; i++) {
        int s = held_slot(z, &z->q.held[i]);
        if (s < 0 || !z->m[s].taken || z->m[s].done)
            return false;
    }
    const struct mbuf *last = &z->m[held_slot(z, &z->q.held[k])];
    return !last->writes || len <= last->wlen;
}

/* What the driver must hand back for an honest use, in ring order. The
 * used element names the last buffer; the driver reads it, and counts a
 * length for a device-readable one, as it hands back the first. */
static void expect_used(struct fz *z, uint32_t first, uint32_t k, uint32_t len)
{
    bool readable = !z->m[held_slot(z, &z->q.held[k])].writes;
    for (uint32_t i = first; i <= k; i++) {
        uint16_t s = (uint16_t)held_slot(z, &z->q.held[i]);
        struct mbuf *b = &z->m[s];
        uint32_t l = i == k && b->writes ? len : 0;
        bool mismatch = i == first && readable && len;
        FUZZ_CHECK(z->exp_count < z->num);
        z->exp[(z->exp_head + z->exp_count++) % z->num] = (struct expect){s, l, mismatch};
        b->done = true;
    }
}

/* Uses held buffer k (k % held), or with IN_ORDER the batch up to it. */
void dev_complete(struct fz *z, uint32_t k, uint32_t len)
{
    struct sim_queue *q = &z->q;
    if (!q->nheld)
        return;
    k %= q->nheld;
    uint32_t first = z->in_order ? 0 : k;
    if (!z->hostile && !honest_use(z, first, k, len))
        z->hostile = true;
    /* Asked for (enabled) and nothing pending: this one must notify. */
    bool must_notify = !z->hostile && virtq_cb_enabled(z->vq) && z->exp_count == 0;
    uint64_t irq0 = q->interrupts;
    simq_put_used(q, q->held[k].id, len, (uint16_t)(k - first + 1));
    if (must_notify)
        FUZZ_CHECK(q->interrupts > irq0);
    if (!z->hostile)
        expect_used(z, first, k, len);
    memmove(&q->held[first], &q->held[k + 1], (q->nheld - k - 1) * sizeof(q->held[0]));
    q->nheld -= k - first + 1;
}

/* The device's available buffer notification suppression. */
void dev_set_event(struct fz *z, int8_t delta)
{
    z->dev_event = (uint16_t)(z->q.last_avail + delta);
    simq_set_avail_event(&z->q, z->dev_event);
    if (z->packed)
        z->dev_mode = VRING_PACKED_EVENT_DESC;
}

void dev_set_no_notify(struct fz *z, bool on)
{
    simq_set_no_notify(&z->q, on);
    if (z->packed)
        z->dev_mode = on ? VRING_PACKED_EVENT_DISABLE : VRING_PACKED_EVENT_ENABLE;
    else
        z->dev_mode = on;
}

/* An id as a lying device picks it: one it holds, or any number. */
static uint32_t lie_id(struct fz *z)
{
    switch (fz_in8(z) & 3) {
    case 0:
        return z->q.nheld ? z->q.held[fz_in8(z) % z->q.nheld].id : 0;
    case 1:
        return fz_in8(z);
    case 2:
        return fz_in16(z);
    default:
        return fz_in32(z);
    }
}

/* A used element (split) or descriptor (packed) near the device's used
 * position, with any id, length and (packed) flags. */
void dev_raw_used(struct fz *z)
{
    struct sim_queue *q = &z->q;
    z->hostile = true;
    uint16_t at = (uint16_t)(q->used_idx + (int8_t)fz_in8(z));
    uint32_t id = lie_id(z), len = fz_len(z);
    if (z->packed) {
        simq_put_raw(q, at, (uint16_t)id, len, fz_in16(z));
        return;
    }
    struct vring_used_elem *e = &q->used->ring[at & (q->num - 1)];
    e->id = id;
    e->len = len;
    if (fz_in8(z) & 1)
        simq_set_used_idx(q, (uint16_t)(at + 1));
}

/* Split: used.idx anywhere; packed: one descriptor's flags. */
void dev_raw_idx(struct fz *z)
{
    struct sim_queue *q = &z->q;
    z->hostile = true;
    uint16_t at = (uint16_t)(q->used_idx + (int8_t)fz_in8(z));
    if (z->packed)
        q->pdesc[at & (q->num - 1)].flags = fz_in16(z);
    else
        simq_set_used_idx(q, fz_in8(z) & 1 ? fz_in16(z) : at);
}

/* Up to 8 bytes anywhere in the ring memory, the driver's areas too. */
void dev_raw_bytes(struct fz *z)
{
    z->hostile = true;
    size_t off = fz_in32(z) % z->ring_bytes;
    unsigned cnt = fz_in8(z) % 8 + 1;
    for (unsigned i = 0; i < cnt && off + i < z->ring_bytes; i++)
        z->ring[off + i] = fz_in8(z);
}
