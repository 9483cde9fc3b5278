/* drivers/virtio/vnet_hdr.c: the TX header for checksum and segmentation
 * offload (IPv4 and IPv6 TCP, UDP), checked by doing what a device does
 * with it (finish the checksum; cut GSO frames the way Linux's
 * tcp_gso_segment and __udp_gso_segment do) and verifying every result
 * against an independent RFC 1071 reference; and every malformed RX
 * header. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/vnet_hdr.h"
#include "ref_csum.h"

#define F(b)   VIRTIO_BIT(VIRTIO_NET_F_##b)
#define ALL_TX (F(CSUM) | F(HOST_TSO4) | F(HOST_TSO6))
#define ALL_RX (F(GUEST_CSUM) | F(GUEST_TSO4) | F(GUEST_TSO6))
#define USO_TX (F(CSUM) | F(HOST_USO))
#define BIG    (70 * 1024)

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static uint32_t get16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

/* Ethernet + IPv4/IPv6 + TCP (20-byte header) or UDP, pay bytes of a
 * pattern. Returns the L4 offset. */
static uint32_t build(uint8_t *f, bool v6, uint8_t proto, uint32_t pay, uint32_t *len)
{
    memset(f, 0, 128);
    memset(f, 0x52, 12);
    uint32_t l4 = v6 ? 54 : 34, l4h = proto == 6 ? 20 : 8, l4len = l4h + pay;
    if (v6) {
        put16(f + 12, 0x86dd);
        f[14] = 0x60;
        put16(f + 18, l4len);
        f[20] = proto;
        f[21] = 64;
        for (int i = 0; i < 32; i++)
            f[22 + i] = (uint8_t)(0x20 + i * 7);
    } else {
        put16(f + 12, 0x0800);
        f[14] = 0x45;
        put16(f + 16, 20 + l4len);
        put16(f + 18, 0x1234);
        f[22] = 64;
        f[23] = proto;
        memcpy(f + 26, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    }
    put16(f + l4, 40000);
    put16(f + l4 + 2, 5001);
    if (proto == 6) {
        memcpy(f + l4 + 4, "\x10\x20\x30\x40\x00\x00\x00\x01", 8);
        f[l4 + 12] = 5 << 4;
        f[l4 + 13] = 0x18; /* PSH ACK */
        put16(f + l4 + 14, 65535);
    } else {
        put16(f + l4 + 4, l4len);
    }
    for (uint32_t i = 0; i < pay; i++)
        f[l4 + l4h + i] = (uint8_t)(i * 13 + 7);
    *len = l4 + l4len;
    return l4;
}

/* The full L4 checksum of a frame, with the field as it is: 0 when right. */
static uint16_t ref_verify(const uint8_t *f, bool v6, uint32_t l4, uint32_t len)
{
    uint8_t proto = v6 ? f[20] : f[23];
    uint64_t s = v6 ? ref_sum(f + 22, 32, 0) : ref_sum(f + 26, 8, 0);
    return (uint16_t)~ref_fold(ref_sum(f + l4, len - l4, s + proto + (len - l4)));
}

/* What the device does with NEEDS_CSUM: sum from csum_start to the end
 * (the field holds the seed) and store the complement at csum_offset. */
static void dev_finish(uint8_t *f, uint32_t len, const struct virtio_net_hdr *h)
{
    uint32_t s = ref_fold(ref_sum(f + h->csum_start, len - h->csum_start, 0));
    put16(f + h->csum_start + h->csum_offset, (uint16_t)~s);
}

static void check_csum_only(bool v6, uint8_t proto)
{
    static uint8_t f[2048];
    uint32_t len, l4 = build(f, v6, proto, 1001, &len);
    struct virtio_net_hdr h;
    memset(&h, 0xee, sizeof(h));
    struct vnet_tx_off off = {VNET_TX_CSUM, 0};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, F(CSUM)), 0);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
    assert_int_equal(h.csum_start, l4);
    assert_int_equal(h.csum_offset, proto == 6 ? 16 : 6);
    assert_int_equal(h.gso_size, 0);
    assert_int_equal(h.num_buffers, 0);
    dev_finish(f, len, &h);
    assert_int_equal(ref_verify(f, v6, l4, len), 0);
}

