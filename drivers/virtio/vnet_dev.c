/* virtio-net device bring-up (virtio 1.2 s3.1.1, s5.1.5) and status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"
#include "kernel/time.h"

/* What we can use. ANY_LAYOUT only matters to legacy devices (header and
 * frame share one descriptor); VERSION_1 implies it (virtio 1.2 s2.7.4). */
#define VNET_WANTED                                                                                \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |                               \
     VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_NET_F_MTU) |                              \
     VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |                         \
     VIRTIO_BIT(VIRTIO_F_IN_ORDER) | VIRTIO_BIT(VIRTIO_F_ANY_LAYOUT) |                             \
     VIRTIO_BIT(VIRTIO_F_RING_PACKED) | VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ) |                         \
     VIRTIO_BIT(VIRTIO_NET_F_MQ) | VIRTIO_BIT(VIRTIO_NET_F_RSS) |                                  \
     VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_RING_RESET) |                        \
     VIRTIO_BIT(VIRTIO_F_NOTIFICATION_DATA) | VIRTIO_BIT(VIRTIO_NET_F_HASH_REPORT) |               \
     VIRTIO_BIT(VIRTIO_NET_F_CTRL_RX) | VIRTIO_BIT(VIRTIO_NET_F_CTRL_MAC_ADDR) |                   \
     VIRTIO_BIT(VIRTIO_NET_F_GUEST_ANNOUNCE) | VIRTIO_BIT(VIRTIO_NET_F_SPEED_DUPLEX) |             \
     VIRTIO_BIT(VIRTIO_NET_F_NOTF_COAL) | VIRTIO_BIT(VIRTIO_NET_F_VQ_NOTF_COAL))

/* virtio-net config space, virtio 1.2 s5.1.4 */
#define VNET_CFG_MAC    0
#define VNET_CFG_MTU    10
#define VNET_CFG_SPEED  12 /* le32, with VIRTIO_NET_F_SPEED_DUPLEX */
#define VNET_CFG_DUPLEX 16 /* u8, with VIRTIO_NET_F_SPEED_DUPLEX */

static void vnet_fail(struct vnet_dev *d, const char *why)
{
    struct virtio_dev *v = d->vdev;
    /* virtio 1.2 s3.1.1: give up by setting FAILED. */
    v->ops->set_status(v, v->ops->get_status(v) | VIRTIO_STATUS_FAILED);
    printf("vnet: %s: %s\n", v->name, why);
}

static int vnet_pick_size(struct vnet_dev *d, unsigned q, uint16_t *num)
{
    struct virtio_dev *v = d->vdev;
    uint16_t max = v->ops->queue_max(v, q);
    if (!max || (max & (max - 1))) {
        printf("vnet: %s: queue %u has size %u (need a power of two)\n", v->name, q, max);
        return -ENODEV;
    }
    uint16_t want = d->params.ring_size ? d->params.ring_size : VNET_RING_DEFAULT_MAX;
    if (want & (want - 1)) {
        printf("vnet: %s: ring=%u is not a power of two\n", v->name, want);
        return -EINVAL;
    }
    if (v->queue_size_fixed) {
        if (d->params.ring_size && d->params.ring_size != max)
            printf("vnet: %s: queue %u: legacy device has a fixed size of %u, ring=%u ignored\n",
                   v->name, q, max, d->params.ring_size);
        *num = max;
        return 0;
    }
    if (want > max && d->params.ring_size)
        printf("vnet: %s: queue %u: device maximum is %u, ring=%u capped\n", v->name, q, max, want);
    *num = want < max ? want : max;
    return 0;
}

/* The flags virtq_create takes from the negotiated features. */
static unsigned vnet_virtq_flags(const struct vnet_dev *d)
{
    unsigned flags = 0;
    if (d->features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
        flags |= VIRTQ_F_EVENT_IDX;
    if (d->features & VIRTIO_BIT(VIRTIO_F_IN_ORDER))
        flags |= VIRTQ_F_IN_ORDER;
    if (d->features & VIRTIO_BIT(VIRTIO_F_RING_PACKED))
        flags |= VIRTQ_F_PACKED; /* virtio 1.2 s2.8; only with VERSION_1 (not legacy) */
    if (d->features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC))
        flags |= VIRTQ_F_INDIRECT;
    if (d->features & VIRTIO_BIT(VIRTIO_F_NOTIFICATION_DATA))
        flags |= VIRTQ_F_NOTIF_DATA; /* virtio 1.2 s2.9 */
    return flags;
}

