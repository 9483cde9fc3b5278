/* The network layer over the virtio-net driver: lwIP's netif (in the
 * shape of lwIP's ethernetif template), the polled main loop, addressing,
 * and the hooks the raw fast path needs (TX cookies, ARP resolution).
 *
 * Every TX frame on a device, whoever sent it, comes back through one
 * tx_done callback; the cookie's low two bits say whose it was:
 *   0 an lwIP pbuf (freed), 1 a received buffer sent on (released to the
 *   device it came from: zero-copy reflect and forward; the device index
 *   in bits 2..3, the buffer from bit 8). Generators write into the
 *   driver's bound TX slots instead and get nothing back. */
#ifndef VN_NET_H
#define VN_NET_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/vnet.h"
#include "lwip/netif.h"
#include "net/net_off.h"
#include "net/net_vlan.h"
#include "net/net_rwnd.h"

#define NET_RX_BATCH 64
#define NET_TX_BATCH 32
_Static_assert(NET_RX_BATCH >= VNET_RX_MAX_BUFS, "vnet_rx_burst needs room for a frame");
/* Zero-copy RX pbufs per device: half the RX ring. lwIP may hold received
 * frames (TCP out-of-order queue, IP reassembly); past this many the next
 * frames are copied, so what lwIP holds never takes the ring dry. */
#define NET_RX_PBUFS_MIN 16

struct net_rx_pbuf;
struct json;
struct tcp_pcb;

/* One device and this layer's state for it. Its fields are this layer's:
 * callers above use the accessors below (inline: the raw apps take them
 * per burst). */
struct net_if {
    struct netif netif;
    bool has_netif; /* only the first device gets an address and lwIP */
    struct vnet_dev *dev;
    unsigned idx;
    uint8_t mac[6]; /* source MAC of raw frames: mac= or the NIC's */
    struct net_rx_pbuf *rx_pool, *rx_free;
    unsigned rx_nfree;
    struct vnet_tx pend[NET_TX_BATCH]; /* lwIP output waiting for the next flush */
    struct vnet_frag pend_frags[NET_TX_BATCH][VNET_TX_MAX_FRAGS];
    int npend;
    /* offloads (docs/lwip.md) */
    unsigned offloads;         /* VNET_OFF_* negotiated */
    uint16_t mtu;              /* the device's; netif.mtu is larger with TSO */
    struct net_tso tso4, tso6; /* per family (TSO4, TSO6); zero: none */
    struct net_vlan vlan;      /* lwIP's 802.1Q tag (netif_vlan=), its drops */
    struct net_vlan svlan;     /* the 802.1ad service tag outside it (netif_svlan=), its drops */
    /* counters of this layer (the driver keeps its own) */
    uint64_t lwip_rx, lwip_rx_bytes, lwip_rx_copied, lwip_rx_dropped;
    uint64_t lwip_rx_csum_bad, lwip_rx_csum_done, lwip_rx_big;
    uint64_t lwip_tx, lwip_tx_copied, lwip_tx_dropped;
    uint64_t lwip_tx_sent, lwip_tx_sent_bytes; /* taken by the driver */
};

/* What the appliance (apps/apps_net.c) gives the network layer. */
struct net_setup {
    unsigned min_devs;       /* fewer found is fatal */
    const char *who;         /* what needs them, for that message (app=gen) */
    struct vnet_params vnet; /* for every device */
    const char *cmdline;     /* the drivers' words on it (virtio_mmio.device=) */
    uint64_t seed;           /* lwIP's random numbers (ports, ISNs, DHCP xids) */
    bool dhcp;               /* the first device's address by DHCP, else: */
    uint32_t ip, mask, gw;   /* network byte order */
    const uint8_t *ip6;      /* a global IPv6 address (network order) or NULL */
    const uint8_t *mac;      /* source MAC of raw frames; NULL: each NIC's own */
    uint16_t vlan_vid;       /* lwIP's frames tagged with it (1..4094), 0: untagged */
    uint8_t vlan_pcp;        /* their priority (PCP, 0..7) */
    uint16_t svlan_vid;      /* with vlan_vid: an 802.1ad service tag outside it; 0: none */
    /* A device broke a rule (a driver call said -EIO): the appliance's
     * exit, which never returns. */
    void (*device_error)(const struct vnet_dev *d) __attribute__((noreturn));
};

