/* Counters of one run, filled by the mode loops and printed as the result
 * JSON line. */
#ifndef PEER_STATS_H
#define PEER_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/peer/peer_flows.h"
#include "tools/peer/peer_frame.h"
#include "tools/peer/peer_lat.h"
#include "tools/peer/peer_streams.h"

/* Largest datagram: UDP over IPv4 carries at most 65507 bytes, so a receive
 * slot of this size never cuts a frame. */
#define PEER_SIZE_MAX 65535

struct peer_stats {
    uint64_t packets, bytes;       /* received (count, reflect) or sent (send) */
    uint64_t tx_packets, tx_bytes; /* reflect: frames sent back */
    uint64_t first_ns, last_ns;    /* first and last frame, since the start */
    uint64_t kinds[PEER_KINDS];    /* [PKT_UDP]: vnperf frames */
    uint64_t sizes[PEER_SIZE_MAX + 1];
    uint64_t rx_errors;     /* failed recvmmsg calls other than EAGAIN/EINTR */
    uint64_t tx_errors;     /* failed sendmmsg calls other than EINTR/ECONNREFUSED */
    uint64_t refused;       /* ECONNREFUSED: nobody listened at the remote address */
    uint64_t reflect_runts; /* reflect: frames too short to turn around, dropped */
    uint64_t reflect_left;  /* reflect --rx-if: not vnperf's, left to the host's stack */
    uint64_t reflect_gso;   /* reflect --rx-if: GSO frames (peer_frame_gso), left to the stack,
                             * in no other count */
    uint64_t sock_drops;    /* frames the kernel dropped on our full socket buffer */
    uint64_t ring_full;     /* send over vhost: frames the guest's full RX ring refused */
    uint64_t behind_max;    /* send --rate: most frames due at once (the sender's own lag) */
    uint64_t skipped;       /* send --max-lag: frames due beyond the lag, never sent */
    int first_errno;        /* of the first counted error, 0 if none */
    struct peer_lat *lat;   /* count --latency, else NULL */
    uint64_t rx_tsc;        /* TSC when the current batch was read */
    struct peer_streams streams;
    struct peer_flows flows; /* vnperf frames by flow */
};

/* Zeroed stats on the heap (the tables are large); NULL on ENOMEM. */
struct peer_stats *peer_stats_new(void);
void peer_stats_free(struct peer_stats *st);

/* Turns on latency (count --latency), started at (tsc, CLOCK_MONOTONIC_RAW
 * ns); -ENOMEM. */
int peer_stats_latency(struct peer_stats *st, uint64_t tsc, uint64_t ns);

/* Accounts one received frame of len (<= PEER_SIZE_MAX) bytes. */
/* Counts one received frame; returns its kind (peer_frame_classify's). */
int peer_stats_rx(struct peer_stats *st, const uint8_t *f, size_t len, bool verify_udp_csum);

/* Counts n frames of one size in the histogram. */
static inline void peer_stats_size(struct peer_stats *st, size_t len, uint64_t n)
{
    st->sizes[len] += n;
}

/* Records a failed call: bumps *counter and remembers the first errno. */
void peer_stats_error(struct peer_stats *st, uint64_t *counter, int err);

#endif
