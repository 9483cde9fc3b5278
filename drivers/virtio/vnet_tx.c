/* virtio-net transmit: the one pipeline every TX path goes through.
 *
 *   vnet_tx_reserve  how many frames may go now, with the full-ring rule
 *                    (txfull=wait|drop) and reclaim;
 *   fill             the caller's: bound slots written in place
 *                    (vnet_txslots.c), or buffers by reference or copied
 *                    into slots (vnet_txburst.c);
 *   vnet_tx_commit   makes them available with kicks every kick_batch
 *                    frames and at the end, and counts them.
 *
 * Plus polled reclaim and the stall watchdog. */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/time.h"

/* txfull=wait gives up after this long without enough free slots and
 * returns what is free: a stalled backend must not hang the app. */
#define VNET_TXWAIT_MAX_MS 200

void vnet_set_tx_done(struct vnet_dev *d, vnet_tx_done_fn fn, void *ctx)
{
    d->tx_done = fn;
    d->tx_ctx = ctx;
}

int vnet_tx_space(const struct vnet_dev *d)
{
    return virtq_nfree(d->txq[0].vq);
}

int vnet_tx_in_flight(const struct vnet_dev *d)
{
    return virtq_in_flight(d->txq[0].vq);
}

int vnet_tx_in_flight_q(const struct vnet_dev *d, unsigned q)
{
    return virtq_in_flight(d->txq[q].vq);
}

/* What can go now, up to want: any free descriptor, or on a bound queue
 * the free slots in ring order. */
static inline int vnet_tx_ready(const struct vnet_txq *tq, int want)
{
    return virtq_free_run(tq->vq, want);
}

/* Buffers out and none used for VNET_TX_STALL_US: the notification that
 * should have started the device may have been lost, so notify regardless
 * of suppression. A safety net, written with the RX one (vnet_rx.c) for
 * the lost wakeups seen (QEMU 7.2, EVENT_IDX, under load) while the 8259
 * PICs were left unmasked; re-checked since, runs with no watchdog on
 * every transport, with EVENT_IDX on and off, never stalled
 * (docs/driver.md). 50 ms, not less: a backend pausing for back-pressure
 * (tap, a few ms) is not stalled, and under TCG each kick waits for
 * QEMU's global lock. */
static void vnet_tx_watchdog(const struct vnet_dev *d, struct vnet_txq *tq)
{
    if (!virtq_in_flight(tq->vq))
        return;
    uint64_t now = time_cycles();
    if (now - tq->progress < d->tx_stall_cycles)
        return;
    virtq_notify_forced(tq->vq);
    tq->progress = now;
}

int vnet_txq_reclaim(struct vnet_dev *d, struct vnet_txq *tq)
{
    tq->st.reclaim_calls++;
    bool bound = virtq_bound(tq->vq); /* no tokens: nothing to give back */
    int n = virtq_get_used(tq->vq, bound ? NULL : tq->used, tq->size);
    vnet_notify_used(tq->vq, &tq->note, n);
    if (n == 0)
        vnet_tx_watchdog(d, tq);
    if (n <= 0)
        return n;
    tq->progress = time_cycles();
    tq->st.reclaimed += (uint64_t)n;
    if (d->tx_done && !bound)
        for (int i = 0; i < n; i++)
            d->tx_done(d->tx_ctx, (void *)tq->used[i].token);
    return n;
}

int vnet_txq_drain(struct vnet_dev *d, struct vnet_txq *tq, unsigned ms)
{
    uint64_t t0 = time_cycles(), limit = time_tsc_hz / 1000u * ms;
    while (virtq_in_flight(tq->vq)) {
        int r = vnet_txq_reclaim(d, tq);
        if (r < 0)
            return r;
        if (time_cycles() - t0 > limit)
            return -EBUSY;
        if (!r)
            vnet_relax();
    }
    return 0;
}

/* Kicks what is queued, then waits until want are ready: between looks
 * a queue with notifications halts until its interrupt (or the
 * watchdog's next look), a polled one spins (vnet_relax) rather than
 * reading the used ring: every read pulls the line away from the device
 * writing it. Returns what is ready (fewer than want after
 * VNET_TXWAIT_MAX_MS: counted, and the device's status checked), or
 * -EIO. */
