/* Between the files of net/: not for apps. */
#ifndef VN_NET_PRIV_H
#define VN_NET_PRIV_H

#include "lwip/ip4_addr.h"
#include "net/net.h"

/* Adds nif to lwIP with these addresses (NULL: none yet, for DHCP). */
void net_netif_add(struct net_if *nif, const ip4_addr_t *ip, const ip4_addr_t *mask,
                   const ip4_addr_t *gw);

/* Turns on what the device offers for lwIP's traffic (after addressing:
 * DHCP asks with the real MTU): checksum control, TSO's larger MTU. */
void net_netif_offloads(struct net_if *nif);

/* RX pbufs for the zero-copy path (netif_rx.c). */
void net_rx_pool_init(struct net_if *nif);

#endif
