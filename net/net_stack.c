/* lwIP bring-up, addressing (static or DHCP), the polled main loop, ARP
 * resolution for the raw path, counters. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/csum.h"
#include "kernel/exit.h"
#include "kernel/irq.h"
#include "kernel/json.h"
#include "kernel/mem.h"
#include "kernel/time.h"
#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/stats.h"
#include "lwip/timeouts.h"
#include "net/net.h"
#include "net/net_priv.h"

#define DHCP_TIMEOUT_MS 10000
#define ARP_TIMEOUT_MS  1000
#define ARP_RETRY_MS    200

/* A pbuf pointer is a cookie of kind 0: lwIP's allocations must leave
 * the kind bits clear. */
_Static_assert(MEM_ALIGNMENT > NET_COOKIE_KIND_MASK, "pbuf pointers leave the kind bits");

static struct net_if ifs[VNET_MAX_DEVS];
static unsigned nifs;
static void (*device_error)(const struct vnet_dev *d) __attribute__((noreturn));
static bool can_idle; /* every RX queue can end a halt */
static uint64_t rand_state;

void *net_lwip_heap; /* lwipopts.h: LWIP_RAM_HEAP_POINTER */

/* lwipopts.h: LWIP_CHKSUM, a native folded sum as lwIP's own returns. */
unsigned short net_lwip_chksum(const void *data, int len)
{
    return csum_fold16(csum_partial(data, (size_t)len, 0));
}

u32_t sys_now(void)
{
    return (u32_t)(time_ns() / 1000000u);
}

unsigned net_rand(void)
{
    /* xorshift64*: lwIP wants it for ports, ISNs and DHCP xids. */
    rand_state ^= rand_state >> 12;
    rand_state ^= rand_state << 25;
    rand_state ^= rand_state >> 27;
    return (unsigned)((rand_state * 0x2545F4914F6CDD1Dull) >> 32);
}

unsigned net_if_count(void)
{
    return nifs;
}
struct net_if *net_if_get(unsigned i)
{
    return i < nifs ? &ifs[i] : NULL;
}

static void net_tx_done(void *ctx, void *cookie)
{
    (void)ctx;
    uintptr_t c = (uintptr_t)cookie;
    switch (c & NET_COOKIE_KIND_MASK) {
    case NET_COOKIE_PBUF:
        pbuf_free((struct pbuf *)cookie);
        break;
    case NET_COOKIE_RX: {
        unsigned from = (unsigned)(c >> NET_COOKIE_DEV_SHIFT) & ((1u << NET_COOKIE_DEV_BITS) - 1);
        if (from >= nifs)
            vn_fatal(VN_EXIT_INTERNAL, "net: TX cookie %#lx names device %u", (unsigned long)c,
                     from);
        vnet_rx_release(ifs[from].dev, (uint32_t)(c >> NET_COOKIE_BUF_SHIFT));
        break;
    }
    default:
        vn_fatal(VN_EXIT_INTERNAL, "net: bad TX cookie %#lx", (unsigned long)c);
    }
}

static const char *ip_str(uint32_t ip, char *b)
{
    sprintf(b, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 255, ip >> 8 & 255, ip & 255);
    return b;
}

static void net_dhcp(struct net_if *nif)
{
    if (dhcp_start(&nif->netif) != ERR_OK)
        vn_fatal(VN_EXIT_INTERNAL, "net: dhcp_start failed");
    uint64_t end = time_ns() + (uint64_t)DHCP_TIMEOUT_MS * 1000000u;
    while (!dhcp_supplied_address(&nif->netif)) {
        if (time_ns() > end)
            vn_fatal(VN_EXIT_NETWORK, "net: no DHCP lease within %d s on %s",
                     DHCP_TIMEOUT_MS / 1000, vnet_name(nif->dev));
        net_poll();
    }
}

void net_device_error(const struct net_if *nif)
{
    device_error(nif->dev);
}

/* The virtio-net devices, at least s->min_devs of them, or the
 * appliance's exit with what is missing. */
static unsigned net_probe(struct vnet_dev **devs, const struct net_setup *s)
{
    const unsigned min_devs = s->min_devs;
    int n = vnet_probe(devs, VNET_MAX_DEVS, &s->vnet, s->cmdline);
    if (n == -ERANGE)
        vn_fatal(VN_EXIT_CONFIG,
                 "config: queues=%u: more queue pairs than the device has (QEMU: "
                 "virtio-net-pci,mq=on,vectors=2N+2 and a netdev with queues=N)",
                 (unsigned)s->vnet.queues);
    if (n == -EOPNOTSUPP)
        vn_fatal(VN_EXIT_CONFIG,
                 "config: indirect=on: the device does not offer VIRTIO_F_INDIRECT_DESC (QEMU: "
                 "virtio-net-pci,indirect_desc=on; or indirect=auto)");
    if (n < 0)
        vn_fatal(VN_EXIT_DEVICE, "net: virtio-net probe failed (%d)", n);
    if ((unsigned)n < min_devs)
        vn_fatal(VN_EXIT_NO_DEVICE, "net: %s needs %u virtio-net device%s, found %d", s->who,
                 min_devs, min_devs > 1 ? "s" : "", n);
    return (unsigned)n;
}

