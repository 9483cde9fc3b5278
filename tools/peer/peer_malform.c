/* Malformed frames, each spoiling exactly one thing so the guest's counter
 * for that thing can be checked. */
#include "tools/peer/peer_malform.h"

#include <errno.h>
#include <string.h>

#include "net/pkt.h"

static const char *const mal_names[PEER_MAL_COUNT] = {
    [PEER_MAL_NONE] = "none",
    [PEER_MAL_TRUNCATED] = "truncated",
    [PEER_MAL_BAD_IP_LEN] = "bad-ip-len",
    [PEER_MAL_BAD_UDP_LEN] = "bad-udp-len",
    [PEER_MAL_BAD_CSUM] = "bad-csum",
    [PEER_MAL_GARBAGE] = "garbage",
    [PEER_MAL_RUNT] = "runt",
};

#define LEN_EXCESS   64     /* how far the bad length fields overshoot */
#define CSUM_SPOIL   0x0101 /* flips one bit in each byte of a checksum */
#define RUNT_LENGTHS (ETH_HLEN - 1)

const char *peer_malformed_name(enum peer_malformed m)
{
    return mal_names[m];
}

int peer_malformed_parse(const char *name)
{
    for (int m = 0; m < PEER_MAL_COUNT; m++) {
        if (strcmp(name, mal_names[m]) == 0)
            return m;
    }
    return -EINVAL;
}

static uint64_t xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void ip_csum_fix(uint8_t *f)
{
    wr16(f + OFF_IP_CSUM, 0);
    wr16(f + OFF_IP_CSUM, pkt_csum_fold(pkt_sum(f + OFF_IP, IP4_HLEN, 0)));
}

size_t peer_malform(uint8_t *f, size_t len, enum peer_malformed m, uint64_t i, uint64_t *rng)
{
    uint16_t csum;

    switch (m) {
    case PEER_MAL_NONE:
    case PEER_MAL_COUNT:
        break;
    case PEER_MAL_TRUNCATED:
        return OFF_PAYLOAD + (len - OFF_PAYLOAD) / 2;
    case PEER_MAL_BAD_IP_LEN:
        wr16(f + OFF_IP_LEN, (uint16_t)(len - OFF_IP + LEN_EXCESS));
        ip_csum_fix(f);
        break;
    case PEER_MAL_BAD_UDP_LEN:
        wr16(f + OFF_UDP_LEN, (uint16_t)(len - OFF_UDP + LEN_EXCESS));
        wr16(f + OFF_UDP_CSUM, 0);
        break;
    case PEER_MAL_BAD_CSUM:
        if (i % 2 == 0) {
            wr16(f + OFF_IP_CSUM, rd16(f + OFF_IP_CSUM) ^ CSUM_SPOIL);
        } else {
            csum = rd16(f + OFF_UDP_CSUM) ^ CSUM_SPOIL;
            /* 0 would read as "no checksum" and not be wrong at all */
            wr16(f + OFF_UDP_CSUM, csum ? csum : (uint16_t)~CSUM_SPOIL);
        }
        break;
    case PEER_MAL_GARBAGE:
        for (size_t off = OFF_IP; off < len; off += 8) {
            uint64_t r = xorshift64(rng);
            size_t n = len - off < 8 ? len - off : 8;

            memcpy(f + off, &r, n);
        }
        break;
    case PEER_MAL_RUNT:
        return 1 + i % RUNT_LENGTHS;
    }
    return len;
}
