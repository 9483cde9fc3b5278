/* net/net_off.c: which of lwIP's frames ask the device for checksum and
 * segmentation offload (IPv4 and IPv6 TCP), the TSO segment sizes per
 * family, and where a received TCP segment's header is; the decision fed
 * to the driver's header builder (drivers/virtio/vnet_hdr.c) gives the
 * virtio-net header a device needs (gso_type TCPV6 for IPv6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/vnet_hdr.h"
#include "net/net_off.h"

#define TCP_MSS_ 1460 /* lwipopts.h */
#define ALL_TX   (VNET_OFF_TX_CSUM | VNET_OFF_TX_TSO | VNET_OFF_TX_TSO6)

static uint8_t f[0x10000];

/* Ethernet + IPv6 (next header nh) + a 20-byte TCP header, payload
 * bytes after it; the frame's length. */
static uint32_t frame6(uint8_t nh, uint32_t payload)
{
    memset(f, 0, 128);
    f[12] = 0x86, f[13] = 0xdd;
    f[14] = 0x60;
    uint32_t plen = 20 + payload;
    f[18] = (uint8_t)(plen >> 8), f[19] = (uint8_t)plen;
    f[20] = nh;
    f[21] = 64;
    f[22] = 0xfd, f[37] = 2; /* fd00::2 */
    f[38] = 0xfd, f[53] = 1; /* fd00::1 */
    f[54 + 12] = 5 << 4;
    return 54 + plen;
}

static uint32_t frame4(uint8_t proto, uint32_t payload)
{
    memset(f, 0, 128);
    f[12] = 0x08;
    f[14] = 0x45;
    uint32_t tot = 20 + 20 + payload;
    f[16] = (uint8_t)(tot >> 8), f[17] = (uint8_t)tot;
    f[22] = 64, f[23] = proto;
    memcpy(f + 26, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    f[34 + 12] = 5 << 4;
    return 14 + tot;
}

static void tso_sizes(void **state)
{
    (void)state;
    struct net_tso t;
    net_off_tso(1500, TCP_MSS_, false, &t);
    assert_int_equal(t.mss, 1460);
    assert_int_equal(t.send_mss, 44 * 1460); /* what the IPv4-only netif gave */
    net_off_tso(1500, TCP_MSS_, true, &t);
    assert_int_equal(t.mss, 1440); /* RFC 8200: 40-byte header */
    assert_int_equal(t.send_mss, 45 * 1440);
    /* the frame with its Ethernet header fits lwIP's 16-bit pbuf length */
    assert_true(14u + 40 + 20 + t.send_mss <= 0xffff);
    net_off_tso(9000, TCP_MSS_, true, &t);
    assert_int_equal(t.mss, TCP_MSS_);
    assert_true(14u + 40 + 20 + t.send_mss <= 0xffff && t.send_mss % TCP_MSS_ == 0);
    net_off_tso(68, TCP_MSS_, true, &t);
    assert_int_equal(t.mss, 8);
    assert_true(14u + 40 + 20 + t.send_mss <= 0xffff && t.send_mss % 8 == 0);
    net_off_tso(60, TCP_MSS_, true, &t); /* no room past the headers */
    assert_int_equal(t.mss, 0);
    assert_int_equal(t.send_mss, 0);
}

static void tx_decision(void **state)
{
    (void)state;
    struct net_tso t4, t6, none = {0, 0};
    net_off_tso(1500, TCP_MSS_, false, &t4);
    net_off_tso(1500, TCP_MSS_, true, &t6);
    /* IPv6 TCP: checksum; over the MTU, GSO with the IPv6 MSS */
    uint32_t len = frame6(6, 100);
    struct vnet_tx_off o = net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM);
    len = frame6(6, 20000);
    o = net_off_tx(f, 74, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM | VNET_TX_GSO);
    assert_int_equal(o.gso_size, 1440);
    /* without TSO6 negotiated: checksum only (such a frame is not built) */
    o = net_off_tx(f, 74, len, ALL_TX, 1500, &t4, &none);
    assert_int_equal(o.flags, VNET_TX_CSUM);
    /* IPv4 TCP as before: the IPv4 MSS */
    len = frame4(6, 20000);
    o = net_off_tx(f, 54, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM | VNET_TX_GSO);
    assert_int_equal(o.gso_size, 1460);
    /* nothing: UDP (either family), an extension header, no CSUM, TCP
     * header outside the first pbuf */
    len = frame6(17, 100);
    assert_int_equal(net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6).flags, 0);
    len = frame4(17, 100);
    assert_int_equal(net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6).flags, 0);
    len = frame6(0, 100); /* hop-by-hop options */
    assert_int_equal(net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6).flags, 0);
    len = frame6(6, 100);
    assert_int_equal(net_off_tx(f, len, len, VNET_OFF_TX_TSO6, 1500, &t4, &t6).flags, 0);
    assert_int_equal(net_off_tx(f, 60, len, ALL_TX, 1500, &t4, &t6).flags, 0);
    f[14] = 0x40; /* IPv6 ethertype, version 4 */
    assert_int_equal(net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6).flags, 0);
}

