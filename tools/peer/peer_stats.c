/* Per-frame accounting: kind, size histogram, streams, flows. */
#include "tools/peer/peer_stats.h"

#include <errno.h>
#include <stdlib.h>

struct peer_stats *peer_stats_new(void)
{
    struct peer_stats *st = calloc(1, sizeof(*st));

    if (!st)
        return NULL;
    if (peer_streams_init(&st->streams) != 0 || peer_flows_init(&st->flows) != 0) {
        peer_streams_free(&st->streams);
        free(st);
        return NULL;
    }
    return st;
}

int peer_stats_latency(struct peer_stats *st, uint64_t tsc, uint64_t ns)
{
    st->lat = malloc(sizeof(*st->lat));
    if (!st->lat)
        return -ENOMEM;
    peer_lat_start(st->lat, tsc, ns);
    return 0;
}

void peer_stats_free(struct peer_stats *st)
{
    if (!st)
        return;
    peer_streams_free(&st->streams);
    peer_flows_free(&st->flows);
    free(st->lat);
    free(st);
}

int peer_stats_rx(struct peer_stats *st, const uint8_t *f, size_t len, bool verify_udp_csum)
{
    struct peer_vnpf v;
    int kind;

    st->packets++;
    st->bytes += len;
    peer_stats_size(st, len, 1);
    kind = peer_frame_classify(f, len, verify_udp_csum, &v);
    st->kinds[kind]++;
    if (kind != PKT_UDP)
        return kind;
    peer_streams_add(&st->streams, v.stream, v.seq, len);
    peer_flows_add(&st->flows, &v.flow, len);
    if (st->lat)
        peer_lat_add(st->lat, v.tsc, st->rx_tsc);
    return kind;
}

void peer_stats_error(struct peer_stats *st, uint64_t *counter, int err)
{
    if (st->first_errno == 0)
        st->first_errno = err;
    (*counter)++;
}