static void test_csum_tcp4(void **state)
{
    (void)state;
    check_csum_only(false, 6);
}
static void test_csum_tcp6(void **state)
{
    (void)state;
    check_csum_only(true, 6);
}
static void test_csum_udp4(void **state)
{
    (void)state;
    check_csum_only(false, 17);
}
static void test_csum_udp6(void **state)
{
    (void)state;
    check_csum_only(true, 17);
}

/* Cuts a GSO frame the way Linux's tcp_gso_segment does: each segment
 * gets the headers, its IP length and sequence number, and a checksum
 * finished from the seed adjusted by (segment length - frame length). */
static void dev_segment(const uint8_t *f, uint32_t len, const struct virtio_net_hdr *h, bool v6)
{
    static uint8_t seg[2048];
    uint32_t hl = h->hdr_len, l4 = h->csum_start, pay = len - hl, off = 0, n = 0;
    uint32_t seq = (uint32_t)get16(f + l4 + 4) << 16 | get16(f + l4 + 6);
    while (off < pay) {
        uint32_t m = pay - off < h->gso_size ? pay - off : h->gso_size;
        memcpy(seg, f, hl);
        memcpy(seg + hl, f + hl + off, m);
        if (v6)
            put16(seg + 18, hl - 54 + m);
        else
            put16(seg + 16, hl - 14 + m);
        put16(seg + l4 + 4, (seq + off) >> 16);
        put16(seg + l4 + 6, (seq + off) & 0xffff);
        /* seed - old L4 length + new L4 length, one's complement */
        put16(seg + l4 + 16,
              ref_fold(get16(seg + l4 + 16) + (uint16_t) ~(len - l4) + (hl - l4 + m)));
        uint32_t s = ref_fold(ref_sum(seg + l4, hl - l4 + m, 0));
        put16(seg + l4 + 16, (uint16_t)~s);
        assert_int_equal(ref_verify(seg, v6, l4, hl + m), 0);
        off += m;
        n++;
    }
    assert_int_equal(n, (pay + h->gso_size - 1) / h->gso_size);
}

static void check_gso(bool v6)
{
    static uint8_t f[BIG];
    uint32_t len, l4 = build(f, v6, 6, 44 * 1460, &len);
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {VNET_TX_GSO | VNET_TX_CSUM, 1460};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, ALL_TX), 0);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.gso_type, v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(h.gso_size, 1460);
    assert_int_equal(h.hdr_len, l4 + 20);
    assert_int_equal(h.csum_start, l4);
    assert_int_equal(h.csum_offset, 16);
    dev_segment(f, len, &h, v6);
    /* unsegmented (a host that takes the frame whole): also right */
    dev_finish(f, len, &h);
    assert_int_equal(ref_verify(f, v6, l4, len), 0);
}

static void test_gso_tcp4(void **state)
{
    (void)state;
    check_gso(false);
}
static void test_gso_tcp6(void **state)
{
    (void)state;
    check_gso(true);
}

static void expect_tx(uint8_t *f, uint32_t head, uint32_t len, uint8_t flags, uint16_t mss,
                      uint64_t feat, int want);

/* Cuts a UDP_L4 frame the way Linux's __udp_gso_segment does: each
 * segment gets the headers, its IP and UDP length, and a checksum
 * finished from the seed adjusted by (segment length - frame length).
 * Returns the segments; the last one's payload in *last. */
static uint32_t dev_segment_udp(const uint8_t *f, uint32_t len, const struct virtio_net_hdr *h,
                                bool v6, uint32_t *last)
{
    static uint8_t seg[2048];
    uint32_t hl = h->hdr_len, l4 = h->csum_start, pay = len - hl, off = 0, n = 0;
    assert_int_equal(hl, l4 + 8);
    while (off < pay) {
        uint32_t m = pay - off < h->gso_size ? pay - off : h->gso_size;
        memcpy(seg, f, hl);
        memcpy(seg + hl, f + hl + off, m);
        put16(v6 ? seg + 18 : seg + 16, v6 ? 8 + m : 28 + m);
        put16(seg + l4 + 4, 8 + m);
        put16(seg + l4 + 6, ref_fold(get16(seg + l4 + 6) + (uint16_t) ~(len - l4) + (8 + m)));
        uint32_t s = ref_fold(ref_sum(seg + l4, 8 + m, 0));
        put16(seg + l4 + 6, (uint16_t)~s);
        assert_int_equal(ref_verify(seg, v6, l4, hl + m), 0);
        *last = m;
        off += m;
        n++;
    }
    return n;
}

