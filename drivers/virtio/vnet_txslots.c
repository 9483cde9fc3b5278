/* virtio-net TX through bound slots (vnet.h): bind, reserve, send, and
 * the copying vnet_tx_burst of a bound queue. */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "kernel/time.h"

#define VNET_BIND_WAIT_MS 200
#define VNET_COPY_CHUNK   64

static uint64_t vnet_slot_addr(void *ctx, uint16_t i)
{
    const struct vnet_dev *d = ctx;
    /* The header is the last hdr_len bytes of the room before the frame. */
    return mem_virt_to_phys(d->slots.frame0 + (size_t)i * d->slots.stride - d->hdr_len);
}

int vnet_txslots_bind(struct vnet_dev *d, uint32_t room, struct vnet_txslots *out)
{
    struct virtq *vq = d->tx;
    if (virtq_broken(vq))
        return -EIO;
    if (!virtq_bound(vq)) {
        uint64_t t0 = time_cycles(), limit = time_tsc_hz / 1000u * VNET_BIND_WAIT_MS;
        while (virtq_in_flight(vq)) {
            int r = vnet_tx_reclaim(d);
            if (r < 0)
                return r;
            if (time_cycles() - t0 > limit)
                return -EBUSY;
            if (!r)
                vnet_relax();
        }
        if (!room || room > d->max_frame)
            room = d->max_frame;
        uint32_t stride = (VNET_HDR_ROOM + room + 63u) & ~63u;
        /* Zeroed, so every header is all zero for good: no offloads,
         * virtio 1.2 s5.1.6.2. */
        uint8_t *mem = mem_alloc_dma((size_t)stride * d->tx_size, 64);
        uint16_t *tag = mem_alloc_dma(sizeof(*tag) * d->tx_size, 64);
        d->slots = (struct vnet_txslots){mem + VNET_HDR_ROOM, stride, room, d->tx_size, tag};
        int r = virtq_bind_slots(vq, vnet_slot_addr, d, d->hdr_len);
        if (r < 0)
            return r;
    }
    *out = d->slots;
    return 0;
}

int vnet_txslots_reserve(struct vnet_dev *d, int n, uint16_t *first)
{
    struct virtq *vq = d->tx;
    const int num = d->tx_size;
    d->slots_reserved = 0;
    if (!virtq_bound(vq))
        return -EINVAL;
    if (virtq_broken(vq))
        return -EIO;
    if (n > num)
        n = num;
    if (n <= 0)
        return 0;
    *first = virtq_next_slot(vq);
    if (!virtq_in_flight(vq)) {
        d->tx_progress = time_cycles(); /* an idle gap is not a stall */
        d->slots_reserved = (uint16_t)n;
        return n;
    }
    /* Fewer free than a burst (or a quarter ring, for larger bursts) is a
     * full ring to a producer that works in bursts. Handing out a slot or
     * two at a time would cost a burst's overhead per frame while the
     * device still has a backlog, so the wait is for a quarter ring or the
     * burst, whichever is more, but at most half: the device keeps work. */
    int batch = n < num / 4 ? n : num / 4;
    if (!batch)
        batch = 1;
    int want = n > num / 4 ? n : num / 4;
    if (want > num / 2)
        want = num / 2;
    if (want < batch)
        want = batch;
    int k = virtq_free_run(vq, n);
    if (k < n) {
        if (vnet_tx_reclaim(d) < 0)
            return -EIO;
        k = virtq_free_run(vq, n);
    }
    if (k < batch && d->txfull == VNET_TXFULL_WAIT) {
        d->txs.ring_full++;
        int r = vnet_tx_wait(d, want);
        if (r < 0)
            return r;
        k = virtq_free_run(vq, n);
    }
    d->slots_reserved = (uint16_t)k;
    return k;
}

int vnet_txslots_send(struct vnet_dev *d, int n, const uint16_t *len, int dropped)
{
    struct virtq *vq = d->tx;
    if (n < 0 || n > d->slots_reserved || dropped < 0)
        return -EINVAL;
    /* Checked before anything is queued, so a bad length queues nothing. */
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (len[i] < VNET_ETH_HLEN || len[i] > d->slots.room)
            return -EINVAL;
        bytes += len[i];
    }
    d->slots_reserved = 0;
    if (virtq_broken(vq))
        return -EIO;
    const int kb = d->kick_batch ? d->kick_batch : n;
    for (int i = 0; i < n; i += kb) {
        virtq_add_slots(vq, n - i < kb ? n - i : kb, len + i, d->hdr_len);
        virtq_kick(vq);
    }
    d->txs.bursts++;
    d->txs.packets += (uint64_t)n;
    d->txs.bytes += bytes;
    if (dropped) {
        d->txs.ring_full++;
        d->txs.dropped += (uint64_t)dropped;
    }
    return n;
}

/* vnet_tx_burst on a bound queue: each frame is copied into a slot and
 * handed back at once. A frame larger than a slot stops the burst there
 * (it is the caller's, as every frame not queued). */
int vnet_tx_copy(struct vnet_dev *d, const struct vnet_tx *tx, int n)
{
    struct vnet_txslots *sl = &d->slots;
    uint16_t len[VNET_COPY_CHUNK];
    int done = 0;
    while (done < n) {
        int want = n - done < VNET_COPY_CHUNK ? n - done : VNET_COPY_CHUNK;
        for (int i = 0; i < want; i++)
            if (tx[done + i].len > sl->room || tx[done + i].len < VNET_ETH_HLEN) {
                want = i;
                break;
            }
        if (!want)
            break;
        uint16_t first;
        int k = vnet_txslots_reserve(d, want, &first);
        if (k < 0)
            return done ? done : k;
        if (!k) {
            if (d->txfull == VNET_TXFULL_DROP) {
                d->txs.ring_full++;
                d->txs.dropped += (uint64_t)(n - done);
            }
            break;
        }
        for (int i = 0; i < k; i++) {
            uint16_t s = (uint16_t)(first + i) & (sl->num - 1);
            memcpy(sl->frame0 + (size_t)s * sl->stride, tx[done + i].frame, tx[done + i].len);
            sl->tag[s] = 0;
            len[i] = (uint16_t)tx[done + i].len;
        }
        int r = vnet_txslots_send(d, k, len, 0);
        if (r < 0)
            return done ? done : r;
        if (d->tx_done)
            for (int i = 0; i < k; i++)
                d->tx_done(d->tx_ctx, tx[done + i].cookie);
        done += k;
    }
    return done;
}