/* The decision through the driver's header builder: what a device that
 * offers HOST_TSO6 is handed for a large IPv6 segment. */
static void tx_header_tcpv6(void **state)
{
    (void)state;
    struct net_tso t4, t6;
    net_off_tso(1500, TCP_MSS_, false, &t4);
    net_off_tso(1500, TCP_MSS_, true, &t6);
    uint32_t len = frame6(6, t6.send_mss);
    struct vnet_tx_off o = net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6);
    struct virtio_net_hdr h;
    uint64_t feat = VIRTIO_BIT(VIRTIO_NET_F_CSUM) | VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO6);
    assert_int_equal(vnet_hdr_tx_build(&h, f, len, len, &o, feat), 0);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV6);
    assert_int_equal(h.gso_size, 1440);
    assert_int_equal(h.hdr_len, 74);
    assert_int_equal(h.csum_start, 54);
    assert_int_equal(h.csum_offset, 16);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
}

/* frame4's frame with an 802.1Q tag (VID 100) after the MACs, as lwIP
 * sends it with netif_vlan=; its length. */
static uint32_t frame4_tagged(uint32_t payload)
{
    uint32_t len = frame4(6, payload);
    memmove(f + 16, f + 12, 128);
    f[12] = 0x81, f[13] = 0x00, f[14] = 0, f[15] = 100;
    return len + 4;
}

/* netif_vlan=: the offsets past the tag, the GSO threshold with it. */
static void tx_tagged(void **state)
{
    (void)state;
    struct net_tso t4, t6;
    net_off_tso(1500, TCP_MSS_, false, &t4);
    net_off_tso(1500, TCP_MSS_, true, &t6);
    /* a full 1500-byte IP packet with its tag: 1518 bytes, no GSO */
    uint32_t len = frame4_tagged(1460);
    struct vnet_tx_off o = net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM);
    len = frame4_tagged(t4.send_mss);
    assert_true(len <= 0xffff);
    o = net_off_tx(f, 58, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM | VNET_TX_GSO);
    struct virtio_net_hdr h;
    uint64_t feat = VIRTIO_BIT(VIRTIO_NET_F_CSUM) | VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO4);
    assert_int_equal(vnet_hdr_tx_build(&h, f, 58, len, &o, feat), 0);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(h.csum_start, 38);
    assert_int_equal(h.hdr_len, 58);
    uint32_t l4off, l4len;
    bool v6;
    len = frame4_tagged(1000);
    assert_int_equal(net_off_rx_tcp(f, len, len, &l4off, &l4len, &v6), 0);
    assert_int_equal(l4off, 38);
    assert_int_equal(l4len, 1020);
    assert_int_equal(net_off_rx_tcp(f, 17, len, &l4off, &l4len, &v6), -1); /* tag cut off */
}

/* frame4_tagged's frame with an 802.1ad service tag (VID 200) in front
 * of its 802.1Q one; its length. */
static uint32_t qinq(uint32_t payload)
{
    uint32_t len = frame4_tagged(payload);
    memmove(f + 16, f + 12, len - 12);
    f[12] = 0x88, f[13] = 0xa8, f[14] = 0, f[15] = 200;
    return len + 4;
}

/* netif_svlan=: an 802.1ad service tag (VID 200) in front of lwIP's
 * 802.1Q one, as net_linkoutput sends it: the offsets past both, the
 * GSO threshold with them, the driver's header the same; an 802.1ad tag
 * without the 802.1Q one inside is not offloaded. */