int vnet_virtq_init(struct vnet_dev *d, unsigned q, uint16_t num, struct vnet_qnote *note,
                    struct virtq **out)
{
    struct virtio_dev *v = d->vdev;
    struct virtq *vq;
    int r = virtq_create_in(&d->pool, &vq, (uint16_t)q, num, vnet_virtq_flags(d));
    if (r)
        return r;
    if (note)
        vnet_notify_queue(d, q, note);
    r = v->ops->queue_setup(v, q, num, virtq_desc_addr(vq), virtq_driver_addr(vq),
                            virtq_device_addr(vq));
    if (r) {
        printf("vnet: %s: queue %u setup failed (%d)\n", v->name, q, r);
        return r;
    }
    v->ops->queue_notifier(v, q, vq);
    if (virtq_broken(vq)) {
        printf("vnet: %s: queue %u: %s\n", v->name, q, virtq_violation(vq)->what);
        return -EIO;
    }
    *out = vq;
    return 0;
}

static int vnet_queue_init(struct vnet_dev *d, unsigned q, struct vnet_qnote *note,
                           struct virtq **out)
{
    uint16_t num;
    int r = vnet_pick_size(d, q, &num);
    return r ? r : vnet_virtq_init(d, q, num, note, out);
}

/* virtio 1.2 s5.1.4.1: an MTU below 68 is not valid; one we cannot buffer
 * is not negotiated (read before FEATURES_OK, as Linux does). */
static uint64_t vnet_check_mtu_offer(struct vnet_dev *d, uint64_t want)
{
    if (!(d->offered & want & VIRTIO_BIT(VIRTIO_NET_F_MTU)))
        return want;
    uint16_t mtu;
    if (d->vdev->ops->read_config(d->vdev, VNET_CFG_MTU, &mtu, sizeof(mtu)) < 0) {
        printf("vnet: %s: MTU unreadable from the device config, not negotiated\n", d->vdev->name);
        return want & ~VIRTIO_BIT(VIRTIO_NET_F_MTU);
    }
    if (mtu >= VNET_MTU_MIN && mtu <= VNET_MTU_MAX)
        return want;
    /* Above our buffers is the driver's limit; below 68 the device's fault. */
    if (mtu < VNET_MTU_MIN)
        d->config_bad++;
    printf("vnet: %s: device MTU %u outside %u..%u, not negotiated\n", d->vdev->name, mtu,
           VNET_MTU_MIN, VNET_MTU_MAX);
    return want & ~VIRTIO_BIT(VIRTIO_NET_F_MTU);
}

/* virtio 1.2 s5.1.4: speed in Mbit/s, 0..0x7fffffff or 0xffffffff
 * (unknown); duplex 0x00 half, 0x01 full or 0xff unknown. A value
 * outside these is the device's fault: counted, and taken as unknown
 * (s5.1.4.2). 0 or -EIO. */
static int vnet_read_link(struct vnet_dev *d)
{
    struct virtio_dev *v = d->vdev;
    d->speed = VNET_SPEED_UNKNOWN;
    d->duplex = VNET_DUPLEX_UNKNOWN;
    if (!(d->features & VIRTIO_BIT(VIRTIO_NET_F_SPEED_DUPLEX)))
        return 0;
    uint32_t speed;
    uint8_t duplex;
    if (v->ops->read_config(v, VNET_CFG_SPEED, &speed, sizeof(speed)) < 0 ||
        v->ops->read_config(v, VNET_CFG_DUPLEX, &duplex, sizeof(duplex)) < 0)
        return -EIO;
    if (speed <= VNET_SPEED_MAX || speed == VNET_SPEED_UNKNOWN)
        d->speed = speed;
    else
        d->config_bad++;
    if (duplex == VNET_DUPLEX_HALF || duplex == VNET_DUPLEX_FULL || duplex == VNET_DUPLEX_UNKNOWN)
        d->duplex = duplex;
    else
        d->config_bad++;
    if (d->speed != speed || d->duplex != duplex)
        printf("vnet: %s: device speed 0x%x duplex 0x%x outside virtio 1.2 s5.1.4's values, "
               "taken as unknown\n",
               v->name, (unsigned)speed, (unsigned)duplex);
    return 0;
}

