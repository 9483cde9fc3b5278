/* Per queue pair state of an app that runs one instance per vCPU (sink,
 * reflect): which CPU owns each pair, and each pair's counts with loss,
 * duplicates and reordering from the payload's sequence numbers. A pair's
 * entry is written by its CPU only (cache-line aligned, so CPUs share no
 * line) and added up by CPU 0 once every CPU is done: no lock anywhere. */
#ifndef VN_QSTATS_H
#define VN_QSTATS_H

#include <stdint.h>

#include "apps/seqtrack.h"
#include "drivers/virtio/vnet.h"
#include "net/pkt.h"

struct json;

_Static_assert(VNET_MAX_PAIRS <= 255, "a pair's CPU and index fit a byte");

/* Pair q runs on CPU cpu_of[q]; ncpu CPUs run, CPU k owning pairs k,
 * k + ncpu, ... */
struct qstats_plan {
    unsigned ncpu, npairs;
    uint8_t cpu_of[VNET_MAX_PAIRS];
};

/* Pure: pairs (1..VNET_MAX_PAIRS) over min(pairs, up) CPUs (up >= 1),
 * pair q to CPU q mod that. */
void qstats_plan(struct qstats_plan *p, unsigned pairs, unsigned up);

struct qstats {
    unsigned queue, cpu;
    uint64_t packets, bytes;    /* the app's UDP frames on the pair */
    uint64_t no_header;         /* too short for our payload header */
    uint64_t bad_stream;        /* a stream id past nstreams */
    uint64_t not_ours;          /* frames for lwIP on a pair CPU 0 does not own: dropped */
    uint64_t tx_dropped;        /* frames the TX ring did not take (reflect) */
    struct seq_stream *streams; /* nstreams, by stream id */
    unsigned nstreams;
} __attribute__((aligned(64)));

/* Zeroes q and gives it nstreams streams: 0, or -ENOMEM. */
int qstats_init(struct qstats *q, unsigned queue, unsigned cpu, unsigned nstreams);

/* A UDP frame's payload header on q: with one (have_hdr) its sequence
 * number recorded on its stream. */
static inline void qstats_seq(struct qstats *q, int have_hdr, uint32_t stream, uint64_t seq)
{
    if (!have_hdr)
        q->no_header++;
    else if (stream < q->nstreams)
        seq_record(&q->streams[stream], seq);
    else
        q->bad_stream++;
}

/* One UDP frame of len bytes counted on q, and its header as above. */
static inline void qstats_frame(struct qstats *q, uint32_t len, int have_hdr, uint32_t stream,
                                uint64_t seq)
{
    q->packets++;
    q->bytes += len;
    qstats_seq(q, have_hdr, stream, seq);
}

struct qstats_total {
    uint64_t packets, bytes, no_header, bad_stream, not_ours, tx_dropped;
    struct seq_totals seq; /* over every pair's streams */
};

/* One CPU's RX tally in sink and reflect: every frame it received, by
 * kind, and the cycles of its first and last counted frame or burst. */
struct qstats_rx {
    uint64_t wire_rx, wire_rx_bytes;
    uint64_t kinds[PKT_KINDS];
    uint64_t first, last;
};

/* w added into t: sums, the earliest first, the latest last. */
void qstats_rx_add(struct qstats_rx *t, const struct qstats_rx *w);
uint64_t qstats_rx_malformed(const struct qstats_rx *w);
/* The result's "rx_kinds" object. */
void qstats_rx_kinds_json(struct json *j, const struct qstats_rx *w);

/* Frames (and bytes) counted so far on n pairs, read while their CPUs
 * still count: each an aligned load, so a sum of whole values. */
uint64_t qstats_packets_now(const struct qstats *q, unsigned n, uint64_t *bytes);

/* The n pairs added up (after their CPUs are done). */
void qstats_sum(const struct qstats *q, unsigned n, struct qstats_total *t);

/* Sequence totals' "lost", "dup", "reorder" and "stale" members, in that
 * order (the results and samples that count sequences). */
void qstats_seq_json(struct json *j, const struct seq_totals *t);

/* The result's "queues": one object per pair with queue, cpu, its counts
 * and its streams' loss, dup, reorder and stale; more(j, q, ctx), when
 * not NULL, adds the app's members to each. */
typedef void (*qstats_more_fn)(struct json *j, const struct qstats *q, void *ctx);
void qstats_json(struct json *j, const struct qstats *q, unsigned n, qstats_more_fn more,
                 void *ctx);

#endif
