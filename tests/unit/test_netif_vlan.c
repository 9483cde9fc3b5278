/* net/netif_vlan.c and net/net_vlan.c through lwIP's own
 * src/netif/ethernet.c (Debian's, built here for the host with our
 * lwipopts.h): the set hook's tag as ethernet_output writes it, the check
 * hook's accept and drop by VID as ethernet_input applies it, and
 * net_input's drop of what lwIP takes without asking (untagged, 802.1ad).
 * lwIP's calls around them are stubs that record what reached them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lwip/etharp.h"
#include "lwip/ip.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "net/net.h"
#include "net/net_vlan.h"
#include "netif/ethernet.h"

_Static_assert(PBUF_LINK_HLEN == 18, "lwIP leaves room for the tag (opt.h, LWIP_HOOK_VLAN_SET)");

#define HEAD 64 /* headroom in front of a pbuf's payload */

struct stats_ lwip_stats;
static uint8_t mem[HEAD + 1600], sent[1600];
static unsigned nsent, nip4, narp, nfreed;
static uint32_t ip4_at; /* the offset of what ip4_input got, in mem */

void vn_fatal(int code, const char *fmt, ...)
{
    (void)fmt;
    exit(code);
}

u8_t pbuf_add_header(struct pbuf *p, size_t n)
{
    p->payload = (u8_t *)p->payload - n;
    p->len = (u16_t)(p->len + n);
    p->tot_len = (u16_t)(p->tot_len + n);
    return 0;
}

u8_t pbuf_remove_header(struct pbuf *p, size_t n)
{
    p->payload = (u8_t *)p->payload + n;
    p->len = (u16_t)(p->len - n);
    p->tot_len = (u16_t)(p->tot_len - n);
    return 0;
}

u8_t pbuf_free(struct pbuf *p)
{
    (void)p;
    nfreed++;
    return 1;
}

err_t ip4_input(struct pbuf *p, struct netif *inp)
{
    (void)inp;
    ip4_at = (uint32_t)((u8_t *)p->payload - mem);
    nip4++;
    return ERR_OK;
}

err_t ip6_input(struct pbuf *p, struct netif *inp)
{
    (void)p, (void)inp;
    fail_msg("no IPv6 frame here");
    return ERR_OK;
}

void etharp_input(struct pbuf *p, struct netif *netif)
{
    (void)p, (void)netif;
    narp++;
}

static err_t linkoutput(struct netif *netif, struct pbuf *p)
{
    (void)netif;
    memcpy(sent, p->payload, p->len);
    nsent++;
    return ERR_OK;
}

static struct net_if nif;
static struct pbuf pb;

static int setup(void **state)
{
    (void)state;
    memset(&nif, 0, sizeof(nif));
    nif.netif.state = &nif;
    nif.netif.hwaddr_len = ETH_HWADDR_LEN;
    nif.netif.flags = NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    nif.netif.linkoutput = linkoutput;
    nsent = nip4 = narp = nfreed = 0;
    memset(mem, 0, sizeof(mem));
    return 0;
}

/* A 20-byte IP packet in mem after HEAD bytes, as lwIP hands it down. */
static struct pbuf *packet(void)
{
    pb = (struct pbuf){.payload = mem + HEAD, .len = 20, .tot_len = 20, .ref = 1};
    return &pb;
}

/* A received frame in mem: Ethernet, then tags (TPID, TCI pairs; n of
 * them), then the ethertype and a 46-byte payload. */
static struct pbuf *frame(const uint16_t *tags, unsigned n, uint16_t type)
{
    uint8_t *f = mem + HEAD;
    memset(f, 0x11, 6);
    memset(f + 6, 0x22, 6);
    unsigned off = 12;
    for (unsigned i = 0; i < 2 * n; i++, off += 2)
        f[off] = (uint8_t)(tags[i] >> 8), f[off + 1] = (uint8_t)tags[i];
    f[off] = (uint8_t)(type >> 8), f[off + 1] = (uint8_t)type;
    f[off + 2] = 0x45;
    pb = (struct pbuf){
        .payload = f, .len = (u16_t)(off + 48), .tot_len = (u16_t)(off + 48), .ref = 1};
    return &pb;
}

static const struct eth_addr src = {{2, 0, 0, 0, 0, 2}}, dst = {{2, 0, 0, 0, 0, 1}};

