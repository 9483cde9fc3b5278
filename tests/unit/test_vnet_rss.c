/* The Toeplitz hash against the published verification suite (Microsoft's
 * "Verifying the RSS Hash Calculation", the vectors virtio 1.2
 * s5.1.6.4.3.1's hash follows; also in Intel's 82599 datasheet 7.1.2.8.3)
 * and the RSS config encoding (s5.1.6.5.7.1), byte for byte. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_rss.h"
#include "drivers/virtio/vnet_toeplitz.h"

struct vec {
    int af;
    const char *src, *dst;
    uint16_t sport, dport;
    uint32_t ip, tcp; /* the hash over the addresses, and with the ports */
};

static const struct vec vecs[] = {
    {AF_INET, "66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178},
    {AF_INET, "199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea},
    {AF_INET, "24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a},
    {AF_INET, "38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f},
    {AF_INET, "153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2},
    {AF_INET6, "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x2cc18cd5, 0x40207d3d},
    {AF_INET6, "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0x0f0c461c, 0xdde51bbf},
    {AF_INET6, "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024,
     0x4b61e985, 0x02d1feef},
};

/* Source address, destination address, source port, destination port,
 * all in network order. Returns the bytes of the addresses alone in *alen. */
static size_t tuple(const struct vec *v, uint8_t *in, size_t *alen)
{
    size_t a = v->af == AF_INET ? 4 : 16;
    assert_int_equal(inet_pton(v->af, v->src, in), 1);
    assert_int_equal(inet_pton(v->af, v->dst, in + a), 1);
    uint16_t sp = htons(v->sport), dp = htons(v->dport);
    memcpy(in + 2 * a, &sp, 2);
    memcpy(in + 2 * a + 2, &dp, 2);
    *alen = 2 * a;
    return 2 * a + 4;
}

static void test_toeplitz_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
        uint8_t in[36];
        size_t alen, len = tuple(&vecs[i], in, &alen);
        assert_int_equal(vnet_toeplitz(vnet_rss_key_ms, VNET_RSS_KEY_LEN, in, alen), vecs[i].ip);
        assert_int_equal(vnet_toeplitz(vnet_rss_key_ms, VNET_RSS_KEY_LEN, in, len), vecs[i].tcp);
    }
}

static void test_toeplitz_short_key(void **state)
{
    (void)state;
    uint8_t in[37] = {1};
    /* 37 input bytes need 41 key bytes: refused, not read past the key */
    assert_int_equal(vnet_toeplitz(vnet_rss_key_ms, VNET_RSS_KEY_LEN, in, sizeof(in)), 0);
}

static void test_rss_encoding(void **state)
{
    (void)state;
    struct vnet_rss r;
    vnet_rss_default(&r, 2, 4, 0xffffffffu);
    uint8_t out[64];
    int n = vnet_rss_encode(&r, out, sizeof(out));
    /* le32 hash_types, le16 mask, le16 unclassified, le16 table[4],
     * le16 max_tx_vq, u8 key length, the key */
    static const uint8_t head[] = {0x3f, 0, 0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 40};
    assert_int_equal(n, (int)sizeof(head) + 40);
    assert_memory_equal(out, head, sizeof(head));
    assert_memory_equal(out + sizeof(head), vnet_rss_key_ms, 40);
    /* hash types the device does not support are not asked for */
    vnet_rss_default(&r, 2, 4, VNET_RSS_HASH_TCPV4 | (1u << 8));
    assert_int_equal(vnet_rss_encode(&r, out, sizeof(out)), n);
    assert_int_equal(out[0], VNET_RSS_HASH_TCPV4);
    assert_int_equal(vnet_rss_queue(&r, 0x51ccc178), 0x51ccc178 % 4 % 2);
}

static void test_rss_refused(void **state)
{
    (void)state;
    struct vnet_rss r;
    uint8_t out[512];
    vnet_rss_default(&r, 2, 128, 0x3f);
    assert_int_equal(vnet_rss_encode(&r, out, 100), -EINVAL); /* no room */
    assert_int_equal(vnet_rss_encode(&r, out, sizeof(out)), 4 + 2 + 2 + 256 + 2 + 1 + 40);
    r.table_len = 96; /* not a power of two (the mask would lie) */
    assert_int_equal(vnet_rss_encode(&r, out, sizeof(out)), -EINVAL);
    r.table_len = 128;
    r.table[5] = 2; /* a queue past max_tx_vq */
    assert_int_equal(vnet_rss_encode(&r, out, sizeof(out)), -EINVAL);
    r.table[5] = 1;
    r.key_len = 0;
    assert_int_equal(vnet_rss_encode(&r, out, sizeof(out)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toeplitz_vectors),
        cmocka_unit_test(test_toeplitz_short_key),
        cmocka_unit_test(test_rss_encoding),
        cmocka_unit_test(test_rss_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
