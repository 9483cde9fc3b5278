/* The Internet checksum as the tests compute it themselves, word by word
 * from a frame's bytes (RFC 1071), independent of net/ and apps/: the
 * reference every checksum test checks the code's sums against. */
#ifndef TESTS_UNIT_REF_CSUM_H
#define TESTS_UNIT_REF_CSUM_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t ref_be16(const uint8_t *p)
{
    return (uint32_t)(p[0] << 8 | p[1]);
}

/* s plus the big-endian words of len bytes (an odd last byte padded with
 * zero), unfolded: 64 bits hold the sum of any buffer a test builds. */
static inline uint64_t ref_sum(const uint8_t *p, size_t len, uint64_t s)
{
    for (size_t i = 0; i + 1 < len; i += 2)
        s += ref_be16(p + i);
    if (len & 1)
        s += (uint64_t)p[len - 1] << 8;
    return s;
}

/* The sum's 16-bit fold with the end-around carry. */
static inline uint32_t ref_fold(uint64_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint32_t)s;
}

/* A frame's L4 checksum checks out: the sum over its pseudo header (the
 * addresses, the protocol and the L4 length: RFC 768, RFC 9293 s3.1, RFC
 * 8200 s8.1) and the L4 bytes is 0xffff; ICMPv4's has no pseudo header
 * (RFC 792). l3: the IP header's offset, len: the frame's length. */
static inline int ref_l4_ok(const uint8_t *f, unsigned l3, int v6, unsigned len)
{
    unsigned l4 = l3 + (v6 ? 40u : 20u), proto = f[l3 + (v6 ? 6 : 9)];
    uint64_t s = 0;
    if (v6 || proto != 1)
        s = ref_sum(f + l3 + (v6 ? 8 : 12), v6 ? 32 : 8, proto + (uint64_t)(len - l4));
    return ref_fold(ref_sum(f + l4, len - l4, s)) == 0xffff;
}

#endif
