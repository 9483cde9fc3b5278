/* app=hostile: notification data that lies (VIRTIO_F_NOTIFICATION_DATA,
 * virtio 1.2 s2.9), a notification for a queue the driver left disabled
 * (s4.1.4.3, s4.2.2) and queue resets (VIRTIO_F_RING_RESET, s2.6.1) on
 * the transmitq. Each needs its feature negotiated (the case's needs). */
#include <errno.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"

/* s2.9: a valid buffer, then a notification saying one more is there. */
int hostile_notif_ahead(struct hostile_env *e)
{
    int r = hostile_valid(e);
    return r ? r : virtq_raw_notify_next(e->vq, (uint16_t)(virtq_raw_avail_idx(e->vq) + 1u));
}

/* s2.9: a valid buffer, then a notification saying it is not there (the
 * next avail index as it was before it). */
int hostile_notif_behind(struct hostile_env *e)
{
    uint16_t before = virtq_raw_avail_idx(e->vq);
    int r = hostile_valid(e);
    return r ? r : virtq_raw_notify_next(e->vq, before);
}

int hostile_disabled_queue(const struct hostile_env *e)
{
    struct virtio_dev *v = e->vdev;
    uint32_t ctrl = e->ctrl ? 2u * e->max_pairs : UINT32_MAX;
    for (uint32_t q = 2u * e->pairs; q <= UINT16_MAX; q++) {
        if (!v->ops->queue_max(v, q))
            return -ENOENT;
        if (q != ctrl)
            return (int)q;
    }
    return -ENOENT; /* queue_select has 16 bits (s4.1.4.3, s4.2.2) */
}

/* s4.1.4.3, s4.2.2: a notification for a queue the driver never enabled
 * (queue_enable, QueueReady or the PFN still 0), then a valid buffer on
 * the transmitq, which the case's own kick sends: the device ignores the
 * first and goes on. */
int hostile_notify_disabled(struct hostile_env *e)
{
    if (e->disq < 0 || e->disq > UINT16_MAX)
        return -ENOENT;
    virtq_raw_notify_queue(e->vq, e->vdev, (uint16_t)e->disq);
    return hostile_valid(e);
}

/* s4.1.4.3.2, s4.2.2.2: queue_reset (QueueReset) on the transmitq. */
static int txq_reset(struct hostile_env *e)
{
    struct virtio_dev *v = e->vdev;
    return v->ops->queue_reset ? v->ops->queue_reset(v, e->txq) : -EOPNOTSUPP;
}

static int txq_enable(struct hostile_env *e, uint16_t num)
{
    struct virtio_dev *v = e->vdev;
    return v->ops->queue_setup(v, e->txq, num, virtq_desc_addr(e->vq), virtq_driver_addr(e->vq),
                               virtq_device_addr(e->vq));
}

/* s2.6.1: the transmitq reset while the device holds a full ring of
 * frames it is sending; re-enabled as at discovery (s2.6.1.2: same size
 * and addresses, the ring back to index 0), then one valid buffer on it,
 * which the watch counts from the new ring's used index. */
int hostile_qreset_active(struct hostile_env *e)
{
    int r = hostile_fill(e);
    if (r)
        return r;
    virtq_notify(e->vq);
    r = txq_reset(e);
    if (!r)
        r = virtq_reset(e->vq);
    if (!r)
        r = txq_enable(e, virtq_size(e->vq));
    if (r)
        return r;
    e->used0 = virtq_raw_used_idx(e->vq);
    return hostile_valid(e);
}

/* s2.6.1.2, s4.1.4.3.2: the transmitq reset with nothing in flight, then
 * re-enabled with a size the device did not allow. */
int hostile_qreset_size(struct hostile_env *e)
{
    int r = txq_reset(e);
    return r ? r : txq_enable(e, hostile_bad_size(e));
}
