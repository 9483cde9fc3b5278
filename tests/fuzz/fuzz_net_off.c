/* net/net_off.c: where a received frame's TCP header is (IPv4 or IPv6)
 * and what lwIP's frame asks of the device, for any bytes, never reading
 * outside the first piece. Input: 2 bytes of the first piece's length,
 * 2 of the MTU, 1 of offloads, then the frame. */
#include "net/net_off.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 5 || n > 70000)
        return 0;
    uint16_t head, mtu;
    memcpy(&head, data, 2);
    memcpy(&mtu, data + 2, 2);
    unsigned offloads = data[4];
    uint32_t len = (uint32_t)(n - 5);
    uint32_t h = head <= len ? head : len;
    /* only the first piece in a buffer of its exact size: ASan sees more */
    uint8_t *f = malloc(h ? h : 1);
    if (!f)
        abort();
    memcpy(f, data + 5, h);
    uint32_t l4off, l4len;
    bool v6;
    if (net_off_rx_tcp(f, h, len, &l4off, &l4len, &v6) == 0)
        FUZZ_CHECK(l4off >= 34 && l4off <= h && l4off + l4len <= len);
    struct net_tso t4, t6;
    net_off_tso(mtu, 1460, false, &t4);
    net_off_tso(mtu, 1460, true, &t6);
    FUZZ_CHECK(!t4.mss || (t4.send_mss % t4.mss == 0 && 14u + 40 + t4.send_mss <= 0xffff));
    FUZZ_CHECK(!t6.mss || (t6.send_mss % t6.mss == 0 && 14u + 60 + t6.send_mss <= 0xffff));
    struct vnet_tx_off o = net_off_tx(f, h, len, offloads, mtu, &t4, &t6);
    FUZZ_CHECK(!o.flags || (offloads & VNET_OFF_TX_CSUM));
    FUZZ_CHECK(!(o.flags & VNET_TX_GSO) || (o.gso_size && len > (uint32_t)mtu + 14));
    free(f);
    return 0;
}
