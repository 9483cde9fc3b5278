/* What a run prints: the result JSON line on stdout and, with --progress,
 * one line a second on stderr. */
#include "tools/peer/peer_gen.h"
#include "tools/peer/peer_run.h"

#include <errno.h>
#include <string.h>
#include <x86intrin.h>

struct totals {
    uint64_t lost, dup, reorder, stale;
};

static struct totals stream_totals(const struct peer_stats *st)
{
    const struct peer_streams *s = &st->streams;
    struct totals t = {0};

    for (uint32_t i = 0; i < 2 * PEER_MAX_STREAMS; i++) {
        const struct seq_stream *q = &s->slot[i].seq;

        if (!s->slot[i].used)
            continue;
        t.lost += seq_lost(q);
        t.dup += q->dup;
        t.reorder += q->reorder;
        t.stale += q->stale;
    }
    return t;
}

static uint64_t per_second(uint64_t n, uint64_t ns)
{
    return ns ? (uint64_t)((unsigned __int128)n * NS_PER_SEC / ns) : 0;
}

/* A write that failed mid-line sets the stream's error flag and errno;
 * fflush reports one still buffered. ISO C 7.21.7.1: fputc and fprintf
 * leave errno to the implementation, so EIO stands in when it says none. */
static int peer_report_flush(FILE *f)
{
    if (fflush(f) == 0 && !ferror(f))
        return 0;
    return errno ? -errno : -EIO;
}

void peer_progress(struct peer_run *r, uint64_t now_ns)
{
    const struct peer_stats *st = r->st;
    struct totals t;
    uint64_t secs;

    if (!r->o->progress || now_ns < r->next_progress_ns)
        return;
    if (r->next_progress_ns == 0) {
        r->next_progress_ns = now_ns + NS_PER_SEC;
        return;
    }
    r->next_progress_ns += NS_PER_SEC;
    secs = (now_ns - r->start_ns) / NS_PER_SEC;
    if (r->o->mode == PEER_MODE_SEND) {
        fprintf(stderr, "vnperf-peer: t=%llus sent=%llu bytes=%llu refused=%llu\n",
                (unsigned long long)secs, (unsigned long long)st->packets,
                (unsigned long long)st->bytes, (unsigned long long)st->refused);
        return;
    }
    t = stream_totals(st);
    fprintf(stderr,
            "vnperf-peer: t=%llus packets=%llu bytes=%llu non_vnperf=%llu lost=%llu dup=%llu "
            "reorder=%llu\n",
            (unsigned long long)secs, (unsigned long long)st->packets,
            (unsigned long long)st->bytes, (unsigned long long)(st->packets - st->kinds[PKT_UDP]),
            (unsigned long long)t.lost, (unsigned long long)t.dup, (unsigned long long)t.reorder);
}

/* Streams in id order; lost counts from the first sequence number seen. */
static void json_streams(FILE *f, const struct peer_stats *st)
{
    static const struct peer_stream *sorted[PEER_MAX_STREAMS];
    uint32_t n = peer_streams_sorted(&st->streams, sorted);

    fputs(",\"streams\":[", f);
    for (uint32_t i = 0; i < n; i++) {
        const struct seq_stream *q = &sorted[i]->seq;

        fprintf(f,
                "%s{\"id\":%u,\"packets\":%llu,\"bytes\":%llu,\"unique\":%llu,\"first_seq\":%llu,"
                "\"max_seq\":%llu,\"lost\":%llu,\"dup\":%llu,\"reorder\":%llu,\"stale\":%llu}",
                i ? "," : "", sorted[i]->id, (unsigned long long)(q->unique + q->dup + q->stale),
                (unsigned long long)sorted[i]->bytes, (unsigned long long)q->unique,
                (unsigned long long)q->first, (unsigned long long)q->high,
                (unsigned long long)seq_lost(q), (unsigned long long)q->dup,
                (unsigned long long)q->reorder, (unsigned long long)q->stale);
    }
    fprintf(f, "],\"streams_overflow\":%llu", (unsigned long long)st->streams.overflow);
}

static void json_rx(FILE *f, const struct peer_stats *st)
{
    struct totals t = stream_totals(st);

    fprintf(f, ",\"vnperf\":%llu,\"non_vnperf\":%llu,\"non_vnperf_by\":{",
            (unsigned long long)st->kinds[PKT_UDP],
            (unsigned long long)(st->packets - st->kinds[PKT_UDP]));
    for (int k = 0, n = 0; k < PEER_KINDS; k++) {
        if (k == PKT_UDP || k == PKT_STAMPED) /* vnperf's, counted as udp */
            continue;
        fprintf(f, "%s\"%s\":%llu", n++ ? "," : "", peer_kind_name(k),
                (unsigned long long)st->kinds[k]);
    }
    fprintf(f, "},\"lost\":%llu,\"dup\":%llu,\"reorder\":%llu,\"stale\":%llu",
            (unsigned long long)t.lost, (unsigned long long)t.dup, (unsigned long long)t.reorder,
            (unsigned long long)t.stale);
    json_streams(f, st);
    peer_flows_json(f, &st->flows);
}

