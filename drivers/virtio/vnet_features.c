/* virtio-net feature names: what boot prints, what the result JSON lists,
 * which ones features=-a,-b can switch off, and the features behind the
 * offloads a caller handles. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/vnet_priv.h"

struct vnet_feature {
    unsigned bit;
    const char *name;
    bool switchable; /* may be named in features= */
};

static const struct vnet_feature vnet_feature_table[] = {
    {VIRTIO_NET_F_CSUM, "csum", true},
    {VIRTIO_NET_F_GUEST_CSUM, "guest_csum", true},
    {2, "ctrl_guest_offloads", false},
    {VIRTIO_NET_F_MTU, "mtu", true},
    {VIRTIO_NET_F_MAC, "mac", true},
    {6, "gso", false},
    {VIRTIO_NET_F_GUEST_TSO4, "guest_tso4", true},
    {VIRTIO_NET_F_GUEST_TSO6, "guest_tso6", true},
    {VIRTIO_NET_F_GUEST_ECN, "guest_ecn", false},
    {10, "guest_ufo", false},
    {VIRTIO_NET_F_HOST_TSO4, "host_tso4", true},
    {VIRTIO_NET_F_HOST_TSO6, "host_tso6", true},
    {VIRTIO_NET_F_HOST_ECN, "host_ecn", false},
    {14, "host_ufo", false},
    {VIRTIO_NET_F_MRG_RXBUF, "mrg_rxbuf", true},
    {VIRTIO_NET_F_STATUS, "status", true},
    {VIRTIO_NET_F_CTRL_VQ, "ctrl_vq", true},
    {VIRTIO_NET_F_CTRL_RX, "ctrl_rx", true},
    {VIRTIO_NET_F_CTRL_VLAN, "ctrl_vlan", true},
    {20, "ctrl_rx_extra", false},
    {VIRTIO_NET_F_GUEST_ANNOUNCE, "guest_announce", true},
    {VIRTIO_NET_F_MQ, "mq", true},
    {VIRTIO_NET_F_CTRL_MAC_ADDR, "ctrl_mac_addr", true},
    {VIRTIO_F_NOTIFY_ON_EMPTY, "notify_on_empty", false},
    {VIRTIO_F_ANY_LAYOUT, "any_layout", false},
    {VIRTIO_F_INDIRECT_DESC, "indirect_desc", false},
    {VIRTIO_F_EVENT_IDX, "event_idx", true},
    {30, "bad_feature", false},
    {VIRTIO_F_VERSION_1, "version_1", true},
    {VIRTIO_F_ACCESS_PLATFORM, "access_platform", false},
    {VIRTIO_F_RING_PACKED, "ring_packed", true},
    {VIRTIO_F_IN_ORDER, "in_order", true},
    {36, "order_platform", false},
    {37, "sr_iov", false},
    {VIRTIO_F_NOTIFICATION_DATA, "notification_data", true},
    {VIRTIO_F_RING_RESET, "ring_reset", true},
    {VIRTIO_NET_F_VQ_NOTF_COAL, "vq_notf_coal", true},
    {VIRTIO_NET_F_NOTF_COAL, "notf_coal", true},
    {VIRTIO_NET_F_GUEST_USO4, "guest_uso4", true},
    {VIRTIO_NET_F_GUEST_USO6, "guest_uso6", true},
    {VIRTIO_NET_F_HOST_USO, "host_uso", true},
    {VIRTIO_NET_F_HASH_REPORT, "hash_report", true},
    {VIRTIO_NET_F_RSS, "rss", true},
    {VIRTIO_NET_F_RSC_EXT, "rsc_ext", false},
    {62, "standby", false},
    {VIRTIO_NET_F_SPEED_DUPLEX, "speed_duplex", true},
};

#define VNET_NFEATURES (sizeof(vnet_feature_table) / sizeof(vnet_feature_table[0]))

const char *vnet_feature_name(unsigned bit)
{
    for (size_t i = 0; i < VNET_NFEATURES; i++)
        if (vnet_feature_table[i].bit == bit)
            return vnet_feature_table[i].name;
    return NULL;
}

