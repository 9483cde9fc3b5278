/* gen's uso= (see gen_uso.h). */
#include "apps/gen_uso.h"

#include <errno.h>

#include "kernel/exit.h"
#include "kernel/json.h"
#include "net/net.h"
#include "net/pkt.h"

#define GEN_USO_SEG_HDRS (IP4_HLEN + UDP_HLEN) /* what each segment repeats past Ethernet */

unsigned gen_uso_offloads(const struct app_config *c)
{
    return c->uso ? VNET_OFF_TX_CSUM | VNET_OFF_TX_USO : 0;
}

uint32_t gen_uso_max_frame(const struct app_config *c, uint32_t mtu_frame)
{
    return c->uso ? PKT_MAX_FRAME : mtu_frame;
}

void gen_uso_mtu_check(const struct app_config *c, struct net_if *nif)
{
    struct vnet_dev *dev = net_if_dev(nif);
    uint32_t seg_max = vnet_mtu(dev) - GEN_USO_SEG_HDRS; /* MTU >= 68: no wrap */
    if (c->uso > seg_max)
        vn_fatal(VN_EXIT_CONFIG, "config: uso=%u: a segment's payload is at most %u (MTU %u)",
                 (unsigned)c->uso, (unsigned)seg_max, (unsigned)vnet_mtu(dev));
}

void gen_uso_check(const struct app_config *c, struct net_if *nif, unsigned nsizes, unsigned nflows)
{
    if (!c->uso)
        return;
    if (!(vnet_offloads(net_if_dev(nif)) & VNET_OFF_TX_USO))
        vn_fatal(VN_EXIT_CONFIG,
                 "config: uso=%u: the device does not offer VIRTIO_NET_F_HOST_USO (QEMU 8.2 or "
                 "later with a vnet_hdr tap on Linux 6.2 or later; not features=-host_uso or "
                 "-csum)",
                 (unsigned)c->uso);
    gen_uso_mtu_check(c, nif);
    if (nsizes != 1 || nflows != 1 || c->path != CFG_PATH_RAW)
        vn_fatal(VN_EXIT_CONFIG, "config: uso=%u takes one size=, one flow and path=raw",
                 (unsigned)c->uso);
}

void gen_uso_bind(struct net_if *nif, unsigned q, uint8_t *frame, uint16_t len, uint16_t uso)
{
    struct vnet_tx_off off = {VNET_TX_CSUM | VNET_TX_GSO, uso};
    int r = vnet_txslots_offload_q(net_if_dev(nif), q, frame, len, &off);
    if (r < 0)
        vn_fatal(VN_EXIT_INTERNAL, "uso=%u: no USO header for a %u-byte frame: error %d",
                 (unsigned)uso, (unsigned)len, r);
}

uint32_t gen_uso_segments(uint16_t len, uint16_t uso)
{
    uint32_t payload = len > PKT_HDRS_LEN ? (uint32_t)len - PKT_HDRS_LEN : 0u;
    if (!uso || payload <= uso)
        return 1;
    return (payload + uso - 1u) / uso;
}

uint32_t gen_uso_shape_json(struct json *j, uint16_t uso, uint16_t len)
{
    uint32_t segs = gen_uso_segments(len, uso);
    json_u64(j, "gso_size", uso);
    json_u64(j, "segments_per_datagram", segs);
    json_u64(j, "last_segment", len - PKT_HDRS_LEN - (segs - 1u) * uso);
    return segs;
}

void gen_uso_json(struct json *j, uint16_t uso, uint16_t len, uint64_t packets)
{
    if (!uso)
        return;
    json_obj_begin(j, "uso");
    uint32_t segs = gen_uso_shape_json(j, uso, len);
    json_u64(j, "segments", packets * segs);
    json_obj_end(j);
}
