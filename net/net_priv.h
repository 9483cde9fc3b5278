/* Between the files of net/: not for apps. */
#ifndef VN_NET_PRIV_H
#define VN_NET_PRIV_H

#include "lwip/ip4_addr.h"
#include "net/net.h"

/* Adds nif to lwIP with these addresses (NULL: none yet, for DHCP). */
void net_netif_add(struct net_if *nif, const ip4_addr_t *ip, const ip4_addr_t *mask,
                   const ip4_addr_t *gw);

/* nif's IPv6 addresses: link-local from its MAC, and ip6 (16 bytes,
 * network order) unless NULL; both usable at once (netif_ip6.c). */
void net_netif_ip6(struct net_if *nif, const uint8_t *ip6);

/* Turns on what the device offers for lwIP's traffic (after addressing:
 * DHCP asks with the real MTU): checksum control, TSO's larger MTU. */
void net_netif_offloads(struct net_if *nif);

/* lwIP's MTU on the device: the device's, less a service tag's 4 bytes
 * with netif_svlan=, so that what we send fits a peer whose buffers hold
 * an MTU-sized packet and one tag (ours hold two: vnet_params.qinq). */
uint16_t net_netif_mtu(const struct net_if *nif);

/* Sends the delayed ACKs that have waited NET_ACK_DELAY_US (net_ack.c);
 * called every round of the main loop. */
void net_ack_service(void);

/* When the next delayed ACK is due (TSC), 0: none pending: a halt ends
 * there. */
uint64_t net_ack_deadline(void);

/* GUEST_ANNOUNCE (net_announce.c): looks at the devices' status every
 * 200 ms; called every round of the main loop. */
void net_announce_service(void);

/* The tail-loss probe (net_tlp.c): its pcb ext arg, after lwip_init. */
void net_tlp_init(void);

/* Sends the tail-loss probes that are due; called every round of the
 * main loop. */
void net_tlp_service(void);

/* When the next probe is due (TSC), 0: none: a halt ends there. */
uint64_t net_tlp_deadline(void);

/* Probes sent, and flights resent on a probe's ACK, all connections. */
uint64_t net_tlp_total(void);
uint64_t net_tlp_resends(void);

/* RX pbufs for the zero-copy path (netif_rx.c). */
void net_rx_pool_init(struct net_if *nif);

#endif
