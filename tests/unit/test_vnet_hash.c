/* Hash reports (drivers/virtio/vnet_hash.c): the report type and hash a
 * device owes for a frame, on frames built from Microsoft's published RSS
 * verification vectors (the hashes virtio 1.2 s5.1.6.4.3.1 follows), and
 * the verdict on what a device reported; HASH_CONFIG's encoding
 * (s5.1.6.5.6.4) byte for byte. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_hash.h"
#include "drivers/virtio/vnet_rss.h"

#define ALL VNET_RSS_HASH_OURS

/* An Ethernet frame carrying IP proto from src to dst with the ports
 * (an L4 header of hl bytes); returns its length. */
static uint32_t frame(uint8_t *f, int af, const char *src, const char *dst, uint8_t proto,
                      uint16_t sport, uint16_t dport, uint32_t hl)
{
    memset(f, 0, 128);
    uint32_t l3 = 14, l4;
    if (af == AF_INET) {
        f[12] = 0x08;
        f[l3] = 0x45;
        f[l3 + 9] = proto;
        assert_int_equal(inet_pton(AF_INET, src, f + l3 + 12), 1);
        assert_int_equal(inet_pton(AF_INET, dst, f + l3 + 16), 1);
        l4 = l3 + 20;
    } else {
        f[12] = 0x86;
        f[13] = 0xdd;
        f[l3] = 0x60;
        f[l3 + 6] = proto;
        assert_int_equal(inet_pton(AF_INET6, src, f + l3 + 8), 1);
        assert_int_equal(inet_pton(AF_INET6, dst, f + l3 + 24), 1);
        l4 = l3 + 40;
    }
    uint16_t sp = htons(sport), dp = htons(dport);
    memcpy(f + l4, &sp, 2);
    memcpy(f + l4 + 2, &dp, 2);
    return l4 + hl;
}

static void test_expect_vectors(void **state)
{
    (void)state;
    uint8_t f[128];
    uint32_t v;
    uint32_t n = frame(f, AF_INET, "66.9.149.187", "161.142.100.80", 6, 2794, 1766, 20);
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_TCPv4);
    assert_int_equal(v, 0x51ccc178);
    /* TCPv4 off: the addresses alone */
    assert_int_equal(vnet_hash_expect(f, n, VNET_RSS_HASH_IPV4, &v), VIRTIO_NET_HASH_REPORT_IPv4);
    assert_int_equal(v, 0x323e8fc2);
    assert_int_equal(vnet_hash_expect(f, n, VNET_RSS_HASH_UDPV4, &v), VIRTIO_NET_HASH_REPORT_NONE);
    /* UDP: the same 4-tuple, the same hash */
    n = frame(f, AF_INET, "199.92.111.2", "65.69.140.83", 17, 14230, 4739, 8);
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_UDPv4);
    assert_int_equal(v, 0xc626b0ea);
    /* a fragment has no ports: IPv4 */
    f[14 + 6] = 0x20; /* MF */
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_IPv4);
    assert_int_equal(v, 0xd718262a);
    /* a UDP header cut short: IPv4 */
    n = frame(f, AF_INET, "199.92.111.2", "65.69.140.83", 17, 14230, 4739, 8);
    assert_int_equal(vnet_hash_expect(f, n - 1, ALL, &v), VIRTIO_NET_HASH_REPORT_IPv4);
    n = frame(f, AF_INET6, "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 6, 2794, 1766, 20);
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_TCPv6);
    assert_int_equal(v, 0x40207d3d);
    assert_int_equal(vnet_hash_expect(f, n, VNET_RSS_HASH_IPV6, &v), VIRTIO_NET_HASH_REPORT_IPv6);
    assert_int_equal(v, 0x2cc18cd5);
    n = frame(f, AF_INET6, "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 17, 14230, 4739, 8);
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_UDPv6);
    assert_int_equal(v, 0xdde51bbf);
    /* a hop-by-hop header first: not followed */
    f[14 + 6] = 0;
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VNET_HASH_UNKNOWN);
}

