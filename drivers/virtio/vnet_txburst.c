/* vnet_tx_burst: frames by reference through the TX pipeline (vnet_tx.c),
 * each cookie given back by tx_done once the device used the frame; on a
 * bound queue copied into slots and given back at once. */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"

/* Fills n reserved buffers with frames by reference: the header in each
 * frame's headroom. Returns their bytes. */
static uint64_t vnet_tx_fill_ref(struct vnet_dev *d, const struct vnet_tx *tx, int n)
{
    const uint32_t hl = d->hdr_len;
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        uint8_t *h = (uint8_t *)tx[i].frame - VNET_HDR_ROOM;
        /* No offloads: an all-zero header (virtio 1.2 s5.1.6.2). The
         * legacy 10-byte header is the tail of the same zero bytes. */
        memset(h, 0, VNET_HDR_ROOM);
        d->tx_bufs[i] = (struct virtq_buf){mem_virt_to_phys(h + VNET_HDR_ROOM - hl), tx[i].len + hl,
                                           (uintptr_t)tx[i].cookie};
        bytes += tx[i].len;
    }
    return bytes;
}

/* Copies n frames into the reserved slots from first (tag 0: the app's
 * template is gone). Returns their bytes. */
static uint64_t vnet_tx_fill_copy(struct vnet_dev *d, const struct vnet_tx *tx, int n,
                                  uint16_t first)
{
    struct vnet_txslots *sl = &d->slots;
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        uint16_t s = (uint16_t)(first + i) & (sl->num - 1);
        memcpy(sl->frame0 + (size_t)s * sl->stride, tx[i].frame, tx[i].len);
        sl->tag[s] = 0;
        d->tx_lens[i] = (uint16_t)tx[i].len;
        bytes += tx[i].len;
    }
    return bytes;
}

/* Frames from the start of tx that fit a slot (bound) or any. */
static int vnet_tx_fitting(const struct vnet_dev *d, const struct vnet_tx *tx, int n, bool bound)
{
    if (!bound)
        return n;
    int i = 0;
    while (i < n && tx[i].len >= VNET_ETH_HLEN && tx[i].len <= d->slots.room)
        i++;
    return i;
}

int vnet_tx_burst(struct vnet_dev *d, const struct vnet_tx *tx, int n)
{
    const bool bound = virtq_bound(d->tx);
    int done = 0;
    n = vnet_tx_fitting(d, tx, n, bound); /* a frame too large stays the caller's */
    while (done < n) {
        uint16_t first = virtq_next_slot(d->tx);
        int k = vnet_tx_reserve(d, n - done);
        if (k < 0)
            return done ? done : k;
        if (!k) {
            if (d->txfull == VNET_TXFULL_DROP)
                vnet_tx_commit(d, NULL, NULL, 0, 0, n - done);
            break;
        }
        const struct vnet_tx *t = tx + done;
        uint64_t bytes = bound ? vnet_tx_fill_copy(d, t, k, first) : vnet_tx_fill_ref(d, t, k);
        int r = vnet_tx_commit(d, bound ? d->tx_lens : NULL, d->tx_bufs, k, bytes, 0);
        if (r < 0)
            return done ? done : r;
        if (bound && d->tx_done)
            for (int i = 0; i < k; i++)
                d->tx_done(d->tx_ctx, t[i].cookie);
        done += k;
    }
    return done;
}
