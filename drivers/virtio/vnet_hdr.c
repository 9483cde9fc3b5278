/* virtio-net header: TX build and RX validation (see vnet_hdr.h). */
#include "drivers/virtio/vnet_hdr.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "drivers/virtio/vnet_frame.h"
#include "drivers/virtio/virtio.h"
#include "kernel/csum.h"

#define TCP_CSUM_OFF 16
#define UDP_CSUM_OFF 6
#define TCP_F_CWR    0x80

/* Where the headers of a TCP or UDP frame are. */
struct vnet_l4 {
    uint32_t l3off, l4off;
    uint32_t l4len; /* L4 header + payload, from the IP header */
    uint32_t hdrs;  /* bytes up to the end of the L4 header */
    uint32_t ip_end;
    uint8_t proto;
    uint8_t tcp_flags;
    bool v6;
};

static inline uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* IPv4 or IPv6 header at l3off; the L4 header is not looked at. */
static int vnet_parse_ip(const uint8_t *f, uint32_t head, uint32_t len, uint16_t type,
                         struct vnet_l4 *o)
{
    const uint8_t *ip = f + o->l3off;
    if (type == ETH_P_IPV4) {
        if (head - o->l3off < IPV4_HLEN || ip[0] >> 4 != 4)
            return -EINVAL;
        uint32_t ihl = (ip[0] & 15u) * 4u, tot = be16(ip + 2);
        /* fragments carry no (or only part of the) L4 header */
        if (ihl < IPV4_HLEN || head - o->l3off < ihl || tot < ihl || (be16(ip + 6) & 0x3fff))
            return -EINVAL;
        o->l4off = o->l3off + ihl;
        o->l4len = tot - ihl;
        o->proto = ip[9];
        o->v6 = false;
    } else if (type == ETH_P_IPV6) {
        /* no extension headers: TCP or UDP right after the fixed header */
        if (head - o->l3off < IPV6_HLEN || ip[0] >> 4 != 6)
            return -EINVAL;
        o->l4off = o->l3off + IPV6_HLEN;
        o->l4len = be16(ip + 4);
        o->proto = ip[6];
        o->v6 = true;
    } else {
        return -EINVAL;
    }
    o->ip_end = o->l4off + o->l4len; /* at most 14+4+60+65535: no wrap */
    return o->ip_end <= len ? 0 : -EINVAL;
}

static int vnet_parse(const uint8_t *f, uint32_t head, uint32_t len, struct vnet_l4 *o)
{
    memset(o, 0, sizeof(*o));
    if (head > len || head < ETH_HLEN_)
        return -EINVAL;
    uint16_t type = be16(f + 12);
    o->l3off = ETH_HLEN_;
    /* an 802.1ad service tag, then (or alone) one 802.1Q tag (IEEE
     * 802.1Q-2018 s9.5): lwIP's netif_svlan= and netif_vlan= */
    if (type == ETH_P_8021AD) {
        if (head < ETH_HLEN_ + 4 || be16(f + 16) != ETH_P_8021Q)
            return -EINVAL;
        type = be16(f + 16);
        o->l3off += 4;
    }
    if (type == ETH_P_8021Q) {
        if (head < o->l3off + 4)
            return -EINVAL;
        type = be16(f + o->l3off + 2);
        o->l3off += 4;
    }
    if (vnet_parse_ip(f, head, len, type, o))
        return -EINVAL;
    const uint8_t *l4 = f + o->l4off;
    uint32_t room = head - o->l4off; /* l4off <= head: checked by the IP parser */
    if (o->proto == PROTO_TCP) {
        if (room < TCP_HLEN_)
            return -EINVAL;
        uint32_t thl = (uint32_t)(l4[12] >> 4) * 4u;
        if (thl < TCP_HLEN_ || thl > room || thl > o->l4len)
            return -EINVAL;
        o->hdrs = o->l4off + thl;
        o->tcp_flags = l4[13];
        return 0;
    }
    if (o->proto == PROTO_UDP) {
        if (room < UDP_HLEN_ || o->l4len < UDP_HLEN_)
            return -EINVAL;
        o->hdrs = o->l4off + UDP_HLEN_;
        return 0;
    }
    return -EINVAL;
}

