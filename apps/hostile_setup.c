/* app=hostile: device setup cases (virtio 1.2 s3.1.1, s2.2, s2.6): each
 * talks to the transport directly, out of the order or with values the
 * spec forbids. The app resets and brings the device up again after. */
#include <errno.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"

#define ACK_DRIVER (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER)

/* Reset, ACKNOWLEDGE, DRIVER (s3.1.1 steps 1-3). */
static int start_over(struct virtio_dev *v)
{
    if (v->ops->reset(v) < 0)
        return -EIO;
    v->ops->set_status(v, VIRTIO_STATUS_ACKNOWLEDGE);
    v->ops->set_status(v, ACK_DRIVER);
    return 0;
}

/* s2.2.1, s3.1.1 step 5: FEATURES_OK with a bit the device did not offer. */
int hostile_features_unoffered(struct hostile_env *e)
{
    struct virtio_dev *v = e->vdev;
    if (start_over(v))
        return -EIO;
    uint64_t offered = v->ops->get_features(v);
    unsigned bit = 63;
    while (bit > 0 && (offered & VIRTIO_BIT(bit)))
        bit--;
    v->ops->set_features(v, e->features | VIRTIO_BIT(bit));
    v->ops->set_status(v, ACK_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    return 0;
}

/* s2.2.2: features written again after DRIVER_OK (EVENT_IDX flipped),
 * then a valid buffer. */
int hostile_features_after_ok(struct hostile_env *e)
{
    struct virtio_dev *v = e->vdev;
    v->ops->set_features(v, e->features ^ VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
    return hostile_valid(e);
}

int hostile_fill(struct hostile_env *e)
{
    uint16_t num = virtq_size(e->vq);
    for (uint16_t i = 0; i + 1u < num; i += 2) {
        uint16_t head = i;
        int r = hostile_tx_pair(e, i, HOSTILE_FRAME);
        if (!r)
            r = hostile_publish(e, &head, 1);
        if (r)
            return r;
    }
    return 0;
}

uint16_t hostile_bad_size(struct hostile_env *e)
{
    uint16_t max = e->vdev->ops->queue_max(e->vdev, e->txq);
    return max && max < 0x8000u ? (uint16_t)(max * 2u) : 3u;
}

/* s2.4: a reset while the device holds buffers: a full ring kicked, then
 * the reset at once. */
int hostile_reset_inflight(struct hostile_env *e)
{
    int r = hostile_fill(e);
    if (r)
        return r;
    virtq_notify(e->vq);
    return e->vdev->ops->reset(e->vdev) < 0 ? -EIO : 0;
}

/* s4.2.2.2, s4.1.4.3.2: a queue size above the device's maximum. */
int hostile_queue_size(struct hostile_env *e)
{
    struct virtio_dev *v = e->vdev;
    if (start_over(v))
        return -EIO;
    v->ops->set_features(v, e->features);
    v->ops->set_status(v, ACK_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    return v->ops->queue_setup(v, e->txq, hostile_bad_size(e), virtq_desc_addr(e->vq),
                               virtq_driver_addr(e->vq), virtq_device_addr(e->vq));
}
