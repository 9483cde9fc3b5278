/* vnperf streams seen by the peer, by 32-bit id; each keeps the guest's own
 * loss/dup/reorder accounting (apps/seqtrack.h) so both sides count the
 * same way. */
#ifndef PEER_STREAMS_H
#define PEER_STREAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps/seqtrack.h"

#define PEER_MAX_STREAMS 4096

struct peer_stream {
    bool used;
    uint32_t id;
    uint64_t bytes; /* its frames' lengths */
    struct seq_stream seq;
};

struct peer_streams {
    struct peer_stream *slot; /* 2 * PEER_MAX_STREAMS, open addressing */
    uint32_t n;
    uint64_t overflow; /* frames of streams beyond PEER_MAX_STREAMS, not tracked */
    struct peer_stream *last;
};

int peer_streams_init(struct peer_streams *s);
void peer_streams_free(struct peer_streams *s);

/* Accounts one frame of a stream, len bytes. */
void peer_streams_add(struct peer_streams *s, uint32_t id, uint64_t seq, size_t len);

/* The used entries sorted by id into out (room for PEER_MAX_STREAMS);
 * returns how many. */
uint32_t peer_streams_sorted(const struct peer_streams *s, const struct peer_stream **out);

#endif
