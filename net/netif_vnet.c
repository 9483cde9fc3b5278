/* lwIP netif over a virtio-net device, in the shape of lwIP's ethernetif
 * template (low_level_init / low_level_output; input in netif_rx.c),
 * zero-copy both ways and on top of the device's offloads (docs/lwip.md):
 *  TX: a pbuf chain whose first pbuf has VNET_HDR_ROOM bytes of its own
 *      memory in front (PBUF_LINK_ENCAPSULATION_HLEN) goes to the device
 *      as is, one descriptor per pbuf, referenced until tx_done; TCP
 *      frames ask the device for their checksum (CSUM) and, when larger
 *      than the MTU, for segmentation (HOST_TSO4, HOST_TSO6; IPv4 and
 *      IPv6 alike: net_off.c). Anything else is copied once. */
#include <string.h>

#include "kernel/exit.h"
#include "lwip/etharp.h"
#include "lwip/ethip6.h"
#include "lwip/ip4_frag.h"
#include "lwip/pbuf.h"
#include "net/net.h"
#include "net/net_priv.h"
#include "net/pkt.h"
#include "netif/ethernet.h"

#define ETH_MIN_FRAME 60 /* without FCS */
#define NET_TSO_MTU   0xffff
/* IPv4 + TCP headers without options: lwIP sends neither timestamps nor
 * SACK, so every segment's headers are this long. */
#define NET_TCP_HDRS (IP4_HLEN + 20)

_Static_assert(PBUF_LINK_ENCAPSULATION_HLEN >= VNET_HDR_ROOM + NET_VLAN_HLEN,
               "lwIP pbufs need room for the virtio-net header and a service tag");

void net_flush(struct net_if *nif)
{
    int off = 0;
    while (off < nif->npend) {
        int n = net_check(nif, vnet_tx_burst(nif->dev, nif->pend + off, nif->npend - off));
        if (n == 0)
            break;
        for (int i = off; i < off + n; i++) {
            nif->lwip_tx_sent_bytes += nif->pend[i].len;
            for (unsigned k = 0; k < nif->pend[i].nfrags; k++)
                nif->lwip_tx_sent_bytes += nif->pend[i].frags[k].len;
        }
        nif->lwip_tx_sent += (uint64_t)n;
        off += n;
    }
    /* txfull=drop: what the ring did not take is lost, like on a NIC. */
    for (int i = off; i < nif->npend; i++) {
        pbuf_free((struct pbuf *)nif->pend[i].cookie);
        nif->lwip_tx_dropped++;
    }
    nif->npend = 0;
}

/* Whether the device can take p as it is, with tag (the service tag's
 * bytes, netif_svlan=, or 0) put in front: headroom for them and the
 * header in the first pbuf's own memory, a pbuf per descriptor, and at
 * least the Ethernet minimum (shorter frames are padded in a copy, as a
 * NIC would). */
static bool net_tx_direct(const struct net_if *nif, const struct pbuf *p, uint32_t tag)
{
    const u8_t *mem = (const u8_t *)p + LWIP_MEM_ALIGN_SIZE(sizeof(struct pbuf));
    if (p->tot_len < ETH_MIN_FRAME || !(p->type_internal & PBUF_TYPE_FLAG_STRUCT_DATA_CONTIGUOUS) ||
        (const u8_t *)p->payload < mem + VNET_HDR_ROOM + tag)
        return false;
    return pbuf_clen(p) - 1u <= (unsigned)vnet_tx_max_frags(nif->dev);
}

/* low_level_output */
static err_t net_linkoutput(struct netif *netif, struct pbuf *p)
{
    struct net_if *nif = netif->state;
    if (nif->npend == NET_TX_BATCH)
        net_flush(nif);
    struct vnet_tx *t = &nif->pend[nif->npend];
    struct vnet_frag *fr = nif->pend_frags[nif->npend];
    struct pbuf *q = p;
    uint32_t tag = net_vlan_vid(&nif->svlan) ? NET_VLAN_HLEN : 0;
    if (net_tx_direct(nif, p, tag)) {
        pbuf_ref(p);             /* the chain stays alive with its head until tx_done */
        pbuf_add_header(p, tag); /* cannot fail: net_tx_direct saw the room */
    } else {
        /* One copy, padded with zeros to the Ethernet minimum. */
        u16_t len = p->tot_len + tag < ETH_MIN_FRAME ? ETH_MIN_FRAME : (u16_t)(p->tot_len + tag);
        q = p->tot_len + tag <= 0xffffu ? pbuf_alloc(PBUF_RAW_TX, len, PBUF_RAM) : NULL;
        if (!q) {
            nif->lwip_tx_dropped++;
            return ERR_MEM;
        }
        memset(q->payload, 0, len);
        pbuf_copy_partial(p, (u8_t *)q->payload + tag, p->tot_len, 0);
        nif->lwip_tx_copied++;
    }
    /* netif_svlan=: the service tag in front of lwIP's 802.1Q one */
    if (tag)
        net_svlan_push(&nif->svlan, q->payload);
    *t = (struct vnet_tx){.frame = q->payload, .len = q->len, .cookie = q, .frags = fr};
    for (const struct pbuf *c = q->next; c; c = c->next)
        fr[t->nfrags++] = (struct vnet_frag){c->payload, c->len};
    t->off =
        net_off_tx(q->payload, q->len, q->tot_len, nif->offloads, nif->mtu, &nif->tso4, &nif->tso6);
    nif->npend++;
    nif->lwip_tx++;
    return ERR_OK;
}

