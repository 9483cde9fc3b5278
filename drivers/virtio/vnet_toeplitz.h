/* The Toeplitz hash of RSS (virtio 1.2 s5.1.6.4.3.1, which takes it from
 * Microsoft's "RSS hashing function"): what the device computes for
 * VIRTIO_NET_F_RSS and VIRTIO_NET_F_HASH_REPORT, so the guest can tell
 * which queue a flow lands on. Pure: unit-tested against the published
 * verification vectors. */
#ifndef VN_VNET_TOEPLITZ_H
#define VN_VNET_TOEPLITZ_H

#include <stddef.h>
#include <stdint.h>

#define VNET_RSS_KEY_LEN 40 /* the key every device takes (s5.1.4: rss_max_key_size >= 40) */

/* Microsoft's verification key, also the driver's RSS key: a fixed key
 * lets the host side compute where each flow lands. */
extern const uint8_t vnet_rss_key_ms[VNET_RSS_KEY_LEN];

/* The hash of len input bytes (network order: source address, destination
 * address, then source and destination port) under key; the key must be
 * at least len + 4 bytes long, else 0 is returned. */
uint32_t vnet_toeplitz(const uint8_t *key, size_t keylen, const uint8_t *in, size_t len);

#endif
