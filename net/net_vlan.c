/* The netif's 802.1Q tag and its 802.1ad service tag (see net_vlan.h). */
#include "net/net_vlan.h"

#include <string.h>

#include "net/pkt.h"

#define VLAN_PCP_SHIFT 13 /* 802.1Q-2018 s9.6: PCP, DEI, VID in the TCI */

void net_vlan_set(struct net_vlan *v, uint16_t vid, uint8_t pcp)
{
    v->tci = vid ? (uint16_t)((unsigned)pcp << VLAN_PCP_SHIFT | vid) : 0;
    v->dropped = 0;
}

int32_t net_vlan_tx_tci(const struct net_vlan *v)
{
    return net_vlan_vid(v) ? (int32_t)v->tci : -1;
}

bool net_vlan_rx_tci(struct net_vlan *v, uint16_t tci)
{
    /* An untagged netif takes no tagged frame: lwIP would take any. */
    if (net_vlan_vid(v) && (tci & 0xfff) == net_vlan_vid(v))
        return true;
    v->dropped++;
    return false;
}

bool net_vlan_rx_frame(struct net_vlan *v, const uint8_t *f, uint32_t head)
{
    if (!net_vlan_vid(v) ||
        (head >= ETH_HLEN + NET_VLAN_HLEN && rd16(f + OFF_ETH_TYPE) == ETH_P_8021Q))
        return true;
    v->dropped++;
    return false;
}

void net_svlan_push(const struct net_vlan *s, uint8_t *f)
{
    memmove(f, f + NET_VLAN_HLEN, 2 * ETH_ALEN);
    wr16(f + OFF_ETH_TYPE, ETH_P_8021AD);
    wr16(f + ETH_HLEN, s->tci);
}

bool net_svlan_pop(struct net_vlan *s, uint8_t *f, uint32_t head)
{
    if (head < ETH_HLEN + NET_VLAN_HLEN || rd16(f + OFF_ETH_TYPE) != ETH_P_8021AD ||
        (rd16(f + ETH_HLEN) & 0xfff) != net_vlan_vid(s)) {
        s->dropped++;
        return false;
    }
    memmove(f + NET_VLAN_HLEN, f, 2 * ETH_ALEN);
    return true;
}
