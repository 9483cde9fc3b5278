/* net/pkt.c: the frame parsers of sink, reflect and fwd on any byte string
 * (IPv4 and IPv6, UDP and stamped TCP and ICMP frames).
 * What pkt_parse accepts must lie inside the frame and stay valid after
 * the reflector turns it around. */
#include "net/pkt.h"
#include "tests/fuzz/fuzz.h"

/* What pkt_parse filled in for UDP or a stamped frame lies in the frame:
 * behind one 802.1Q tag or a QinQ pair (4 bytes each), IPv4's header or
 * IPv6's fixed one, the L4 header (hl bytes at least), the payload. */
static void check_info(const uint8_t *f, uint32_t len, const struct pkt_info *pi, uint32_t hl)
{
    FUZZ_CHECK(pi->nvlan <= PKT_VLANS_MAX && pi->ip_off == OFF_IP + 4u * pi->nvlan);
    FUZZ_CHECK(pi->ipv == 4 || pi->ipv == 6);
    if (pi->ipv == 6)
        FUZZ_CHECK(pi->l4_off == pi->ip_off + IP6_HLEN);
    else
        FUZZ_CHECK(pi->l4_off >= pi->ip_off + IP4_HLEN);
    FUZZ_CHECK(pi->payload_off >= pi->l4_off + hl);
    FUZZ_CHECK((uint64_t)pi->payload_off + pi->payload_len <= len);
    uint32_t stream;
    uint64_t seq;
    if (pkt_payload_hdr(f, pi, &stream, &seq))
        FUZZ_CHECK(pi->payload_len >= PL_MIN);
}

static void check_udp(uint8_t *f, uint32_t len, bool csum, const struct pkt_info *pi)
{
    check_info(f, len, pi, UDP_HLEN);
    FUZZ_CHECK(pi->payload_off == pi->l4_off + UDP_HLEN);
    uint8_t src[16], dst[16], bsrc[16], bdst[16];
    pkt_ip_addrs(f, pi, src, dst);
    /* The reflector's answer parses as the same datagram, turned round. */
    static const uint8_t me[ETH_ALEN] = {0x52, 0x54, 0, 0, 0, 1};
    struct pkt_info back;
    pkt_udp_reflect(f, pi, me);
    FUZZ_CHECK(pkt_parse(f, len, csum, &back) == PKT_UDP);
    FUZZ_CHECK(back.sport == pi->dport && back.dport == pi->sport);
    FUZZ_CHECK(back.saddr == pi->daddr && back.daddr == pi->saddr);
    pkt_ip_addrs(f, &back, bsrc, bdst);
    FUZZ_CHECK(memcmp(bsrc, dst, 16) == 0 && memcmp(bdst, src, 16) == 0);
    FUZZ_CHECK(back.payload_off == pi->payload_off && back.payload_len == pi->payload_len);
    FUZZ_CHECK(memcmp(f + OFF_ETH_SRC, me, ETH_ALEN) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 1 || n > PKT_MAX_FRAME + 1)
        return 0;
    bool csum = data[0] & 1;
    uint32_t len = (uint32_t)(n - 1);
    /* A frame of exactly len bytes: ASan sees any read past it. */
    uint8_t *f = malloc(len ? len : 1);
    if (!f)
        abort();
    memcpy(f, data + 1, len);
    struct pkt_info pi;
    enum pkt_kind k = pkt_parse(f, len, csum, &pi);
    FUZZ_CHECK(k < PKT_KINDS && pkt_kind_name(k) != NULL);
    if (k == PKT_UDP)
        check_udp(f, len, csum, &pi);
    if (k == PKT_STAMPED) { /* the whole stamp, the magic included */
        check_info(f, len, &pi, ICMP_HLEN);
        FUZZ_CHECK(pi.payload_len >= PL_LEN);
    }
    uint32_t ip = len >= 4 ? rd32(data + 1) : 0;
    bool local = pkt_for_local(f, len, ip);
    FUZZ_CHECK(!local || len >= ETH_HLEN + 28);
    free(f);
    return 0;
}
