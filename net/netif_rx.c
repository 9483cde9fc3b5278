/* The netif's receive side: a frame of one or more device buffers becomes
 * a chain of PBUF_REF pbufs without a copy (freeing one gives its buffer
 * back to the ring), after the checksum work the device left undone:
 *  - TCP checking is off in lwIP on a GUEST_CSUM device (lwIP can only
 *    switch checks per netif, not per frame): a TCP frame the device did
 *    not vouch for is checked here;
 *  - a frame of any other protocol with a partial checksum (NEEDS_CSUM)
 *    is finished here, so lwIP's own check passes.
 * A frame over 64 KiB with its Ethernet header (pbuf lengths are 16-bit)
 * goes to ip_input without that header. With netif_vlan= only frames of
 * its VID go on, with netif_svlan= only those inside its service tag,
 * which comes off first (net_vlan.h). */
#include <stdlib.h>
#include <string.h>

#include "kernel/exit.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ethernet.h"
#include "net/net.h"
#include "net/net_priv.h"
#include "net/pkt.h"

struct net_rx_pbuf {
    struct pbuf_custom pc; /* first: lwIP hands back the struct pbuf */
    struct net_if *nif;
    uint32_t buf;
    struct net_rx_pbuf *next_free;
};

static void rx_pbuf_free(struct pbuf *p)
{
    struct net_rx_pbuf *r = (struct net_rx_pbuf *)p;
    vnet_rx_release(r->nif->dev, r->buf);
    r->next_free = r->nif->rx_free;
    r->nif->rx_free = r;
    r->nif->rx_nfree++;
}

void net_rx_pool_init(struct net_if *nif)
{
    unsigned n = vnet_rx_size(nif->dev) / 2;
    if (n < NET_RX_PBUFS_MIN)
        n = NET_RX_PBUFS_MIN;
    nif->rx_pool = calloc(n, sizeof(*nif->rx_pool));
    if (!nif->rx_pool)
        vn_fatal(VN_EXIT_OOM, "net: no memory for %u RX pbufs", n);
    for (unsigned i = 0; i < n; i++) {
        nif->rx_pool[i].nif = nif;
        nif->rx_pool[i].next_free = nif->rx_free;
        nif->rx_free = &nif->rx_pool[i];
    }
    nif->rx_nfree = n;
}

static void net_rx_release_all(struct net_if *nif, const struct vnet_rx *rx, unsigned nb)
{
    for (unsigned i = 0; i < nb; i++)
        vnet_rx_release(nif->dev, rx[i].buf);
}

/* Buffer i's bytes, less skip bytes at the front of the first. */
static inline const uint8_t *piece(const struct vnet_rx *rx, unsigned i, uint32_t skip,
                                   uint32_t *len)
{
    *len = rx[i].len - (i ? 0 : skip);
    return (const uint8_t *)rx[i].frame + (i ? 0 : skip);
}

/* The frame as PBUF_REF pbufs over its buffers (they become lwIP's). */
static struct pbuf *net_rx_zero_copy(struct net_if *nif, const struct vnet_rx *rx, unsigned nb,
                                     uint32_t skip)
{
    struct pbuf *head = NULL;
    for (unsigned i = 0; i < nb; i++) {
        struct net_rx_pbuf *r = nif->rx_free;
        nif->rx_free = r->next_free;
        nif->rx_nfree--;
        r->buf = rx[i].buf;
        r->pc.custom_free_function = rx_pbuf_free;
        uint32_t len;
        void *mem = (void *)piece(rx, i, skip, &len);
        struct pbuf *p =
            pbuf_alloced_custom(PBUF_RAW, (u16_t)len, PBUF_REF, &r->pc, mem, (u16_t)len);
        if (head)
            pbuf_cat(head, p); /* cannot fail: PBUF_REF over our memory */
        else
            head = p;
    }
    return head;
}

