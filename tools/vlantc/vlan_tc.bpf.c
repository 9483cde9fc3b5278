/* The host end of netif_vlan= (and netif_svlan=, QinQ) on the namespace's
 * tap where the host's kernel makes no VLAN interfaces (no 8021q): a tc
 * program on each side of the tap, built by the runner per run with the
 * run's tags as -D constants (tools/vnperflib/backends/vlantc.py).
 *
 * Ingress: the receive path has already moved the frame's outer tag
 * (802.1Q or 802.1ad) into skb->vlan_tci before tc runs
 * (__netif_receive_skb_core, skb_vlan_untag); a frame carrying the run's
 * tags is popped bare and goes on to the stack on the tap, any other is
 * dropped and counted, as a VLAN interface would not take it.
 * Egress: the stack's untagged frames get the run's tags (QinQ: 802.1Q
 * inside, 802.1ad outside, IEEE 802.1Q-2018 s6.9), which tun writes
 * into the frame it hands QEMU (tun_put_user). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef VT_VID
#error "VT_VID: the run's VLAN id (netif_vlan=)"
#endif
#ifndef VT_SVID
#define VT_SVID 0 /* netif_svlan=: the outer 802.1ad VLAN id; 0: none */
#endif
#ifndef VT_PCP
#define VT_PCP 0 /* netif_pcp=: the priority the host's frames carry */
#endif

#define VT_VID_MASK 0x0fff
#define VT_TCI(vid) ((__u16)((VT_PCP << 13) | (vid)))

/* vt_counts' slots, each a frame count and a byte count (skb->len: the
 * Ethernet header and any tag left in the frame's bytes, not the one tc
 * sees in skb->vlan_tci). */
enum vt_slot {
    VT_RX_PASSED,   /* the run's tags: popped, to the stack */
    VT_RX_OTHER,    /* another tag (VID, TPID or inner tag): dropped */
    VT_RX_UNTAGGED, /* no tag at all: dropped */
    VT_TX_TAGGED,   /* the stack's frames, tagged */
    VT_FAILED,      /* a helper refused a pop or push: dropped */
    VT_SLOTS
};

struct vt_count {
    __u64 frames;
    __u64 bytes;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, VT_SLOTS);
    __type(key, __u32);
    __type(value, struct vt_count);
} vt_counts SEC(".maps");

static __always_inline void vt_count(__u32 slot, const struct __sk_buff *skb)
{
    struct vt_count *c = bpf_map_lookup_elem(&vt_counts, &slot);

    if (c) {
        __sync_fetch_and_add(&c->frames, 1);
        __sync_fetch_and_add(&c->bytes, skb->len);
    }
}

static __always_inline int vt_verdict(__u32 slot, struct __sk_buff *skb)
{
    vt_count(slot, skb);
    return slot == VT_RX_PASSED || slot == VT_TX_TAGGED ? TC_ACT_OK : TC_ACT_SHOT;
}

/* The slot of a received frame by its tags, before any is popped. */
static __always_inline __u32 vt_classify(struct __sk_buff *skb)
{
    __u16 outer = VT_SVID ? ETH_P_8021AD : ETH_P_8021Q;

    if (!skb->vlan_present)
        return VT_RX_UNTAGGED;
    if (skb->vlan_proto != bpf_htons(outer))
        return VT_RX_OTHER;
    if ((skb->vlan_tci & VT_VID_MASK) != (VT_SVID ? VT_SVID : VT_VID))
        return VT_RX_OTHER;
    if (VT_SVID) {
        /* the inner 802.1Q tag is still in the frame, after the MACs */
        __be16 tag[2];

        if (bpf_skb_load_bytes(skb, 2 * ETH_ALEN, tag, sizeof(tag)))
            return VT_RX_OTHER;
        if (tag[0] != bpf_htons(ETH_P_8021Q) || (bpf_ntohs(tag[1]) & VT_VID_MASK) != VT_VID)
            return VT_RX_OTHER;
    }
    return VT_RX_PASSED;
}

SEC("vlan_ingress")
int vt_ingress(struct __sk_buff *skb)
{
    __u32 slot = vt_classify(skb);

    if (slot != VT_RX_PASSED)
        return vt_verdict(slot, skb);
    /* QinQ: the first pop drops the outer tag and moves the inner one
     * into skb->vlan_tci (skb_vlan_pop), the second drops that. */
    if (bpf_skb_vlan_pop(skb) || (VT_SVID && bpf_skb_vlan_pop(skb)))
        return vt_verdict(VT_FAILED, skb);
    return vt_verdict(VT_RX_PASSED, skb);
}

SEC("vlan_egress")
int vt_egress(struct __sk_buff *skb)
{
    if (bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), VT_TCI(VT_VID)))
        return vt_verdict(VT_FAILED, skb);
    /* a second push moves the 802.1Q tag into the frame, outside it */
    if (VT_SVID && bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021AD), VT_TCI(VT_SVID)))
        return vt_verdict(VT_FAILED, skb);
    return vt_verdict(VT_TX_TAGGED, skb);
}

char _license[] SEC("license") = "GPL";