/* Brings up at least min_devs virtio-net devices (fatal otherwise), lwIP
 * and the first device's address (static or DHCP). s->vnet.offloads:
 * the VNET_OFF_* the caller's traffic may use (0 for apps that read and
 * write raw frames themselves: they get complete checksums and one
 * buffer per frame). */
void net_init(const struct net_setup *s);

/* The setup's device_error for nif's device; never returns. */
void net_device_error(const struct net_if *nif) __attribute__((noreturn));

unsigned net_if_count(void);
struct net_if *net_if_get(unsigned i);

/* The device under nif, for the driver's calls. */
static inline struct vnet_dev *net_if_dev(const struct net_if *nif)
{
    return nif->dev;
}

/* The source MAC of raw frames on nif: mac= or the NIC's. */
static inline const uint8_t *net_if_mac(const struct net_if *nif)
{
    return nif->mac;
}

/* Whether lwIP lives on nif (the first device only). */
static inline bool net_if_has_lwip(const struct net_if *nif)
{
    return nif->has_netif;
}

/* Frames and bytes lwIP exchanged on nif: received, plus its output the
 * driver took. */
static inline void net_if_lwip_wire(const struct net_if *nif, uint64_t *frames, uint64_t *bytes)
{
    *frames = nif->lwip_rx + nif->lwip_tx_sent;
    *bytes = nif->lwip_rx_bytes + nif->lwip_tx_sent_bytes;
}

/* The TSO segment sizes for a connection of that family on nif (zero:
 * that family's TSO is off). */
static inline const struct net_tso *net_if_tso(const struct net_if *nif, bool v6)
{
    return v6 ? &nif->tso6 : &nif->tso4;
}

/* nif's device reset and negotiated again with p (vnet_dev_renegotiate,
 * virtio 1.2 s2.4), then this layer's pieces redone: the TX callback,
 * the MTU and offloads lwIP uses. The caller holds nothing of the old
 * queues (bound slots, RX frames) and binds again. 0 or the driver's
 * -errno (-ETIMEDOUT: the reset never finished). */
int net_if_renegotiate(struct net_if *nif, const struct vnet_params *p);

/* Our IPv4 address (host byte order), after DHCP if dhcp=1. */
uint32_t net_ip(void);

/* A driver call returned rc: -EIO means the device broke a rule. */
static inline int net_check(const struct net_if *nif, int rc)
{
    if (rc == -EIO)
        net_device_error(nif);
    return rc;
}

/* Hands a received frame (rx[0..rx->nbufs)) to lwIP without copying (the
 * buffers go back to the ring when lwIP frees the pbufs), after the
 * checksum work the device left (docs/lwip.md). Frames for a device
 * without lwIP are released and counted as dropped. */
void net_input(struct net_if *nif, const struct vnet_rx *rx);

/* A TCP connection just came up (connected or accepted): with TSO, and
 * when its MSS is the one the device cuts to, lwIP may now build
 * segments up to 64 KiB (its send MSS is raised; the device segments). */
void net_tcp_offload(struct tcp_pcb *pcb);

/* The connection's retransmit timeout now, in ms (lwipopts.h,
 * TCP_TMR_INTERVAL). */
uint32_t net_tcp_rto_ms(const struct tcp_pcb *pcb);

/* What the peer's window lets the connection have in flight now, bytes. */
uint32_t net_tcp_peer_wnd(const struct tcp_pcb *pcb);

/* A receiving stream's window (iperf -w): at most window bytes in flight
 * towards it once it has received TCP_WND - window (net_tcp.c). Start it
 * when the connection comes up, hand every consumed pbuf's length to
 * net_tcp_recved instead of tcp_recved, end it before tcp_close. */