/* The pseudo-header sum (RFC 793 s3.1, RFC 8200 s8.1), folded, not
 * complemented, stored in the checksum field in network byte order. */
static void vnet_seed_csum(uint8_t *f, const struct vnet_l4 *o, uint32_t csum_off)
{
    const uint8_t *ip = f + o->l3off;
    uint32_t s = o->v6 ? csum_partial(ip + 8, 32, 0) : csum_partial(ip + 12, 8, 0);
    s = csum_add(s, csum_host16(o->proto));
    s = csum_add(s, csum_host16((uint16_t)o->l4len));
    uint16_t v = csum_fold16(s);
    memcpy(f + o->l4off + csum_off, &v, sizeof(v)); /* a native sum stores as network order */
}

/* UDP segmentation (virtio 1.2 s5.1.6.2, gso_type UDP_L4): one type for
 * IPv4 and IPv6, HOST_USO negotiated. 0, or -errno. */
static int vnet_hdr_uso(struct virtio_net_hdr *h, uint64_t features)
{
    if (!(features & VIRTIO_BIT(VIRTIO_NET_F_HOST_USO)))
        return -EOPNOTSUPP;
    h->gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
    return 0;
}

/* TCP segmentation: TCPV4 or TCPV6 with HOST_TSO4/6. 0, or -errno. */
static int vnet_hdr_tso(struct virtio_net_hdr *h, const struct vnet_l4 *o, uint64_t features)
{
    unsigned feat = o->v6 ? VIRTIO_NET_F_HOST_TSO6 : VIRTIO_NET_F_HOST_TSO4;
    if (!(features & VIRTIO_BIT(feat)))
        return -EOPNOTSUPP;
    h->gso_type = o->v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
    /* s5.1.6.2: ECN-marked segments only with HOST_ECN, and then flagged */
    if (o->tcp_flags & TCP_F_CWR) {
        if (!(features & VIRTIO_BIT(VIRTIO_NET_F_HOST_ECN)))
            return -EOPNOTSUPP;
        h->gso_type |= VIRTIO_NET_HDR_GSO_ECN;
    }
    return 0;
}

/* GSO part of the header; 0, or -errno. */
static int vnet_hdr_gso(struct virtio_net_hdr *h, const struct vnet_l4 *o, uint32_t len,
                        uint16_t gso_size, uint64_t features)
{
    if (gso_size == 0 || o->ip_end != len)
        return -EINVAL;
    if (o->ip_end - o->hdrs <= gso_size)
        return 0; /* one segment: checksum only */
    int r = o->proto == PROTO_TCP ? vnet_hdr_tso(h, o, features) : vnet_hdr_uso(h, features);
    if (r)
        return r;
    h->gso_size = gso_size;
    h->hdr_len = (uint16_t)o->hdrs; /* s5.1.6.2: up to the start of the payload */
    return 0;
}

int vnet_hdr_tx_build(struct virtio_net_hdr *h, uint8_t *frame, uint32_t head, uint32_t len,
                      const struct vnet_tx_off *off, uint64_t features)
{
    memset(h, 0, sizeof(*h));
    if (!off || !off->flags)
        return 0;
    /* s5.1.6.2: NEEDS_CSUM only with CSUM, and GSO frames need it too */
    if (!(features & VIRTIO_BIT(VIRTIO_NET_F_CSUM)))
        return -EOPNOTSUPP;
    struct vnet_l4 o;
    if (vnet_parse(frame, head, len, &o))
        return -EINVAL;
    if (off->flags & VNET_TX_GSO) {
        int r = vnet_hdr_gso(h, &o, len, off->gso_size, features);
        if (r) {
            memset(h, 0, sizeof(*h));
            return r;
        }
    }
    uint32_t coff = o.proto == PROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF;
    vnet_seed_csum(frame, &o, coff);
    h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h->csum_start = (uint16_t)o.l4off;
    h->csum_offset = (uint16_t)coff;
    return 0;
}

const char *const vnet_hdr_bad_name[VNET_HDR_NBAD] = {
    [VNET_HDR_OK] = "ok",
    [VNET_HDR_BAD_FLAGS] = "bad_flags",
    [VNET_HDR_BAD_GSO_TYPE] = "bad_gso_type",
    [VNET_HDR_BAD_GSO_SIZE] = "bad_gso_size",
    [VNET_HDR_BAD_HDR_LEN] = "bad_hdr_len",
    [VNET_HDR_BAD_CSUM] = "bad_csum_range",
    [VNET_HDR_BAD_LEN] = "bad_len",
};

