/* One 802.1Q tag on lwIP's netif (netif_vlan=, netif_pcp=; docs/lwip.md,
 * "VLAN"): lwIP's own VLAN support (ETHARP_SUPPORT_VLAN) asks these hooks
 * what tag to write on every frame it sends (LWIP_HOOK_VLAN_SET) and
 * whether a tagged frame it received is its (LWIP_HOOK_VLAN_CHECK);
 * net_input drops what lwIP would take without asking (untagged frames,
 * 802.1ad outer tags). IEEE 802.1Q-2018 s9.5, s9.6. Pure: host unit tested
 * (tests/unit/test_netif_vlan.c). */
#ifndef VN_NET_VLAN_H
#define VN_NET_VLAN_H

#include <stdbool.h>
#include <stdint.h>

#define NET_VLAN_HLEN    4
#define NET_VLAN_VID_MAX 4094 /* 4095 is reserved (802.1Q-2018 Table 9-2) */
#define NET_VLAN_PCP_MAX 7

struct net_vlan {
    uint16_t tci;     /* PCP << 13 | VID; VID 0: the netif sends and takes untagged frames */
    uint64_t dropped; /* frames not tagged with VID, when it is not 0 */
};

/* The tag of every frame lwIP sends: vid 1..NET_VLAN_VID_MAX (0: none),
 * pcp 0..NET_VLAN_PCP_MAX (DEI 0). */
void net_vlan_set(struct net_vlan *v, uint16_t vid, uint8_t pcp);

/* The VID, 0: untagged. */
static inline uint16_t net_vlan_vid(const struct net_vlan *v)
{
    return v->tci & 0xfff;
}

/* LWIP_HOOK_VLAN_SET's answer: the TCI (host order), or -1: no tag. */
int32_t net_vlan_tx_tci(const struct net_vlan *v);

/* LWIP_HOOK_VLAN_CHECK: a tag's TCI (host order) is ours; otherwise the
 * frame is counted as dropped. */
bool net_vlan_rx_tci(struct net_vlan *v, uint16_t tci);

/* Before lwIP sees frame f (head contiguous bytes): false (counted as
 * dropped) when v is tagged and f does not start with an 802.1Q tag
 * (untagged, an 802.1ad outer tag, or too short to say). */
bool net_vlan_rx_frame(struct net_vlan *v, const uint8_t *f, uint32_t head);

/* QinQ (netif_svlan=; the service tag, S-TAG, TPID 0x88a8: IEEE
 * 802.1Q-2018 s9.5, Table 9-1; the DEI bit 0): lwIP writes the 802.1Q tag only, so the netif puts a
 * service tag s (a struct net_vlan too) outside it on every frame lwIP
 * sends and takes it off every frame before lwIP sees it. */

/* TX: the frame's MACs are at f + NET_VLAN_HLEN (the 4 bytes before them
 * are free): moved to f, s's tag written after them. */
void net_svlan_push(const struct net_vlan *s, uint8_t *f);

/* RX, frame f of head contiguous bytes: when it opens with s's service
 * tag (TPID 0x88a8, s's VID) the MACs are moved NET_VLAN_HLEN bytes on,
 * over the tag (the frame then starts at f + NET_VLAN_HLEN) and true;
 * else false, counted in s's dropped: another TPID, another VID, too
 * short to say. */
bool net_svlan_pop(struct net_vlan *s, uint8_t *f, uint32_t head);

#endif