/* Every zero-copy pbuf is held by lwIP (TCP queues): the frame is copied
 * into pool pbufs so the ring does not run dry. */
static struct pbuf *net_rx_copy(struct net_if *nif, const struct vnet_rx *rx, unsigned nb,
                                uint32_t skip, uint32_t total)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)total, PBUF_POOL);
    uint32_t off = 0;
    for (unsigned i = 0; p && i < nb; i++) {
        uint32_t len;
        const uint8_t *src = piece(rx, i, skip, &len);
        pbuf_take_at(p, src, (u16_t)len, (u16_t)off);
        off += len;
    }
    net_rx_release_all(nif, rx, nb);
    nif->lwip_rx_copied++;
    return p;
}

/* TCP on a GUEST_CSUM device: lwIP does not check, so a frame the device
 * did not vouch for is checked here, against the IPv4 or IPv6
 * pseudo-header (RFC 793 s3.1, RFC 8200 s8.1). true when it may go on. */
static bool net_rx_tcp_ok(struct pbuf *p, uint32_t l4off, uint32_t l4len, bool v6)
{
    const uint8_t *f = p->payload;
    ip_addr_t src, dst;
    if (v6) {
        ip_addr_copy_from_ip6_packed(src, *(const ip6_addr_p_t *)(f + ETH_HLEN + 8));
        ip_addr_copy_from_ip6_packed(dst, *(const ip6_addr_p_t *)(f + ETH_HLEN + 24));
    } else {
        ip_addr_set_ip4_u32_val(src, lwip_htonl(rd32(f + OFF_IP_SRC)));
        ip_addr_set_ip4_u32_val(dst, lwip_htonl(rd32(f + OFF_IP_DST)));
    }
    if (l4off + l4len > p->tot_len || pbuf_remove_header(p, (u16_t)l4off))
        return false;
    u16_t c = ip_chksum_pseudo_partial(p, IP_PROTO_TCP, (u16_t)l4len, (u16_t)l4len, &src, &dst);
    pbuf_header_force(p, (s16_t)l4off);
    return c == 0;
}

/* NEEDS_CSUM on a frame lwIP checks itself: finish the checksum the
 * device left (virtio 1.2 s5.1.6.4), in place. */
static bool net_rx_finish_csum(struct pbuf *p, const struct vnet_rx_off *off)
{
    uint32_t at = (uint32_t)off->csum_start + off->csum_offset;
    if (at + 2u > p->len || pbuf_remove_header(p, off->csum_start))
        return false; /* the field is not in the first buffer */
    u16_t c = inet_chksum_pbuf(p);
    pbuf_header_force(p, (s16_t)off->csum_start);
    memcpy((uint8_t *)p->payload + at, &c, sizeof(c));
    return true;
}

/* The checksum work the device left; false: drop the frame. */
static bool net_rx_csum(struct net_if *nif, struct pbuf *p, const struct vnet_rx_off *off)
{
    uint32_t l4off, l4len;
    bool v6;
    if (net_off_rx_tcp(p->payload, p->len, p->tot_len, &l4off, &l4len, &v6) == 0) {
        if (off->csum != VNET_RX_CSUM_NONE)
            return true;
        if (net_rx_tcp_ok(p, l4off, l4len, v6))
            return true;
        nif->lwip_rx_csum_bad++;
        return false;
    }
    if (off->csum != VNET_RX_CSUM_PARTIAL)
        return true;
    nif->lwip_rx_csum_done++;
    return net_rx_finish_csum(p, off);
}

/* netif_svlan=: the bytes of the service tag taken off the front of
 * the first buffer (net_svlan_pop: the MACs moved over it), 0 without
 * one, UINT32_MAX when the frame has not our service tag. */
static uint32_t net_rx_strip(struct net_if *nif, const struct vnet_rx *rx)
{
    if (!net_vlan_vid(&nif->svlan))
        return 0;
    return net_svlan_pop(&nif->svlan, rx->frame, rx->len) ? NET_VLAN_HLEN : UINT32_MAX;
}