static int vnet_tx_wait(struct vnet_dev *d, struct vnet_txq *tq, int want)
{
    struct virtq *vq = tq->vq;
    uint64_t t0 = time_cycles();
    uint64_t limit = time_tsc_hz / 1000u * VNET_TXWAIT_MAX_MS;
    virtq_kick(vq);
    int r = 0;
    while (vnet_tx_ready(tq, want) < want) {
        if (virtq_has_used(vq)) {
            r = vnet_txq_reclaim(d, tq);
            if (r < 0 || vnet_tx_ready(tq, want) >= want)
                break;
        } else {
            vnet_tx_watchdog(d, tq);
        }
        if (time_cycles() - t0 > limit) {
            tq->st.wait_timeouts++;
            r = vnet_check_status(d);
            break;
        }
        uint64_t look = tq->progress + d->tx_stall_cycles;
        if (!vnet_tx_halt(tq, look < t0 + limit ? look : t0 + limit))
            vnet_relax();
    }
    tq->st.full_wait_cycles += time_cycles() - t0;
    return r < 0 ? r : vnet_tx_ready(tq, want);
}

/* The full-ring rule, the one for every TX path. Frames come in bursts,
 * and a burst that finds fewer free than min(n, a quarter ring) finds the
 * ring full: under txfull=wait it waits until max(n, a quarter ring), at
 * most half the ring, is free. Handing out a slot or two at a time would
 * cost a burst's overhead per frame while the device still has a
 * backlog, and waiting for more than half would let the device drain
 * and idle. Under txfull=drop it returns what is free. */
int vnet_tx_reserve(struct vnet_dev *d, struct vnet_txq *tq, int n)
{
    const int num = tq->size, quarter = num / 4 ? num / 4 : 1;
    tq->reserved = 0;
    if (virtq_broken(tq->vq))
        return -EIO;
    if (n > num)
        n = num;
    if (n <= 0)
        return 0;
    int k = vnet_tx_ready(tq, n);
    if (!virtq_in_flight(tq->vq)) {
        tq->progress = time_cycles(); /* an idle gap is not a stall */
    } else if (k < n) {
        if (vnet_txq_reclaim(d, tq) < 0)
            return -EIO;
        k = vnet_tx_ready(tq, n);
    }
    if (k < n)
        tq->st.ring_full++;
    int batch = n < quarter ? n : quarter;
    if (k < batch && d->txfull == VNET_TXFULL_WAIT) {
        int want = n > quarter ? n : quarter, most = num / 2 > batch ? num / 2 : batch;
        if (want > most)
            want = most;
        int r = vnet_tx_wait(d, tq, want);
        if (r < 0)
            return r;
        k = r < n ? r : n;
    }
    tq->reserved = (uint16_t)k;
    return k;
}

/* Adds frames [i, i + k) of a commit: slot lengths, single buffers or
 * descriptor chains. */
static void vnet_tx_add(struct virtq *vq, const struct vnet_txfill *f, int i, int k, uint32_t hl)
{
    if (f->len) {
        virtq_add_slots(vq, k, f->len + i, hl);
    } else if (f->buf) {
        virtq_add_bufs(vq, f->buf + i, k, false);
    } else {
        /* the reservation counted every element: a chain is refused only
         * by a broken queue, and the commit then answers -EIO */
        for (int j = i; j < i + k; j++)
            virtq_add_chain(vq, f->chain[j].seg, f->chain[j].nseg, 0, f->chain[j].token);
    }
}

/* Adds n reserved frames (bound: slot lengths; else buffers or chains,
 * descs descriptors in all), kicking every kick_batch frames and at the
 * end, and counts them with bytes; dropped: frames the caller had no room
 * for (txfull=drop). */
int vnet_tx_commit_fill(struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_txfill *f, int n,
                        int descs, uint64_t bytes, int dropped)
{
    struct virtq *vq = tq->vq;
    if (n < 0 || descs < n || descs > tq->reserved || dropped < 0)
        return -EINVAL;
    tq->reserved = 0;
    /* A broken queue adds nothing and kicks nothing: the check after
     * says -EIO. */
    const int kb = d->kick_batch ? d->kick_batch : n;
    for (int i = 0; i < n; i += kb) {
        int k = n - i < kb ? n - i : kb;
        vnet_tx_add(vq, f, i, k, d->hdr_len);
        virtq_kick(vq);
    }
    if (virtq_broken(vq))
        return -EIO;
    if (n)
        tq->st.bursts++;
    tq->st.packets += (uint64_t)n;
    tq->st.bytes += bytes;
    tq->st.dropped += (uint64_t)dropped;
    return n;
}

int vnet_tx_commit(struct vnet_dev *d, struct vnet_txq *tq, const uint16_t *len,
                   const struct virtq_buf *buf, int n, uint64_t bytes, int dropped)
{
    struct vnet_txfill f = {len, buf, NULL};
    return vnet_tx_commit_fill(d, tq, &f, n, n, bytes, dropped);
}

int vnet_tx_reclaim(struct vnet_dev *d)
{
    return vnet_txq_reclaim(d, &d->txq[0]);
}

int vnet_tx_reclaim_q(struct vnet_dev *d, unsigned q)
{
    return vnet_txq_reclaim(d, &d->txq[q]);
}
