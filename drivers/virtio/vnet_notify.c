/* Used-buffer notifications (virtio 1.2 s2.7.7): per queue poll, irq or
 * hybrid; the vectors the transport gives; the waits that halt; their
 * counters. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/irq.h"
#include "kernel/irq_cpu.h"
#include "kernel/json.h"

static void vnet_notify_poll(struct vnet_dev *d, const char *which, const char *why)
{
    printf("vnet: %s: %s: no interrupts (%s): notify=poll\n", d->vdev->name, which, why);
}

void vnet_notify_setup(struct vnet_dev *d)
{
    for (unsigned i = 0; i < d->npairs; i++) {
        d->rxq[i].note = (struct vnet_qnote){.want = d->params.notify_rx, .vector = -1};
        d->txq[i].note = (struct vnet_qnote){.want = d->params.notify_tx, .vector = -1};
    }
    bool rx = d->params.notify_rx != VNET_NOTIFY_POLL, tx = d->params.notify_tx != VNET_NOTIFY_POLL;
    if (!rx && !tx)
        return;
    const char *which = rx && tx ? "rx and tx" : rx ? "rx" : "tx";
    struct virtio_dev *v = d->vdev;
    const char *why = "the transport has none";
    if (!v->ops->irq_setup || v->ops->irq_setup(v, &why)) {
        vnet_notify_poll(d, which, why);
        return;
    }
    /* Waits need the timer for their time limits (and paced senders). */
    if (irq_timer_init()) {
        vnet_notify_poll(d, which, "no timer");
        return;
    }
    for (unsigned i = 0; i < d->npairs; i++) {
        d->rxq[i].note.mode = d->rxq[i].note.want;
        d->txq[i].note.mode = d->txq[i].note.want;
    }
}

void vnet_notify_queue(struct vnet_dev *d, unsigned q, struct vnet_qnote *n)
{
    if (n->mode == VNET_NOTIFY_POLL)
        return;
    const char *why = "";
    struct virtio_dev *v = d->vdev;
    if (v->ops->queue_irq(v, q, &n->vector, &why)) {
        vnet_notify_poll(d, q % 2 ? "tx" : "rx", why);
        n->mode = VNET_NOTIFY_POLL;
        n->vector = -1;
        return;
    }
    n->irq_base = irq_count(n->vector);
}

uint64_t vnet_note_irqs(const struct vnet_qnote *n)
{
    return n->vector >= 0 ? irq_count(n->vector) - n->irq_base : 0;
}

void vnet_notify_start(struct vnet_dev *d)
{
    for (unsigned i = 0; i < d->npairs; i++) {
        if (d->rxq[i].note.mode == VNET_NOTIFY_IRQ)
            virtq_enable_cb(d->rxq[i].vq);
        if (d->txq[i].note.mode == VNET_NOTIFY_IRQ)
            virtq_enable_cb_delayed(d->txq[i].vq);
    }
}

/* With interrupts off: notifications on and one more look (virtq does
 * the fence between the two). 1: buffers are there; 0: armed. A stale
 * pending note from before goes: only what comes after counts. TX asks
 * for its notification delayed, at 3/4 of what is out: more than a
 * txfull=wait ever waits for (at most half the ring free), so one
 * interrupt ends the wait. */
static int vnet_note_arm(struct virtq *vq, struct vnet_qnote *n, bool delayed, uint16_t after)
{
    irq_take(n->vector);
    bool busy = delayed ? virtq_enable_cb_delayed(vq) : virtq_enable_cb_after(vq, after);
    return busy ? 1 : 0;
}

/* After the halt (or the decision not to halt, cycles 0). */
static void vnet_note_done(struct virtq *vq, struct vnet_qnote *n, uint64_t cycles)
{
    if (cycles) {
        n->halts++;
        n->halt_cycles += cycles;
        if (irq_take(n->vector) && !virtq_has_used(vq))
            n->spurious++;
    }
    if (n->mode == VNET_NOTIFY_HYBRID)
        virtq_disable_cb(vq);
}

/* Whether the main loop's halt can end on an interrupt: pair 0's RX. */
bool vnet_can_idle(const struct vnet_dev *d)
{
    return d->rxq[0].note.mode != VNET_NOTIFY_POLL;
}

int vnet_idle_arm_cpu(struct vnet_dev *d, unsigned cpu)
{
    int r = -EAGAIN;
    for (unsigned i = 0; i < d->npairs; i++) {
        struct vnet_rxq *rq = &d->rxq[i];
        if (rq->note.cpu != cpu)
            continue;
        if (rq->note.mode == VNET_NOTIFY_POLL)
            return -EAGAIN; /* a pair nothing would wake us for */
        if (vnet_note_arm(rq->vq, &rq->note, false, (uint16_t)(d->rx_coalesce - 1)))
            return 1;
        r = 0;
    }
    return r;
}

