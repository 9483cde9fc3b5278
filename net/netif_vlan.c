/* lwIP's VLAN hooks (lwiphooks.h) over the netif's tag (net_vlan.h):
 * lwIP's ethernet_output writes the TCI the set hook gives after the
 * source MAC; ethernet_input asks the check hook about every 802.1Q
 * frame and frees the ones it refuses (lwIP 2.1, src/netif/ethernet.c). */
#include "lwip/netif.h"
#include "lwip/prot/ethernet.h"
#include "net/net.h"
#include "net/net_vlan.h"

s32_t netif_vlan_set_hook(struct netif *netif, struct pbuf *p, const struct eth_addr *src,
                          const struct eth_addr *dst, u16_t eth_type)
{
    (void)p, (void)src, (void)dst, (void)eth_type;
    const struct net_if *nif = netif->state;
    return net_vlan_tx_tci(&nif->vlan);
}

int netif_vlan_check_hook(struct netif *netif, const struct eth_hdr *eth,
                          const struct eth_vlan_hdr *vlan)
{
    (void)eth;
    struct net_if *nif = netif->state;
    return net_vlan_rx_tci(&nif->vlan, lwip_ntohs(vlan->prio_vid));
}