static void json_sizes(FILE *f, const struct peer_stats *st)
{
    bool first = true;

    fputs(",\"sizes\":{", f);
    for (size_t len = 0; len <= PEER_SIZE_MAX; len++) {
        if (!st->sizes[len])
            continue;
        fprintf(f, "%s\"%zu\":%llu", first ? "" : ",", len, (unsigned long long)st->sizes[len]);
        first = false;
    }
    fputc('}', f);
}

int peer_report_json(FILE *f, const struct peer_run *r)
{
    const struct peer_opts *o = r->o;
    const struct peer_stats *st = r->st;
    char remote[PEER_ADDR_STRLEN];
    /* send: the whole sending run; rx: first to last frame in */
    uint64_t dur = o->mode == PEER_MODE_SEND ? r->end_ns - r->start_ns : st->last_ns - st->first_ns;

    peer_addr_str(&o->remote, remote);
    errno = 0; /* what a failed write leaves, not an older call's */
    fprintf(f,
            "{\"type\":\"peer\",\"mode\":\"%s\",\"stop\":\"%s\",\"packets\":%llu,"
            "\"bytes\":%llu,\"pps\":%llu,\"bps\":%llu,\"duration_ns\":%llu,"
            "\"elapsed_ns\":%llu,\"start_unix_ns\":%llu,\"first_ns\":%llu,\"last_ns\":%llu,"
            "\"local\":\"%s\",\"remote\":",
            peer_mode_name(o->mode), r->stop, (unsigned long long)st->packets,
            (unsigned long long)st->bytes, (unsigned long long)per_second(st->packets, dur),
            (unsigned long long)per_second(st->bytes * 8, dur), (unsigned long long)dur,
            (unsigned long long)(r->end_ns - r->start_ns), (unsigned long long)r->start_unix_ns,
            (unsigned long long)st->first_ns, (unsigned long long)st->last_ns, r->io->local);
    if (o->have_remote)
        fprintf(f, "\"%s\"", remote);
    else
        fputs("null", f);
    fprintf(f, ",\"batch\":%u,\"rcvbuf\":%d,\"sndbuf\":%d", o->batch, r->io->rcvbuf, r->io->sndbuf);
    if (o->mode == PEER_MODE_SEND)
        fprintf(f,
                ",\"size\":%u,\"rate\":%llu,\"behind_max\":%llu,\"skipped\":%llu,"
                "\"streams_sent\":%u,\"malformed\":\"%s\"",
                o->size, (unsigned long long)o->rate, (unsigned long long)st->behind_max,
                (unsigned long long)st->skipped, o->streams, peer_malformed_name(o->malformed));
    if (r->gen)
        peer_gen_json(f, r->gen);
    if (o->mode != PEER_MODE_SEND)
        json_rx(f, st);
    if (st->lat)
        peer_lat_json(f, st->lat, __rdtsc(), peer_now_ns(CLOCK_MONOTONIC_RAW));
    if (o->mode == PEER_MODE_REFLECT)
        fprintf(f,
                ",\"tx_packets\":%llu,\"tx_bytes\":%llu,\"reflect_left\":%llu,"
                "\"reflect_gso\":%llu",
                (unsigned long long)st->tx_packets, (unsigned long long)st->tx_bytes,
                (unsigned long long)st->reflect_left, (unsigned long long)st->reflect_gso);
    json_sizes(f, st);
    if (r->warmup)
        fprintf(f, ",\"warmup\":{\"sent\":%llu,\"ring_full\":%llu,\"returned\":%llu,\"ns\":%llu}",
                (unsigned long long)r->warmup->sent, (unsigned long long)r->warmup->ring_full,
                (unsigned long long)r->warmup->returned, (unsigned long long)r->warmup->ns);
    fprintf(f,
            ",\"errors\":{\"rx\":%llu,\"tx\":%llu,\"refused\":%llu,\"reflect_runts\":%llu,"
            "\"sock_drops\":%llu,\"ring_full\":%llu,\"first_error\":\"%s\"}}\n",
            (unsigned long long)st->rx_errors, (unsigned long long)st->tx_errors,
            (unsigned long long)st->refused, (unsigned long long)st->reflect_runts,
            (unsigned long long)st->sock_drops, (unsigned long long)st->ring_full,
            st->first_errno ? strerror(st->first_errno) : "");
    return peer_report_flush(f);
}

int peer_report_stdout(const char *prog, const struct peer_run *r)
{
    int rc = peer_report_json(stdout, r);

    if (rc == 0)
        return 0;
    fprintf(stderr, "%s: result not written to stdout: %s\n", prog, strerror(-rc));
    return PEER_EXIT_OUTPUT;
}
