/* VIRTIO_F_RING_RESET (virtio 1.2 s2.6.1): one queue of a pair reset and
 * re-enabled while the rest of the device runs, every buffer accounted. */
#include <errno.h>
#include <stdio.h>

#include "drivers/virtio/vnet_priv.h"

#define VNET_QRESET_DRAIN_MS 200

/* TX: every frame out comes back first. A device drops what it has not
 * sent when the queue resets (QEMU purges its queue), so a reset with
 * frames in flight would lose them. */
static int vnet_qreset_drain(struct vnet_dev *d, struct vnet_txq *tq)
{
    int r = vnet_txq_drain(d, tq, VNET_QRESET_DRAIN_MS);
    if (r < 0)
        return r;
    tq->reserved = 0;
    return 0;
}

/* RX: the slots the device held are the driver's again (s2.6.1.1: the
 * device forgets them); what it filled and the driver had not taken yet,
 * and a frame whose buffers were still coming, are dropped and counted.
 * The device is done with the ring, so its used entries are still
 * checked as they are taken. 0 or -EIO. */
static int vnet_qreset_rx_reclaim(struct vnet_rxq *rq)
{
    int n;
    while ((n = virtq_get_used(rq->vq, rq->used, rq->size)) > 0)
        rq->st.reset_dropped += (uint64_t)n;
    if (n < 0)
        return n;
    if (rq->mrg_left) {
        for (unsigned i = 0; i < rq->mrg_n; i++)
            rq->owner[rq->mrg_piece[i].slot] = VNET_RX_DEVICE;
        rq->mrg_left = 0;
        rq->mrg_n = 0;
        rq->mrg_drop = false;
    }
    for (uint32_t s = 0; s < rq->size; s++) {
        if (rq->owner[s] != VNET_RX_DEVICE)
            continue;
        rq->owner[s] = VNET_RX_PENDING;
        rq->pending[rq->npending++] = s;
    }
    return 0;
}

/* s2.6.1.2: re-enabled as at discovery, at the same addresses and size,
 * notifications as vnet_notify_start left them. */
static int vnet_qreset_enable(struct vnet_dev *d, unsigned q, struct virtq *vq,
                              const struct vnet_qnote *note)
{
    struct virtio_dev *v = d->vdev;
    int r = v->ops->queue_setup(v, q, virtq_size(vq), virtq_desc_addr(vq), virtq_driver_addr(vq),
                                virtq_device_addr(vq));
    if (r)
        return r;
    if (note->mode == VNET_NOTIFY_IRQ) {
        if (q % 2)
            virtq_enable_cb_delayed(vq);
        else
            virtq_enable_cb(vq);
    }
    return 0;
}

/* The transport's answer as a broken queue: what the device did wrong. */
static int vnet_qreset_failed(struct vnet_dev *d, struct virtq *vq, unsigned q, int r, bool tx)
{
    if (r == -EOPNOTSUPP)
        return r;
    const char *what = r == -ETIMEDOUT ? "queue reset never completed (queue_reset stays 1)"
                       : r == -EIO     ? "queue still enabled after its reset completed"
                                       : "queue re-enable after its reset failed";
    printf("vnet: %s: queue %u: %s\n", d->vdev->name, q, what);
    virtq_set_broken(vq, VIRTQ_BAD_DEVICE, what, q, 0, 0);
    d->fail_queue = tx ? "tx" : "rx";
    return -EIO;
}

int vnet_queue_reset(struct vnet_dev *d, unsigned pair, bool tx)
{
    struct virtio_dev *v = d->vdev;
    if (pair >= d->npairs)
        return -EINVAL;
    if (!(d->features & VIRTIO_BIT(VIRTIO_F_RING_RESET)) || !v->ops->queue_reset)
        return -EOPNOTSUPP;
    struct vnet_txq *tq = &d->txq[pair];
    struct vnet_rxq *rq = &d->rxq[pair];
    struct virtq *vq = tx ? tq->vq : rq->vq;
    unsigned q = tx ? VNET_TXQ(pair) : VNET_RXQ(pair);
    if (virtq_broken(vq))
        return -EIO;
    if (tx) {
        int r = vnet_qreset_drain(d, tq);
        if (r)
            return r;
    }
    int r = v->ops->queue_reset(v, q);
    if (r)
        return vnet_qreset_failed(d, vq, q, r, tx);
    if (!tx && vnet_qreset_rx_reclaim(rq) < 0) {
        d->fail_queue = "rx";
        return -EIO;
    }
    virtq_reset(vq);
    r = vnet_qreset_enable(d, q, vq, tx ? &tq->note : &rq->note);
    if (r)
        return vnet_qreset_failed(d, vq, q, r, tx);
    if (!tx)
        vnet_rx_refill(d, rq);
    return 0;
}
