/* Deliberately broken frames for robustness tests of the guest's RX path. */
#ifndef PEER_MALFORM_H
#define PEER_MALFORM_H

#include <stddef.h>
#include <stdint.h>

enum peer_malformed {
    PEER_MAL_NONE = 0,
    PEER_MAL_TRUNCATED,   /* headers claim the full size, half the payload is cut */
    PEER_MAL_BAD_IP_LEN,  /* IPv4 total length beyond the frame (checksum fixed up) */
    PEER_MAL_BAD_UDP_LEN, /* UDP length beyond the IP payload (UDP checksum 0) */
    PEER_MAL_BAD_CSUM,    /* even frames: IPv4 header checksum, odd: UDP checksum */
    PEER_MAL_GARBAGE,     /* IPv4 ethertype followed by pseudo-random bytes */
    PEER_MAL_RUNT,        /* 1..13 bytes, shorter than an Ethernet header */
    PEER_MAL_COUNT,
};

const char *peer_malformed_name(enum peer_malformed m);

/* Index of a mode name, or -EINVAL. */
int peer_malformed_parse(const char *name);

/* Spoils frame number i, a good frame of len bytes built by pkt_tmpl_build,
 * and returns how many bytes of it to send. rng is the xorshift64 state
 * for garbage (non-zero). */
size_t peer_malform(uint8_t *f, size_t len, enum peer_malformed m, uint64_t i, uint64_t *rng);

#endif
