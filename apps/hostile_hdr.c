/* app=hostile: virtio-net header and frame cases (virtio 1.2 s5.1.6.2):
 * a clean two-descriptor TX buffer whose header or frame length lies.
 * The header's GSO and checksum requests are made whether or not the
 * features that allow them were negotiated (the report says which were). */
#include <string.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"
#include "drivers/virtio/vnet_hdr.h"

_Static_assert(sizeof(struct virtio_net_hdr) == HOSTILE_HDR, "the VERSION_1 header");
_Static_assert(HOSTILE_BIG_GSO + HOSTILE_HDR <= HOSTILE_BUF, "gso_64k's frame fits buf");

/* s5.1.6.2: an IPv4 TCP frame's offsets: Ethernet 14, IPv4 20, TCP 20. */
#define HDRS_LEN   54u
#define CSUM_START 34u
#define CSUM_TCP   16u

static int send_with(struct hostile_env *e, const struct virtio_net_hdr *h, uint32_t frame_len)
{
    uint16_t head = 0;
    memcpy(e->buf, h, sizeof(*h));
    int r = hostile_tx_pair(e, 0, frame_len);
    return r ? r : hostile_publish(e, &head, 1);
}

/* A GSO TCPv4 header that is right but for what the case changes. */
static struct virtio_net_hdr gso_hdr(void)
{
    return (struct virtio_net_hdr){VIRTIO_NET_HDR_F_NEEDS_CSUM,
                                   VIRTIO_NET_HDR_GSO_TCPV4,
                                   HDRS_LEN,
                                   1000,
                                   CSUM_START,
                                   CSUM_TCP,
                                   0};
}

int hostile_gso_hdrlen(struct hostile_env *e)
{
    struct virtio_net_hdr h = gso_hdr();
    h.hdr_len = 2000; /* past the 64-byte frame */
    return send_with(e, &h, HOSTILE_FRAME);
}

int hostile_gso_size0(struct hostile_env *e)
{
    struct virtio_net_hdr h = gso_hdr();
    h.gso_size = 0;
    return send_with(e, &h, HOSTILE_FRAME);
}

int hostile_csum_past(struct hostile_env *e)
{
    struct virtio_net_hdr h = {VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 60, 1000, 0};
    return send_with(e, &h, HOSTILE_FRAME);
}

int hostile_numbuf_tx(struct hostile_env *e)
{
    struct virtio_net_hdr h = {0, 0, 0, 0, 0, 0, 5};
    return send_with(e, &h, HOSTILE_FRAME);
}

int hostile_runt(struct hostile_env *e)
{
    struct virtio_net_hdr h = {0};
    return send_with(e, &h, 10);
}

int hostile_over_mtu(struct hostile_env *e)
{
    struct virtio_net_hdr h = {0};
    return send_with(e, &h, HOSTILE_BIG_MTU);
}

int hostile_gso_64k(struct hostile_env *e)
{
    struct virtio_net_hdr h = gso_hdr();
    return send_with(e, &h, HOSTILE_BIG_GSO);
}