/* HOST_USO (virtio 1.2 s5.1.6.2): one gso_type, UDP_L4, for IPv4 and
 * IPv6; an 8192-byte payload in 1400-byte segments is 5 + 1192. */
static void check_uso(bool v6)
{
    static uint8_t f[16384];
    uint32_t len, l4 = build(f, v6, 17, 8192, &len), last = 0;
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {VNET_TX_GSO | VNET_TX_CSUM, 1400};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, USO_TX), 0);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_UDP_L4);
    assert_int_equal(h.gso_size, 1400);
    assert_int_equal(h.hdr_len, l4 + 8);
    assert_int_equal(h.csum_start, l4);
    assert_int_equal(h.csum_offset, 6);
    assert_int_equal(dev_segment_udp(f, len, &h, v6, &last), 6);
    assert_int_equal(last, 1192);
    dev_finish(f, len, &h);
    assert_int_equal(ref_verify(f, v6, l4, len), 0);
}

static void test_uso4(void **state)
{
    (void)state;
    check_uso(false);
}
static void test_uso6(void **state)
{
    (void)state;
    check_uso(true);
}

/* USO needs HOST_USO (and CSUM); TSO's features do not give it, nor
 * USO TSO's. */
static void test_uso_refused(void **state)
{
    (void)state;
    static uint8_t f[16384];
    uint32_t len;
    build(f, false, 17, 8192, &len);
    expect_tx(f, 128, len, VNET_TX_GSO, 1400, ALL_TX, -EOPNOTSUPP);
    expect_tx(f, 128, len, VNET_TX_GSO, 1400, F(HOST_USO), -EOPNOTSUPP);
    expect_tx(f, 128, len, VNET_TX_GSO, 0, USO_TX, -EINVAL);
    expect_tx(f, 128, len + 4, VNET_TX_GSO, 1400, USO_TX, -EINVAL); /* GSO with a tail */
    build(f, false, 6, 8192, &len);
    expect_tx(f, 128, len, VNET_TX_GSO, 1400, USO_TX, -EOPNOTSUPP); /* TCP, no TSO4 */
}

/* The largest IPv4 frame: 65535 bytes of IP, a short last segment. */
static void test_gso_max(void **state)
{
    (void)state;
    static uint8_t f[BIG];
    uint32_t len, l4 = build(f, false, 6, 65535 - 40, &len);
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {VNET_TX_GSO, 1448};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 54, len, &off, ALL_TX), 0);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    dev_segment(f, len, &h, false);
    (void)l4;
}

/* A GSO request whose payload fits one segment: checksum only. */
static void test_gso_one_segment(void **state)
{
    (void)state;
    static uint8_t f[2048];
    uint32_t len, l4 = build(f, false, 6, 1460, &len);
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {VNET_TX_GSO, 1460};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, F(CSUM)), 0);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
    assert_int_equal(h.gso_size, 0);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    dev_finish(f, len, &h);
    assert_int_equal(ref_verify(f, false, l4, len), 0);
}

static void test_ecn(void **state)
{
    (void)state;
    static uint8_t f[8192];
    uint32_t len, l4 = build(f, false, 6, 4000, &len);
    f[l4 + 13] |= 0x80; /* CWR */
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {VNET_TX_GSO, 1000};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, ALL_TX), -EOPNOTSUPP);
    assert_int_equal(h.flags | h.gso_type | h.csum_start, 0);
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, ALL_TX | F(HOST_ECN)), 0);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN);
}

static void test_tx_none(void **state)
{
    (void)state;
    static uint8_t f[2048], copy[2048];
    uint32_t len;
    build(f, false, 6, 100, &len);
    memcpy(copy, f, sizeof(f));
    struct virtio_net_hdr h;
    memset(&h, 0xee, sizeof(h));
    struct vnet_tx_off off = {0, 0};
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, &off, ALL_TX), 0);
    static const struct virtio_net_hdr zero;
    assert_memory_equal(&h, &zero, sizeof(h));
    assert_memory_equal(f, copy, sizeof(f)); /* the frame is not touched */
    assert_int_equal(vnet_hdr_tx_build(&h, f, 128, len, NULL, ALL_TX), 0);
}

