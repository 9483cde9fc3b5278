/* virtio-net receive: zero-copy handoff, batched refill, mergeable
 * buffers (virtio 1.2 s5.1.6.3, s5.1.6.4). */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"

#define VNET_RX_CHUNK 64 /* buffers handed to the virtqueue per call */

void vnet_rx_post(struct vnet_dev *d)
{
    uint16_t n = d->npending;
    /* The device address is the slot's headroom: the header ends where
     * the frame starts, VNET_HDR_ROOM bytes into the slot. */
    uint32_t lead = VNET_HDR_ROOM - d->hdr_len;
    struct virtq_buf b[VNET_RX_CHUNK];
    for (uint16_t i = 0; i < n; i += VNET_RX_CHUNK) {
        int k = n - i < VNET_RX_CHUNK ? n - i : VNET_RX_CHUNK;
        for (int j = 0; j < k; j++) {
            uint32_t s = d->rx_pending[i + j];
            d->rx_owner[s] = VNET_RX_DEVICE;
            b[j] =
                (struct virtq_buf){mem_virt_to_phys(vnet_rx_slot(d, s) + lead), d->rx_post_len, s};
        }
        virtq_add_bufs(d->rx, b, k, true);
    }
    d->npending = 0;
    d->rxs.refills++;
    d->rxs.refilled += n;
}

void vnet_rx_refill(struct vnet_dev *d)
{
    if (!d->npending || virtq_broken(d->rx))
        return;
    vnet_rx_post(d);
    virtq_kick(d->rx);
}

/* A slot the driver is done with (dropped frame, merged continuation). */
static inline void vnet_rx_recycle(struct vnet_dev *d, uint32_t slot)
{
    d->rx_owner[slot] = VNET_RX_PENDING;
    d->rx_pending[d->npending++] = slot;
}

void vnet_rx_release(struct vnet_dev *d, uint32_t buf)
{
    /* A handle we never gave out, or one given back twice, would post a
     * buffer the device may already own: refused and counted. */
    if (buf >= d->rx_size || d->rx_owner[buf] != VNET_RX_APP) {
        d->rxs.bad_release++;
        return;
    }
    vnet_rx_recycle(d, buf);
    if (d->npending >= d->rx_refill)
        vnet_rx_refill(d);
}

static inline void vnet_rx_deliver(struct vnet_dev *d, struct vnet_rx *out, uint32_t slot,
                                   uint32_t len)
{
    d->rx_owner[slot] = VNET_RX_APP;
    out->frame = vnet_rx_slot(d, slot) + VNET_HDR_ROOM;
    out->len = len;
    out->buf = slot;
    d->rxs.packets++;
    d->rxs.bytes += len;
}

/* A continuation buffer of a mergeable frame: appended to the first
 * buffer's slot (frames fit one slot, so this only copies when a device
 * splits a frame it did not have to). */
static void vnet_rx_merge(struct vnet_dev *d, uint32_t slot, uint32_t len)
{
    if (!d->mrg_drop) {
        if (len > d->max_frame - d->mrg_len) {
            d->mrg_drop = true;
        } else {
            const uint8_t *src = vnet_rx_slot(d, slot) + VNET_HDR_ROOM - d->hdr_len;
            memcpy(vnet_rx_slot(d, d->mrg_slot) + VNET_HDR_ROOM + d->mrg_len, src, len);
            d->mrg_len += len;
        }
    }
    vnet_rx_recycle(d, slot);
    d->mrg_left--;
}

int vnet_rx_burst(struct vnet_dev *d, struct vnet_rx *rx, int max)
{
    struct virtq *vq = d->rx;
    if (virtq_broken(vq))
        return -EIO;
    d->rxs.polls++;
    /* Released buffers normally go back rx_refill at a time; when the
     * device is about to run dry they go back now. */
    if (d->npending && virtq_in_flight(vq) < d->rx_refill)
        vnet_rx_refill(d);
    int want = max < d->rx_size ? max : d->rx_size;
    int got = virtq_get_used(vq, d->rx_used, want);
    if (got < 0)
        return got;
    if (!got) {
        d->rx_idle_polls++;
        /* Buffers went out without a notification and nothing came since:
         * if the device was waiting for buffers, that notification was
         * the one it needed (a lost wakeup, seen with QEMU 7.2 and
         * EVENT_IDX under load). One unneeded kick is cheap. */
        if (d->rx_idle_polls == VNET_RX_STALL_POLLS) {
            uint64_t suppressed = virtq_stats(vq)->kicks_suppressed;
            if (suppressed != d->rx_suppressed_seen) {
                virtq_notify_forced(vq);
                d->rx_suppressed_seen = suppressed;
            }
        }
        /* A device that needs a reset stops delivering: look at its
         * status every VNET_RX_IDLE_CHECK empty polls (s2.1.2). */
        if (!(d->rx_idle_polls & (VNET_RX_IDLE_CHECK - 1)))
            return vnet_check_status(d);
        return 0;
    }
    d->rx_idle_polls = 0;
    d->rx_suppressed_seen = virtq_stats(vq)->kicks_suppressed;
    int n = 0;
    const uint32_t min_len = d->hdr_len + VNET_ETH_HLEN;
    const uint32_t still_posted = virtq_in_flight(vq); /* no refill until the loop ends */
    for (int i = 0; i < got; i++) {
        uint32_t slot = (uint32_t)d->rx_used[i].token, len = d->rx_used[i].len;
        if (d->mrg_left) {
            vnet_rx_merge(d, slot, len);
            if (!d->mrg_left) {
                if (d->mrg_drop) {
                    d->rxs.len_errors++;
                    vnet_rx_recycle(d, d->mrg_slot);
                } else {
                    vnet_rx_deliver(d, &rx[n++], d->mrg_slot, d->mrg_len);
                }
            }
            continue;
        }
        if (len < min_len) {
            d->rxs.len_errors++;
            vnet_rx_recycle(d, slot);
            continue;
        }
        if (d->mrg) {
            const struct virtio_net_hdr *h =
                (const void *)(vnet_rx_slot(d, slot) + VNET_HDR_ROOM - d->hdr_len);
            uint16_t nb = VN_READ_ONCE(h->num_buffers);
            /* s5.1.6.4: at least one, and never more than we had posted:
             * the rest of this batch plus what is still in flight. */
            uint32_t limit = 1u + (uint32_t)(got - i - 1) + still_posted;
            if (nb == 0 || nb > limit) {
                virtq_set_broken(vq, "num_buffers larger than the buffers posted", slot, nb, limit);
                vnet_rx_recycle(d, slot);
                break;
            }
            if (nb > 1) {
                d->rxs.merged++;
                d->mrg_slot = slot;
                d->mrg_len = len - d->hdr_len;
                d->mrg_left = nb - 1;
                d->mrg_drop = false;
                continue;
            }
        }
        vnet_rx_deliver(d, &rx[n++], slot, len - d->hdr_len);
    }
    if (d->npending >= d->rx_refill)
        vnet_rx_refill(d);
    if (!n && virtq_broken(vq))
        return -EIO;
    return n;
}
