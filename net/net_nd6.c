/* Neighbour discovery for the apps' IPv6 peers (RFC 4861 s7.2), with
 * lwIP's nd6: whether a peer's MAC is known, and waiting for it with a
 * clear end, as net_stack.c does with ARP for IPv4. */
#include <stdio.h>
#include <string.h>

#include "kernel/exit.h"
#include "kernel/time.h"
#include "lwip/ip6_addr.h"
#include "lwip/nd6.h"
#include "net/net.h"

#define ND6_TIMEOUT_MS 2000 /* lwIP resends its solicitation every second */

/* lwIP's answer for a in its neighbour cache: 0 and the MAC, or not yet
 * (the first call for an address sends the solicitation, nd6_tmr the
 * next ones). */
static int net_nd6_lookup(const ip6_addr_t *a, uint8_t mac[6])
{
    struct net_if *nif = net_if_get(0);
    const u8_t *hw = NULL;
    if (!nif || nd6_get_next_hop_addr_or_queue(&nif->netif, NULL, a, &hw) != ERR_OK || !hw)
        return -1;
    if (mac)
        memcpy(mac, hw, 6);
    return 0;
}

bool net_next_hop_known_addr(const ip_addr_t *a)
{
    if (IP_IS_V6(a))
        return net_nd6_lookup(ip_2_ip6(a), NULL) == 0;
    return net_next_hop_known(lwip_ntohl(ip_addr_get_ip4_u32(a)));
}

void net_dst_mac6(const uint8_t ip6[16], uint8_t mac[6])
{
    ip6_addr_t a;
    char s[IP6ADDR_STRLEN_MAX];
    memcpy(a.addr, ip6, sizeof(a.addr)); /* both network order */
    ip6addr_ntoa_r(&a, s, sizeof(s));
    uint64_t end = time_ns() + (uint64_t)ND6_TIMEOUT_MS * 1000000u;
    while (net_nd6_lookup(&a, mac) < 0) {
        if (time_ns() > end)
            vn_fatal(VN_EXIT_NETWORK,
                     "net: no neighbour advertisement from %s within %d ms; check the peer", s,
                     ND6_TIMEOUT_MS);
        net_poll();
    }
    printf("net: %s is at %02x:%02x:%02x:%02x:%02x:%02x\n", s, mac[0], mac[1], mac[2], mac[3],
           mac[4], mac[5]);
}