/* Every refusal leaves an all-zero header and a reason. */
static void expect_tx(uint8_t *f, uint32_t head, uint32_t len, uint8_t flags, uint16_t mss,
                      uint64_t feat, int want)
{
    struct virtio_net_hdr h;
    memset(&h, 0xee, sizeof(h));
    struct vnet_tx_off off = {flags, mss};
    assert_int_equal(vnet_hdr_tx_build(&h, f, head, len, &off, feat), want);
    static const struct virtio_net_hdr zero;
    assert_memory_equal(&h, &zero, sizeof(h));
}

static void test_tx_refused(void **state)
{
    (void)state;
    static uint8_t f[8192];
    uint32_t len;
    build(f, false, 6, 4000, &len);
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, 0, -EOPNOTSUPP);         /* no CSUM */
    expect_tx(f, 128, len, VNET_TX_GSO, 1000, F(CSUM), -EOPNOTSUPP); /* no TSO4 */
    expect_tx(f, 128, len, VNET_TX_GSO, 0, ALL_TX, -EINVAL);         /* no MSS */
    expect_tx(f, 53, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);         /* TCP header cut */
    expect_tx(f, 128, len - 1, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);    /* IP longer */
    expect_tx(f, 128, len + 4, VNET_TX_GSO, 1000, ALL_TX, -EINVAL);  /* GSO with a tail */
    expect_tx(f, len + 1, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);    /* head > len */
    f[20] = 0x20;                                                    /* MF: a fragment */
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);
    f[20] = 0;
    f[14] = 0x44; /* IHL 4 */
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);
    f[14] = 0x45;
    f[46] = 4 << 4; /* TCP data offset 4 */
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);
    f[46] = 5 << 4;
    f[23] = 1; /* ICMP */
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);
    f[23] = 6;
    put16(f + 12, 0x0806); /* ARP */
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);
    build(f, true, 6, 4000, &len);
    expect_tx(f, 128, len, VNET_TX_GSO, 1000, F(CSUM) | F(HOST_TSO4), -EOPNOTSUPP); /* no TSO6 */
    f[20] = 0; /* IPv6 hop-by-hop extension header */
    expect_tx(f, 128, len, VNET_TX_CSUM, 0, ALL_TX, -EINVAL);
    build(f, false, 17, 4000, &len);
    expect_tx(f, 128, len, VNET_TX_GSO, 1000, ALL_TX, -EOPNOTSUPP); /* no HOST_USO */
}

/* One VLAN tag in front of IPv4. */
static void test_csum_vlan(void **state)
{
    (void)state;
    static uint8_t f[2048], g[2048];
    uint32_t len;
    build(f, false, 6, 300, &len);
    memcpy(g, f, 12);
    put16(g + 12, 0x8100);
    put16(g + 14, 5);
    memcpy(g + 16, f + 12, len - 12);
    struct virtio_net_hdr h;
    struct vnet_tx_off off = {VNET_TX_CSUM, 0};
    assert_int_equal(vnet_hdr_tx_build(&h, g, 128, len + 4, &off, F(CSUM)), 0);
    assert_int_equal(h.csum_start, 38);
    dev_finish(g, len + 4, &h);
    memcpy(f + 12, g + 16, len - 12);
    assert_int_equal(ref_verify(f, false, 34, len), 0);
}

/* ---- RX */
static enum vnet_hdr_bad rx(uint8_t flags, uint8_t type, uint16_t hlen, uint16_t mss,
                            uint16_t start, uint16_t coff, uint32_t len, uint64_t feat,
                            struct vnet_rx_off *o)
{
    struct virtio_net_hdr h = {flags, type, hlen, mss, start, coff, 1};
    memset(o, 0xee, sizeof(*o));
    return vnet_hdr_rx_check(&h, len, 1518, feat, o);
}