/* Over 64 KiB with its Ethernet header (and tag): an IPv4 or IPv6 frame
 * (GSO), which ip4_input or ip6_input takes without that header; a
 * tagged one only on a netif of its VID (lwIP's ethernet_input, which
 * asks the VLAN hook, is not on this way in). The frame starts strip
 * bytes into the first buffer; the header's length after them. */
static uint32_t net_rx_skip(struct net_if *nif, const struct vnet_rx *rx, uint32_t strip)
{
    if (rx->frame_len - strip <= 0xffff)
        return 0;
    const uint8_t *f = (const uint8_t *)rx->frame + strip;
    uint32_t l2 = ETH_HLEN, len = rx->len - strip;
    if (len >= ETH_HLEN + NET_VLAN_HLEN && rd16(f + OFF_ETH_TYPE) == ETH_P_8021Q) {
        if (!net_vlan_rx_tci(&nif->vlan, rd16(f + ETH_HLEN)))
            return UINT32_MAX;
        l2 += NET_VLAN_HLEN;
    } else if (!net_vlan_rx_frame(&nif->vlan, f, len)) {
        return UINT32_MAX;
    }
    if (len < l2 || rx->frame_len - strip - l2 > 0xffff)
        return UINT32_MAX;
    uint16_t type = rd16(f + l2 - 2);
    return type == ETH_P_IP || type == NET_OFF_ETH_P_IPV6 ? l2 : UINT32_MAX;
}

void net_input(struct net_if *nif, const struct vnet_rx *rx)
{
    unsigned nb = rx->nbufs ? rx->nbufs : 1;
    uint32_t strip = nif->has_netif ? net_rx_strip(nif, rx) : 0;
    if (strip == UINT32_MAX) { /* counted in rx_svlan_dropped */
        net_rx_release_all(nif, rx, nb);
        return;
    }
    uint32_t skip = net_rx_skip(nif, rx, strip);
    if (!nif->has_netif || skip == UINT32_MAX) {
        net_rx_release_all(nif, rx, nb);
        nif->lwip_rx_dropped++;
        return;
    }
    uint32_t total = rx->frame_len - strip - skip;
    struct pbuf *p = nif->rx_nfree >= nb ? net_rx_zero_copy(nif, rx, nb, strip + skip)
                                         : net_rx_copy(nif, rx, nb, strip + skip, total);
    if (!p) {
        nif->lwip_rx_dropped++;
        return;
    }
    /* netif_vlan=: lwIP takes an untagged frame without asking the hook */
    if (!skip && !net_vlan_rx_frame(&nif->vlan, p->payload, p->len)) {
        pbuf_free(p);
        return;
    }
    /* a partial checksum's start counts from the frame the device wrote */
    struct vnet_rx_off off = rx->off;
    if (off.csum == VNET_RX_CSUM_PARTIAL && off.csum_start < strip + ETH_HLEN)
        off.csum = VNET_RX_CSUM_NONE;
    else if (off.csum == VNET_RX_CSUM_PARTIAL)
        off.csum_start = (uint16_t)(off.csum_start - strip);
    if ((nif->offloads & VNET_OFF_RX_CSUM) && !skip && !net_rx_csum(nif, p, &off)) {
        pbuf_free(p);
        nif->lwip_rx_dropped++;
        return;
    }
    nif->lwip_rx++;
    nif->lwip_rx_bytes += rx->frame_len;
    err_t e;
    if (skip) {
        nif->lwip_rx_big++;
        e = ip_input(p, &nif->netif); /* IPv4 or IPv6 by the version field */
    } else {
        e = nif->netif.input(p, &nif->netif);
    }
    if (e != ERR_OK) {
        nif->lwip_rx_dropped++;
        pbuf_free(p);
    }
}
