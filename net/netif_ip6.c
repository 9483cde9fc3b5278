/* IPv6 on the lwIP netif: its addresses (link-local from the MAC, ip6=)
 * and TSO6 for TCP over IPv6 (docs/lwip.md, "IPv6").
 *
 * IPv4 TCP reaches the device whole because the netif's MTU is raised to
 * 64 KiB and net_output_tso fragments the rest (netif_vnet.c). IPv6 has
 * no such door: ip6_output_if_src fragments anything longer than the
 * destination cache's path MTU (lwIP 2.1.3 src/core/ipv6/ip6.c,
 * ip6_output_if_src -> ip6_frag), and that cache takes the netif's MTU
 * when an entry is made (nd6.c, nd6_get_next_hop_entry), so a raised
 * MTU would leave UDP datagrams unfragmented for good. The MTU stays the
 * device's, and the image is linked with --wrap=ip6_frag (Makefile):
 * a TCP segment the device segments (HOST_TSO6) goes to the netif
 * whole, everything else to lwIP's own ip6_frag. */
#include <stdio.h>
#include <string.h>

#include "kernel/exit.h"
#include "lwip/ip6_addr.h"
#include "lwip/ip6_frag.h"
#include "lwip/netif.h"
#include "lwip/prot/ip6.h"
#include "net/net.h"
#include "net/net_priv.h"
#include "net/pkt.h"

_Static_assert(LWIP_IPV6_NUM_ADDRESSES >= 2, "link-local and ip6= both fit");

void net_netif_ip6(struct net_if *nif, const uint8_t *ip6)
{
    struct netif *netif = &nif->netif;
    char a[IP6ADDR_STRLEN_MAX], b[IP6ADDR_STRLEN_MAX];
    /* Without ip6= the netif has no IPv6 address, so lwIP sends no MLD
     * report or neighbour solicitation: an IPv4 run's frames stay
     * exactly the app's (and ARP). */
    if (!ip6) {
        printf("net: ip6 off (no ip6=)\n");
        return;
    }
    /* RFC 4291 s2.5.1: modified EUI-64 from the MAC, in slot 0 */
    netif_create_ip6_linklocal_address(netif, 1);
    /* No DAD (lwipopts.h): the addresses are the run's, usable now. */
    netif_ip6_addr_set_state(netif, 0, IP6_ADDR_PREFERRED);
    ip6addr_ntoa_r(netif_ip6_addr(netif, 0), a, sizeof(a));
    ip6_addr_t g;
    s8_t idx;
    memcpy(g.addr, ip6, sizeof(g.addr)); /* both network order */
    if (netif_add_ip6_address(netif, &g, &idx) != ERR_OK)
        vn_fatal(VN_EXIT_INTERNAL, "net: no slot for ip6= on %s", vnet_name(nif->dev));
    netif_ip6_addr_set_state(netif, idx, IP6_ADDR_PREFERRED);
    ip6addr_ntoa_r(&g, b, sizeof(b));
    printf("net: ip6 link-local %s global %s\n", a, b);
}

/* Whether lwIP's IPv6 packet p, too long for the MTU, is a TCP segment
 * the device cuts (TSO6 on) and fits a frame once the Ethernet header
 * is in front. */
static bool net_ip6_tso(const struct net_if *nif, const struct pbuf *p)
{
    const u8_t *ip = p->payload;
    return nif->tso6.mss && p->len >= IP6_HLEN + NET_OFF_TCP_HLEN &&
           IP6H_NEXTH((const struct ip6_hdr *)ip) == IP6_NEXTH_TCP &&
           p->tot_len <= 0xffffu - ETH_HLEN;
}

err_t __real_ip6_frag(struct pbuf *p, struct netif *netif, const ip6_addr_t *dest);
err_t __wrap_ip6_frag(struct pbuf *p, struct netif *netif, const ip6_addr_t *dest);

err_t __wrap_ip6_frag(struct pbuf *p, struct netif *netif, const ip6_addr_t *dest)
{
    const struct net_if *nif = netif->state;
    if (net_ip6_tso(nif, p))
        return netif->output_ip6(netif, p, dest);
    return __real_ip6_frag(p, netif, dest);
}