/* lwIP's 802.1Q tag (netif_vlan=) and the 802.1ad service tag outside it
 * (netif_svlan=), said on the console. */
static void net_lwip_tags(struct net_if *nif, const struct net_setup *s)
{
    net_vlan_set(&nif->vlan, s->vlan_vid, s->vlan_pcp);
    net_vlan_set(&nif->svlan, s->svlan_vid, s->vlan_pcp);
    if (s->vlan_vid)
        printf("net: lwIP's frames tagged VLAN %u PCP %u (802.1Q)\n", (unsigned)s->vlan_vid,
               (unsigned)s->vlan_pcp);
    if (s->svlan_vid)
        printf("net: inside service VLAN %u PCP %u (802.1ad)\n", (unsigned)s->svlan_vid,
               (unsigned)s->vlan_pcp);
}

void net_init(const struct net_setup *s)
{
    struct vnet_dev *devs[VNET_MAX_DEVS];
    char a[16], b[16], c[16];

    device_error = s->device_error;
    rand_state = s->seed ^ time_cycles() ^ 0x9e3779b97f4a7c15ull;
    if (rand_state == 0)
        rand_state = 1;
    unsigned n = net_probe(devs, s);
    net_lwip_heap = mem_alloc_dma(NET_LWIP_HEAP_BYTES, 64);
    lwip_init();
    net_tlp_init();
    nifs = n;
    for (unsigned i = 0; i < nifs; i++) {
        struct net_if *nif = &ifs[i];
        nif->dev = devs[i];
        nif->idx = i;
        memcpy(nif->mac, s->mac ? s->mac : vnet_mac(devs[i]), 6);
        vnet_set_tx_done(devs[i], net_tx_done, nif);
        const uint8_t *m = nif->mac;
        printf("net: dev%u %s mac %02x:%02x:%02x:%02x:%02x:%02x mtu %u\n", i, vnet_name(devs[i]),
               m[0], m[1], m[2], m[3], m[4], m[5], (unsigned)vnet_mtu(devs[i]));
    }
    can_idle = true;
    for (unsigned i = 0; i < nifs; i++)
        can_idle = can_idle && vnet_can_idle(devs[i]);
    /* lwIP (ARP, ICMP, DHCP, the apps' sockets) lives on the first device. */
    struct net_if *nif = &ifs[0];
    net_lwip_tags(nif, s);
    if (s->dhcp) {
        net_netif_add(nif, NULL, NULL, NULL);
        net_dhcp(nif);
    } else {
        ip4_addr_t ip, mask, gw;
        ip.addr = s->ip;
        mask.addr = s->mask;
        gw.addr = s->gw;
        net_netif_add(nif, &ip, &mask, &gw);
    }
    net_netif_ip6(nif, s->ip6);
    net_netif_offloads(nif);
    printf("net: %s ip %s mask %s gw %s\n", s->dhcp ? "dhcp" : "static",
           ip_str(lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(&nif->netif))), a),
           ip_str(lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(&nif->netif))), b),
           ip_str(lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(&nif->netif))), c));
}

int net_if_renegotiate(struct net_if *nif, const struct vnet_params *p)
{
    net_flush(nif);
    int r = vnet_dev_renegotiate(nif->dev, p);
    if (r < 0)
        return r;
    vnet_set_tx_done(nif->dev, net_tx_done, nif); /* the reset dropped it with the queues */
    can_idle = true;
    for (unsigned i = 0; i < nifs; i++)
        can_idle = can_idle && vnet_can_idle(ifs[i].dev);
    if (nif->has_netif) {
        nif->mtu = net_netif_mtu(nif);
        nif->netif.mtu = nif->mtu;
        nif->netif.output = etharp_output;
        net_netif_offloads(nif);
    }
    return 0;
}

uint32_t net_ip(void)
{
    return lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(&ifs[0].netif)));
}

void net_service(void)
{
    for (unsigned i = 0; i < nifs; i++) {
        net_check(&ifs[i], vnet_tx_reclaim(ifs[i].dev));
        if (ifs[i].npend)
            net_flush(&ifs[i]);
    }
    sys_check_timeouts();
    net_ack_service();
    net_tlp_service();
    net_announce_service();
}