/* netif->output with TSO: the netif's MTU is NET_TSO_MTU so that lwIP's
 * ip4_output does not fragment TCP segments larger than the device's MTU
 * (there is no hook between TCP and that check); everything else larger
 * than the real MTU is fragmented here by lwIP's ip4_frag, which cuts
 * at netif->mtu and sends each fragment back through this function. */
static err_t net_output_tso(struct netif *netif, struct pbuf *p, const ip4_addr_t *dst)
{
    struct net_if *nif = netif->state;
    const u8_t *ip = p->payload;
    if (p->tot_len <= nif->mtu || (p->len >= NET_TCP_HDRS && ip[9] == IP_PROTO_TCP))
        return etharp_output(netif, p, dst);
    netif->mtu = nif->mtu;
    err_t e = ip4_frag(p, netif, dst);
    netif->mtu = NET_TSO_MTU;
    return e;
}

void net_netif_offloads(struct net_if *nif)
{
    struct netif *netif = &nif->netif;
    nif->offloads = vnet_offloads(nif->dev);
    /* a renegotiation may have taken TSO away: no segment sizes of the
     * last features, or lwIP sends segments the device will not cut */
    nif->tso4 = (struct net_tso){0};
    nif->tso6 = (struct net_tso){0};
    u16_t ctrl = NETIF_CHECKSUM_ENABLE_ALL;
    /* TCP only: a UDP datagram may leave in IP fragments, which carry no
     * offloadable checksum, and may arrive so, which the device cannot
     * check; UDP here is small (rr, DHCP) */
    if (nif->offloads & VNET_OFF_TX_CSUM)
        ctrl &= (u16_t)~NETIF_CHECKSUM_GEN_TCP;
    if (nif->offloads & VNET_OFF_RX_CSUM)
        ctrl &= (u16_t)~NETIF_CHECKSUM_CHECK_TCP;
    NETIF_SET_CHECKSUM_CTRL(netif, ctrl);
    if (nif->offloads & VNET_OFF_TX_TSO6)
        net_off_tso(nif->mtu, TCP_MSS, true, &nif->tso6); /* taken in net_ip6_frag */
    if (!(nif->offloads & VNET_OFF_TX_TSO))
        return;
    net_off_tso(nif->mtu, TCP_MSS, false, &nif->tso4);
    if (!nif->tso4.mss)
        return;
    netif->mtu = NET_TSO_MTU; /* IPv4 only: IPv6 keeps its own (mtu6) */
    netif->output = net_output_tso;
}

uint16_t net_netif_mtu(const struct net_if *nif)
{
    return (uint16_t)(vnet_mtu(nif->dev) - (net_vlan_vid(&nif->svlan) ? NET_VLAN_HLEN : 0));
}

/* low_level_init */
static err_t net_netif_init(struct netif *netif)
{
    struct net_if *nif = netif->state;
    netif->name[0] = 'v';
    netif->name[1] = 'n';
    netif->output = etharp_output;
    netif->output_ip6 = ethip6_output;
    netif->linkoutput = net_linkoutput;
    nif->mtu = net_netif_mtu(nif);
    netif->mtu = nif->mtu;
    netif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(netif->hwaddr, nif->mac, ETH_HWADDR_LEN);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_MLD6;
    return ERR_OK;
}

void net_netif_add(struct net_if *nif, const ip4_addr_t *ip, const ip4_addr_t *mask,
                   const ip4_addr_t *gw)
{
    net_rx_pool_init(nif);
    if (!netif_add(&nif->netif, ip, mask, gw, nif, net_netif_init, ethernet_input))
        vn_fatal(VN_EXIT_INTERNAL, "net: netif_add failed for %s", vnet_name(nif->dev));
    nif->has_netif = true;
    netif_set_default(&nif->netif);
    netif_set_up(&nif->netif);
    netif_set_link_up(&nif->netif);
}