/* 0, or -EIO when the device's config cannot be read consistently. */
static int vnet_read_config(struct vnet_dev *d)
{
    static unsigned made_up; /* MACs invented so far */
    struct virtio_dev *v = d->vdev;
    d->mtu = 1500;
    if (d->features & VIRTIO_BIT(VIRTIO_NET_F_MTU)) {
        uint16_t mtu;
        if (v->ops->read_config(v, VNET_CFG_MTU, &mtu, sizeof(mtu)) < 0)
            return -EIO;
        if (mtu >= VNET_MTU_MIN && mtu <= VNET_MTU_MAX)
            d->mtu = mtu;
    }
    if (d->features & VIRTIO_BIT(VIRTIO_NET_F_MAC)) {
        if (v->ops->read_config(v, VNET_CFG_MAC, d->mac, sizeof(d->mac)) < 0)
            return -EIO;
    } else {
        /* Locally administered, unicast: 02:76:6e ("vn"), then the index. */
        static const uint8_t base[6] = {0x02, 0x76, 0x6e, 0x00, 0x00, 0x00};
        memcpy(d->mac, base, sizeof(base));
        d->mac[5] = (uint8_t)++made_up;
    }
    return vnet_read_link(d);
}

/* Sizes shared by every RX queue: slot stride and the length posted.
 * A frame is the MTU's packet with the tags the caller's frames carry,
 * as Linux's virtio_net sizes its buffers (VLAN_ETH_HLEN + MTU): with
 * qinq the peer's MTU-sized packet comes in 1522 bytes, above virtio 1.2
 * s5.1.6.3.1's 1514 (its 1526 less the 12-byte header) for buffers
 * without MRG_RXBUF, and a device drops what a buffer cannot hold. */
static void vnet_rx_layout(struct vnet_dev *d)
{
    d->max_frame = d->mtu + VNET_FRAME_EXTRA + (d->params.qinq ? VNET_SVLAN_HLEN : 0);
    d->rx_chains = !!(d->features &
                      (VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6) |
                       VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO6)));
    if (d->rx_chains) {
        /* Large frames over mergeable buffers (s5.1.6.3): a few big
         * slots each, not one slot per MTU. */
        d->rxq[0].stride = VNET_RX_TSO_SLOT;
        d->rx_post_len = VNET_RX_TSO_SLOT - (VNET_HDR_ROOM - d->hdr_len);
    } else {
        d->rx_post_len = d->hdr_len + d->max_frame;
        d->rxq[0].stride = (VNET_HDR_ROOM + d->max_frame + 63u) & ~63u;
    }
    d->rx_refill = d->params.rx_refill ? d->params.rx_refill : 1;
    if (d->rx_refill > d->rxq[0].size)
        d->rx_refill = d->rxq[0].size;
    d->rx_coalesce = d->params.rx_coalesce ? d->params.rx_coalesce : 1;
    if (d->rx_coalesce > d->rxq[0].size)
        d->rx_coalesce = d->rxq[0].size;
}

static void vnet_rx_setup(struct vnet_dev *d, struct vnet_rxq *rq)
{
    uint16_t num = rq->size;
    rq->stride = d->rxq[0].stride;
    rq->mem = dma_pool_alloc(&d->pool, (size_t)rq->stride * num, 64);
    rq->owner = dma_pool_alloc(&d->pool, num, 64);
    rq->pending = dma_pool_alloc(&d->pool, sizeof(*rq->pending) * num, 64);
    rq->used = dma_pool_alloc(&d->pool, sizeof(*rq->used) * num, 64);
    /* The whole ring is posted at start. */
    for (uint32_t s = 0; s < num; s++) {
        rq->owner[s] = VNET_RX_PENDING;
        rq->pending[s] = s;
    }
    rq->npending = num;
    vnet_rx_post(d, rq);
}

