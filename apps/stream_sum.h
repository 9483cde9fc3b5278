/* Checksums carried from one frame of a stream to the next instead of
 * summed per frame (RFC 1624's incremental update). 2^16 is 1 modulo
 * 0xffff, so the one's complement sum of a field's 16-bit words is its
 * value modulo 0xffff (RFC 1071 s2(C)), whatever its width: an increment
 * of a sequence number or an address by step adds step to the sum, a
 * byte swap multiplies it by 256 (s2(B)). A frame's UDP checksum then
 * follows from the previous frame's by one addition modulo 0xffff.
 *
 * The sums here are "swapped": as the frame's bytes read little endian,
 * so the payload's sequence number and timestamp (stored little endian)
 * add as they are and a checksum is stored with one 16-bit store. They
 * are kept reduced to 0 .. 0xfffe, where the checksum is the complement
 * as it stands: a zero sum gives 0xffff, the -0 RFC 768 sends for a
 * computed 0. An IPv4 header's sum is kept in 1 .. 0xffff instead, as
 * the end-around carry leaves it: its checksum may be 0 (RFC 1624 s3).
 * Tests: tests/unit/test_stream_fast.c, against a sum of every word. */
#ifndef VN_STREAM_SUM_H
#define VN_STREAM_SUM_H

#include <stdint.h>

/* x modulo 0xffff, 0 .. 0xfffe (a multiplication: no divide). */
static inline uint32_t sum_mod(uint64_t x)
{
    return (uint32_t)(x % 0xffff);
}

/* a + b modulo 0xffff, both in 0 .. 0xfffe. */
static inline uint32_t sum_add(uint32_t a, uint32_t b)
{
    uint32_t s = a + b;
    return s >= 0xffff ? s - 0xffff : s;
}

/* -a modulo 0xffff. */
static inline uint32_t sum_neg(uint32_t a)
{
    return a ? 0xffff - a : 0;
}

/* A sum in network order (RFC 1071's) as a swapped one: 256 a modulo
 * 0xffff, a byte swap of a reduced sum. */
static inline uint32_t sum_swap(uint32_t a)
{
    return (uint32_t)__builtin_bswap16((uint16_t)a);
}

/* a + b with the end-around carry (RFC 1071 s2(A)): a + b modulo 0xffff
 * in 1 .. 0xffff when either is not 0. As add and adc on x86. */
static inline uint16_t sum_add16(uint16_t a, uint16_t b)
{
    uint16_t r;
    unsigned carry = __builtin_add_overflow(a, b, &r);
    return (uint16_t)(r + carry);
}

#endif
