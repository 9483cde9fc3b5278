/* The virtio-net header (virtio 1.2 s5.1.6): building it for a frame
 * that asks for checksum or segmentation offload, and validating one the
 * device wrote. Pure functions on byte buffers: no queue, no device, unit
 * tested on the host (tests/unit/test_vnet_hdr.c). */
#ifndef VN_VNET_HDR_H
#define VN_VNET_HDR_H

#include <stdint.h>

#include "drivers/virtio/vnet.h"

/* virtio 1.2 s5.1.6; the first 10 bytes are the legacy header without
 * num_buffers. Fields are little endian (x86: plain loads and stores). */
struct virtio_net_hdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
    uint16_t num_buffers;
};
#define VNET_HDR_LEGACY 10
#define VNET_HDR_MRG    12
#define VNET_HDR_HASH   20
_Static_assert(sizeof(struct virtio_net_hdr) == VNET_HDR_MRG, "virtio 1.2 s5.1.6 layout");

/* With VIRTIO_NET_F_HASH_REPORT the header goes on with the hash the
 * device computed and its type (virtio 1.2 s5.1.6, s5.1.6.4.4), both ways:
 * the driver writes zeros there on TX. */
struct virtio_net_hdr_hash {
    struct virtio_net_hdr h;
    uint32_t hash_value;
    uint16_t hash_report;
    uint16_t padding_reserved;
};
_Static_assert(sizeof(struct virtio_net_hdr_hash) == VNET_HDR_HASH, "virtio 1.2 s5.1.6 layout");
_Static_assert(VNET_HDR_ROOM >= VNET_HDR_HASH, "headroom holds the longest header");

#define VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VIRTIO_NET_HDR_F_DATA_VALID 2
#define VIRTIO_NET_HDR_F_RSC_INFO   4
#define VIRTIO_NET_HDR_GSO_NONE     0
#define VIRTIO_NET_HDR_GSO_TCPV4    1
#define VIRTIO_NET_HDR_GSO_UDP      3
#define VIRTIO_NET_HDR_GSO_TCPV6    4
#define VIRTIO_NET_HDR_GSO_UDP_L4   5
#define VIRTIO_NET_HDR_GSO_ECN      0x80

/* Largest frame a device may deliver once any GUEST_TSO is negotiated:
 * Ethernet + IPv6 header + the largest IPv6 payload (virtio 1.2 s5.1.6.3),
 * plus one VLAN tag. */
#define VNET_GSO_FRAME_MAX (14 + 40 + 65535 + 4)

/* TX: fills *h for a frame that asks for off (vnet.h). frame holds head
 * contiguous bytes of the len-byte frame; the Ethernet, IP and TCP/UDP
 * headers must lie within them. With VNET_TX_CSUM the L4 checksum field
 * is seeded with the pseudo-header sum (s5.1.6.2: replacing it by the
 * checksum of the L4 header and payload gives the right result; for a
 * GSO frame the sum covers the whole frame's L4 length, as segmentation
 * expects). A GSO frame whose payload fits one segment goes out as a
 * checksum-only frame. Returns 0, -EINVAL for a frame that cannot be
 * offloaded as asked (unknown protocol, IP fragment, header outside head,
 * inconsistent lengths), -EOPNOTSUPP when a needed feature was not
 * negotiated. *h is all zero on error and without offloads. */
int vnet_hdr_tx_build(struct virtio_net_hdr *h, uint8_t *frame, uint32_t head, uint32_t len,
                      const struct vnet_tx_off *off, uint64_t features);

/* RX: why a header the device wrote is refused (counted per reason). */
enum vnet_hdr_bad {
    VNET_HDR_OK = 0,
    VNET_HDR_BAD_FLAGS,    /* checksum flags without GUEST_CSUM, RSC_INFO without RSC_EXT */
    VNET_HDR_BAD_GSO_TYPE, /* a type or ECN not negotiated, or GSO without NEEDS_CSUM */
    VNET_HDR_BAD_GSO_SIZE, /* GSO with gso_size 0 */
    VNET_HDR_BAD_HDR_LEN,  /* GSO hdr_len past the frame's end */
    VNET_HDR_BAD_CSUM,     /* csum_start/csum_offset outside the frame */
    VNET_HDR_BAD_LEN,      /* frame longer than the negotiated features allow */
    VNET_HDR_NBAD
};

/* Names for the counters ("bad_flags", ...), indexed by enum vnet_hdr_bad. */
extern const char *const vnet_hdr_bad_name[VNET_HDR_NBAD];

/* RX: checks the header h (a private copy: the device's buffer is read
 * once) of a frame_len-byte frame against the negotiated features and
 * the largest plain (non-GSO) frame; fills *out on VNET_HDR_OK. */
enum vnet_hdr_bad vnet_hdr_rx_check(const struct virtio_net_hdr *h, uint32_t frame_len,
                                    uint32_t max_plain, uint64_t features, struct vnet_rx_off *out);

#endif
