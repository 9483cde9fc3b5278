/* The Internet checksum (RFC 1071), the one routine every layer uses:
 * lwIP (LWIP_CHKSUM), the raw frame builder (net/pkt.c), the netif's RX
 * verification and the virtio-net header builder's pseudo-header seeds.
 *
 * Sums are "native": 16-bit words loaded in the CPU's (little-endian)
 * order. The one's complement sum commutes with byte swapping (RFC 1071
 * s2(B)), so a native sum stored back as a native u16 has the bytes of
 * the network-order sum; only the final fold and complement remain. */
#ifndef VN_CSUM_H
#define VN_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Adds the bytes at p to sum (an unfolded 32-bit native partial sum,
 * like Linux's csum_partial). p may be at any address; an odd len pads
 * the last byte as the first byte of a word. */
uint32_t csum_partial(const void *p, size_t len, uint32_t sum);

/* 32 -> 16 bits, not complemented. */
static inline uint16_t csum_fold16(uint32_t sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

/* Adds two partial sums (end-around carry). */
static inline uint32_t csum_add(uint32_t a, uint32_t b)
{
    uint64_t s = (uint64_t)a + b;
    return (uint32_t)s + (uint32_t)(s >> 32); /* at most 0xffffffff: no wrap */
}

/* A native partial sum of data that starts at an odd offset of the
 * checksummed string: its bytes pair the other way round. */
static inline uint32_t csum_swap(uint32_t sum)
{
    uint16_t s = csum_fold16(sum);
    return (uint16_t)(s << 8 | s >> 8);
}

/* Native partial sum of a 16-bit value given in host order (a length,
 * a protocol number), as it would be summed from its network-order
 * bytes in memory. */
static inline uint32_t csum_host16(uint16_t v)
{
    return (uint16_t)(v << 8 | v >> 8);
}

#endif
