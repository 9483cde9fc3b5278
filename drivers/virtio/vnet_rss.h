/* The RSS configuration a driver sends (VIRTIO_NET_CTRL_MQ_RSS_CONFIG,
 * virtio 1.2 s5.1.6.5.7.1) and its encoding into the spec's layout. Pure:
 * unit-tested byte for byte. */
#ifndef VN_VNET_RSS_H
#define VN_VNET_RSS_H

#include <stddef.h>
#include <stdint.h>

#include "drivers/virtio/vnet_toeplitz.h"

/* Hash types, s5.1.6.4.3.1 (VIRTIO_NET_RSS_HASH_TYPE_*) */
#define VNET_RSS_HASH_IPV4  (1u << 0)
#define VNET_RSS_HASH_TCPV4 (1u << 1)
#define VNET_RSS_HASH_UDPV4 (1u << 2)
#define VNET_RSS_HASH_IPV6  (1u << 3)
#define VNET_RSS_HASH_TCPV6 (1u << 4)
#define VNET_RSS_HASH_UDPV6 (1u << 5)
#define VNET_RSS_HASH_OURS  0x3fu /* without the extension-header types */

#define VNET_RSS_TABLE_MAX 128 /* entries we send at most (Linux's default too) */

/* Where the RSS fields sit in the device config, s5.1.4 */
#define VNET_CFG_RSS_MAX_KEY   17 /* u8 rss_max_key_size */
#define VNET_CFG_RSS_MAX_TABLE 18 /* le16 rss_max_indirection_table_length */
#define VNET_CFG_HASH_TYPES    20 /* le32 supported_hash_types */

struct vnet_rss {
    uint32_t hash_types;
    uint16_t table_len; /* a power of two, 1..VNET_RSS_TABLE_MAX */
    uint16_t table[VNET_RSS_TABLE_MAX];
    uint16_t unclassified; /* queue for frames no hash type covers */
    uint16_t max_tx_vq;
    uint8_t key_len;
    uint8_t key[VNET_RSS_KEY_LEN];
};

/* The configuration for npairs queue pairs: entry i of a table of
 * table_len (a power of two) names queue i % npairs, the Microsoft key,
 * our hash types that the device supports. */
void vnet_rss_default(struct vnet_rss *r, uint16_t npairs, uint16_t table_len, uint32_t supported);

/* struct virtio_net_rss_config (s5.1.6.5.7.1), little-endian, into out:
 * the bytes written, or -EINVAL (table length not a power of two, an
 * entry not below max_tx_vq, no key, cap too small). */
int vnet_rss_encode(const struct vnet_rss *r, uint8_t *out, size_t cap);

/* struct virtio_net_hash_config (s5.1.6.5.6.4): r's hash types and key,
 * little-endian, into out: the bytes written, or -EINVAL (no key, a key
 * longer than ours, cap too small). */
int vnet_hash_config_encode(const struct vnet_rss *r, uint8_t *out, size_t cap);

/* The receive queue the device picks for a hash (s5.1.6.4.3). */
static inline uint16_t vnet_rss_queue(const struct vnet_rss *r, uint32_t hash)
{
    return r->table[hash & (uint32_t)(r->table_len - 1)];
}

#endif
