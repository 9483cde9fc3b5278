/* Toeplitz hash (virtio 1.2 s5.1.6.4.3.1): for every set bit i of the
 * input, XOR in the 32 key bits starting at key bit i. */
#include "drivers/virtio/vnet_toeplitz.h"

const uint8_t vnet_rss_key_ms[VNET_RSS_KEY_LEN] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint32_t vnet_toeplitz(const uint8_t *key, size_t keylen, const uint8_t *in, size_t len)
{
    if (keylen < len + 4)
        return 0;
    uint32_t hash = 0;
    /* window: the 32 key bits at the current input bit, shifted left one
     * bit per input bit with the next key bit coming in */
    uint32_t window =
        (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
    for (size_t i = 0; i < len; i++) {
        uint8_t next = key[i + 4];
        for (int b = 7; b >= 0; b--) {
            if (in[i] & (1u << b))
                hash ^= window;
            /* the top bit leaves the window (masked: no shift past 32 bits) */
            window = (window & 0x7fffffffu) << 1 | ((next >> b) & 1u);
        }
    }
    return hash;
}
