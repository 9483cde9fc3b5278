/* Offload decisions for lwIP's frames (see net_off.h). */
#include "net/net_off.h"

#include "net/pkt.h"

_Static_assert(PKT_MAX_FRAME <= 0xffff, "MTUs fit the 16-bit sizes below");

void net_off_tso(uint16_t mtu, uint16_t tcp_mss, bool v6, struct net_tso *t)
{
    const uint32_t ip = v6 ? NET_OFF_IP6_HLEN : IP4_HLEN;
    const uint32_t hdrs = ip + NET_OFF_TCP_HLEN;
    t->mss = t->send_mss = 0;
    if (mtu <= hdrs || tcp_mss == 0)
        return;
    uint32_t mss = mtu - hdrs < tcp_mss ? mtu - hdrs : tcp_mss;
    /* The whole frame, Ethernet header included, is one lwIP pbuf chain
     * with a 16-bit length; IPv4's total length field counts the IP
     * header too (RFC 791), IPv6's payload length does not (RFC 8200
     * s3): the pbuf limit is the tighter one for both. */
    /* QinQ's two tags fit (netif_vlan=, netif_svlan=) */
    uint32_t room = 0xffffu - ETH_HLEN - 4 * PKT_VLANS_MAX - hdrs;
    t->mss = (uint16_t)mss;
    t->send_mss = (uint16_t)(room / mss * mss);
}

uint16_t net_off_send_mss(const struct net_tso *t, uint16_t mss)
{
    return t->mss && mss >= t->mss ? t->send_mss : mss;
}

/* The Ethernet header's length: 14, 18 with one 802.1Q tag (lwIP's
 * netif_vlan=, IEEE 802.1Q-2018 s9.5), 22 with an 802.1ad service tag
 * outside it (netif_svlan=); 0 when f is too short to say. */
static uint32_t net_off_l2(const uint8_t *f, uint32_t head)
{
    if (head < ETH_HLEN)
        return 0;
    uint32_t l2 = ETH_HLEN;
    if (rd16(f + OFF_ETH_TYPE) == ETH_P_8021AD) {
        if (head < l2 + 4 + 2 || rd16(f + l2 + 2) != ETH_P_8021Q)
            return 0;
        l2 += 4;
    }
    if (rd16(f + l2 - 2) != ETH_P_8021Q)
        return l2;
    return head < l2 + 4 ? 0 : l2 + 4;
}

/* The IP header after the Ethernet one (and its tag): 0 and the TCP
 * header's offset, or -1 when f holds no TCP segment of either family
 * there. */
static int net_off_tcp_at(const uint8_t *f, uint32_t head, uint32_t *l4off, bool *v6)
{
    uint32_t l2 = net_off_l2(f, head);
    if (!l2)
        return -1;
    uint16_t type = rd16(f + l2 - 2);
    const uint8_t *ip = f + l2;
    if (type == ETH_P_IP) {
        if (head < l2 + IP4_HLEN || ip[0] >> 4 != 4 || ip[9] != IP_PROTO_TCP)
            return -1;
        *l4off = l2 + (ip[0] & 15u) * 4u;
        *v6 = false;
        return (ip[0] & 15u) * 4u < IP4_HLEN ? -1 : 0;
    }
    if (type == NET_OFF_ETH_P_IPV6) {
        /* next header TCP: extension headers are not ours to offload */
        if (head < l2 + NET_OFF_IP6_HLEN || ip[0] >> 4 != 6 || ip[6] != IP_PROTO_TCP)
            return -1;
        *l4off = l2 + NET_OFF_IP6_HLEN;
        *v6 = true;
        return 0;
    }
    return -1;
}

struct vnet_tx_off net_off_tx(const uint8_t *f, uint32_t head, uint32_t tot_len, unsigned offloads,
                              uint16_t mtu, const struct net_tso *tso4, const struct net_tso *tso6)
{
    struct vnet_tx_off off = {0, 0};
    uint32_t l4off;
    bool v6;
    if (!(offloads & VNET_OFF_TX_CSUM) || net_off_tcp_at(f, head, &l4off, &v6) < 0 ||
        head < l4off + NET_OFF_TCP_HLEN)
        return off; /* the driver reads the TCP header in head */
    off.flags = VNET_TX_CSUM;
    const struct net_tso *t = v6 ? tso6 : tso4;
    if (tot_len > (uint32_t)mtu + net_off_l2(f, head) && t->mss) {
        off.flags |= VNET_TX_GSO;
        off.gso_size = t->mss;
    }
    return off;
}

int net_off_rx_tcp(const uint8_t *f, uint32_t head, uint32_t len, uint32_t *l4off, uint32_t *l4len,
                   bool *v6)
{
    if (head > len || net_off_tcp_at(f, head, l4off, v6) < 0 || *l4off > head)
        return -1;
    uint32_t l2 = net_off_l2(f, head);
    const uint8_t *ip = f + l2;
    uint32_t l4;
    if (*v6) {
        l4 = rd16(ip + 4);
    } else {
        uint32_t ihl = *l4off - l2, tot = rd16(ip + 2);
        if (tot < ihl || (rd16(ip + 6) & 0x3fff))
            return -1; /* fragments: checked after reassembly, by lwIP */
        l4 = tot - ihl;
    }
    if (*l4off > len || l4 > len - *l4off)
        return -1;
    *l4len = l4;
    return 0;
}