void vnet_features_print(const char *what, uint64_t f)
{
    printf("  %-10s", what);
    for (unsigned b = 0; b < 64; b++) {
        if (!(f & VIRTIO_BIT(b)))
            continue;
        const char *n = vnet_feature_name(b);
        if (n)
            printf(" %s", n);
        else
            printf(" bit%u", b);
    }
    printf("\n");
}

static const struct vnet_feature *vnet_feature_switch(const char *name, size_t len)
{
    for (size_t i = 0; i < VNET_NFEATURES; i++) {
        const struct vnet_feature *f = &vnet_feature_table[i];
        if (f->switchable && strlen(f->name) == len && !strncmp(f->name, name, len))
            return f;
    }
    return NULL;
}

/* Syntax: comma-separated "-name" words; "" switches nothing off. */
static int vnet_features_scan(const char *val, uint64_t *off, char *why, size_t whylen)
{
    uint64_t bits = 0;
    const char *p = val;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const struct vnet_feature *f = NULL;
        if (len > 1 && p[0] == '-')
            f = vnet_feature_switch(p + 1, len - 1);
        if (!f) {
            if (why) {
                int w = snprintf(why, whylen, "'%.*s' is not -NAME with NAME one of:", (int)len, p);
                for (size_t i = 0; i < VNET_NFEATURES && w >= 0 && (size_t)w < whylen; i++)
                    if (vnet_feature_table[i].switchable)
                        w += snprintf(why + w, whylen - w, " %s", vnet_feature_table[i].name);
            }
            return -EINVAL;
        }
        bits |= VIRTIO_BIT(f->bit);
        p += len;
        if (*p == ',')
            p++;
    }
    if (off)
        *off = bits;
    return 0;
}

int vnet_features_check(const char *val, char *why, size_t whylen)
{
    return vnet_features_scan(val, NULL, why, whylen);
}

int vnet_features_parse(const char *val, uint64_t *off)
{
    return vnet_features_scan(val, off, NULL, 0);
}

#define F(b) VIRTIO_BIT(VIRTIO_NET_F_##b)

uint64_t vnet_offload_features(uint8_t offloads)
{
    uint64_t f = 0;
    if (offloads & VNET_OFF_TX_CSUM)
        f |= F(CSUM);
    if (offloads & VNET_OFF_TX_TSO)
        f |= F(HOST_TSO4) | F(HOST_TSO6);
    if (offloads & VNET_OFF_RX_CSUM)
        f |= F(GUEST_CSUM);
    if (offloads & VNET_OFF_RX_TSO)
        f |= F(GUEST_TSO4) | F(GUEST_TSO6);
    if (offloads & VNET_OFF_TX_USO)
        f |= F(HOST_USO);
    if (offloads & VNET_OFF_RX_USO)
        f |= F(GUEST_USO4) | F(GUEST_USO6);
    return f;
}

uint64_t vnet_offload_deps(const char *dev, uint64_t f)
{
    /* virtio 1.2 s5.1.3.1: segmentation needs the matching checksum
     * offload. */
    const uint64_t guest_gso = F(GUEST_TSO4) | F(GUEST_TSO6) | F(GUEST_USO4) | F(GUEST_USO6);
    if (!(f & F(CSUM)))
        f &= ~(F(HOST_TSO4) | F(HOST_TSO6) | F(HOST_USO));
    /* the control queue's commands need the queue */
    if (!(f & F(CTRL_VQ)))
        f &= ~(F(CTRL_RX) | F(CTRL_VLAN) | F(CTRL_MAC_ADDR) | F(GUEST_ANNOUNCE) | F(NOTF_COAL) |
               F(VQ_NOTF_COAL));
    if (!(f & F(GUEST_CSUM)))
        f &= ~guest_gso;
    /* Our choice: frames up to 64 KiB arrive over mergeable buffers, not
     * in 64 KiB buffers (s5.1.6.3.1) the ring would have to hold each. */
    if ((f & guest_gso) && !(f & F(MRG_RXBUF))) {
        printf("vnet: %s: guest_tso4/6, guest_uso4/6 not negotiated: large frames need "
               "mrg_rxbuf\n",
               dev);
        f &= ~guest_gso;
    }
    return f;
}