void net_tcp_rwnd_start(const struct tcp_pcb *pcb, struct net_rwnd *w, uint32_t window);
void net_tcp_recved(struct tcp_pcb *pcb, struct net_rwnd *w, uint16_t len);
void net_tcp_rwnd_end(struct tcp_pcb *pcb, struct net_rwnd *w);

/* Tail-loss probes sent on the connection so far (net_tlp.c). */
uint32_t net_tlp_probes(const struct tcp_pcb *pcb);

/* One round of the main loop for apps that use only lwIP: every device's
 * RX into lwIP, then net_service(). Returns the RX buffers it took (0: an
 * empty ring, the caller may net_idle). */
unsigned net_poll(void);

/* TX completions, lwIP's pending output, lwIP timers. Raw-path apps
 * call this between bursts. */
void net_service(void);

/* Nothing to do until the TSC reaches deadline (0: no limit) or a frame
 * comes: halts (lwIP's next timer ends the halt too) when every device's
 * RX queue can end it (notify=irq|hybrid); otherwise returns at once and
 * the caller spins, as with polled queues it must. Returns the TSC cycles
 * it waited (0 when it did not halt), for the app's stall accounting. */
uint64_t net_idle(uint64_t deadline);

/* Submits lwIP's pending output now. */
void net_flush(struct net_if *nif);

/* TX cookies (see top). */
#define NET_COOKIE_KIND_MASK 3u
#define NET_COOKIE_PBUF      0u
#define NET_COOKIE_RX        1u
#define NET_COOKIE_DEV_SHIFT 2
#define NET_COOKIE_DEV_BITS  2
#define NET_COOKIE_BUF_SHIFT 8
_Static_assert(VNET_MAX_DEVS <= 1u << NET_COOKIE_DEV_BITS, "device index fits the cookie");
_Static_assert(NET_COOKIE_DEV_SHIFT + NET_COOKIE_DEV_BITS <= NET_COOKIE_BUF_SHIFT,
               "device bits below the buffer");
_Static_assert(sizeof(uintptr_t) * 8 >= NET_COOKIE_BUF_SHIFT + 32, "an RX buffer handle fits");

static inline void *net_cookie_rx(const struct net_if *from, uint32_t buf)
{
    return (void *)(((uintptr_t)buf << NET_COOKIE_BUF_SHIFT) |
                    ((uintptr_t)from->idx << NET_COOKIE_DEV_SHIFT) | NET_COOKIE_RX);
}

/* ARP for ip (host byte order) with lwIP, retrying every 200 ms; 0 and the
 * MAC, or -ETIMEDOUT after timeout_ms. */
int net_resolve_mac(uint32_t ip, uint8_t mac[6], uint32_t timeout_ms);

/* The destination MAC for dst_ip (network byte order): dst_mac if not
 * NULL (also entered in lwIP's ARP table as a static entry), else ARP for
 * dst_ip (or the gateway when dst_ip is off-link); no answer within 1 s
 * ends the run with VN_EXIT_NETWORK. */
void net_dst_mac(uint32_t dst_ip, const uint8_t *dst_mac, uint8_t mac[6]);

/* Whether lwIP would send a frame to ip (host byte order) now: the next
 * hop's MAC is in the ARP table. When it is not, asks (ARP request) and
 * returns false: a frame sent now would wait in lwIP's ARP queue or be
 * dropped, and must not be counted as sent. */
bool net_next_hop_known(uint32_t ip);

/* net_next_hop_known for an lwIP address of either family: IPv6 asks
 * lwIP's neighbour cache (a neighbour solicitation when not known). */
bool net_next_hop_known_addr(const ip_addr_t *a);

/* The MAC of the on-link IPv6 peer ip6 (16 bytes, network order) by
 * neighbour discovery; no answer within 2 s ends the run with
 * VN_EXIT_NETWORK (net_nd6.c). */
void net_dst_mac6(const uint8_t ip6[16], uint8_t mac[6]);

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