static void vnet_tx_setup(struct vnet_dev *d, struct vnet_txq *tq)
{
    tq->size = virtq_size(tq->vq);
    tq->used = dma_pool_alloc(&d->pool, sizeof(*tq->used) * tq->size, 64);
    tq->bufs = dma_pool_alloc(&d->pool, sizeof(*tq->bufs) * tq->size, 64);
    tq->lens = dma_pool_alloc(&d->pool, sizeof(*tq->lens) * tq->size, 64);
    tq->chains = dma_pool_alloc(&d->pool, sizeof(*tq->chains) * VNET_TX_CHAINS, 64);
}

/* Every queue pair in use: receiveq(i) and transmitq(i), their buffers
 * and the RX rings full (virtio 1.2 s3.1.1 step 7, s5.1.5). */
static int vnet_pairs_init(struct vnet_dev *d)
{
    for (unsigned i = 0; i < d->npairs; i++) {
        struct vnet_rxq *rq = &d->rxq[i];
        struct vnet_txq *tq = &d->txq[i];
        int r = vnet_queue_init(d, VNET_RXQ(i), &rq->note, &rq->vq);
        if (!r)
            r = vnet_queue_init(d, VNET_TXQ(i), &tq->note, &tq->vq);
        if (r)
            return r;
        rq->size = virtq_size(rq->vq);
        vnet_tx_setup(d, tq);
    }
    vnet_rx_layout(d);
    for (unsigned i = 0; i < d->npairs; i++) {
        d->rxq[i].buf_tag = i << VNET_RX_PAIR_SHIFT;
        vnet_rx_setup(d, &d->rxq[i]);
    }
    return 0;
}

/* virtio 1.2 s3.1.1 steps 1-6: reset, ACKNOWLEDGE, DRIVER, features,
 * FEATURES_OK and the check that it stuck. 0 or -errno (said why). */
static int vnet_negotiate(struct vnet_dev *d)
{
    struct virtio_dev *v = d->vdev;
    const struct vnet_params *p = &d->params;
    if (v->ops->reset(v) < 0) {
        vnet_fail(d, "device did not finish its reset (status stays non-zero)");
        return -EIO;
    }
    v->ops->set_status(v, VIRTIO_STATUS_ACKNOWLEDGE);
    v->ops->set_status(v, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);

    d->offered = v->ops->get_features(v);
    if (p->indirect == VNET_INDIRECT_ON && !(d->offered & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC))) {
        /* the caller's config error says so in its one line */
        v->ops->set_status(v, v->ops->get_status(v) | VIRTIO_STATUS_FAILED);
        return -EOPNOTSUPP;
    }
    uint64_t want = VNET_WANTED | vnet_offload_features(p->offloads);
    if (p->indirect == VNET_INDIRECT_OFF)
        want &= ~VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC);
    /* With CTRL_VLAN a device filters every tag not added (QEMU drops
     * them all): asked for only by a caller that adds one. */
    if (p->vlan_filter)
        want |= VIRTIO_BIT(VIRTIO_NET_F_CTRL_VLAN);
    want = vnet_mq_offer(d, vnet_check_mtu_offer(d, want & ~p->features_off));
    if (v->legacy)
        want &= 0xffffffffu; /* legacy devices have 32 feature bits */
    d->features = vnet_offload_deps(v->name, d->offered & want);
    if (!v->legacy && !(d->features & VIRTIO_BIT(VIRTIO_F_VERSION_1))) {
        vnet_fail(d, (p->features_off & VIRTIO_BIT(VIRTIO_F_VERSION_1))
                         ? "features=-version_1 needs a legacy or transitional device"
                         : "modern transport without VERSION_1");
        return -ENODEV;
    }
    v->ops->set_features(v, d->features);
    if (!v->legacy) {
        v->ops->set_status(v, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
                                  VIRTIO_STATUS_FEATURES_OK);
        if (!(v->ops->get_status(v) & VIRTIO_STATUS_FEATURES_OK)) {
            vnet_fail(d, "device did not accept our features (FEATURES_OK cleared)");
            return -EIO;
        }
    }
    return 0;
}

