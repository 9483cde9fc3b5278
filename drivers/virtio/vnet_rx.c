/* virtio-net receive: zero-copy handoff, batched refill, mergeable
 * buffers (virtio 1.2 s5.1.6.3, s5.1.6.4), frames of several buffers for
 * callers that take them (GUEST_TSO), every header checked. */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"

#define VNET_RX_CHUNK 64 /* buffers handed to the virtqueue per call */

void vnet_rx_post(struct vnet_dev *d, struct vnet_rxq *rq)
{
    uint16_t n = rq->npending;
    /* The device address is the slot's headroom: the header ends where
     * the frame starts, VNET_HDR_ROOM bytes into the slot. */
    uint32_t lead = VNET_HDR_ROOM - d->hdr_len;
    struct virtq_buf b[VNET_RX_CHUNK];
    for (uint16_t i = 0; i < n; i += VNET_RX_CHUNK) {
        int k = n - i < VNET_RX_CHUNK ? n - i : VNET_RX_CHUNK;
        for (int j = 0; j < k; j++) {
            uint32_t s = rq->pending[i + j];
            rq->owner[s] = VNET_RX_DEVICE;
            b[j] =
                (struct virtq_buf){mem_virt_to_phys(vnet_rx_slot(rq, s) + lead), d->rx_post_len, s};
        }
        virtq_add_bufs(rq->vq, b, k, true);
    }
    rq->npending = 0;
    rq->st.refills++;
    rq->st.refilled += n;
}

void vnet_rx_refill(struct vnet_dev *d, struct vnet_rxq *rq)
{
    if (!rq->npending || virtq_broken(rq->vq))
        return;
    vnet_rx_post(d, rq);
    virtq_kick(rq->vq);
}

/* A slot the driver is done with (dropped frame, gathered continuation). */
static inline void vnet_rx_recycle(struct vnet_rxq *rq, uint32_t slot)
{
    rq->owner[slot] = VNET_RX_PENDING;
    rq->pending[rq->npending++] = slot;
}

void vnet_rxq_release(struct vnet_dev *d, struct vnet_rxq *rq, uint32_t buf)
{
    /* A handle we never gave out, or one given back twice, would post a
     * buffer the device may already own: refused and counted. */
    if (buf >= rq->size || rq->owner[buf] != VNET_RX_APP) {
        rq->st.bad_release++;
        return;
    }
    vnet_rx_recycle(rq, buf);
    if (rq->npending >= d->rx_refill)
        vnet_rx_refill(d, rq);
}

/* A frame's buffers as it arrives: the first buffer's header (a copy,
 * read once) and every buffer's slot and bytes. */
static void vnet_rx_start(const struct vnet_dev *d, struct vnet_rxq *rq, uint32_t slot,
                          uint32_t len, uint16_t nb)
{
    memcpy(&rq->mrg_hdr, vnet_rx_slot(rq, slot) + VNET_HDR_ROOM - d->hdr_len, d->hdr_len);
    rq->owner[slot] = VNET_RX_HELD;
    rq->mrg_piece[0].slot = slot;
    rq->mrg_piece[0].len = len - d->hdr_len;
    rq->mrg_n = 1;
    rq->mrg_len = len - d->hdr_len;
    rq->mrg_left = nb - 1;
    /* More buffers than a frame we hand over may have: dropped as they
     * come, so each call keeps room to take them (s5.1.6.4). */
    rq->mrg_drop = d->rx_chains && nb > VNET_RX_MAX_BUFS;
    if (nb > 1)
        rq->st.merged++;
}

/* A continuation buffer (s5.1.6.4: no header of its own). With chains it
 * is kept as the next piece (a frame of more than VNET_RX_MAX_BUFS is
 * dropped, vnet_rx_start); else it is appended to the first buffer's
 * slot, for callers that take one buffer per frame (a frame that fits a
 * slot, so this only copies when a device splits a frame it did not have
 * to). */
static void vnet_rx_more(const struct vnet_dev *d, struct vnet_rxq *rq, uint32_t slot, uint32_t len)
{
    rq->mrg_left--;
    if (!d->rx_chains) {
        if (rq->mrg_drop || len > d->max_frame - rq->mrg_len) {
            rq->mrg_drop = true;
        } else {
            const uint8_t *src = vnet_rx_slot(rq, slot) + VNET_HDR_ROOM - d->hdr_len;
            memcpy(vnet_rx_slot(rq, rq->mrg_piece[0].slot) + VNET_HDR_ROOM + rq->mrg_len, src, len);
            rq->mrg_len += len;
            rq->mrg_piece[0].len = rq->mrg_len;
        }
        vnet_rx_recycle(rq, slot);
        return;
    }
    if (rq->mrg_drop || rq->mrg_n == VNET_RX_MAX_BUFS) {
        rq->mrg_drop = true;
        vnet_rx_recycle(rq, slot);
        return;
    }
    rq->owner[slot] = VNET_RX_HELD;
    rq->mrg_piece[rq->mrg_n].slot = slot;
    rq->mrg_piece[rq->mrg_n++].len = len;
    rq->mrg_len += len; /* at most VNET_RX_MAX_BUFS posted lengths: no wrap */
}