static uint64_t earlier(uint64_t a, uint64_t b)
{
    return a && (!b || a < b) ? a : b;
}

/* The earliest of deadline, lwIP's next timer, a delayed ACK's, a
 * tail-loss probe's and a coalescing RX queue's bound (its interrupt may
 * not come). */
static uint64_t net_idle_until(uint64_t deadline)
{
    uint64_t now = time_cycles(), until = earlier(deadline, net_ack_deadline());
    until = earlier(until, net_tlp_deadline());
    u32_t ms = sys_timeouts_sleeptime();
    if (ms != SYS_TIMEOUTS_SLEEPTIME_INFINITE)
        until = earlier(until, now + time_ns_to_cycles((uint64_t)ms * 1000000u));
    for (unsigned i = 0; i < nifs; i++) {
        uint64_t max = vnet_idle_max_ns(ifs[i].dev);
        if (max)
            until = earlier(until, now + time_ns_to_cycles(max));
    }
    return until;
}

uint64_t net_idle(uint64_t deadline)
{
    if (!can_idle)
        return 0;
    /* What the caller queued since net_service() leaves before the halt. */
    for (unsigned i = 0; i < nifs; i++)
        if (ifs[i].npend)
            net_flush(&ifs[i]);
    uint64_t until = net_idle_until(deadline);
    irq_idle_enter();
    int busy = 0;
    unsigned armed = 0;
    while (armed < nifs && !busy)
        busy = vnet_idle_arm(ifs[armed++].dev);
    uint64_t cycles = 0, waited = 0;
    if (busy) {
        irq_idle_leave();
    } else {
        /* The wait with irq_idle's spin to the deadline: all of it chosen. */
        uint64_t t0 = time_cycles();
        cycles = irq_idle(until);
        waited = time_cycles() - t0;
    }
    for (unsigned i = 0; i < armed; i++)
        vnet_idle_done(ifs[i].dev, cycles);
    return waited;
}

unsigned net_poll(void)
{
    struct vnet_rx rx[NET_RX_BATCH];
    unsigned bufs = 0;
    for (unsigned i = 0; i < nifs; i++) {
        int n = net_check(&ifs[i], vnet_rx_burst(ifs[i].dev, rx, NET_RX_BATCH));
        for (int k = 0; k < n; k += rx[k].nbufs)
            net_input(&ifs[i], &rx[k]);
        bufs += n > 0 ? (unsigned)n : 0;
    }
    net_service();
    return bufs;
}

int net_resolve_mac(uint32_t ip, uint8_t mac[6], uint32_t timeout_ms)
{
    struct netif *netif = &ifs[0].netif;
    ip4_addr_t target;
    target.addr = lwip_htonl(ip);
    uint64_t now = time_ns(), end = now + (uint64_t)timeout_ms * 1000000u, next = now;
    for (;;) {
        struct eth_addr *ea;
        const ip4_addr_t *ipr;
        if (etharp_find_addr(netif, &target, &ea, &ipr) >= 0) {
            memcpy(mac, ea->addr, 6);
            return 0;
        }
        now = time_ns();
        if (now >= end)
            return -ETIMEDOUT;
        if (now >= next) {
            etharp_request(netif, &target);
            next = now + (uint64_t)ARP_RETRY_MS * 1000000u;
        }
        net_poll();
    }
}

/* The address whose MAC a frame to dst (host byte order) goes to. */
static uint32_t next_hop(uint32_t dst)
{
    uint32_t mask = lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(&ifs[0].netif)));
    uint32_t gw = lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(&ifs[0].netif)));
    return ((dst ^ net_ip()) & mask) && gw ? gw : dst;
}

bool net_next_hop_known(uint32_t ip)
{
    struct netif *netif = &ifs[0].netif;
    struct eth_addr *ea;
    const ip4_addr_t *ipr;
    ip4_addr_t hop;
    hop.addr = lwip_htonl(next_hop(ip));
    static uint64_t next_request_ns;
    if (etharp_find_addr(netif, &hop, &ea, &ipr) >= 0)
        return true;
    /* At the retry pace: a peer that never answers gets no ARP flood. */
    uint64_t now = time_ns();
    if (now >= next_request_ns) {
        etharp_request(netif, &hop);
        next_request_ns = now + (uint64_t)ARP_RETRY_MS * 1000000u;
    }
    return false;
}

