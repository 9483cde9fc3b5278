/* What app=hostile needs of a brought-up virtio-net device beyond
 * vnet.h: its rings, its transport and a full restart. Only the hostile
 * app uses these (docs/hostile.md); the normal path never does. */
#ifndef VN_VNET_RAW_H
#define VN_VNET_RAW_H

#include <stdint.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/virtq.h"
#include "drivers/virtio/vnet.h"

struct virtq *vnet_raw_txq(struct vnet_dev *d);   /* pair 0's transmitq */
struct virtq *vnet_raw_rxq(struct vnet_dev *d);   /* pair 0's receiveq */
struct virtq *vnet_raw_ctrlq(struct vnet_dev *d); /* the control queue; NULL without CTRL_VQ */
struct virtio_dev *vnet_raw_vdev(struct vnet_dev *d);
uint16_t vnet_raw_max_pairs(const struct vnet_dev *d); /* max_virtqueue_pairs; 1 without MQ */
uint16_t vnet_raw_pairs(const struct vnet_dev *d);     /* queue pairs enabled (in use) */
uint32_t vnet_raw_rss_types(const struct vnet_dev *d); /* supported_hash_types; 0 without */
const char *vnet_raw_feature_name(unsigned bit);       /* NULL for a bit not known */
uint64_t vnet_raw_offered(const struct vnet_dev *d);
uint64_t vnet_raw_features(const struct vnet_dev *d); /* negotiated */

/* Device status as the device reports it now (virtio 1.2 s2.1). */
uint8_t vnet_raw_status(struct vnet_dev *d);

/* Reset and the whole bring-up again with the parameters of the first
 * one (vnet_dev_renegotiate: virtio 1.2 s2.4, s3.1.1): new rings in the
 * old ones' memory, RX full. 0 or -errno (said why). The TX done
 * callback is kept. */
int vnet_raw_restart(struct vnet_dev *d);

#endif