static void vnet_rx_drop(struct vnet_rxq *rq)
{
    for (unsigned i = 0; i < rq->mrg_n; i++)
        vnet_rx_recycle(rq, rq->mrg_piece[i].slot);
    rq->mrg_n = 0;
}

static void vnet_rx_count(struct vnet_rxq *rq, const struct vnet_rx_off *off)
{
    rq->st.packets++;
    rq->st.bytes += rq->mrg_len;
    if (off->csum != VNET_RX_CSUM_NONE)
        rq->st.csum_ok++;
    if (off->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        rq->st.gso_frames++;
        rq->st.gso_bytes += rq->mrg_len;
    }
}

/* The frame is complete: its header is checked against the features
 * (a bad one is counted by reason and the frame dropped), then its
 * buffers go out as consecutive entries. Returns the entries written. */
static int vnet_rx_finish(const struct vnet_dev *d, struct vnet_rxq *rq, struct vnet_rx *out)
{
    struct vnet_rx_off off;
    enum vnet_hdr_bad bad = rq->mrg_drop ? VNET_HDR_BAD_LEN
                                         : vnet_hdr_rx_check(&rq->mrg_hdr.h, rq->mrg_len,
                                                             d->max_frame, d->features, &off);
    if (bad == VNET_HDR_OK && rq->mrg_len < VNET_ETH_HLEN)
        bad = VNET_HDR_BAD_LEN;
    if (bad != VNET_HDR_OK) {
        if (bad == VNET_HDR_BAD_LEN)
            rq->st.len_errors++;
        else
            rq->st.bad_hdr[bad]++;
        vnet_rx_drop(rq);
        return 0;
    }
    vnet_rx_count(rq, &off);
    if (d->hash_types) {
        const struct virtio_net_hdr_hash *h = &rq->mrg_hdr;
        rq->st.hash[vnet_hash_check(vnet_rx_slot(rq, rq->mrg_piece[0].slot) + VNET_HDR_ROOM,
                                    rq->mrg_piece[0].len, d->hash_types, h->hash_value,
                                    h->hash_report)]++;
    }
    const uint32_t lead = VNET_HDR_ROOM - d->hdr_len;
    for (unsigned i = 0; i < rq->mrg_n; i++) {
        const struct vnet_rx_piece *pc = &rq->mrg_piece[i];
        rq->owner[pc->slot] = VNET_RX_APP;
        out[i] = (struct vnet_rx){vnet_rx_slot(rq, pc->slot) + (i ? lead : VNET_HDR_ROOM),
                                  pc->len,
                                  pc->slot | rq->buf_tag,
                                  rq->mrg_len,
                                  (uint16_t)(i ? 0 : rq->mrg_n),
                                  off};
    }
    int n = rq->mrg_n;
    rq->mrg_n = 0;
    return n;
}

/* The first buffer of a frame: its length, and with mergeable buffers
 * the count the header announces. 0, or -EIO when the device lied. */
static int vnet_rx_first(const struct vnet_dev *d, struct vnet_rxq *rq, uint32_t slot, uint32_t len,
                         uint32_t limit)
{
    uint16_t nb = 1;
    if (d->mrg) {
        const struct virtio_net_hdr *h =
            (const void *)(vnet_rx_slot(rq, slot) + VNET_HDR_ROOM - d->hdr_len);
        nb = VN_READ_ONCE(h->num_buffers);
        /* s5.1.6.4: at least one, and never more than we had posted */
        if (nb == 0 || nb > limit) {
            virtq_set_broken(rq->vq, VIRTQ_BAD_USED_LEN,
                             "num_buffers larger than the buffers posted", slot, nb, limit);
            vnet_rx_recycle(rq, slot);
            return -EIO;
        }
    }
    vnet_rx_start(d, rq, slot, len, nb);
    return 0;
}

