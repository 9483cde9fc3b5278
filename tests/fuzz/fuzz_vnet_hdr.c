/* drivers/virtio/vnet_hdr.c: a header the device wrote is checked against
 * any features, and a TX header built for any frame, never touching a
 * byte outside it. Input: 8 bytes of features, 12 of header, 2 of request,
 * 2 of gso_size, 2 of the first piece's length, then the frame. */
#include <errno.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/vnet_hdr.h"
#include "tests/fuzz/fuzz.h"

static void check_rx(const struct virtio_net_hdr *h, uint32_t len, uint64_t f)
{
    struct vnet_rx_off o;
    enum vnet_hdr_bad r = vnet_hdr_rx_check(h, len, 1518, f, &o);
    FUZZ_CHECK(r < VNET_HDR_NBAD);
    if (r != VNET_HDR_OK)
        return;
    FUZZ_CHECK(o.csum <= VNET_RX_CSUM_PARTIAL);
    if (o.csum == VNET_RX_CSUM_PARTIAL)
        FUZZ_CHECK(o.csum_start >= 14 && (uint32_t)o.csum_start + o.csum_offset + 2 <= len);
    /* each GSO type only with its feature (UDP_L4: GUEST_USO4 or 6) */
    FUZZ_CHECK(
        o.gso_type == VIRTIO_NET_HDR_GSO_NONE ||
        (o.gso_type == VIRTIO_NET_HDR_GSO_TCPV4 && (f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4))) ||
        (o.gso_type == VIRTIO_NET_HDR_GSO_TCPV6 && (f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6))) ||
        (o.gso_type == VIRTIO_NET_HDR_GSO_UDP_L4 &&
         (f & (VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_USO6))) &&
         !(h->gso_type & VIRTIO_NET_HDR_GSO_ECN)));
    FUZZ_CHECK(o.gso_type == VIRTIO_NET_HDR_GSO_NONE ? len <= 1518 : o.gso_size > 0);
}

static void check_tx(uint8_t *frame, uint32_t head, uint32_t len, uint8_t flags, uint16_t mss,
                     uint64_t f)
{
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {flags, mss};
    int r = vnet_hdr_tx_build(&h, frame, head, len, &off, f);
    FUZZ_CHECK(r == 0 || r == -EINVAL || r == -EOPNOTSUPP);
    if (r || !flags) {
        FUZZ_CHECK(!h.flags && !h.gso_type && !h.csum_start && !h.gso_size);
        return;
    }
    FUZZ_CHECK(h.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM);
    FUZZ_CHECK((uint32_t)h.csum_start + h.csum_offset + 2 <= head);
    if (h.gso_type)
        FUZZ_CHECK(h.gso_size == mss && h.hdr_len <= head && (flags & VNET_TX_GSO));
    if (h.gso_type == VIRTIO_NET_HDR_GSO_UDP_L4) /* USO: HOST_USO, UDP's 8-byte header */
        FUZZ_CHECK((f & VIRTIO_BIT(VIRTIO_NET_F_HOST_USO)) && h.csum_offset == 6 &&
                   h.hdr_len == h.csum_start + 8u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 26 || n > 70000)
        return 0;
    uint64_t f;
    struct virtio_net_hdr h;
    uint16_t req, mss, head;
    memcpy(&f, data, 8);
    memcpy(&h, data + 8, 12);
    memcpy(&req, data + 20, 2);
    memcpy(&mss, data + 22, 2);
    memcpy(&head, data + 24, 2);
    uint32_t len = (uint32_t)(n - 26);
    check_rx(&h, len, f);
    /* the frame in a buffer of exactly len bytes: ASan sees any overrun */
    uint8_t *frame = malloc(len ? len : 1);
    if (!frame)
        abort();
    memcpy(frame, data + 26, len);
    check_tx(frame, head <= len ? head : len, len, (uint8_t)(req & 3), mss, f);
    free(frame);
    return 0;
}
