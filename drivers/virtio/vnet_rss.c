/* RSS configuration: its default and its encoding (virtio 1.2
 * s5.1.6.5.7.1). */
#include "drivers/virtio/vnet_rss.h"

#include <errno.h>
#include <string.h>

void vnet_rss_default(struct vnet_rss *r, uint16_t npairs, uint16_t table_len, uint32_t supported)
{
    memset(r, 0, sizeof(*r));
    r->hash_types = VNET_RSS_HASH_OURS & supported;
    r->table_len = table_len;
    for (uint16_t i = 0; i < table_len && i < VNET_RSS_TABLE_MAX; i++)
        r->table[i] = (uint16_t)(i % npairs);
    r->max_tx_vq = npairs;
    r->key_len = VNET_RSS_KEY_LEN;
    memcpy(r->key, vnet_rss_key_ms, VNET_RSS_KEY_LEN);
}

static uint8_t *vnet_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static int vnet_rss_check(const struct vnet_rss *r, size_t cap)
{
    size_t need = 4 + 2 + 2 + 2u * r->table_len + 2 + 1 + r->key_len;
    if (!r->table_len || r->table_len > VNET_RSS_TABLE_MAX || (r->table_len & (r->table_len - 1)))
        return -EINVAL;
    if (!r->key_len || r->key_len > VNET_RSS_KEY_LEN || !r->max_tx_vq || need > cap)
        return -EINVAL;
    for (unsigned i = 0; i < r->table_len; i++)
        if (r->table[i] >= r->max_tx_vq)
            return -EINVAL;
    return r->unclassified < r->max_tx_vq ? (int)need : -EINVAL;
}

int vnet_hash_config_encode(const struct vnet_rss *r, uint8_t *out, size_t cap)
{
    size_t need = 4 + 8 + 1 + (size_t)r->key_len;
    if (!r->key_len || r->key_len > VNET_RSS_KEY_LEN || need > cap)
        return -EINVAL;
    uint8_t *p = vnet_put16(out, (uint16_t)r->hash_types);
    p = vnet_put16(p, (uint16_t)(r->hash_types >> 16));
    memset(p, 0, 8); /* le16 reserved[4] */
    p += 8;
    *p++ = r->key_len;
    memcpy(p, r->key, r->key_len);
    return (int)need;
}

int vnet_rss_encode(const struct vnet_rss *r, uint8_t *out, size_t cap)
{
    int need = vnet_rss_check(r, cap);
    if (need < 0)
        return need;
    uint8_t *p = vnet_put16(out, (uint16_t)r->hash_types);
    p = vnet_put16(p, (uint16_t)(r->hash_types >> 16));
    p = vnet_put16(p, (uint16_t)(r->table_len - 1)); /* indirection_table_mask */
    p = vnet_put16(p, r->unclassified);
    for (unsigned i = 0; i < r->table_len; i++)
        p = vnet_put16(p, r->table[i]);
    p = vnet_put16(p, r->max_tx_vq);
    *p++ = r->key_len;
    memcpy(p, r->key, r->key_len);
    return need;
}