void net_dst_mac(uint32_t dst_ip, const uint8_t *dst_mac, uint8_t mac[6])
{
    char a[16];
    uint32_t dst = lwip_ntohl(dst_ip);
    uint32_t gw = lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(&ifs[0].netif)));
    uint32_t hop = next_hop(dst);
    if (dst_mac) {
        /* lwIP's own traffic (path=stack, rr, iperf) goes there too, also
         * to peers that do not answer ARP. */
        ip4_addr_t ip;
        struct eth_addr ea; /* lwIP takes it non-const */
        ip.addr = lwip_htonl(hop);
        memcpy(ea.addr, dst_mac, sizeof(ea.addr));
        if (etharp_add_static_entry(&ip, &ea) != ERR_OK)
            vn_fatal(VN_EXIT_INTERNAL, "net: cannot add the ARP entry for dst_mac=");
        memcpy(mac, dst_mac, 6);
        return;
    }
    if (net_resolve_mac(hop, mac, ARP_TIMEOUT_MS) < 0)
        vn_fatal(VN_EXIT_NETWORK,
                 "net: no ARP answer from %s%s within %d ms; give dst_mac= or check the peer",
                 ip_str(hop, a), hop == gw && hop != dst ? " (gateway)" : "", ARP_TIMEOUT_MS);
    printf("net: %s is at %02x:%02x:%02x:%02x:%02x:%02x\n", ip_str(hop, a), mac[0], mac[1], mac[2],
           mac[3], mac[4], mac[5]);
}

uint64_t net_tx_in_flight(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < nifs; i++)
        n += (uint64_t)vnet_tx_in_flight(ifs[i].dev);
    return n;
}

void net_lwip_sent(uint64_t *packets, uint64_t *bytes)
{
    *packets = *bytes = 0;
    for (unsigned i = 0; i < nifs; i++) {
        *packets += ifs[i].lwip_tx_sent;
        *bytes += ifs[i].lwip_tx_sent_bytes;
    }
}

void net_stats_json(struct json *j)
{
    uint64_t rx = 0, rxc = 0, rxd = 0, tx = 0, txc = 0, txd = 0, bad = 0, done = 0, big = 0;
    uint64_t vlan = 0, svlan = 0;
    for (unsigned i = 0; i < nifs; i++) {
        rx += ifs[i].lwip_rx;
        rxc += ifs[i].lwip_rx_copied;
        rxd += ifs[i].lwip_rx_dropped;
        bad += ifs[i].lwip_rx_csum_bad;
        done += ifs[i].lwip_rx_csum_done;
        big += ifs[i].lwip_rx_big;
        vlan += ifs[i].vlan.dropped;
        svlan += ifs[i].svlan.dropped;
        tx += ifs[i].lwip_tx;
        txc += ifs[i].lwip_tx_copied;
        txd += ifs[i].lwip_tx_dropped;
    }
    json_obj_begin(j, "lwip");
    json_u64(j, "rx", rx);
    json_u64(j, "rx_copied", rxc);
    json_u64(j, "rx_dropped", rxd);
    json_u64(j, "rx_csum_bad", bad);
    json_u64(j, "rx_csum_finished", done);
    json_u64(j, "rx_over_64k", big);
    json_u64(j, "vlan", net_vlan_vid(&ifs[0].vlan));
    json_u64(j, "rx_vlan_dropped", vlan);
    json_u64(j, "svlan", net_vlan_vid(&ifs[0].svlan));
    json_u64(j, "rx_svlan_dropped", svlan);
    json_u64(j, "tx", tx);
    json_u64(j, "tx_copied", txc);
    json_u64(j, "tx_dropped", txd);
    json_u64(j, "tso_mss", ifs[0].tso4.mss);
    json_u64(j, "tso6_mss", ifs[0].tso6.mss);
    json_u64(j, "link_drop", lwip_stats.link.drop);
    json_u64(j, "etharp_drop", lwip_stats.etharp.drop);
    json_u64(j, "ip_drop", lwip_stats.ip.drop);
    json_u64(j, "ip_chkerr", lwip_stats.ip.chkerr);
    json_u64(j, "ip_lenerr", lwip_stats.ip.lenerr);
    json_u64(j, "icmp_rx", lwip_stats.icmp.recv);
    json_u64(j, "icmp_tx", lwip_stats.icmp.xmit);
    json_u64(j, "udp_drop", lwip_stats.udp.drop);
    json_u64(j, "udp_chkerr", lwip_stats.udp.chkerr);
    json_u64(j, "tcp_drop", lwip_stats.tcp.drop);
    json_u64(j, "tcp_chkerr", lwip_stats.tcp.chkerr);
    json_u64(j, "tcp_tlp_probes", net_tlp_total());
    json_u64(j, "tcp_tlp_resends", net_tlp_resends());
    json_u64(j, "mem_err", lwip_stats.mem.err);
    json_obj_end(j);
}