int vnet_idle_arm(struct vnet_dev *d)
{
    return vnet_idle_arm_cpu(d, 0);
}

uint64_t vnet_idle_max_ns(const struct vnet_dev *d)
{
    const struct vnet_rxq *rq = &d->rxq[0];
    /* Only EVENT_IDX can ask for a later frame (s2.7.10). */
    if (rq->note.mode == VNET_NOTIFY_POLL || d->rx_coalesce < 2 ||
        !(d->features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX)))
        return 0;
    return (uint64_t)d->params.rx_coalesce_us * 1000u;
}

void vnet_idle_done_cpu(struct vnet_dev *d, unsigned cpu, uint64_t cycles)
{
    for (unsigned i = 0; i < d->npairs; i++) {
        struct vnet_rxq *rq = &d->rxq[i];
        if (rq->note.cpu == cpu && rq->note.mode != VNET_NOTIFY_POLL)
            vnet_note_done(rq->vq, &rq->note, cycles);
    }
}

void vnet_idle_done(struct vnet_dev *d, uint64_t cycles)
{
    vnet_idle_done_cpu(d, 0, cycles);
}

/* One queue's notifications to dest; nothing to do for a polled one. A
 * destination the message cannot carry: the queue is polled, its
 * notifications off, so its vector (still the boot CPU's) stays quiet. */
static int vnet_note_to(struct vnet_dev *d, unsigned q, struct virtq *vq, struct vnet_qnote *n,
                        unsigned cpu, uint32_t dest)
{
    n->cpu = (uint8_t)cpu;
    if (n->mode == VNET_NOTIFY_POLL)
        return 0;
    struct virtio_dev *v = d->vdev;
    if (!v->ops->queue_irq_to)
        return cpu ? -EOPNOTSUPP : 0; /* its line reaches the boot CPU */
    int r = v->ops->queue_irq_to(v, q, n->vector, dest);
    if (r != -ERANGE)
        return r;
    n->mode = VNET_NOTIFY_POLL;
    virtq_disable_cb(vq);
    return VNET_QUEUE_POLLED;
}

int vnet_queue_cpu(struct vnet_dev *d, unsigned q, bool tx, unsigned cpu, uint32_t apic_id)
{
    if (q >= d->npairs || cpu > UINT8_MAX)
        return -EINVAL;
    if (tx)
        return vnet_note_to(d, 2 * q + 1, d->txq[q].vq, &d->txq[q].note, cpu, apic_id);
    return vnet_note_to(d, 2 * q, d->rxq[q].vq, &d->rxq[q].note, cpu, apic_id);
}

bool vnet_tx_halt(struct vnet_txq *tq, uint64_t until)
{
    struct vnet_qnote *n = &tq->note;
    if (n->mode == VNET_NOTIFY_POLL)
        return false;
    irq_idle_enter();
    uint64_t cycles = 0;
    if (vnet_note_arm(tq->vq, n, true, 0))
        irq_idle_leave();
    else
        cycles = irq_idle(until);
    vnet_note_done(tq->vq, n, cycles);
    return true;
}

int vnet_note_irq_cpu(const struct vnet_qnote *n)
{
    return n->vector >= 0 ? irq_cpus_one(irq_cpus(n->vector)) : -1;
}

void vnet_notify_json(struct json *j, const struct vnet_dev *d, const struct vnet_qnote *n,
                      uint64_t packets)
{
    uint64_t irqs = vnet_note_irqs(n);
    json_str(j, "notify", vnet_notify_name(n->mode));
    if (n->want != n->mode)
        json_str(j, "notify_asked", vnet_notify_name(n->want));
    json_i64(j, "irq_vector", n->vector);
    /* One line for both queues (virtio-mmio): both count all of it. */
    json_bool(j, "irq_shared", n->vector >= 0 && d->rxq[0].note.vector == d->txq[0].note.vector);
    json_u64(j, "interrupts", irqs);
    json_i64(j, "irq_cpu", vnet_note_irq_cpu(n));
    json_double(j, "interrupts_per_1000", packets ? (double)irqs * 1000.0 / (double)packets : 0.0);
    json_u64(j, "halts", n->halts);
    json_u64(j, "halt_cycles", n->halt_cycles);
    json_u64(j, "spurious_wakeups", n->spurious);
    /* With EVENT_IDX the device signals when its used index passes
     * used_event; buffers that came with notifications on but without an
     * interrupt of their own were folded into another one. */
    bool ev = d->features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
    uint64_t folded = ev && n->used_while_on > irqs ? n->used_while_on - irqs : 0;
    json_u64(j, "used_event_suppressed", folded);
}