/* Nothing came: the lost-wakeup and device-status watchdogs. */
static int vnet_rx_idle(struct vnet_dev *d, struct vnet_rxq *rq)
{
    struct virtq *vq = rq->vq;
    rq->idle_polls++;
    /* Buffers went out without a notification and nothing came since:
     * if the device was waiting for buffers, that notification was
     * the one it needed. A safety net, written with the TX one
     * (vnet_tx.c) for the lost wakeups seen (QEMU 7.2, EVENT_IDX, under
     * load) while the 8259 PICs were left unmasked; TX was re-checked
     * since and never stalled, RX was not. One unneeded kick per idle
     * period is cheap. */
    if (rq->idle_polls == VNET_RX_STALL_POLLS) {
        uint64_t suppressed = virtq_stats(vq)->kicks_suppressed;
        if (suppressed != rq->suppressed_seen) {
            virtq_notify_forced(vq);
            rq->suppressed_seen = suppressed;
        }
    }
    /* A device that needs a reset stops delivering: look at its
     * status every VNET_RX_IDLE_CHECK empty polls (s2.1.2). */
    if (!(rq->idle_polls & (VNET_RX_IDLE_CHECK - 1)))
        return vnet_check_status(d);
    return 0;
}

int vnet_rxq_burst(struct vnet_dev *d, struct vnet_rxq *rq, struct vnet_rx *rx, int max)
{
    struct virtq *vq = rq->vq;
    if (virtq_broken(vq))
        return -EIO;
    if (d->rx_chains && max < VNET_RX_MAX_BUFS)
        return -EINVAL;
    rq->st.polls++;
    /* Released buffers normally go back rx_refill at a time; when the
     * device is about to run dry they go back now. */
    if (rq->npending && virtq_in_flight(vq) < d->rx_refill)
        vnet_rx_refill(d, rq);
    /* Each entry out is a buffer taken now, or with chains one of a frame
     * begun in an earlier call. */
    int room = d->rx_chains ? max - rq->mrg_n : max;
    int want = room < rq->size ? room : rq->size;
    int got = virtq_get_used(vq, rq->used, want);
    if (got < 0)
        return got;
    vnet_notify_used(vq, &rq->note, got);
    if (!got)
        return vnet_rx_idle(d, rq);
    rq->idle_polls = 0;
    rq->suppressed_seen = virtq_stats(vq)->kicks_suppressed;
    int n = 0;
    const uint32_t min_len = d->hdr_len + VNET_ETH_HLEN;
    const uint32_t still_posted = virtq_in_flight(vq); /* no refill until the loop ends */
    for (int i = 0; i < got; i++) {
        uint32_t slot = (uint32_t)rq->used[i].token, len = rq->used[i].len;
        if (rq->mrg_left) {
            vnet_rx_more(d, rq, slot, len);
        } else if (len < min_len) {
            rq->st.len_errors++;
            vnet_rx_recycle(rq, slot);
            continue;
        } else if (vnet_rx_first(d, rq, slot, len, 1u + (uint32_t)(got - i - 1) + still_posted)) {
            break;
        }
        if (!rq->mrg_left)
            n += vnet_rx_finish(d, rq, rx + n);
    }
    if (rq->npending >= d->rx_refill)
        vnet_rx_refill(d, rq);
    if (!n && virtq_broken(vq))
        return -EIO;
    return n;
}

void vnet_rx_release(struct vnet_dev *d, uint32_t buf)
{
    uint32_t q = buf >> VNET_RX_PAIR_SHIFT;
    /* A pair not in use: counted as pair 0's bad handle. */
    vnet_rxq_release(d, &d->rxq[q < d->npairs ? q : 0],
                     q < d->npairs ? buf & ((1u << VNET_RX_PAIR_SHIFT) - 1) : UINT32_MAX);
}

int vnet_rx_burst_q(struct vnet_dev *d, unsigned q, struct vnet_rx *rx, int max)
{
    if (q >= d->npairs)
        return -EINVAL;
    return vnet_rxq_burst(d, &d->rxq[q], rx, max);
}

/* Every pair in turn from the one after the last that gave frames, so a
 * busy pair does not starve the others; one pair is the plain call. */
int vnet_rx_burst(struct vnet_dev *d, struct vnet_rx *rx, int max)
{
    if (d->npairs == 1)
        return vnet_rxq_burst(d, &d->rxq[0], rx, max);
    int err = 0;
    for (unsigned k = 0; k < d->npairs; k++) {
        unsigned q = d->rx_next;
        d->rx_next = (uint16_t)(q + 1 == d->npairs ? 0 : q + 1);
        int n = vnet_rxq_burst(d, &d->rxq[q], rx, max);
        if (n > 0)
            return n;
        if (n < 0)
            err = n;
    }
    return err;
}
