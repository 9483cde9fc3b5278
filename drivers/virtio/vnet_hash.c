/* Hash reports: what a device owes for a frame, and the verdict on what
 * it wrote (see vnet_hash.h). Every length is checked against the frame
 * before a byte is read. */
#include "drivers/virtio/vnet_hash.h"

#include <stdbool.h>
#include <string.h>

#include "drivers/virtio/vnet_frame.h"
#include "drivers/virtio/vnet_rss.h"
#include "drivers/virtio/vnet_toeplitz.h"

/* The hash input (s5.1.6.4.3.1: source address, destination address,
 * source port, destination port, network order) and the L4 protocol. */
struct vnet_hash_in {
    uint8_t b[36];
    uint32_t alen; /* bytes of the two addresses */
    uint8_t proto; /* 0: no L4 header to hash (fragment, other protocol) */
    uint8_t nh;    /* IPv6: the fixed header's next header */
    bool v6;
};

const char *const vnet_hash_verdict_name[VNET_HASH_NVERDICT] = {
    [VNET_HASH_OK] = "ok",
    [VNET_HASH_NONE] = "none",
    [VNET_HASH_SKIPPED] = "skipped",
    [VNET_HASH_BAD_TYPE] = "bad_type",
    [VNET_HASH_BAD_VALUE] = "bad_value",
};

static inline uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* The L4 header at off: its ports when the whole header is inside. */
static void vnet_hash_ports(const uint8_t *f, uint32_t len, uint32_t off, struct vnet_hash_in *in)
{
    uint32_t need = in->proto == PROTO_TCP ? TCP_HLEN_ : in->proto == PROTO_UDP ? UDP_HLEN_ : 0;
    if (!need || off > len || len - off < need) {
        in->proto = 0;
        return;
    }
    memcpy(in->b + in->alen, f + off, 4);
}

/* 0, or -1 for a frame that is no IP frame we hash. */
static int vnet_hash_parse(const uint8_t *f, uint32_t len, struct vnet_hash_in *in)
{
    memset(in, 0, sizeof(*in));
    if (len < ETH_HLEN_)
        return -1;
    uint32_t l3 = ETH_HLEN_;
    uint16_t type = be16(f + 12);
    if (type == ETH_P_8021Q) {
        if (len < ETH_HLEN_ + 4)
            return -1;
        type = be16(f + 16);
        l3 += 4;
    }
    const uint8_t *ip = f + l3;
    if (type == ETH_P_IPV4) {
        uint32_t ihl = len - l3 >= IPV4_HLEN ? (ip[0] & 15u) * 4u : 0;
        if (ihl < IPV4_HLEN || ip[0] >> 4 != 4 || len - l3 < ihl)
            return -1;
        in->alen = 8;
        memcpy(in->b, ip + 12, 8);
        /* a fragment has no ports to hash: the IPv4 type covers it */
        in->proto = (be16(ip + 6) & 0x3fff) ? 0 : ip[9];
        vnet_hash_ports(f, len, l3 + ihl, in);
        return 0;
    }
    if (type == ETH_P_IPV6) {
        if (len - l3 < IPV6_HLEN || ip[0] >> 4 != 6)
            return -1;
        in->v6 = true;
        in->alen = 32;
        memcpy(in->b, ip + 8, 32);
        in->nh = ip[6];
        in->proto = ip[6];
        vnet_hash_ports(f, len, l3 + IPV6_HLEN, in);
        return 0;
    }
    return -1;
}

/* IPv6 next headers that are extension headers (RFC 8200 s4, IANA):
 * the L4 header lies past them, where we do not follow. */
static bool vnet_hash_v6_ext(uint8_t nh)
{
    return nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 || nh == 60 || nh == 135 ||
           nh == 139 || nh == 140;
}

uint16_t vnet_hash_expect(const uint8_t *f, uint32_t len, uint32_t types, uint32_t *value)
{
    struct vnet_hash_in in;
    *value = 0;
    if (vnet_hash_parse(f, len, &in))
        return VIRTIO_NET_HASH_REPORT_NONE;
    if (in.v6 && vnet_hash_v6_ext(in.nh))
        return VNET_HASH_UNKNOWN;
    /* s5.1.6.4.3.1: TCP, then UDP, then the addresses alone */
    uint16_t base = in.v6 ? VIRTIO_NET_HASH_REPORT_IPv6 : VIRTIO_NET_HASH_REPORT_IPv4;
    uint16_t t = VIRTIO_NET_HASH_REPORT_NONE;
    uint32_t n = in.alen;
    if (in.proto == PROTO_TCP && (types & (1u << base))) {
        t = (uint16_t)(base + 1);
        n += 4;
    } else if (in.proto == PROTO_UDP && (types & (1u << (base + 1)))) {
        t = (uint16_t)(base + 2);
        n += 4;
    } else if (types & (1u << (base - 1))) {
        t = base;
    }
    if (t != VIRTIO_NET_HASH_REPORT_NONE)
        *value = vnet_toeplitz(vnet_rss_key_ms, VNET_RSS_KEY_LEN, in.b, n);
    return t;
}

enum vnet_hash_verdict vnet_hash_check(const uint8_t *f, uint32_t len, uint32_t types,
                                       uint32_t value, uint16_t report)
{
    if (report > VIRTIO_NET_HASH_REPORT_UDPv6_EX ||
        (report != VIRTIO_NET_HASH_REPORT_NONE && !(types & (1u << (report - 1)))))
        return VNET_HASH_BAD_TYPE;
    uint32_t owed;
    uint16_t t = vnet_hash_expect(f, len, types, &owed);
    if (t == VNET_HASH_UNKNOWN)
        return VNET_HASH_SKIPPED;
    if (report == VIRTIO_NET_HASH_REPORT_NONE)
        return VNET_HASH_NONE;
    if (report != t)
        return VNET_HASH_BAD_TYPE;
    return value == owed ? VNET_HASH_OK : VNET_HASH_BAD_VALUE;
}
