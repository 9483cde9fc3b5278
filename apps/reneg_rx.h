/* app=reneg's count of the frames that come back to it: the host peer
 * reflects every set's frames (docs/peer.md, reflect), so set k's
 * frames return on stream id k. Each set has its own count, sequence
 * numbers and malformed frames, so a loss names its set and direction
 * (docs/apps.md, reneg). Pure: tests/unit/test_reneg_rx.c. */
#ifndef VN_RENEG_RX_H
#define VN_RENEG_RX_H

#include <stdint.h>

#include "apps/seqtrack.h"

struct json;

struct reneg_rx {
    uint64_t packets, bytes; /* frames of the set's stream: its stamp, checksums right */
    uint64_t malformed;      /* refused while the set ran: length, header, checksum, or a
                              * stamp whose stream is no set's */
    struct seq_stream seq;
};

enum reneg_frame {
    RENEG_COUNTED, /* counted: the buffer goes back to the driver */
    RENEG_STACK,   /* not ours (ARP, ...): lwIP's */
};

/* One received frame (len bytes at f) while set cur of n runs, its IPv4
 * and UDP checksums checked (pkt_parse): a stamped frame counted on its
 * stream's set (its sequence number recorded), a malformed one on set
 * cur's. */
enum reneg_frame reneg_rx_frame(struct reneg_rx *sets, unsigned n, unsigned cur, const uint8_t *f,
                                uint32_t len);

/* Set r's count as the object key: packets, bytes, unique, lost (gaps),
 * dup, reorder, malformed. */
void reneg_rx_json(struct json *j, const char *key, const struct reneg_rx *r);

#endif
