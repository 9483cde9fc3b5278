/* Hash reports (VIRTIO_NET_F_HASH_REPORT, virtio 1.2 s5.1.6.4.3,
 * s5.1.6.4.4): the hash and report type a device owes for a received
 * frame under the hash types the driver configured, computed here from
 * the frame itself with our Toeplitz key, and the verdict on what the
 * device wrote. Pure: unit-tested and fuzzed on the host. */
#ifndef VN_VNET_HASH_H
#define VN_VNET_HASH_H

#include <stdint.h>

/* hash_report values, s5.1.6.4.4; type t > 0 answers hash type bit t - 1
 * (VIRTIO_NET_RSS_HASH_TYPE_*, s5.1.6.4.3.1) */
#define VIRTIO_NET_HASH_REPORT_NONE     0
#define VIRTIO_NET_HASH_REPORT_IPv4     1
#define VIRTIO_NET_HASH_REPORT_TCPv4    2
#define VIRTIO_NET_HASH_REPORT_UDPv4    3
#define VIRTIO_NET_HASH_REPORT_IPv6     4
#define VIRTIO_NET_HASH_REPORT_TCPv6    5
#define VIRTIO_NET_HASH_REPORT_UDPv6    6
#define VIRTIO_NET_HASH_REPORT_UDPv6_EX 9
#define VNET_HASH_UNKNOWN               0xffffu /* a frame whose owed report we do not compute */

/* What the device reported for one frame against what it owed. */
enum vnet_hash_verdict {
    VNET_HASH_OK = 0,    /* the owed type and value */
    VNET_HASH_NONE,      /* NONE: allowed, "the hash was not calculated" (s5.1.6.4.4) */
    VNET_HASH_SKIPPED,   /* an IPv6 frame with extension headers: not checked */
    VNET_HASH_BAD_TYPE,  /* past UDPv6_EX, a type not configured, or not the frame's */
    VNET_HASH_BAD_VALUE, /* the right type with another hash value */
    VNET_HASH_NVERDICT
};

/* Names for the counters ("ok", ...), indexed by enum vnet_hash_verdict. */
extern const char *const vnet_hash_verdict_name[VNET_HASH_NVERDICT];

/* The report type owed for the len-byte Ethernet frame f under the hash
 * types configured (VNET_RSS_HASH_*) with vnet_rss_key_ms, and its hash
 * in *value: NONE for a frame no configured type covers (not IP, or its
 * types off), VNET_HASH_UNKNOWN for IPv6 with extension headers. */
uint16_t vnet_hash_expect(const uint8_t *f, uint32_t len, uint32_t types, uint32_t *value);

/* The verdict on report and value for frame f (vnet_hash_expect's). */
enum vnet_hash_verdict vnet_hash_check(const uint8_t *f, uint32_t len, uint32_t types,
                                       uint32_t value, uint16_t report);

#endif
