/* virtio-net receive: zero-copy handoff, batched refill, mergeable
 * buffers (virtio 1.2 s5.1.6.3, s5.1.6.4), frames of several buffers for
 * callers that take them (GUEST_TSO), every header checked. */
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

/* A slot the driver is done with (dropped frame, gathered continuation). */
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

/* A frame's buffers as it arrives: the first buffer's header (a copy,
 * read once) and every buffer's slot and bytes. */
static void vnet_rx_start(struct vnet_dev *d, uint32_t slot, uint32_t len, uint16_t nb)
{
    memcpy(&d->mrg_hdr, vnet_rx_slot(d, slot) + VNET_HDR_ROOM - d->hdr_len, d->hdr_len);
    d->rx_owner[slot] = VNET_RX_HELD;
    d->mrg_piece[0].slot = slot;
    d->mrg_piece[0].len = len - d->hdr_len;
    d->mrg_n = 1;
    d->mrg_len = len - d->hdr_len;
    d->mrg_left = nb - 1;
    /* More buffers than a frame we hand over may have: dropped as they
     * come, so each call keeps room to take them (s5.1.6.4). */
    d->mrg_drop = d->rx_chains && nb > VNET_RX_MAX_BUFS;
    if (nb > 1)
        d->rxs.merged++;
}

/* A continuation buffer (s5.1.6.4: no header of its own). With chains it
 * is kept as the next piece (a frame of more than VNET_RX_MAX_BUFS is
 * dropped, vnet_rx_start); else it is appended to the first buffer's
 * slot, for callers that take one buffer per frame (a frame that fits a
 * slot, so this only copies when a device splits a frame it did not have
 * to). */
static void vnet_rx_more(struct vnet_dev *d, uint32_t slot, uint32_t len)
{
    d->mrg_left--;
    if (!d->rx_chains) {
        if (d->mrg_drop || len > d->max_frame - d->mrg_len) {
            d->mrg_drop = true;
        } else {
            const uint8_t *src = vnet_rx_slot(d, slot) + VNET_HDR_ROOM - d->hdr_len;
            memcpy(vnet_rx_slot(d, d->mrg_piece[0].slot) + VNET_HDR_ROOM + d->mrg_len, src, len);
            d->mrg_len += len;
            d->mrg_piece[0].len = d->mrg_len;
        }
        vnet_rx_recycle(d, slot);
        return;
    }
    if (d->mrg_drop || d->mrg_n == VNET_RX_MAX_BUFS) {
        d->mrg_drop = true;
        vnet_rx_recycle(d, slot);
        return;
    }
    d->rx_owner[slot] = VNET_RX_HELD;
    d->mrg_piece[d->mrg_n].slot = slot;
    d->mrg_piece[d->mrg_n++].len = len;
    d->mrg_len += len; /* at most VNET_RX_MAX_BUFS posted lengths: no wrap */
}

static void vnet_rx_drop(struct vnet_dev *d)
{
    for (unsigned i = 0; i < d->mrg_n; i++)
        vnet_rx_recycle(d, d->mrg_piece[i].slot);
    d->mrg_n = 0;
}

static void vnet_rx_count(struct vnet_dev *d, const struct vnet_rx_off *off)
{
    d->rxs.packets++;
    d->rxs.bytes += d->mrg_len;
    if (off->csum != VNET_RX_CSUM_NONE)
        d->rxs.csum_ok++;
    if (off->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        d->rxs.gso_frames++;
        d->rxs.gso_bytes += d->mrg_len;
    }
}

/* The frame is complete: its header is checked against the features
 * (a bad one is counted by reason and the frame dropped), then its
 * buffers go out as consecutive entries. Returns the entries written. */