/* The GSO type against what was negotiated (virtio 1.2 s5.1.6.4.1). */
static enum vnet_hdr_bad vnet_rx_gso_type(uint8_t t, uint64_t features)
{
    bool ecn = t & VIRTIO_NET_HDR_GSO_ECN;
    if (ecn) {
        if (!(features & VIRTIO_BIT(VIRTIO_NET_F_GUEST_ECN)) || t == VIRTIO_NET_HDR_GSO_ECN)
            return VNET_HDR_BAD_GSO_TYPE;
        t &= (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
    }
    if (t == VIRTIO_NET_HDR_GSO_NONE)
        return VNET_HDR_OK;
    if (t == VIRTIO_NET_HDR_GSO_TCPV4 && (features & VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4)))
        return VNET_HDR_OK;
    if (t == VIRTIO_NET_HDR_GSO_TCPV6 && (features & VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6)))
        return VNET_HDR_OK;
    /* s5.1.6.4.1: UDP_L4 needs GUEST_USO4 or 6 (one type for both), and
     * ECN is TCP's */
    if (t == VIRTIO_NET_HDR_GSO_UDP_L4 && !ecn &&
        (features & (VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO6))))
        return VNET_HDR_OK;
    return VNET_HDR_BAD_GSO_TYPE; /* UDP (UFO, never negotiated), unknown */
}

enum vnet_hdr_bad vnet_hdr_rx_check(const struct virtio_net_hdr *h, uint32_t frame_len,
                                    uint32_t max_plain, uint64_t features, struct vnet_rx_off *out)
{
    const uint8_t csum_flags = VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID;
    /* s5.1.6.4.1: flags zero without GUEST_CSUM; RSC_INFO only with RSC_EXT.
     * Other bits are ignored (s5.1.6.4.2). */
    if ((h->flags & csum_flags) && !(features & VIRTIO_BIT(VIRTIO_NET_F_GUEST_CSUM)))
        return VNET_HDR_BAD_FLAGS;
    if ((h->flags & VIRTIO_NET_HDR_F_RSC_INFO) && !(features & VIRTIO_BIT(VIRTIO_NET_F_RSC_EXT)))
        return VNET_HDR_BAD_FLAGS;
    enum vnet_hdr_bad r = vnet_rx_gso_type(h->gso_type, features);
    if (r)
        return r;
    uint8_t type = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
    if (type != VIRTIO_NET_HDR_GSO_NONE) {
        /* s5.1.6.4.1: a GSO frame also has NEEDS_CSUM and its MSS */
        if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
            return VNET_HDR_BAD_GSO_TYPE;
        if (h->gso_size == 0)
            return VNET_HDR_BAD_GSO_SIZE;
        if (h->hdr_len > frame_len)
            return VNET_HDR_BAD_HDR_LEN;
        if (frame_len > VNET_GSO_FRAME_MAX)
            return VNET_HDR_BAD_LEN;
    } else if (frame_len > max_plain) {
        return VNET_HDR_BAD_LEN;
    }
    /* NEEDS_CSUM: the device says how to finish the checksum; the field
     * it names must lie inside the frame (16-bit fields: no wrap). */
    if ((h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
        (h->csum_start < ETH_HLEN_ || (uint32_t)h->csum_start + h->csum_offset + 2u > frame_len))
        return VNET_HDR_BAD_CSUM;
    memset(out, 0, sizeof(*out));
    /* s5.1.6.4.2: csum_start/offset only with NEEDS_CSUM, never with RSC_INFO */
    if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
        out->csum = VNET_RX_CSUM_PARTIAL;
        out->csum_start = h->csum_start;
        out->csum_offset = h->csum_offset;
    } else if (h->flags & VIRTIO_NET_HDR_F_DATA_VALID) {
        out->csum = VNET_RX_CSUM_VALID;
    }
    out->gso_type = type;
    out->gso_size = type != VIRTIO_NET_HDR_GSO_NONE ? h->gso_size : 0;
    return VNET_HDR_OK;
}
