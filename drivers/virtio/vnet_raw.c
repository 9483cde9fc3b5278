/* app=hostile's access to a device (vnet_raw.h). */
#include "drivers/virtio/vnet_raw.h"

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"

struct virtq *vnet_raw_txq(struct vnet_dev *d)
{
    return d->txq[0].vq;
}

struct virtq *vnet_raw_rxq(struct vnet_dev *d)
{
    return d->rxq[0].vq;
}

struct virtq *vnet_raw_ctrlq(struct vnet_dev *d)
{
    return d->ctrl ? d->ctrl->vq : NULL;
}

struct virtio_dev *vnet_raw_vdev(struct vnet_dev *d)
{
    return d->vdev;
}

uint16_t vnet_raw_max_pairs(const struct vnet_dev *d)
{
    return d->max_pairs;
}

uint16_t vnet_raw_pairs(const struct vnet_dev *d)
{
    return d->npairs;
}

uint32_t vnet_raw_rss_types(const struct vnet_dev *d)
{
    return d->rss_types;
}

const char *vnet_raw_feature_name(unsigned bit)
{
    return vnet_feature_name(bit);
}

uint64_t vnet_raw_offered(const struct vnet_dev *d)
{
    return d->offered;
}

uint64_t vnet_raw_features(const struct vnet_dev *d)
{
    return d->features;
}

uint8_t vnet_raw_status(struct vnet_dev *d)
{
    return d->vdev->ops->get_status(d->vdev);
}

int vnet_raw_restart(struct vnet_dev *d)
{
    struct vnet_params p = d->params;
    vnet_tx_done_fn fn = d->tx_done;
    void *ctx = d->tx_ctx;
    int r = vnet_dev_renegotiate(d, &p); /* the queues' memory reused: cases restart many times */
    d->tx_done = fn;
    d->tx_ctx = ctx;
    return r;
}
