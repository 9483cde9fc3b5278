/* The network layer over the virtio-net driver: lwIP's netif (in the
 * shape of lwIP's ethernetif template), the polled main loop, addressing,
 * and the hooks the raw fast path needs (TX cookies, ARP resolution).
 *
 * Every TX frame on a device, whoever sent it, comes back through one
 * tx_done callback; the cookie's low two bits say whose it was:
 *   0 an lwIP pbuf (freed), 1 a received buffer sent on (released to the
 *   device it came from: zero-copy reflect and forward). Generators write
 *   into the driver's bound TX slots instead and get nothing back. */
#ifndef VN_NET_H
#define VN_NET_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/vnet.h"
#include "lwip/netif.h"

#define NET_RX_BATCH 64
#define NET_TX_BATCH 32
/* Zero-copy RX pbufs per device. lwIP may hold received frames (TCP
 * out-of-order queue, IP reassembly); past this many the next frames are
 * copied, so what lwIP holds never takes a ring of 128 or more slots dry. */
#define NET_RX_PBUFS 64

struct net_rx_pbuf;
struct json;

struct net_if {
    struct netif netif;
    bool has_netif; /* only the first device gets an address and lwIP */
    struct vnet_dev *dev;
    unsigned idx;
    uint8_t mac[6]; /* source MAC of raw frames: mac= or the NIC's */
    struct net_rx_pbuf *rx_pool, *rx_free;
    struct vnet_tx pend[NET_TX_BATCH]; /* lwIP output waiting for the next flush */
    int npend;
    /* counters of this layer (the driver keeps its own) */
    uint64_t lwip_rx, lwip_rx_bytes, lwip_rx_copied, lwip_rx_dropped;
    uint64_t lwip_tx, lwip_tx_copied, lwip_tx_dropped;
    uint64_t lwip_tx_sent, lwip_tx_sent_bytes; /* taken by the driver */
};

/* Brings up at least min_devs virtio-net devices (fatal otherwise), lwIP
 * and the first device's address (static or DHCP). */
void net_init(unsigned min_devs);

unsigned net_if_count(void);
struct net_if *net_if_get(unsigned i);

/* Our IPv4 address (host byte order), after DHCP if dhcp=1. */
uint32_t net_ip(void);

/* A driver call returned rc: -EIO means the device broke a rule. */
static inline int net_check(const struct net_if *nif, int rc)
{
    if (rc == -EIO)
        vnet_die_broken(nif->dev);
    return rc;
}

/* Hands a received frame to lwIP without copying (the buffer goes back
 * to the ring when lwIP frees the pbuf). Frames for a device without
 * lwIP are released and counted as dropped. */
void net_input(struct net_if *nif, const struct vnet_rx *rx);

/* One round of the main loop for apps that use only lwIP: every device's
 * RX into lwIP, then net_service(). */
void net_poll(void);

/* TX completions, lwIP's pending output, lwIP timers. Raw-path apps
 * call this between bursts. */
void net_service(void);

/* Submits lwIP's pending output now. */
void net_flush(struct net_if *nif);

/* TX cookies (see top). */
static inline void *net_cookie_rx(const struct net_if *from, uint32_t buf)
{
    return (void *)(((uintptr_t)buf << 8) | ((uintptr_t)from->idx << 2) | 1);
}

/* ARP for ip (host byte order) with lwIP, retrying every 200 ms; 0 and the
 * MAC, or -ETIMEDOUT after timeout_ms. */
int net_resolve_mac(uint32_t ip, uint8_t mac[6], uint32_t timeout_ms);

/* The destination MAC: dst_mac= if given (also entered in lwIP's ARP
 * table as a static entry), else ARP for dst_ip (or the gateway when
 * dst_ip is off-link); no answer within 1 s ends the run with
 * VN_EXIT_NETWORK. */
void net_dst_mac(uint8_t mac[6]);

/* Whether lwIP would send a frame to ip (host byte order) now: the next
 * hop's MAC is in the ARP table. When it is not, asks (ARP request) and
 * returns false: a frame sent now would wait in lwIP's ARP queue or be
 * dropped, and must not be counted as sent. */
bool net_next_hop_known(uint32_t ip);

/* Frames and bytes of lwIP's output the driver took, all devices. */
void net_lwip_sent(uint64_t *packets, uint64_t *bytes);

/* lwIP's heap bytes and memp pool entries in use (object "lwip"). */
void net_pools_json(struct json *j);

/* Frames the devices still hold for transmission, all devices. */
uint64_t net_tx_in_flight(void);

/* This layer's and lwIP's counters as members of the open object. */
void net_stats_json(struct json *j);

unsigned net_rand(void);

#endif
