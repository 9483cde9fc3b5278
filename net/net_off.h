/* Which frames of lwIP's ask the device for checksum and segmentation
 * offload, and where a received TCP segment's headers are: pure functions
 * on byte buffers, for IPv4 and IPv6 alike (host unit tested,
 * tests/unit/test_net_off.c). */
#ifndef VN_NET_OFF_H
#define VN_NET_OFF_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/vnet.h"

#define NET_OFF_ETH_P_IPV6 0x86dd
#define NET_OFF_IP6_HLEN   40
#define NET_OFF_TCP_HLEN   20 /* lwIP sends no TCP options after the SYN */

/* The segment sizes with TSO, per family: mss is what the device cuts
 * to (the connection's MSS on the wire), send_mss the most lwIP may put
 * in one segment (whole multiples of mss, the frame within a 16-bit
 * pbuf length). Both 0: no TSO for that family. */
struct net_tso {
    uint16_t mss, send_mss;
};

/* For a device MTU and lwIP's TCP_MSS (tcp_mss), IPv4 (v6 false) or
 * IPv6. An MTU too small for the headers gives no TSO. */
void net_off_tso(uint16_t mtu, uint16_t tcp_mss, bool v6, struct net_tso *t);

/* The send MSS for a connection whose MSS is mss (the peer's, within
 * lwIP's TCP_MSS and the netif's MTU) with the family's TSO sizes t:
 * t->send_mss when TSO is on and mss is at least what the device cuts to
 * (a peer that allows more still gets t->mss on the wire: with QinQ's
 * tag off lwIP's MTU t->mss is 4 below the 1460 the host asks for), else
 * mss (a peer that asked for less keeps its segments as they are). */
uint16_t net_off_send_mss(const struct net_tso *t, uint16_t mss);

/* What lwIP's frame f (head contiguous bytes, tot_len in all) asks of the
 * device: nothing, or the TCP checksum (offloads has VNET_OFF_TX_CSUM;
 * IPv4 or IPv6 without extension headers, after at most one 802.1Q tag, QinQ's two),
 * and segmentation with the family's mss when longer than mtu plus the
 * Ethernet header and tag. */
struct vnet_tx_off net_off_tx(const uint8_t *f, uint32_t head, uint32_t tot_len, unsigned offloads,
                              uint16_t mtu, const struct net_tso *tso4, const struct net_tso *tso6);

/* A received IPv4 (not a fragment) or IPv6 (TCP right after the fixed
 * header) TCP segment, after at most one 802.1Q tag, len bytes of which the first head are
 * contiguous at f: 0, where its TCP header starts (within head), the TCP length the IP header gives
 * and the family; -1 for anything else or a TCP length past len. */
int net_off_rx_tcp(const uint8_t *f, uint32_t head, uint32_t len, uint32_t *l4off, uint32_t *l4len,
                   bool *v6);

#endif