static void test_rx_good(void **state)
{
    (void)state;
    struct vnet_rx_off o;
    assert_int_equal(rx(0, 0, 0, 0, 0, 0, 1514, 0, &o), VNET_HDR_OK);
    assert_int_equal(o.csum, VNET_RX_CSUM_NONE);
    assert_int_equal(o.gso_type, VIRTIO_NET_HDR_GSO_NONE);
    assert_int_equal(rx(VIRTIO_NET_HDR_F_DATA_VALID, 0, 0, 0, 7, 9, 1514, ALL_RX, &o), VNET_HDR_OK);
    assert_int_equal(o.csum, VNET_RX_CSUM_VALID);
    assert_int_equal(o.csum_start | o.csum_offset, 0); /* not used without NEEDS_CSUM */
    assert_int_equal(rx(1, 0, 0, 0, 34, 16, 1514, ALL_RX, &o), VNET_HDR_OK);
    assert_int_equal(o.csum, VNET_RX_CSUM_PARTIAL);
    assert_int_equal(o.csum_start, 34);
    assert_int_equal(o.csum_offset, 16);
    assert_int_equal(rx(1, 1, 54, 1448, 34, 16, 65000, ALL_RX, &o), VNET_HDR_OK);
    assert_int_equal(o.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(o.gso_size, 1448);
    assert_int_equal(rx(1, 4, 74, 1440, 54, 16, VNET_GSO_FRAME_MAX, ALL_RX, &o), VNET_HDR_OK);
    assert_int_equal(o.gso_type, VIRTIO_NET_HDR_GSO_TCPV6);
    assert_int_equal(rx(1, 0x81, 54, 1448, 34, 16, 9000, ALL_RX | F(GUEST_ECN), &o), VNET_HDR_OK);
    assert_int_equal(o.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    /* flag bits we do not know are ignored (s5.1.6.4.2) */
    assert_int_equal(rx(0x40, 0, 0, 0, 0, 0, 100, 0, &o), VNET_HDR_OK);
    /* the last two bytes of the frame are the field */
    assert_int_equal(rx(1, 0, 0, 0, 34, 1478, 1514, ALL_RX, &o), VNET_HDR_OK);
}

/* GUEST_USO4/6 (s5.1.6.4.1): UDP_L4 frames, one type for both. */
static void test_rx_uso(void **state)
{
    (void)state;
    struct vnet_rx_off o;
    const uint64_t u4 = F(GUEST_CSUM) | F(GUEST_USO4), u6 = F(GUEST_CSUM) | F(GUEST_USO6);
    assert_int_equal(rx(1, 5, 42, 1400, 34, 6, 8234, u4, &o), VNET_HDR_OK);
    assert_int_equal(o.gso_type, VIRTIO_NET_HDR_GSO_UDP_L4);
    assert_int_equal(o.gso_size, 1400);
    assert_int_equal(o.csum, VNET_RX_CSUM_PARTIAL);
    assert_int_equal(rx(1, 5, 62, 1400, 54, 6, VNET_GSO_FRAME_MAX, u6, &o), VNET_HDR_OK);
    assert_int_equal(o.gso_type, VIRTIO_NET_HDR_GSO_UDP_L4);
    struct {
        uint8_t flags, type;
        uint16_t hlen, mss, start, coff;
        uint32_t len;
        uint64_t feat;
        enum vnet_hdr_bad want;
    } c[] = {
        {1, 5, 42, 1400, 34, 6, 8234, ALL_RX, VNET_HDR_BAD_GSO_TYPE},     /* TSO is not USO */
        {1, 5, 42, 1400, 34, 6, 8234, F(GUEST_USO4), VNET_HDR_BAD_FLAGS}, /* no GUEST_CSUM */
        {1, 0x85, 42, 1400, 34, 6, 8234, u4 | F(GUEST_ECN), VNET_HDR_BAD_GSO_TYPE}, /* ECN */
        {2, 5, 42, 1400, 34, 6, 8234, u4, VNET_HDR_BAD_GSO_TYPE}, /* no NEEDS_CSUM */
        {1, 5, 42, 0, 34, 6, 8234, u6, VNET_HDR_BAD_GSO_SIZE},
        {1, 5, 8235, 1400, 34, 6, 8234, u4, VNET_HDR_BAD_HDR_LEN},
        {1, 5, 42, 1400, 34, 8199, 8234, u4, VNET_HDR_BAD_CSUM},
        {1, 5, 42, 1400, 34, 6, VNET_GSO_FRAME_MAX + 1, u4, VNET_HDR_BAD_LEN},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        enum vnet_hdr_bad r = rx(c[i].flags, c[i].type, c[i].hlen, c[i].mss, c[i].start, c[i].coff,
                                 c[i].len, c[i].feat, &o);
        if (r != c[i].want)
            fail_msg("case %zu: got %s, want %s", i, vnet_hdr_bad_name[r],
                     vnet_hdr_bad_name[c[i].want]);
    }
}

static void test_rx_malformed(void **state)
{
    (void)state;
    struct vnet_rx_off o;
    const uint64_t A = ALL_RX;
    struct {
        uint8_t flags, type;
        uint16_t hlen, mss, start, coff;
        uint32_t len;
        uint64_t feat;
        enum vnet_hdr_bad want;
    } c[] = {
        {1, 0, 0, 0, 34, 16, 1514, 0, VNET_HDR_BAD_FLAGS},                    /* no GUEST_CSUM */
        {2, 0, 0, 0, 0, 0, 1514, F(GUEST_TSO4), VNET_HDR_BAD_FLAGS},          /* DATA_VALID */
        {4, 0, 0, 0, 0, 0, 1514, A, VNET_HDR_BAD_FLAGS},                      /* RSC_INFO */
        {1, 1, 54, 1448, 34, 16, 9000, F(GUEST_CSUM), VNET_HDR_BAD_GSO_TYPE}, /* no TSO4 */
        {1, 4, 74, 1448, 54, 16, 9000, F(GUEST_CSUM) | F(GUEST_TSO4), VNET_HDR_BAD_GSO_TYPE},
        {1, 3, 42, 1448, 34, 6, 9000, A, VNET_HDR_BAD_GSO_TYPE},     /* UDP (UFO) */
        {1, 5, 42, 1448, 34, 6, 9000, A, VNET_HDR_BAD_GSO_TYPE},     /* UDP_L4 */
        {1, 2, 54, 1448, 34, 16, 9000, A, VNET_HDR_BAD_GSO_TYPE},    /* unknown */
        {1, 0x81, 54, 1448, 34, 16, 9000, A, VNET_HDR_BAD_GSO_TYPE}, /* ECN, no GUEST_ECN */
        {1, 0x80, 0, 0, 34, 16, 1514, A | F(GUEST_ECN), VNET_HDR_BAD_GSO_TYPE}, /* ECN alone */
        {2, 1, 54, 1448, 0, 0, 9000, A, VNET_HDR_BAD_GSO_TYPE}, /* GSO, no NEEDS_CSUM */
        {1, 1, 54, 0, 34, 16, 9000, A, VNET_HDR_BAD_GSO_SIZE},
        {1, 1, 9001, 1448, 34, 16, 9000, A, VNET_HDR_BAD_HDR_LEN},
        {1, 1, 54, 1448, 34, 16, VNET_GSO_FRAME_MAX + 1, A, VNET_HDR_BAD_LEN},
        {0, 0, 0, 0, 0, 0, 1519, A, VNET_HDR_BAD_LEN},     /* plain, over MTU */
        {1, 0, 0, 0, 1513, 0, 1514, A, VNET_HDR_BAD_CSUM}, /* field past the end */
        {1, 0, 0, 0, 34, 1479, 1514, A, VNET_HDR_BAD_CSUM},
        {1, 0, 0, 0, 65535, 65535, 1514, A, VNET_HDR_BAD_CSUM}, /* 16-bit sum wraps */
        {1, 0, 0, 0, 13, 16, 1514, A, VNET_HDR_BAD_CSUM},       /* inside Ethernet */
        {1, 1, 54, 1448, 60000, 16, 9000, A, VNET_HDR_BAD_CSUM},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        enum vnet_hdr_bad r = rx(c[i].flags, c[i].type, c[i].hlen, c[i].mss, c[i].start, c[i].coff,
                                 c[i].len, c[i].feat, &o);
        if (r != c[i].want)
            fail_msg("case %zu: got %s, want %s", i, vnet_hdr_bad_name[r],
                     vnet_hdr_bad_name[c[i].want]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csum_tcp4),   cmocka_unit_test(test_csum_tcp6),
        cmocka_unit_test(test_csum_udp4),   cmocka_unit_test(test_csum_udp6),
        cmocka_unit_test(test_gso_tcp4),    cmocka_unit_test(test_gso_tcp6),
        cmocka_unit_test(test_gso_max),     cmocka_unit_test(test_gso_one_segment),
        cmocka_unit_test(test_ecn),         cmocka_unit_test(test_tx_none),
        cmocka_unit_test(test_tx_refused),  cmocka_unit_test(test_csum_vlan),
        cmocka_unit_test(test_rx_good),     cmocka_unit_test(test_rx_malformed),
        cmocka_unit_test(test_uso4),        cmocka_unit_test(test_uso6),
        cmocka_unit_test(test_uso_refused), cmocka_unit_test(test_rx_uso),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
