/* Multiqueue: VIRTIO_NET_F_MQ's queue pairs and VIRTIO_NET_F_RSS's
 * configuration (virtio 1.2 s5.1.6.5.5, s5.1.6.5.7), over the control
 * queue (vnet_ctrl.c). Every config value is checked before use. */
#include <errno.h>
#include <stdio.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"
#include "drivers/virtio/vnet_rss.h"
#include "kernel/mem.h"

#define VNET_CFG_MAX_PAIRS 8 /* le16 max_virtqueue_pairs, s5.1.4 */
#define F(b)               VIRTIO_BIT(VIRTIO_NET_F_##b)

/* max_virtqueue_pairs: 1..0x8000 (s5.1.4.1), else 0. */
static uint16_t vnet_mq_max(struct vnet_dev *d)
{
    uint16_t n;
    if (d->vdev->ops->read_config(d->vdev, VNET_CFG_MAX_PAIRS, &n, sizeof(n)) < 0)
        return 0;
    return n >= VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN && n <= VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX ? n : 0;
}

/* The hash limits RSS and HASH_REPORT share (s5.1.4.1: key at least 40
 * bytes, some type we hash), and with RSS the table (at least 128
 * entries); 0 when they do not hold or cannot be read. */
static int vnet_rss_limits(struct vnet_dev *d, bool rss)
{
    struct virtio_dev *v = d->vdev;
    uint8_t key;
    uint16_t table = VNET_RSS_TABLE_MAX;
    uint32_t types;
    if (v->ops->read_config(v, VNET_CFG_RSS_MAX_KEY, &key, 1) < 0 ||
        (rss && v->ops->read_config(v, VNET_CFG_RSS_MAX_TABLE, &table, 2) < 0) ||
        v->ops->read_config(v, VNET_CFG_HASH_TYPES, &types, 4) < 0)
        return 0;
    if (key < VNET_RSS_KEY_LEN || table < VNET_RSS_TABLE_MAX || !(types & VNET_RSS_HASH_OURS))
        return 0;
    if (rss)
        d->rss_max_table = table;
    d->rss_types = types;
    return 1;
}

uint64_t vnet_mq_offer(struct vnet_dev *d, uint64_t want)
{
    const char *name = d->vdev->name;
    uint64_t offer = d->offered & want;
    /* s5.1.3.1: MQ, RSS and HASH_REPORT need the control queue */
    if (!(offer & F(CTRL_VQ)))
        return want & ~(F(MQ) | F(RSS) | F(HASH_REPORT));
    if ((offer & F(MQ)) && !vnet_mq_max(d)) {
        printf("vnet: %s: max_virtqueue_pairs outside 1..32768: mq not negotiated\n", name);
        d->config_bad++;
        want &= ~F(MQ);
    }
    if ((offer & F(RSS)) && !vnet_rss_limits(d, true)) {
        printf("vnet: %s: RSS limits below the spec's (key 40, table 128): rss not negotiated\n",
               name);
        d->config_bad++;
        want &= ~F(RSS);
    }
    if ((offer & F(HASH_REPORT)) && !vnet_rss_limits(d, false)) {
        printf("vnet: %s: hash limits below the spec's (key 40, a type we hash): hash_report not "
               "negotiated\n",
               name);
        d->config_bad++;
        want &= ~F(HASH_REPORT);
    }
    return want;
}

int vnet_mq_pairs(struct vnet_dev *d)
{
    uint16_t asked = d->params.queues ? d->params.queues : 1;
    d->max_pairs = (d->features & F(MQ)) ? vnet_mq_max(d) : 1;
    if (!d->max_pairs)
        return -EIO; /* it changed since it was checked */
    if (asked > d->max_pairs || asked > VNET_MAX_PAIRS)
        return -ERANGE;
    d->npairs = asked;
    return 0;
}

int vnet_mq_set_pairs(struct vnet_dev *d, uint16_t n)
{
    /* s5.1.6.5.5: 1..max_virtqueue_pairs, and only pairs we set up */
    if (n < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN || n > d->max_pairs || n > d->npairs)
        return -EINVAL;
    uint8_t le[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
    return vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, le, sizeof(le));
}

/* RSS_CONFIG with the default table over every pair in use. */
static int vnet_rss_set(struct vnet_dev *d)
{
    struct vnet_rss *r = dma_pool_alloc(&d->pool, sizeof(*r), 64);
    vnet_rss_default(r, d->npairs, VNET_RSS_TABLE_MAX, d->rss_types);
    uint8_t buf[VNET_CTRL_DATA_MAX];
    int len = vnet_rss_encode(r, buf, sizeof(buf));
    if (len < 0)
        return len;
    int e = vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_RSS_CONFIG, buf, (uint32_t)len);
    if (!e) {
        d->rss = r;
        /* s5.1.6.5.7: RSS_CONFIG's types and key are also the reports' */
        if (d->features & F(HASH_REPORT))
            d->hash_types = r->hash_types;
    }
    return e;
}

int vnet_mq_hash_set(struct vnet_dev *d)
{
    if (!(d->features & F(HASH_REPORT)))
        return -EOPNOTSUPP;
    struct vnet_rss r;
    vnet_rss_default(&r, 1, 1, d->rss_types);
    uint8_t buf[VNET_CTRL_DATA_MAX];
    int len = vnet_hash_config_encode(&r, buf, sizeof(buf));
    if (len < 0)
        return len;
    int e =
        vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_HASH_CONFIG, buf, (uint32_t)len);
    if (!e)
        d->hash_types = r.hash_types;
    return e;
}

int vnet_mq_start(struct vnet_dev *d)
{
    const char *what = "VQ_PAIRS_SET";
    int r = 0;
    /* one pair is what a device starts with (s5.1.6.5.5) */
    if (d->npairs > 1)
        r = vnet_mq_set_pairs(d, d->npairs);
    if (!r && d->npairs > 1 && (d->features & F(RSS))) {
        what = "RSS_CONFIG";
        r = vnet_rss_set(d);
    }
    if (!r && !d->rss && (d->features & F(HASH_REPORT))) {
        what = "HASH_CONFIG";
        r = vnet_mq_hash_set(d);
    }
    if (r)
        printf("vnet: %s: control command %s for %u queue pairs failed (%d: %s)\n", d->vdev->name,
               what, d->npairs, r, d->ctrl->last_error ? d->ctrl->last_error : "refused");
    return r;
}

unsigned vnet_flow_pair(const struct vnet_dev *d, uint32_t saddr, uint32_t daddr, uint16_t sport,
                        uint16_t dport)
{
    if (d->npairs < 2)
        return 0;
    /* s5.1.6.4.3.1: source and destination address, then the ports, in
     * network order. */
    const uint8_t in[12] = {(uint8_t)(saddr >> 24), (uint8_t)(saddr >> 16), (uint8_t)(saddr >> 8),
                            (uint8_t)saddr,         (uint8_t)(daddr >> 24), (uint8_t)(daddr >> 16),
                            (uint8_t)(daddr >> 8),  (uint8_t)daddr,         (uint8_t)(sport >> 8),
                            (uint8_t)sport,         (uint8_t)(dport >> 8),  (uint8_t)dport};
    uint32_t h = vnet_toeplitz(vnet_rss_key_ms, VNET_RSS_KEY_LEN, in, sizeof(in));
    if (d->rss)
        return vnet_rss_queue(d->rss, h);
    return (h & (VNET_RSS_TABLE_MAX - 1u)) % d->npairs; /* vnet_rss_default's table */
}