/* Step 7: config, every queue pair, the control queue, RX buffers. */
static int vnet_setup(struct vnet_dev *d)
{
    d->mrg = !!(d->features & VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF));
    /* virtio 1.2 s5.1.6: the header has num_buffers with VERSION_1 or
     * MRG_RXBUF; a legacy device without MRG_RXBUF uses 10 bytes; with
     * HASH_REPORT it goes on with the hash fields. */
    d->hdr_len =
        (d->features & VIRTIO_BIT(VIRTIO_F_VERSION_1)) || d->mrg ? VNET_HDR_MRG : VNET_HDR_LEGACY;
    if (d->features & VIRTIO_BIT(VIRTIO_NET_F_HASH_REPORT))
        d->hdr_len = VNET_HDR_HASH;
    if (vnet_read_config(d) < 0) {
        vnet_fail(d, "device config (MTU, MAC, speed) unreadable: past its end, or its generation "
                     "never settles");
        return -EIO;
    }
    int r = vnet_mq_pairs(d);
    if (r == -ERANGE) {
        /* queues= above max_virtqueue_pairs: the caller's config error
         * says so in its one line */
        d->vdev->ops->set_status(d->vdev, d->vdev->ops->get_status(d->vdev) | VIRTIO_STATUS_FAILED);
        return r;
    }
    if (r) {
        vnet_fail(d, "max_virtqueue_pairs changed since it was checked");
        return r;
    }
    vnet_notify_setup(d);
    d->tx_stall_cycles = time_tsc_hz / 1000000u * VNET_TX_STALL_US;
    r = vnet_pairs_init(d);
    if (!r)
        r = vnet_ctrl_init(d);
    if (r)
        vnet_fail(d, "queue setup failed");
    return r;
}

/* The link the device reports (SPEED_DUPLEX), one line where negotiated. */
static void vnet_print_link(const struct vnet_dev *d)
{
    if (!(d->features & VIRTIO_BIT(VIRTIO_NET_F_SPEED_DUPLEX)))
        return;
    const char *duplex = d->duplex == VNET_DUPLEX_FULL   ? "full"
                         : d->duplex == VNET_DUPLEX_HALF ? "half"
                                                         : "unknown";
    if (d->speed == VNET_SPEED_UNKNOWN)
        printf("vnet: %s: link speed unknown, %s duplex\n", d->vdev->name, duplex);
    else
        printf("vnet: %s: link %u Mbit/s, %s duplex\n", d->vdev->name, (unsigned)d->speed, duplex);
}

/* Steps 1-8 on d, whose vdev and pool are set and the rest zero. */
static int vnet_dev_up(struct vnet_dev *d, const struct vnet_params *p)
{
    struct virtio_dev *v = d->vdev;
    d->params = *p;
    d->kick_batch = p->kick_batch;
    d->txfull = p->txfull;
    int r = vnet_negotiate(d);
    if (!r)
        r = vnet_setup(d);
    if (r)
        return r;

    /* step 8: DRIVER_OK; notifications only from here on (s3.1.1) */
    v->ops->set_status(v, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
                              (v->legacy ? 0 : VIRTIO_STATUS_FEATURES_OK) |
                              VIRTIO_STATUS_DRIVER_OK);
    if (vnet_check_status(d)) {
        printf("vnet: %s: device failed at DRIVER_OK (status 0x%02x)\n", v->name, d->dev_status);
        return -EIO;
    }
    for (unsigned i = 0; i < d->npairs; i++)
        virtq_kick(d->rxq[i].vq);
    vnet_notify_start(d);
    r = vnet_mq_start(d);
    if (r)
        return r;

    printf("vnet: %s: mac %02x:%02x:%02x:%02x:%02x:%02x mtu %u rx %u tx %u hdr %u %s ring\n",
           v->name, d->mac[0], d->mac[1], d->mac[2], d->mac[3], d->mac[4], d->mac[5], d->mtu,
           d->rxq[0].size, d->txq[0].size, d->hdr_len, vnet_ring_format(d));
    if (d->max_pairs > 1)
        printf("vnet: %s: queues %u of %u%s\n", v->name, d->npairs, d->max_pairs,
               (d->features & VIRTIO_BIT(VIRTIO_NET_F_RSS)) ? ", rss" : "");
    if (d->hash_types)
        printf("vnet: %s: hash reports checked (types 0x%x)\n", v->name, d->hash_types);
    vnet_print_link(d);
    vnet_features_print("offered", d->offered);
    vnet_features_print("negotiated", d->features);
    return 0;
}

int vnet_dev_init(struct vnet_dev *d, struct virtio_dev *v, const struct vnet_params *p)
{
    memset(d, 0, sizeof(*d));
    d->vdev = v;
    return vnet_dev_up(d, p);
}