static void tx_tagged(void **state)
{
    (void)state;
    net_vlan_set(&nif.vlan, 100, 5);
    assert_int_equal(ethernet_output(&nif.netif, packet(), &src, &dst, ETHTYPE_IP), ERR_OK);
    assert_int_equal(nsent, 1);
    assert_int_equal(pb.len, 18 + 20);
    assert_memory_equal(sent, dst.addr, 6);
    assert_memory_equal(sent + 6, src.addr, 6);
    /* 802.1Q TPID, TCI = PCP 5, DEI 0, VID 100, then IPv4 */
    const uint8_t tag[] = {0x81, 0x00, 5 << 5, 100, 0x08, 0x00};
    assert_memory_equal(sent + 12, tag, sizeof(tag));
    /* ARP too: every frame of the netif */
    assert_int_equal(ethernet_output(&nif.netif, packet(), &src, &dst, ETHTYPE_ARP), ERR_OK);
    const uint8_t arp[] = {0x81, 0x00, 5 << 5, 100, 0x08, 0x06};
    assert_memory_equal(sent + 12, arp, sizeof(arp));
}

static void tx_untagged(void **state)
{
    (void)state;
    net_vlan_set(&nif.vlan, 0, 0);
    assert_int_equal(ethernet_output(&nif.netif, packet(), &src, &dst, ETHTYPE_IP), ERR_OK);
    assert_int_equal(pb.len, 14 + 20);
    assert_int_equal(sent[12], 0x08);
    assert_int_equal(sent[13], 0x00);
    net_vlan_set(&nif.vlan, 4094, 7);
    assert_int_equal(net_vlan_tx_tci(&nif.vlan), 7 << 13 | 4094);
}

static void rx_by_vid(void **state)
{
    (void)state;
    net_vlan_set(&nif.vlan, 100, 0);
    /* ours, whatever its priority: IPv4 after the 18 bytes */
    const uint16_t ours[] = {0x8100, 7 << 13 | 100};
    ethernet_input(frame(ours, 1, ETHTYPE_IP), &nif.netif);
    assert_int_equal(nip4, 1);
    assert_int_equal(ip4_at, HEAD + 18);
    const uint16_t arp[] = {0x8100, 100};
    ethernet_input(frame(arp, 1, ETHTYPE_ARP), &nif.netif);
    assert_int_equal(narp, 1);
    assert_int_equal(nif.vlan.dropped, 0);
    /* another VID: freed, counted, nothing goes up */
    const uint16_t other[] = {0x8100, 200};
    ethernet_input(frame(other, 1, ETHTYPE_IP), &nif.netif);
    const uint16_t next[] = {0x8100, 101};
    ethernet_input(frame(next, 1, ETHTYPE_IP), &nif.netif);
    assert_int_equal(nip4, 1);
    assert_int_equal(nfreed, 2);
    assert_int_equal(nif.vlan.dropped, 2);
}

static void rx_untagged_netif(void **state)
{
    (void)state;
    /* an untagged netif takes no tagged frame (lwIP alone takes any VID) */
    net_vlan_set(&nif.vlan, 0, 0);
    const uint16_t t[] = {0x8100, 100};
    ethernet_input(frame(t, 1, ETHTYPE_IP), &nif.netif);
    assert_int_equal(nip4, 0);
    assert_int_equal(nif.vlan.dropped, 1);
    ethernet_input(frame(NULL, 0, ETHTYPE_IP), &nif.netif);
    assert_int_equal(nip4, 1);
    assert_int_equal(ip4_at, HEAD + 14);
}

/* What ethernet_input takes without asking the hook: net_input drops it
 * first on a tagged netif. */
static void rx_before_lwip(void **state)
{
    (void)state;
    net_vlan_set(&nif.vlan, 100, 0);
    struct pbuf *p = frame(NULL, 0, ETHTYPE_IP);
    assert_false(net_vlan_rx_frame(&nif.vlan, p->payload, p->len));
    const uint16_t qinq[] = {0x88a8, 100, 0x8100, 100};
    p = frame(qinq, 2, ETHTYPE_IP);
    assert_false(net_vlan_rx_frame(&nif.vlan, p->payload, p->len));
    const uint16_t t[] = {0x8100, 100};
    p = frame(t, 1, ETHTYPE_IP);
    assert_false(net_vlan_rx_frame(&nif.vlan, p->payload, 17)); /* tag cut off */
    assert_int_equal(nif.vlan.dropped, 3);
    assert_true(net_vlan_rx_frame(&nif.vlan, p->payload, p->len));
    net_vlan_set(&nif.vlan, 0, 0);
    p = frame(NULL, 0, ETHTYPE_IP);
    assert_true(net_vlan_rx_frame(&nif.vlan, p->payload, p->len));
    assert_int_equal(nif.vlan.dropped, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(tx_tagged, setup),
        cmocka_unit_test_setup(tx_untagged, setup),
        cmocka_unit_test_setup(rx_by_vid, setup),
        cmocka_unit_test_setup(rx_untagged_netif, setup),
        cmocka_unit_test_setup(rx_before_lwip, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
