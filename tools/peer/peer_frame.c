/* Classification into vnperf / other frames, and reflection. */
#include "tools/peer/peer_frame.h"

#include <errno.h>
#include <string.h>

int peer_frame_classify(const uint8_t *f, size_t len, bool verify_udp_csum, struct peer_vnpf *v)
{
    struct pkt_info pi;
    enum pkt_kind k = pkt_parse(f, (uint32_t)len, verify_udp_csum, &pi);
    const uint8_t *pl;

    if (k == PKT_STAMPED)
        k = PKT_UDP; /* a TCP or ICMP stream's: a vnperf frame as UDP's are */
    if (k != PKT_UDP)
        return k;
    if (pi.payload_len < PL_MIN)
        return PEER_KIND_UDP_SHORT;
    pl = f + pi.payload_off;
    if (pi.payload_len >= PL_LEN) {
        if (rdle32(pl + PL_OFF_MAGIC) != PL_MAGIC)
            return PEER_KIND_BAD_MAGIC;
        v->stream = rdle32(pl + PL_OFF_STREAM);
    } else {
        v->stream = rdle16(pl + PL_OFF_STREAM);
    }
    v->seq = rdle64(pl + PL_OFF_SEQ);
    v->tsc = rdle64(pl + PL_OFF_TSC);
    v->flow = (struct peer_flow_key){.sport = pi.sport, .dport = pi.dport};
    pkt_ip_addrs(f, &pi, v->flow.saddr, v->flow.daddr);
    return PKT_UDP;
}

bool peer_frame_turns_round(int kind, bool shared_if)
{
    return !shared_if || kind == PKT_UDP;
}

bool peer_frame_gso(size_t len, uint32_t frame_max)
{
    return frame_max != 0 && len > frame_max;
}

const char *peer_kind_name(int kind)
{
    if (kind == PEER_KIND_UDP_SHORT)
        return "udp_short";
    if (kind == PEER_KIND_BAD_MAGIC)
        return "bad_magic";
    return pkt_kind_name((enum pkt_kind)kind);
}

int peer_frame_reflect(uint8_t *f, size_t len)
{
    uint8_t old_dst[ETH_ALEN];
    struct pkt_info pi;
    enum pkt_kind k;

    if (len < ETH_HLEN)
        return -EINVAL;
    memcpy(old_dst, f + OFF_ETH_DST, ETH_ALEN);
    k = pkt_parse(f, (uint32_t)len, false, &pi);
    if (k == PKT_UDP) {
        pkt_udp_reflect(f, &pi, old_dst);
        return 0;
    }
    /* a stream's TCP segment or echo request answered as the guest's
     * reflector answers it (an echo reply only turned round) */
    if (k == PKT_STAMPED && pkt_stamped_reflect(f, &pi, old_dst))
        return 0;
    memcpy(f + OFF_ETH_DST, f + OFF_ETH_SRC, ETH_ALEN);
    memcpy(f + OFF_ETH_SRC, old_dst, ETH_ALEN);
    return 0;
}
