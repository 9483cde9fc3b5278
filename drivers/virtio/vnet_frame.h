/* The frame layout the driver reads for offloads and hash checks:
 * Ethernet, 802.1Q (802.1ad outside it), IPv4/IPv6, TCP/UDP header sizes and numbers. */
#ifndef VNET_FRAME_H
#define VNET_FRAME_H

#define ETH_HLEN_    14
#define ETH_P_IPV4   0x0800
#define ETH_P_IPV6   0x86dd
#define ETH_P_8021Q  0x8100
#define ETH_P_8021AD 0x88a8
#define IPV4_HLEN    20
#define IPV6_HLEN    40
#define PROTO_TCP    6
#define PROTO_UDP    17
#define TCP_HLEN_    20
#define UDP_HLEN_    8

#endif
