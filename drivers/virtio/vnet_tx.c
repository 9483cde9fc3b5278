/* virtio-net transmit: bursts with batched kicks, polled reclaim, and the
 * full-ring policy (txfull=wait|drop). */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "kernel/time.h"

/* txfull=wait gives up after this long without a free descriptor and
 * returns what it queued: a stalled backend must not hang the app. */
#define VNET_TXWAIT_MAX_MS 200
#define VNET_TX_CHUNK      64 /* frames handed to the virtqueue per call */

void vnet_set_tx_done(struct vnet_dev *d, vnet_tx_done_fn fn, void *ctx)
{
    d->tx_done = fn;
    d->tx_ctx = ctx;
}

int vnet_tx_space(const struct vnet_dev *d)
{
    return virtq_nfree(d->tx);
}

int vnet_tx_in_flight(const struct vnet_dev *d)
{
    return virtq_in_flight(d->tx);
}

/* What a waiter for want descriptors can use now: any free one, or on a
 * bound queue the free slots in ring order. */
static inline int vnet_tx_ready(const struct vnet_dev *d, int want)
{
    return virtq_bound(d->tx) ? virtq_free_run(d->tx, want) : virtq_nfree(d->tx);
}

/* Buffers out and none used for VNET_TX_STALL_US: the notification that
 * should have started the device may have been lost, so notify regardless
 * of suppression. A safety net: lost wakeups were seen only while the
 * 8259 PICs were left unmasked; since then runs with no watchdog on every
 * transport, with EVENT_IDX on and off, never stalled (docs/driver.md).
 * 50 ms, not less: a backend pausing for back-pressure (tap, a few ms) is
 * not stalled, and under TCG each kick waits for QEMU's global lock. */
static void vnet_tx_watchdog(struct vnet_dev *d)
{
    if (!virtq_in_flight(d->tx))
        return;
    uint64_t now = time_cycles();
    if (now - d->tx_progress < d->tx_stall_cycles)
        return;
    virtq_notify_forced(d->tx);
    d->tx_progress = now;
}

int vnet_tx_reclaim(struct vnet_dev *d)
{
    d->txs.reclaim_calls++;
    bool bound = virtq_bound(d->tx); /* no tokens: nothing to give back */
    int n = virtq_get_used(d->tx, bound ? NULL : d->tx_used, d->tx_size);
    if (n == 0)
        vnet_tx_watchdog(d);
    if (n <= 0)
        return n;
    d->tx_progress = time_cycles();
    d->txs.reclaimed += (uint64_t)n;
    if (d->tx_done && !bound)
        for (int i = 0; i < n; i++)
            d->tx_done(d->tx_ctx, (void *)d->tx_used[i].token);
    return n;
}

/* Ring full under txfull=wait: kick what is queued, then poll until want
 * descriptors are back (a batch, not one at a time: each return to the
 * caller costs a burst's overhead, and the device keeps a backlog).
 * Returns what is ready (fewer than want after the time limit), -EIO
 * when the device broke. */
int vnet_tx_wait(struct vnet_dev *d, int want)
{
    struct virtq *vq = d->tx;
    uint64_t t0 = time_cycles();
    uint64_t limit = time_tsc_hz / 1000u * VNET_TXWAIT_MAX_MS;
    virtq_kick(vq);
    int r = 0;
    while (vnet_tx_ready(d, want) < want) {
        /* Poll the used index only now and then: every read pulls its
         * cache line away from the device writing it, slowing the very
         * thing we wait for. */
        if (virtq_has_used(vq)) {
            r = vnet_tx_reclaim(d);
            if (r < 0 || vnet_tx_ready(d, want) >= want)
                break;
        } else {
            vnet_tx_watchdog(d);
        }
        if (time_cycles() - t0 > limit) {
            d->txs.wait_timeouts++;
            r = vnet_check_status(d);
            break;
        }
        vnet_relax();
    }
    d->txs.full_wait_cycles += time_cycles() - t0;
    return r < 0 ? r : vnet_tx_ready(d, want);
}

int vnet_tx_burst(struct vnet_dev *d, const struct vnet_tx *tx, int n)
{
    struct virtq *vq = d->tx;
    if (virtq_broken(vq))
        return -EIO;
    if (virtq_bound(vq))
        return vnet_tx_copy(d, tx, n);
    d->txs.bursts++;
    if (!virtq_in_flight(vq))
        d->tx_progress = time_cycles(); /* an idle gap is not a stall */
    else if (virtq_nfree(vq) < n && vnet_tx_reclaim(d) < 0)
        return -EIO; /* nothing queued on a queue that just broke */
    const uint16_t kb = d->kick_batch;
    const uint32_t hl = d->hdr_len;
    struct virtq_buf b[VNET_TX_CHUNK];
    uint64_t bytes = 0;
    int done = 0, since_kick = 0;
    while (done < n) {
        int nfree = virtq_nfree(vq);
        if (!nfree) {
            if (vnet_tx_reclaim(d) < 0)
                break;
            nfree = virtq_nfree(vq);
            if (!nfree) {
                d->txs.ring_full++;
                if (d->txfull == VNET_TXFULL_DROP) {
                    d->txs.dropped += (uint64_t)(n - done);
                    break;
                }
                since_kick = 0;
                int want = n - done < d->tx_size / 4 ? n - done : d->tx_size / 4;
                nfree = vnet_tx_wait(d, want ? want : 1);
                if (nfree <= 0)
                    break;
            }
        }
        int chunk = n - done;
        if (chunk > nfree)
            chunk = nfree;
        if (chunk > VNET_TX_CHUNK)
            chunk = VNET_TX_CHUNK;
        if (kb && chunk > kb - since_kick)
            chunk = kb - since_kick;
        for (int i = 0; i < chunk; i++) {
            const struct vnet_tx *t = &tx[done + i];
            uint8_t *h = (uint8_t *)t->frame - VNET_HDR_ROOM;
            /* No offloads: an all-zero header (virtio 1.2 s5.1.6.2). The
             * legacy 10-byte header is the tail of the same zero bytes. */
            memset(h, 0, VNET_HDR_ROOM);
            b[i] = (struct virtq_buf){mem_virt_to_phys(h + VNET_HDR_ROOM - hl), t->len + hl,
                                      (uintptr_t)t->cookie};
            bytes += t->len;
        }
        virtq_add_bufs(vq, b, chunk, false);
        done += chunk;
        since_kick += chunk;
        if (kb && since_kick >= kb) {
            virtq_kick(vq);
            since_kick = 0;
        }
    }
    virtq_kick(vq);
    d->txs.packets += (uint64_t)done;
    d->txs.bytes += bytes;
    if (!done && virtq_broken(vq))
        return -EIO;
    return done;
}