static void tx_qinq(void **state)
{
    (void)state;
    struct net_tso t4, t6;
    net_off_tso(1500, TCP_MSS_, false, &t4);
    net_off_tso(1500, TCP_MSS_, true, &t6);
    uint32_t len = qinq(1460); /* 1522 bytes: the MTU's packet and two tags, no GSO */
    struct vnet_tx_off o = net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM);
    o = net_off_tx(f, 62, len + 1, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM | VNET_TX_GSO);
    len = qinq(t4.send_mss);
    assert_true(len <= 0xffff);
    o = net_off_tx(f, 62, len, ALL_TX, 1500, &t4, &t6);
    assert_int_equal(o.flags, VNET_TX_CSUM | VNET_TX_GSO);
    struct virtio_net_hdr h;
    uint64_t feat = VIRTIO_BIT(VIRTIO_NET_F_CSUM) | VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO4);
    assert_int_equal(vnet_hdr_tx_build(&h, f, 62, len, &o, feat), 0);
    assert_int_equal(h.csum_start, 42);
    assert_int_equal(h.hdr_len, 62);
    assert_int_equal(net_off_tx(f, 19, len, ALL_TX, 1500, &t4, &t6).flags, 0); /* cut off */
    f[16] = 0x08, f[17] = 0x00; /* 802.1ad, then IPv4: not lwIP's */
    assert_int_equal(net_off_tx(f, len, len, ALL_TX, 1500, &t4, &t6).flags, 0);
}

/* QinQ's tag comes off lwIP's MTU (1496: MSS 1456) while the host asks
 * for 1460: TSO still goes on, cutting to 1456, and every segment the
 * device cuts fits the MTU with both tags; a peer asking for less keeps
 * its MSS, and so does every connection without TSO. */
static void send_mss(void **state)
{
    (void)state;
    struct net_tso t, none = {0, 0};
    net_off_tso(1496, TCP_MSS_, false, &t);
    assert_int_equal(t.mss, 1456);
    assert_int_equal(net_off_send_mss(&t, 1460), t.send_mss);
    assert_int_equal(net_off_send_mss(&t, 1456), t.send_mss);
    assert_int_equal(net_off_send_mss(&t, 1400), 1400);
    assert_int_equal(net_off_send_mss(&none, 1460), 1460);
    uint32_t len = qinq(t.send_mss);
    struct vnet_tx_off o = net_off_tx(f, 62, len, ALL_TX, 1496, &t, &none);
    assert_int_equal(o.flags, VNET_TX_CSUM | VNET_TX_GSO);
    assert_int_equal(o.gso_size, 1456);
    assert_int_equal(22u + 40 + o.gso_size, 1496u + 22);
}

static void rx_tcp(void **state)
{
    (void)state;
    uint32_t l4off, l4len;
    bool v6;
    uint32_t len = frame6(6, 1000);
    assert_int_equal(net_off_rx_tcp(f, len, len, &l4off, &l4len, &v6), 0);
    assert_true(v6);
    assert_int_equal(l4off, 54);
    assert_int_equal(l4len, 1020);
    /* the headers in the first buffer, the rest in others */
    assert_int_equal(net_off_rx_tcp(f, 74, len, &l4off, &l4len, &v6), 0);
    assert_int_equal(net_off_rx_tcp(f, 53, len, &l4off, &l4len, &v6), -1);
    /* a payload length past the frame */
    assert_int_equal(net_off_rx_tcp(f, len - 1, len - 1, &l4off, &l4len, &v6), -1);
    len = frame6(17, 10);
    assert_int_equal(net_off_rx_tcp(f, len, len, &l4off, &l4len, &v6), -1);
    len = frame4(6, 1000);
    assert_int_equal(net_off_rx_tcp(f, len, len, &l4off, &l4len, &v6), 0);
    assert_false(v6);
    assert_int_equal(l4off, 34);
    assert_int_equal(l4len, 1020);
    f[20] = 0x20; /* more fragments: lwIP checks after reassembly */
    assert_int_equal(net_off_rx_tcp(f, len, len, &l4off, &l4len, &v6), -1);
    len = frame4(6, 0);
    f[14] = 0x44; /* IHL 16 bytes */
    assert_int_equal(net_off_rx_tcp(f, len, len, &l4off, &l4len, &v6), -1);
    assert_int_equal(net_off_rx_tcp(f, 10, 10, &l4off, &l4len, &v6), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tso_sizes),       cmocka_unit_test(tx_decision),
        cmocka_unit_test(tx_header_tcpv6), cmocka_unit_test(rx_tcp),
        cmocka_unit_test(tx_tagged),       cmocka_unit_test(tx_qinq),
        cmocka_unit_test(send_mss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
