/* lwIP netif over a virtio-net device, in the shape of lwIP's ethernetif
 * template (low_level_init / low_level_output / input), with zero-copy in
 * both directions:
 *  RX: the device's buffer becomes a PBUF_REF pbuf_custom; freeing the
 *      pbuf gives the buffer back to the ring.
 *  TX: a single pbuf with VNET_HDR_ROOM bytes of its own memory in front
 *      of the payload (PBUF_LINK_ENCAPSULATION_HLEN) goes to the device as
 *      is, referenced until tx_done; anything else is copied once. */
#include <stdlib.h>
#include <string.h>

#include "kernel/exit.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "net/net.h"
#include "net/net_priv.h"
#include "netif/ethernet.h"

#define ETH_MIN_FRAME 60 /* without FCS */

_Static_assert(PBUF_LINK_ENCAPSULATION_HLEN >= VNET_HDR_ROOM,
               "lwIP pbufs need room for the virtio-net header");

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
}

void net_input(struct net_if *nif, const struct vnet_rx *rx)
{
    if (!nif->has_netif || rx->len > 0xffff) {
        vnet_rx_release(nif->dev, rx->buf);
        nif->lwip_rx_dropped++;
        return;
    }
    struct pbuf *p;
    struct net_rx_pbuf *r = nif->rx_free;
    if (r) {
        nif->rx_free = r->next_free;
        r->buf = rx->buf;
        r->pc.custom_free_function = rx_pbuf_free;
        p = pbuf_alloced_custom(PBUF_RAW, (u16_t)rx->len, PBUF_REF, &r->pc, rx->frame,
                                (u16_t)rx->len);
        if (!p) {
            r->next_free = nif->rx_free;
            nif->rx_free = r;
            vnet_rx_release(nif->dev, rx->buf);
        }
    } else {
        /* Every zero-copy pbuf is held by lwIP (TCP queues): copy this one
         * so the ring does not run dry. */
        p = pbuf_alloc(PBUF_RAW, (u16_t)rx->len, PBUF_POOL);
        if (p)
            pbuf_take(p, rx->frame, (u16_t)rx->len);
        vnet_rx_release(nif->dev, rx->buf);
        nif->lwip_rx_copied++;
    }
    if (!p) {
        nif->lwip_rx_dropped++;
        return;
    }
    nif->lwip_rx++;
    nif->lwip_rx_bytes += rx->len;
    if (nif->netif.input(p, &nif->netif) != ERR_OK) {
        nif->lwip_rx_dropped++;
        pbuf_free(p);
    }
}

void net_flush(struct net_if *nif)
{
    int off = 0;
    while (off < nif->npend) {
        int n = net_check(nif, vnet_tx_burst(nif->dev, nif->pend + off, nif->npend - off));
        if (n == 0)
            break;
        for (int i = off; i < off + n; i++)
            nif->lwip_tx_sent_bytes += nif->pend[i].len;
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

/* low_level_output */
static err_t net_linkoutput(struct netif *netif, struct pbuf *p)
{
    struct net_if *nif = netif->state;
    struct pbuf *q = p;
    const u8_t *mem = (const u8_t *)p + LWIP_MEM_ALIGN_SIZE(sizeof(struct pbuf));
    if (p->next == NULL && p->tot_len >= ETH_MIN_FRAME &&
        (p->type_internal & PBUF_TYPE_FLAG_STRUCT_DATA_CONTIGUOUS) &&
        (const u8_t *)p->payload >= mem + VNET_HDR_ROOM) {
        pbuf_ref(p);
    } else {
        /* Chained, without headroom, or shorter than the Ethernet minimum
         * (ARP, bare TCP ACKs): one copy, padded with zeros as a NIC would. */
        u16_t len = p->tot_len < ETH_MIN_FRAME ? ETH_MIN_FRAME : p->tot_len;
        q = pbuf_alloc(PBUF_RAW_TX, len, PBUF_RAM);
        if (!q) {
            nif->lwip_tx_dropped++;
            return ERR_MEM;
        }
        memset(q->payload, 0, len);
        pbuf_copy_partial(p, q->payload, p->tot_len, 0);
        nif->lwip_tx_copied++;
    }
    if (nif->npend == NET_TX_BATCH)
        net_flush(nif);
    nif->pend[nif->npend++] = (struct vnet_tx){q->payload, q->len, q};
    nif->lwip_tx++;
    return ERR_OK;
}

/* low_level_init */
static err_t net_netif_init(struct netif *netif)
{
    struct net_if *nif = netif->state;
    netif->name[0] = 'v';
    netif->name[1] = 'n';
    netif->output = etharp_output;
    netif->linkoutput = net_linkoutput;
    netif->mtu = (u16_t)vnet_mtu(nif->dev);
    netif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(netif->hwaddr, nif->mac, ETH_HWADDR_LEN);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    return ERR_OK;
}

void net_netif_add(struct net_if *nif, const ip4_addr_t *ip, const ip4_addr_t *mask,
                   const ip4_addr_t *gw)
{
    nif->rx_pool = calloc(NET_RX_PBUFS, sizeof(*nif->rx_pool));
    if (!nif->rx_pool)
        vn_fatal(VN_EXIT_OOM, "net: no memory for %d RX pbufs", NET_RX_PBUFS);
    for (unsigned i = 0; i < NET_RX_PBUFS; i++) {
        nif->rx_pool[i].nif = nif;
        nif->rx_pool[i].next_free = nif->rx_free;
        nif->rx_free = &nif->rx_pool[i];
    }
    if (!netif_add(&nif->netif, ip, mask, gw, nif, net_netif_init, ethernet_input))
        vn_fatal(VN_EXIT_INTERNAL, "net: netif_add failed for %s", vnet_name(nif->dev));
    nif->has_netif = true;
    netif_set_default(&nif->netif);
    netif_set_up(&nif->netif);
    netif_set_link_up(&nif->netif);
}
