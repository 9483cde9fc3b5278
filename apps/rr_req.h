/* The UDP rr client's frames on the raw path (apps/rr_mq_client.c): a
 * session's request built once, its transaction number written per
 * request, and an answer told apart from anything else. Pure, so the
 * unit tests check them. */
#ifndef VN_RR_REQ_H
#define VN_RR_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "net/pkt.h"

#define RR_REQ_ID_MAX 8 /* the transaction number's bytes at most */

/* One session's flow: ours to the server (host byte order). */
struct rr_req_flow {
    uint8_t dst_mac[ETH_ALEN], src_mac[ETH_ALEN];
    uint32_t saddr, daddr;
    uint16_t sport, dport;
};

/* Writes a request of req payload bytes (all zero) into f: Ethernet,
 * IPv4 (DF, TTL 64, its checksum), UDP without a checksum (0, RFC 768),
 * padded with zeros to the Ethernet minimum. Returns the frame's length,
 * or 0 when req does not fit max bytes (at least PKT_MIN_FRAME). */
uint32_t rr_req_build(uint8_t *f, uint32_t max, const struct rr_req_flow *fl, uint32_t req);

/* The transaction number's length: min(RR_REQ_ID_MAX, req, resp). */
uint32_t rr_req_id_len(uint32_t req, uint32_t resp);

/* Writes id's low n bytes, little endian, at the start of the payload. */
void rr_req_set_id(uint8_t *f, uint64_t id, uint32_t n);

/* Session i's share of count transactions over n sessions: count / n, the
 * first count mod n one more, so the shares add up to count. */
uint64_t rr_req_budget(uint64_t count, unsigned n, unsigned i);

/* What a received UDP frame (pkt_parse's pi) is to a client whose n
 * sessions send from ports base..base+n-1 to server:port. */
struct rr_req_answer {
    int session; /* -1: not from the server to one of our ports */
    uint64_t id; /* the number it carries (id_len bytes) */
    bool whole;  /* its payload is resp bytes long */
};
void rr_req_classify(const uint8_t *f, const struct pkt_info *pi, uint32_t server, uint16_t port,
                     uint16_t base, unsigned n, uint32_t resp, uint32_t id_len,
                     struct rr_req_answer *a);

#endif