static int vnet_rx_finish(struct vnet_dev *d, struct vnet_rx *out)
{
    struct vnet_rx_off off;
    enum vnet_hdr_bad bad =
        d->mrg_drop ? VNET_HDR_BAD_LEN
                    : vnet_hdr_rx_check(&d->mrg_hdr, d->mrg_len, d->max_frame, d->features, &off);
    if (bad == VNET_HDR_OK && d->mrg_len < VNET_ETH_HLEN)
        bad = VNET_HDR_BAD_LEN;
    if (bad != VNET_HDR_OK) {
        if (bad == VNET_HDR_BAD_LEN)
            d->rxs.len_errors++;
        else
            d->rxs.bad_hdr[bad]++;
        vnet_rx_drop(d);
        return 0;
    }
    vnet_rx_count(d, &off);
    const uint32_t lead = VNET_HDR_ROOM - d->hdr_len;
    for (unsigned i = 0; i < d->mrg_n; i++) {
        const struct vnet_rx_piece *pc = &d->mrg_piece[i];
        d->rx_owner[pc->slot] = VNET_RX_APP;
        out[i] = (struct vnet_rx){vnet_rx_slot(d, pc->slot) + (i ? lead : VNET_HDR_ROOM),
                                  pc->len,
                                  pc->slot,
                                  d->mrg_len,
                                  (uint16_t)(i ? 0 : d->mrg_n),
                                  off};
    }
    int n = d->mrg_n;
    d->mrg_n = 0;
    return n;
}

/* The first buffer of a frame: its length, and with mergeable buffers
 * the count the header announces. 0, or -EIO when the device lied. */
static int vnet_rx_first(struct vnet_dev *d, uint32_t slot, uint32_t len, uint32_t limit)
{
    uint16_t nb = 1;
    if (d->mrg) {
        const struct virtio_net_hdr *h =
            (const void *)(vnet_rx_slot(d, slot) + VNET_HDR_ROOM - d->hdr_len);
        nb = VN_READ_ONCE(h->num_buffers);
        /* s5.1.6.4: at least one, and never more than we had posted */
        if (nb == 0 || nb > limit) {
            virtq_set_broken(d->rx, "num_buffers larger than the buffers posted", slot, nb, limit);
            vnet_rx_recycle(d, slot);
            return -EIO;
        }
    }
    vnet_rx_start(d, slot, len, nb);
    return 0;
}

/* Nothing came: the lost-wakeup and device-status watchdogs. */
static int vnet_rx_idle(struct vnet_dev *d)
{
    struct virtq *vq = d->rx;
    d->rx_idle_polls++;
    /* Buffers went out without a notification and nothing came since:
     * if the device was waiting for buffers, that notification was
     * the one it needed. A safety net, written with the TX one
     * (vnet_tx.c) for the lost wakeups seen (QEMU 7.2, EVENT_IDX, under
     * load) while the 8259 PICs were left unmasked; TX was re-checked
     * since and never stalled, RX was not. One unneeded kick per idle
     * period is cheap. */
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

int vnet_rx_burst(struct vnet_dev *d, struct vnet_rx *rx, int max)
{
    struct virtq *vq = d->rx;
    if (virtq_broken(vq))
        return -EIO;
    if (d->rx_chains && max < VNET_RX_MAX_BUFS)
        return -EINVAL;
    d->rxs.polls++;
    /* Released buffers normally go back rx_refill at a time; when the
     * device is about to run dry they go back now. */
    if (d->npending && virtq_in_flight(vq) < d->rx_refill)
        vnet_rx_refill(d);
    /* Each entry out is a buffer taken now, or with chains one of a frame
     * begun in an earlier call. */
    int room = d->rx_chains ? max - d->mrg_n : max;
    int want = room < d->rx_size ? room : d->rx_size;
    int got = virtq_get_used(vq, d->rx_used, want);
    if (got < 0)
        return got;
    vnet_notify_used(vq, &d->rx_note, got);
    if (!got)
        return vnet_rx_idle(d);
    d->rx_idle_polls = 0;
    d->rx_suppressed_seen = virtq_stats(vq)->kicks_suppressed;
    int n = 0;
    const uint32_t min_len = d->hdr_len + VNET_ETH_HLEN;
    const uint32_t still_posted = virtq_in_flight(vq); /* no refill until the loop ends */
    for (int i = 0; i < got; i++) {
        uint32_t slot = (uint32_t)d->rx_used[i].token, len = d->rx_used[i].len;
        if (d->mrg_left) {
            vnet_rx_more(d, slot, len);
        } else if (len < min_len) {
            d->rxs.len_errors++;
            vnet_rx_recycle(d, slot);
            continue;
        } else if (vnet_rx_first(d, slot, len, 1u + (uint32_t)(got - i - 1) + still_posted)) {
            break;
        }
        if (!d->mrg_left)
            n += vnet_rx_finish(d, rx + n);
    }
    if (d->npending >= d->rx_refill)
        vnet_rx_refill(d);
    if (!n && virtq_broken(vq))
        return -EIO;
    return n;
}
