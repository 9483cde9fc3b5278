/* An IPv6 stream frame as the tests write it themselves (RFC 8200 s3,
 * s8.1), byte by byte with ref_csum.h's checksum: what the receivers'
 * parser (net/pkt.c) and the host peer must count. */
#ifndef TESTS_UNIT_REF_FRAME6_H
#define TESTS_UNIT_REF_FRAME6_H

#include <stdint.h>
#include <string.h>

#include "net/pkt.h"
#include "ref_csum.h"

static const uint8_t ref6_sip[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
static const uint8_t ref6_dip[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

/* The L4 header's length: TCP's without options, UDP's, an echo request's. */
static inline unsigned ref6_l4_hlen(uint8_t proto)
{
    return proto == IP_PROTO_TCP ? TCP_HLEN : proto == IP_PROTO_UDP ? UDP_HLEN : ICMP_HLEN;
}

/* Writes the L4 checksum of an untagged IPv6 frame of len bytes over the
 * pseudo header (addresses, the L4 length, next header), its field
 * first zeroed. */
static inline void ref6_fix_csum(uint8_t *f, uint32_t len)
{
    uint8_t proto = f[ETH_HLEN + 6];
    unsigned l4 = ETH_HLEN + IP6_HLEN;
    unsigned at = l4 + (proto == IP_PROTO_TCP ? 16u : proto == IP_PROTO_UDP ? 6u : 2u);
    f[at] = f[at + 1] = 0;
    uint64_t s = ref_sum(f + ETH_HLEN + 8, 32, proto + (uint64_t)(len - l4));
    uint16_t c = (uint16_t)~ref_fold(ref_sum(f + l4, len - l4, s));
    f[at] = (uint8_t)(c >> 8);
    f[at + 1] = (uint8_t)c;
}

/* An untagged IPv6 frame of len bytes from ref6_sip to ref6_dip: UDP
 * 1234 -> 5678, a TCP ACK|PSH segment 1234 -> 5678 or an ICMPv6 echo
 * request, carrying the stamp (stream, seq, the magic), its checksum
 * right. */
static inline void ref6_frame(uint8_t *f, uint32_t len, uint8_t proto, uint32_t stream,
                              uint64_t seq)
{
    static const uint8_t mac[6] = {0x52, 0x54, 0, 0, 0, 1};
    unsigned l4 = ETH_HLEN + IP6_HLEN, pl = l4 + ref6_l4_hlen(proto);
    memset(f, 0, len);
    memcpy(f + OFF_ETH_DST, mac, 6);
    memcpy(f + OFF_ETH_SRC, mac, 6);
    f[OFF_ETH_SRC + 5] = 2;
    f[OFF_ETH_TYPE] = 0x86;
    f[OFF_ETH_TYPE + 1] = 0xdd;
    f[ETH_HLEN] = 0x60;  /* version 6 */
    f[ETH_HLEN + 3] = 5; /* flow label 5 */
    f[ETH_HLEN + 4] = (uint8_t)((len - l4) >> 8);
    f[ETH_HLEN + 5] = (uint8_t)(len - l4);
    f[ETH_HLEN + 6] = proto;
    f[ETH_HLEN + 7] = 64;
    memcpy(f + ETH_HLEN + 8, ref6_sip, 16);
    memcpy(f + ETH_HLEN + 24, ref6_dip, 16);
    if (proto == IP_PROTO_ICMPV6) {
        f[l4] = ICMPV6_ECHO;
    } else {
        f[l4] = 1234 >> 8;
        f[l4 + 1] = 1234 & 0xff;
        f[l4 + 2] = 5678 >> 8;
        f[l4 + 3] = 5678 & 0xff;
    }
    if (proto == IP_PROTO_UDP) {
        f[l4 + 4] = (uint8_t)((len - l4) >> 8);
        f[l4 + 5] = (uint8_t)(len - l4);
    }
    if (proto == IP_PROTO_TCP) {
        f[l4 + 12] = TCP_HLEN / 4 << 4;
        f[l4 + 13] = 0x18; /* ACK, PSH */
    }
    for (unsigned i = 0; i < 8; i++)
        f[pl + PL_OFF_SEQ + i] = (uint8_t)(seq >> (8 * i));
    for (unsigned i = 0; i < 4; i++) {
        f[pl + PL_OFF_STREAM + i] = (uint8_t)(stream >> (8 * i));
        f[pl + PL_OFF_MAGIC + i] = (uint8_t)(PL_MAGIC >> (8 * i));
    }
    ref6_fix_csum(f, len);
}

#endif