static void test_expect_not_ip(void **state)
{
    (void)state;
    uint8_t f[128];
    uint32_t v = 1;
    uint32_t n = frame(f, AF_INET, "66.9.149.187", "161.142.100.80", 6, 2794, 1766, 20);
    for (uint32_t l = 0; l < 34; l++) /* no full IPv4 header: nothing owed */
        assert_int_equal(vnet_hash_expect(f, l, ALL, &v), VIRTIO_NET_HASH_REPORT_NONE);
    assert_int_equal(v, 0);
    f[12] = 0x08;
    f[13] = 0x06; /* ARP */
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_NONE);
    f[13] = 0;
    f[14] = 0x44; /* IHL 16 bytes */
    assert_int_equal(vnet_hash_expect(f, n, ALL, &v), VIRTIO_NET_HASH_REPORT_NONE);
    /* one 802.1Q tag: the IP header after it */
    uint8_t t[132];
    n = frame(f, AF_INET, "66.9.149.187", "161.142.100.80", 6, 2794, 1766, 20);
    memcpy(t, f, 12);
    t[12] = 0x81;
    t[13] = 0;
    t[14] = 0;
    t[15] = 5;
    memcpy(t + 16, f + 12, n - 12);
    assert_int_equal(vnet_hash_expect(t, n + 4, ALL, &v), VIRTIO_NET_HASH_REPORT_TCPv4);
    assert_int_equal(v, 0x51ccc178);
}

static void test_check_verdicts(void **state)
{
    (void)state;
    uint8_t f[128];
    uint32_t n = frame(f, AF_INET, "24.19.198.95", "12.22.207.184", 6, 12898, 38024, 20);
    const uint32_t good = 0x5c2b394a;
    assert_int_equal(vnet_hash_check(f, n, ALL, good, VIRTIO_NET_HASH_REPORT_TCPv4), VNET_HASH_OK);
    assert_int_equal(vnet_hash_check(f, n, ALL, good ^ 1, VIRTIO_NET_HASH_REPORT_TCPv4),
                     VNET_HASH_BAD_VALUE);
    /* the frame's type is TCPv4, not the addresses alone or UDP */
    assert_int_equal(vnet_hash_check(f, n, ALL, 0xd2d0a5de, VIRTIO_NET_HASH_REPORT_IPv4),
                     VNET_HASH_BAD_TYPE);
    assert_int_equal(vnet_hash_check(f, n, ALL, good, VIRTIO_NET_HASH_REPORT_UDPv4),
                     VNET_HASH_BAD_TYPE);
    /* past the spec's last type, and a type never configured */
    assert_int_equal(vnet_hash_check(f, n, ALL, good, 10), VNET_HASH_BAD_TYPE);
    assert_int_equal(vnet_hash_check(f, n, ALL, good, 0xffff), VNET_HASH_BAD_TYPE);
    assert_int_equal(vnet_hash_check(f, n, ALL, good, VIRTIO_NET_HASH_REPORT_UDPv6_EX),
                     VNET_HASH_BAD_TYPE);
    assert_int_equal(vnet_hash_check(f, n, VNET_RSS_HASH_IPV4, good, VIRTIO_NET_HASH_REPORT_TCPv4),
                     VNET_HASH_BAD_TYPE);
    /* NONE is allowed (s5.1.6.4.4), and told apart */
    assert_int_equal(vnet_hash_check(f, n, ALL, 0, VIRTIO_NET_HASH_REPORT_NONE), VNET_HASH_NONE);
    /* a report for a frame that owes none */
    f[13] = 0x06;
    assert_int_equal(vnet_hash_check(f, n, ALL, good, VIRTIO_NET_HASH_REPORT_TCPv4),
                     VNET_HASH_BAD_TYPE);
}

static void test_hash_config_encoding(void **state)
{
    (void)state;
    struct vnet_rss r;
    vnet_rss_default(&r, 1, 1, 0xffffffffu);
    uint8_t out[64];
    /* le32 hash_types, le16 reserved[4], u8 key length, the key */
    static const uint8_t head[] = {0x3f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40};
    assert_int_equal(vnet_hash_config_encode(&r, out, sizeof(out)), (int)sizeof(head) + 40);
    assert_memory_equal(out, head, sizeof(head));
    assert_memory_equal(out + sizeof(head), vnet_rss_key_ms, 40);
    assert_int_equal(vnet_hash_config_encode(&r, out, 52), -EINVAL);
    r.key_len = 0;
    assert_int_equal(vnet_hash_config_encode(&r, out, sizeof(out)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expect_vectors),
        cmocka_unit_test(test_expect_not_ip),
        cmocka_unit_test(test_check_verdicts),
        cmocka_unit_test(test_hash_config_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
