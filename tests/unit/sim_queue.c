/* The device side of one simulated virtqueue (see sim_virtio.h). It plays
 * the device by the spec: reads avail.idx, then the entries, then the
 * descriptors; writes used elements, then used.idx, then decides on a
 * used buffer notification from the driver's suppression fields. */
#include <errno.h>
#include <string.h>

#include "sim_virtio.h"

void simq_attach(struct sim_queue *sq, uint16_t num, uint64_t desc, uint64_t driver,
                 uint64_t device, bool event_idx)
{
    uint16_t max = sq->max;
    memset(sq, 0, sizeof(*sq));
    sq->max = max;
    sq->num = num;
    sq->event_idx = event_idx;
    sq->desc = (struct vring_desc *)(uintptr_t)desc;
    sq->avail = (struct vring_avail *)(uintptr_t)driver;
    sq->used = (struct vring_used *)(uintptr_t)device;
    sq->ready = true;
}

uint32_t simq_pending(const struct sim_queue *sq)
{
    return (uint16_t)(__atomic_load_n(&sq->avail->idx, __ATOMIC_ACQUIRE) - sq->last_avail);
}

/* Descriptors of the chain at head (split), at most the queue size. */
static uint16_t simq_chain_len(const struct sim_queue *sq, uint16_t head)
{
    uint16_t n = 1, d = head;
    while ((sq->desc[d].flags & VRING_DESC_F_NEXT) && n <= sq->num) {
        d = sq->desc[d].next;
        n++;
    }
    return n;
}

int simq_peek(const struct sim_queue *sq, uint32_t k, struct sim_chain *c)
{
    if (k >= simq_pending(sq))
        return -ENOENT;
    uint16_t head = sq->avail->ring[(uint16_t)(sq->last_avail + k) & (sq->num - 1)];
    struct sim_held h = {head, simq_chain_len(sq, head)};
    return simq_chain(sq, &h, c);
}

uint32_t simq_take(struct sim_queue *sq, uint32_t n)
{
    uint32_t avail = simq_pending(sq), i;
    if (n == 0 || n > avail)
        n = avail;
    for (i = 0; i < n; i++) {
        uint16_t head = sq->avail->ring[(sq->last_avail++) & (sq->num - 1)];
        sq->held[sq->nheld++] = (struct sim_held){head, simq_chain_len(sq, head)};
    }
    return n;
}

int simq_chain(const struct sim_queue *sq, const struct sim_held *h, struct sim_chain *c)
{
    uint16_t d = h->id;
    c->n = c->nr = 0;
    for (;;) {
        if (c->n == SIM_SEG_MAX || d >= sq->num)
            return -EINVAL;
        const struct vring_desc *e = &sq->desc[d];
        bool w = e->flags & VRING_DESC_F_WRITE;
        if (!w && c->n > c->nr)
            return -EINVAL; /* readable after writable, s2.7.4.2 */
        c->addr[c->n] = e->addr;
        c->len[c->n] = e->len;
        c->n++;
        if (!w)
            c->nr++;
        if (!(e->flags & VRING_DESC_F_NEXT))
            return 0;
        d = e->next;
    }
}

/* s2.7.7.2: with EVENT_IDX, notify when the used index moved past
 * used_event; without, unless the driver set NO_INTERRUPT. */
static void simq_decide_interrupt(struct sim_queue *sq, uint16_t old, uint16_t new_idx)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    bool need;
    if (sq->event_idx) {
        uint16_t ev = __atomic_load_n(&sq->avail->ring[sq->num], __ATOMIC_RELAXED);
        need = (uint16_t)(new_idx - ev - 1) < (uint16_t)(new_idx - old);
    } else {
        need = !(__atomic_load_n(&sq->avail->flags, __ATOMIC_RELAXED) & VRING_AVAIL_F_NO_INTERRUPT);
    }
    if (need)
        sq->interrupts++;
}

void simq_put_used(struct sim_queue *sq, uint32_t id, uint32_t len, uint16_t count)
{
    struct vring_used_elem *e = &sq->used->ring[sq->used_idx & (sq->num - 1)];
    e->id = id;
    e->len = len;
    uint16_t old = sq->used_idx;
    sq->used_idx += count;
    __atomic_store_n(&sq->used->idx, sq->used_idx, __ATOMIC_RELEASE);
    simq_decide_interrupt(sq, old, sq->used_idx);
}

void simq_set_used_idx(struct sim_queue *sq, uint16_t idx)
{
    sq->used_idx = idx;
    __atomic_store_n(&sq->used->idx, idx, __ATOMIC_RELEASE);
}

void simq_set_avail_event(struct sim_queue *sq, uint16_t v)
{
    *(uint16_t *)&sq->used->ring[sq->num] = v;
}

void simq_set_no_notify(struct sim_queue *sq, bool on)
{
    sq->used->flags = on ? VRING_USED_F_NO_NOTIFY : 0;
}