int vnet_dev_renegotiate(struct vnet_dev *d, const struct vnet_params *p)
{
    struct virtio_dev *v = d->vdev;
    /* virtio 1.2 s2.4, s4.1.4.3.2, s4.2.2.2: write 0, then the device is
     * reset once status reads 0 (the transports wait a bounded time). Only
     * then is the queues' memory no longer the device's to use. */
    if (v->ops->reset(v) < 0) {
        vnet_fail(d, "device did not finish its reset (status stays non-zero)");
        return -ETIMEDOUT;
    }
    dma_pool_release(&d->pool);
    struct dma_pool pool = d->pool;
    unsigned generation = d->generation + 1;
    memset(d, 0, sizeof(*d));
    d->vdev = v;
    d->pool = pool;
    d->generation = generation;
    return vnet_dev_up(d, p);
}

int vnet_check_status(struct vnet_dev *d)
{
    if (vnet_broken(d))
        return -EIO;
    uint8_t s = d->vdev->ops->get_status(d->vdev);
    d->dev_status = s;
    if (s & (VIRTIO_STATUS_DEVICE_NEEDS_RESET | VIRTIO_STATUS_FAILED)) {
        const char *what =
            (s & VIRTIO_STATUS_DEVICE_NEEDS_RESET) ? "device needs reset" : "device status FAILED";
        for (unsigned i = 0; i < d->npairs; i++) {
            virtq_set_broken(d->rxq[i].vq, VIRTQ_BAD_DEVICE, what, 0, 0, s);
            virtq_set_broken(d->txq[i].vq, VIRTQ_BAD_DEVICE, what, 0, 0, s);
        }
        d->fail_queue = "device";
        return -EIO;
    }
    return 0;
}

const uint8_t *vnet_mac(const struct vnet_dev *d)
{
    return d->mac;
}
unsigned vnet_pairs(const struct vnet_dev *d)
{
    return d->npairs;
}

uint8_t vnet_tx_notify_mode(const struct vnet_dev *d, unsigned q)
{
    return q < d->npairs ? d->txq[q].note.mode : VNET_NOTIFY_POLL;
}

uint8_t vnet_rx_notify_mode(const struct vnet_dev *d, unsigned q)
{
    return q < d->npairs ? d->rxq[q].note.mode : VNET_NOTIFY_POLL;
}

void vnet_tx_full_counts(const struct vnet_dev *d, unsigned q, uint64_t *ring_full, uint64_t *halts)
{
    *ring_full = q < d->npairs ? d->txq[q].st.ring_full : 0;
    *halts = q < d->npairs ? d->txq[q].note.halts : 0;
}
uint16_t vnet_rx_size(const struct vnet_dev *d)
{
    return d->rxq[0].size;
}
uint32_t vnet_mtu(const struct vnet_dev *d)
{
    return d->mtu;
}
const char *vnet_name(const struct vnet_dev *d)
{
    return d->vdev->name;
}

const char *vnet_ring_format(const struct vnet_dev *d)
{
    return virtq_packed(d->txq[0].vq) ? "packed" : "split";
}

unsigned vnet_offloads(const struct vnet_dev *d)
{
    uint64_t f = d->features;
    unsigned o = 0;
    if (f & VIRTIO_BIT(VIRTIO_NET_F_CSUM))
        o |= VNET_OFF_TX_CSUM;
    if (f & VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO4))
        o |= VNET_OFF_TX_TSO;
    if (f & VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO6))
        o |= VNET_OFF_TX_TSO6;
    if (f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_CSUM))
        o |= VNET_OFF_RX_CSUM;
    if (f & (VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6)))
        o |= VNET_OFF_RX_TSO;
    if (f & VIRTIO_BIT(VIRTIO_NET_F_HOST_USO))
        o |= VNET_OFF_TX_USO;
    if (f & (VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO6)))
        o |= VNET_OFF_RX_USO;
    return o;
}

int vnet_broken(const struct vnet_dev *d)
{
    for (unsigned i = 0; i < d->npairs; i++)
        if (virtq_broken(d->rxq[i].vq) || virtq_broken(d->txq[i].vq))
            return 1;
    return 0;
}
