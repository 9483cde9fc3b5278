/* lwIP's hooks (LWIP_HOOK_FILENAME in lwipopts.h, which names them: opt.h
 * sizes PBUF_LINK_HLEN by whether LWIP_HOOK_VLAN_SET is defined). */
#ifndef VN_LWIPHOOKS_H
#define VN_LWIPHOOKS_H

struct netif;
struct pbuf;
struct eth_addr;
struct eth_hdr;
struct eth_vlan_hdr;

/* The netif's 802.1Q tag both ways (net/netif_vlan.c, net/net_vlan.h). */
s32_t netif_vlan_set_hook(struct netif *netif, struct pbuf *p, const struct eth_addr *src,
                          const struct eth_addr *dst, u16_t eth_type);
int netif_vlan_check_hook(struct netif *netif, const struct eth_hdr *eth,
                          const struct eth_vlan_hdr *vlan);

#endif
