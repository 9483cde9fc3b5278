/* RFC 1071 checksum (see csum.h).
 *
 * The two 32-bit halves of each 64-bit load go into 64-bit accumulators,
 * so no add needs the carry flag: under TCG an adc chain makes QEMU
 * compute the flags of every add, while plain adds translate one to one.
 * 64 bytes per loop round keep the branch (a translation block end under
 * TCG) rare. An accumulator gains less than 2^32 per add, so it cannot
 * overflow below 2^32 adds (32 GiB). */
#include "kernel/csum.h"

/* Unaligned loads through __builtin_memcpy, which compiles to one mov:
 * the kernel is built -ffreestanding (no builtins), where memcpy() is a
 * call to newlib's, a byte-wise `rep movsb` below 16 bytes; per 8-byte
 * load that was 79% of the guest's time receiving a stream over slirp
 * (tests/integration/test_image_code.py). */
static inline uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    __builtin_memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p, sizeof(v));
    return v;
}

#define CSUM_STEP(acc, w) ((acc) += (uint32_t)(w) + ((w) >> 32))

uint32_t csum_partial(const void *p, size_t len, uint32_t sum)
{
    const uint8_t *b = p;
    uint64_t a0 = sum, a1 = 0;
    for (; len >= 64; len -= 64, b += 64) {
        uint64_t w0 = ld64(b), w1 = ld64(b + 8), w2 = ld64(b + 16), w3 = ld64(b + 24);
        uint64_t w4 = ld64(b + 32), w5 = ld64(b + 40), w6 = ld64(b + 48), w7 = ld64(b + 56);
        CSUM_STEP(a0, w0);
        CSUM_STEP(a1, w1);
        CSUM_STEP(a0, w2);
        CSUM_STEP(a1, w3);
        CSUM_STEP(a0, w4);
        CSUM_STEP(a1, w5);
        CSUM_STEP(a0, w6);
        CSUM_STEP(a1, w7);
    }
    for (; len >= 8; len -= 8, b += 8) {
        uint64_t w = ld64(b);
        CSUM_STEP(a0, w);
    }
    if (len >= 4) {
        a1 += ld32(b);
        b += 4;
        len -= 4;
    }
    if (len >= 2) {
        a0 += (uint32_t)(b[0] | b[1] << 8);
        b += 2;
        len -= 2;
    }
    if (len)
        a1 += b[0]; /* the first byte of a little-endian word */
    uint64_t s = (a0 & 0xffffffffu) + (a0 >> 32) + (a1 & 0xffffffffu) + (a1 >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    return (uint32_t)s;
}
